//! Meituan Leaf's snowflake paths, so that a Leaf client switches by URL alone:
//! `/api/snowflake/get/{key}` answers the bare decimal ID, and `/decodeSnowflakeId` Leaf's
//! JSON. As in Leaf's snowflake mode, every key shares one ID space by default (the key only
//! names the caller); with `--leaf-keys separate`, each key is a namespace of its own, with its
//! own generator and lease, made on first use up to `--max-keys`.

use crate::api::{leaf_id, shorten, Asked, Refusal, TEXT};
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
    /// One generator for every key, as Leaf's snowflake mode: its namespace and itself.
    Shared(String, Generator),
    /// A namespace per key, made by the factory on first use, in `layout` (a key named as the
    /// main generator's namespace gets the main generator when `layout` is the main one's).
    Separate(Factory, Layout),
}

/// The Leaf path's generators, as the service holds them.
pub(crate) enum Leaf {
    Main,
    Shared(Arc<Issuer>),
    Separate {
        factory: Factory,
        layout: Layout,
        keyed: RwLock<HashMap<String, Arc<Issuer>>>,
        /// Held while a key's generator is made, so that two first requests make one.
        making: tokio::sync::Mutex<()>,
    },
}

impl Leaf {
    pub(crate) fn new(path: LeafPath) -> Leaf {
        match path {
            LeafPath::Main => Leaf::Main,
            LeafPath::Shared(ns, g) => Leaf::Shared(Issuer::new(g, ns)),
            LeafPath::Separate(factory, layout) => Leaf::Separate {
                factory,
                layout,
                keyed: RwLock::new(HashMap::new()),
                making: tokio::sync::Mutex::new(()),
            },
        }
    }

    /// Its generators other than the main one, now.
    pub(crate) fn issuers(&self) -> Vec<Arc<Issuer>> {
        match self {
            Leaf::Main => Vec::new(),
            Leaf::Shared(i) => vec![i.clone()],
            Leaf::Separate { keyed, .. } => {
                let mut all: Vec<_> = read(keyed).values().cloned().collect();
                all.sort_by(|a, b| a.namespace.cmp(&b.namespace));
                all
            }
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
        if !keys.iter().any(|k| *k == key) {
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
        Leaf::Shared(i) => i.clone(),
        Leaf::Separate { .. } => keyed(shared, &key).await?,
    };
    if a.head {
        return Ok(crate::api::respond(StatusCode::OK, TEXT, Vec::new()));
    }
    let id = leaf_id(shared, a, &issuer).await?;
    Ok(crate::api::text(StatusCode::OK, id.to_string()))
}

/// The generator of `key` in separate mode: the main one for its own namespace (when its
/// layout is the Leaf path's), else the key's, made on first use (on the blocking pool: it
/// takes a lease) up to `max_keys`.
async fn keyed(shared: &Shared, key: &str) -> Result<Arc<Issuer>, Refusal> {
    let Leaf::Separate {
        factory,
        layout,
        keyed,
        making,
    } = &shared.leaf
    else {
        unreachable!("keyed is called in separate mode only")
    };
    if key == shared.main.namespace && layout == shared.main.generator.layout() {
        return Ok(shared.main.clone());
    }
    if let Some(i) = read(keyed).get(key) {
        return Ok(i.clone());
    }
    let _making = making.lock().await;
    if let Some(i) = read(keyed).get(key) {
        return Ok(i.clone());
    }
    let max = shared.config.max_keys;
    if read(keyed).len() >= max {
        return Err(Refusal::new(
            StatusCode::FORBIDDEN,
            format!("key {key:?} is new and the service already has its {max} keys (--max-keys)"),
        ));
    }
    let factory = factory.clone();
    let name = key.to_string();
    match issue::blocking(move || factory(&name)).await {
        Ok(g) => {
            let issuer = Issuer::new(g, key.to_string());
            keyed
                .write()
                .unwrap_or_else(|p| p.into_inner())
                .insert(key.to_string(), issuer.clone());
            Ok(issuer)
        }
        Err(e) if e.kind() == ErrorKind::Config => Err(Refusal::bad(format!(
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
    let layout = match &shared.leaf {
        Leaf::Main => shared.main.generator.layout().clone(),
        Leaf::Shared(i) => i.generator.layout().clone(),
        Leaf::Separate { layout, .. } => layout.clone(),
    };
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
    Ok(crate::api::respond(
        StatusCode::OK,
        crate::api::JSON,
        body.into_bytes(),
    ))
}
