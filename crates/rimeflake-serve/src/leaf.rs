//! Meituan Leaf's snowflake paths, so that a Leaf client switches by URL alone:
//! `/api/snowflake/get/{key}` answers the bare decimal ID, and `/decodeSnowflakeId` Leaf's
//! JSON. As in Leaf's snowflake mode, every key shares one ID space by default (the key only
//! names the caller); with `--leaf-keys separate`, each key is a namespace of its own, with its
//! own generator and lease, made on first use up to `--max-keys`.

use crate::admission::BYTES_PER_ID;
use crate::answer::{answered, respond, shorten, text, Asked, Refusal, JSON, TEXT};
use crate::issue::{self, Issuer};
use crate::log::one_line;
use crate::text::{json_string, percent_decode, query_value};
use crate::{Response, Shared};
use hyper::StatusCode;
use rimeflake::{ErrorKind, Generator, Layout};
use std::collections::HashMap;
use std::sync::{Arc, RwLock};

/// Makes the generator of a key (a namespace) on its first use. Called on the blocking pool.
pub type Factory = Arc<dyn Fn(&str) -> rimeflake::Result<Generator> + Send + Sync>;

/// Which generator answers the Leaf path.
pub enum LeafPath {
    /// The main generator (its layout and namespace are the Leaf path's).
    Main,
    /// One generator for every key, as Leaf's snowflake mode: made by the factory, called with
    /// `namespace`, on the first request of the path (so that a Leaf path nobody uses, or whose
    /// generator cannot start, never keeps the main one from serving), in `layout`.
    Shared {
        factory: Factory,
        layout: Layout,
        namespace: String,
    },
    /// A namespace per key, made by the factory (called with the key) on first use, in
    /// `layout` (a key named as the main generator's namespace gets the main generator when
    /// `layout` is the main one's).
    Separate { factory: Factory, layout: Layout },
}

/// The Leaf path's generators, as the service holds them.
pub(crate) enum Leaf {
    Main,
    Made {
        factory: Factory,
        layout: Layout,
        /// The one namespace every key shares; `None`: each key is its own.
        shared: Option<String>,
        keyed: RwLock<HashMap<String, Arc<Issuer>>>,
        /// Held while a generator is made, so that two first requests make one.
        making: tokio::sync::Mutex<()>,
    },
}

impl Leaf {
    pub(crate) fn new(path: LeafPath) -> Leaf {
        let made = |factory, layout, shared| Leaf::Made {
            factory,
            layout,
            shared,
            keyed: RwLock::new(HashMap::new()),
            making: tokio::sync::Mutex::new(()),
        };
        match path {
            LeafPath::Main => Leaf::Main,
            LeafPath::Shared {
                factory,
                layout,
                namespace,
            } => made(factory, layout, Some(namespace)),
            LeafPath::Separate { factory, layout } => made(factory, layout, None),
        }
    }

    /// Its generators other than the main one, made so far.
    pub(crate) fn issuers(&self) -> Vec<Arc<Issuer>> {
        match self {
            Leaf::Main => Vec::new(),
            Leaf::Made { keyed, .. } => {
                let mut all: Vec<_> = read(keyed).values().cloned().collect();
                all.sort_by(|a, b| a.namespace.cmp(&b.namespace));
                all
            }
        }
    }

    /// The layout of its IDs.
    fn layout<'a>(&'a self, main: &'a Issuer) -> &'a Layout {
        match self {
            Leaf::Main => main.generator.layout(),
            Leaf::Made { layout, .. } => layout,
        }
    }
}

fn read(
    keyed: &RwLock<HashMap<String, Arc<Issuer>>>,
) -> std::sync::RwLockReadGuard<'_, HashMap<String, Arc<Issuer>>> {
    keyed.read().unwrap_or_else(|p| p.into_inner())
}

/// `/api/snowflake/get/{key}`: Leaf's answer, the bare decimal ID.
pub(crate) async fn get<B>(
    shared: &Shared,
    a: &Asked<'_, B>,
    key: &str,
) -> Result<Response, Refusal> {
    let key = percent_decode(key).map_err(Refusal::bad)?;
    if key.is_empty() {
        return Err(Refusal::bad("the key is empty: /api/snowflake/get/{key}"));
    }
    if key.len() > 128 {
        return Err(Refusal::bad("the key is longer than 128 bytes"));
    }
    if let Some(keys) = &shared.config.keys {
        if !keys.contains(&key) {
            return Err(Refusal::new(
                StatusCode::FORBIDDEN,
                format!(
                    "key {:?} is not served here: the keys are {} (--keys)",
                    shorten(&key),
                    keys.join(", ")
                ),
            ));
        }
    }
    let issuer = match &shared.leaf {
        Leaf::Main => shared.main.clone(),
        Leaf::Made { .. } => made(shared, &key).await?,
    };
    if a.head {
        return Ok(respond(StatusCode::OK, TEXT, Vec::new()));
    }
    let id = leaf_id(shared, a, &issuer).await?;
    Ok(text(StatusCode::OK, id.to_string()))
}

/// The generator that answers `key`: the shared one, or in separate mode the key's (the main
/// one for its own namespace when its layout is the Leaf path's), made on first use (on the
/// blocking pool: it takes a lease), in separate mode up to `max_keys`.
async fn made(shared: &Shared, key: &str) -> Result<Arc<Issuer>, Refusal> {
    let Leaf::Made {
        factory,
        layout,
        shared: one,
        keyed,
        making,
    } = &shared.leaf
    else {
        unreachable!("made is called for a Leaf path of its own only")
    };
    let namespace = one.as_deref().unwrap_or(key);
    if one.is_none() && key == shared.main.namespace && layout == shared.main.generator.layout() {
        return Ok(shared.main.clone());
    }
    if let Some(i) = read(keyed).get(namespace) {
        return Ok(i.clone());
    }
    let _making = making.lock().await;
    if let Some(i) = read(keyed).get(namespace) {
        return Ok(i.clone());
    }
    let max = shared.config.max_keys;
    if one.is_none() && read(keyed).len() >= max {
        return Err(Refusal::new(
            StatusCode::FORBIDDEN,
            format!("key {key:?} is new and the service already has its {max} keys (--max-keys)"),
        ));
    }
    let factory = factory.clone();
    let name = namespace.to_string();
    match issue::blocking(move || factory(&name)).await {
        Ok(g) => {
            let issuer = Issuer::new(g, namespace.to_string());
            keyed
                .write()
                .unwrap_or_else(|p| p.into_inner())
                .insert(namespace.to_string(), issuer.clone());
            Ok(issuer)
        }
        Err(e) if e.kind() == ErrorKind::Config && one.is_none() => Err(Refusal::bad(format!(
            "key {key:?}: {}",
            one_line(e.message())
        ))),
        Err(e) => Err(e.into()),
    }
}

/// `/decodeSnowflakeId?snowflakeId=ID`: Leaf's decoding, in the Leaf path's layout, with Leaf's
/// keys and forms: `timestamp` as `"<Unix ms>(<date and time>)"` (here in UTC; Leaf wrote its
/// host's time zone), `workerId` the whole worker field and `sequenceId`, each a string.
pub(crate) fn decode(shared: &Shared, query: Option<&str>) -> Result<Response, Refusal> {
    let Some(text) = query_value(query, "snowflakeId").map_err(Refusal::bad)? else {
        return Err(Refusal::bad(
            "snowflakeId is needed: /decodeSnowflakeId?snowflakeId=ID",
        ));
    };
    let id: u64 = text.parse().map_err(|_| {
        Refusal::bad(format!(
            "snowflakeId={:?} is not a decimal ID",
            shorten(&text)
        ))
    })?;
    let layout = shared.leaf.layout(&shared.main);
    let parts = layout
        .decode(id)
        .map_err(|e| Refusal::bad(one_line(e.message())))?;
    let below = layout.worker_bits() - layout.datacenter_bits();
    let worker = parts
        .datacenter_id
        .map_or(parts.worker_id, |dc| (dc << below) | parts.worker_id);
    let when = rimeflake::frontend::iso8601(parts.timestamp_ms)
        .replace('T', " ")
        .trim_end_matches('Z')
        .to_string();
    let body = format!(
        "{{\"timestamp\":{},\"sequenceId\":\"{}\",\"workerId\":\"{worker}\"}}\n",
        json_string(&format!("{}({when})", parts.timestamp_ms)),
        parts.sequence
    );
    Ok(respond(StatusCode::OK, JSON, body.into_bytes()))
}

/// Issuing for the Leaf path: the IDs of `issuer`, with its answer's size taken on.
pub(crate) async fn leaf_id<B>(
    shared: &Shared,
    a: &Asked<'_, B>,
    issuer: &Arc<Issuer>,
) -> Result<u64, Refusal> {
    answered(a, BYTES_PER_ID, issue::one(&shared.limits, issuer)).await
}
