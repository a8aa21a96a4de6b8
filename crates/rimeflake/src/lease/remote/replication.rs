//! Replicated servers (docs/many-hosts.md, "Replicas, failover and restores"): what a server
//! says of itself, what a namespace keeps beside its layout, and the tag every state is stored
//! with.
//!
//! - [`ServerView`]: who the server is (a promotion, a restart, a restore makes it another), its
//!   lineage (which replicated data set it serves: a promoted replica names its former primary's
//!   as its parent) and how many replicas acknowledge writes now.
//! - [`Settings`]: what every generator of a namespace must agree on and what a successor of any
//!   of its worker IDs must respect, kept on the server with the namespace: `max_drift`, the
//!   replica acknowledgements every lease and state write needs, the lineage that requirement
//!   was decided on, and the restore epoch that `rimeflake state restored` raises.
//! - [`Replicas`]: the requirement the connections of one lease share, raised while they run.
//! - The tag: a state is stored as `state#epoch/identity#token`. A start that finds a state
//!   tagged with another server or an older epoch treats it as possibly stale (a copy promoted
//!   before it caught up, a backup restored) and starts above its floor.
//!
//! How many acknowledgements: every replica the namespace's primary had online when a
//! generator of the namespace last looked (at its start, and at each renewal), never fewer on
//! the same lineage. So an isolated old primary, which sees fewer replicas than it had, refuses
//! every write, and its holders stop at their deadlines. A promoted replica serves a new
//! lineage whose parent is the old one: there the requirement is one less (the promoted replica
//! was one of those that acknowledged), or what it has online if more. Any other new lineage (a
//! restart, a restore) keeps the requirement.

use super::Conn;
use crate::backend::Backend;
use crate::error::{Error, ErrorKind, Result};
use std::sync::atomic::{AtomicU32, Ordering::SeqCst};
use std::sync::Arc;

/// What a server says of itself, read at a start and after each renewal.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct ServerView {
    /// Who the server is: another after a promotion, a restore, and (Redis) a restart. Holds
    /// no `#`, `;` or `/`.
    pub(crate) identity: String,
    /// The replicated data set it serves: the same across a restart that keeps it (PostgreSQL).
    pub(crate) lineage: String,
    /// For a promoted replica, the lineage of its former primary.
    pub(crate) parent: Option<String>,
    /// Replicas that acknowledge writes now (Redis: replicas online; PostgreSQL: 1 when commits
    /// wait for a synchronous standby).
    pub(crate) replicas: u32,
}

/// What a namespace keeps beside its layout (see the module's description).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Settings {
    pub(crate) max_drift_ms: u64,
    /// Replica acknowledgements every lease write and state write needs.
    pub(crate) replicas: u32,
    /// Raised by `rimeflake state restored`: a state stored under an older epoch may be a stale
    /// copy.
    pub(crate) epoch: u64,
}

/// What a generator proposes when it settles a namespace's settings: the `max_drift` it starts
/// with where the namespace has none, and what the server says of itself.
#[derive(Clone, Debug)]
pub(crate) struct Proposal<'a> {
    pub(crate) max_drift_ms: u64,
    pub(crate) view: &'a ServerView,
}

/// The replica acknowledgements the connections of one lease wait for, shared by them and
/// settled again while they run (raised when more replicas come online; one less on a promoted
/// replica's lineage).
#[derive(Debug, Default)]
pub(crate) struct Replicas(AtomicU32);

impl Replicas {
    pub(crate) fn new(n: u32) -> Replicas {
        Replicas(AtomicU32::new(n))
    }
    pub(crate) fn get(&self) -> u32 {
        self.0.load(SeqCst)
    }
    pub(crate) fn set(&self, n: u32) {
        self.0.store(n, SeqCst);
    }
}

/// What a start settles before it takes a worker ID: the server's view of itself and the
/// namespace's settings, with the requirement every write of the lease then waits for (set on
/// `conn`). Refuses a `max_drift` other than the namespace's, and a server that has fewer
/// replicas online than the namespace requires (an old primary cut off from its replicas, or a
/// replica down), both naming what was found.
///
/// # Errors
/// [`ErrorKind::Config`] for another `max_drift`; [`ErrorKind::Lease`] for too few replicas,
/// and when the server cannot be used.
pub(crate) fn settle(
    conn: &mut dyn Conn,
    backend: &Backend,
    namespace: &str,
    max_drift_ms: u64,
) -> Result<(ServerView, Settings, Arc<Replicas>)> {
    let view = conn.server()?;
    let ours = Proposal {
        max_drift_ms,
        view: &view,
    };
    let settings = conn.settle_settings(namespace, &ours)?;
    if settings.max_drift_ms != max_drift_ms {
        return Err(Error::config(format!(
            "namespace {namespace} on {backend} keeps max_drift {} ms, which every successor of \
             its worker IDs relies on; this generator has max_drift {max_drift_ms} ms: give it \
             {} ms, or use another namespace",
            settings.max_drift_ms, settings.max_drift_ms
        )));
    }
    if settings.replicas > view.replicas {
        return Err(Error::new(
            ErrorKind::Lease,
            format!(
                "namespace {namespace} on {backend} requires every lease and state write to be \
                 acknowledged by {} replica(s) (it was replicated), and the server has {} online: \
                 a replica is down or resynchronising, or this is an old primary cut off from \
                 its replicas (whose writes a promoted replica would not have); writes are \
                 refused until the replicas are back. If a replica is gone for good, lower the \
                 requirement with `rimeflake state replicas`",
                settings.replicas, view.replicas
            ),
        ));
    }
    let replicas = Arc::new(Replicas::new(settings.replicas));
    conn.require(Arc::clone(&replicas));
    Ok((view, settings, replicas))
}

/// A namespace's settings as a server that settles them in Rust keeps them (MySQL, ZooKeeper):
/// each part as far as it was set (`state restored` and `state replicas` may come before any
/// generator settled the rest).
// Used by MySQL and ZooKeeper only: unused in a build without one of them.
#[cfg_attr(not(all(feature = "mysql", feature = "zookeeper")), allow(dead_code))]
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct Stored {
    pub(crate) max_drift_ms: Option<u64>,
    pub(crate) replicas: u32,
    pub(crate) epoch: u64,
    /// The lineage the replicas were settled on.
    pub(crate) lineage: Option<String>,
}

// Used by MySQL and ZooKeeper only: unused in a build without one of them.
#[cfg_attr(not(all(feature = "mysql", feature = "zookeeper")), allow(dead_code))]
impl Stored {
    /// What [`Conn::settle_settings`] stores over `self` for `ours`: the `max_drift` kept
    /// (else ours), the epoch kept, the replicas required one less on a promoted replica's
    /// lineage (`ours`' parent is the stored lineage), kept on any other, and at least those
    /// online; the lineage then ours. Redis's script and PostgreSQL's statement say the same
    /// in their servers' languages.
    pub(crate) fn settled(&self, ours: &Proposal<'_>) -> Stored {
        let promoted = self
            .lineage
            .as_deref()
            .is_some_and(|l| l != ours.view.lineage && Some(l) == ours.view.parent.as_deref());
        Stored {
            max_drift_ms: Some(self.max_drift_ms.unwrap_or(ours.max_drift_ms)),
            replicas: (self.replicas - u32::from(promoted && self.replicas > 0))
                .max(ours.view.replicas),
            epoch: self.epoch,
            lineage: Some(ours.view.lineage.clone()),
        }
    }

    /// The settings a generator follows (settled: `max_drift` is there).
    pub(crate) fn settings(&self) -> Settings {
        Settings {
            max_drift_ms: self.max_drift_ms.unwrap_or_default(),
            replicas: self.replicas,
            epoch: self.epoch,
        }
    }

    /// As one line of text: `max_drift_ms replicas epoch lineage`, `-` for a part not set.
    pub(crate) fn encode(&self) -> String {
        format!(
            "{} {} {} {}",
            self.max_drift_ms.map_or("-".into(), |d| d.to_string()),
            self.replicas,
            self.epoch,
            self.lineage.as_deref().unwrap_or("-")
        )
    }

    /// What [`Stored::encode`] wrote; `None` for other text.
    pub(crate) fn decode(text: &str) -> Option<Stored> {
        let mut parts = text.split(' ');
        let drift = match parts.next()? {
            "-" => None,
            d => Some(d.parse().ok()?),
        };
        let replicas = parts.next()?.parse().ok()?;
        let epoch = parts.next()?.parse().ok()?;
        let lineage = match parts.next()? {
            "-" => None,
            l => Some(l.to_string()),
        };
        if parts.next().is_some() {
            return None;
        }
        Some(Stored {
            max_drift_ms: drift,
            replicas,
            epoch,
            lineage,
        })
    }
}

/// The settings' calls of a server that changes a namespace's settings in Rust, as [`Stored`]:
/// MySQL (in a transaction that locks the namespace's row), ZooKeeper (a write over the
/// version read). Redis and PostgreSQL settle in their own languages.
// Used by MySQL and ZooKeeper only: unused in a build without one of them.
#[cfg_attr(not(all(feature = "mysql", feature = "zookeeper")), allow(dead_code))]
pub(crate) trait StoredSettings {
    /// Changes the namespace's settings atomically: `change` gets them as stored (the default
    /// where none are) and returns what to store. `None` when the namespace has no record.
    fn change_settings(
        &mut self,
        what: &str,
        namespace: &str,
        change: &dyn Fn(Stored) -> Stored,
    ) -> Result<Option<Stored>>;

    /// An error unless `required` replicas have the writes this connection made.
    fn acknowledged(&mut self, doing: &str, required: u32) -> Result<()>;

    /// [`Conn::settle_settings`]. It waits for no replica itself: the next lease write's
    /// acknowledgement covers it (a replica that has a later write has every earlier one).
    fn settle_stored(&mut self, namespace: &str, ours: &Proposal<'_>) -> Result<Settings> {
        let stored = self.change_settings("settle the namespace's settings", namespace, &|s| {
            s.settled(ours)
        })?;
        stored.map(|s| s.settings()).ok_or_else(|| {
            Error::new(
                ErrorKind::Lease,
                format!("the record of namespace {namespace} vanished as it was settled"),
            )
        })
    }

    /// [`Conn::new_epoch`], acknowledged by the replicas the namespace requires (whatever this
    /// connection was told to require: `state restored` runs outside any lease).
    fn raise_stored_epoch(&mut self, namespace: &str) -> Result<u64> {
        let what = "raise the restore epoch";
        let stored = self.change_settings(what, namespace, &|s| Stored {
            epoch: s.epoch + 1,
            ..s
        })?;
        let Some(stored) = stored else {
            return Err(Error::new(
                ErrorKind::State,
                format!("namespace {namespace} is not on this server"),
            ));
        };
        self.acknowledged(what, stored.replicas)?;
        Ok(stored.epoch)
    }

    /// [`Conn::set_replicas`].
    fn set_stored_replicas(&mut self, namespace: &str, replicas: u32) -> Result<()> {
        self.change_settings("set the replicas required", namespace, &|s| Stored {
            replicas,
            ..s
        })
        .map(drop)
    }
}

/// What separates the tag's epoch from its identity.
const TAG_SEP: char = '/';

/// The tag of a state stored on the server `identity` under restore epoch `epoch`.
pub(crate) fn tag(epoch: u64, identity: &str) -> String {
    format!("{epoch}{TAG_SEP}{identity}")
}

/// The epoch and the server identity of a stored state's tag (`state#tag#token`); `None` for a
/// state without one (stored by an older version).
pub(crate) fn tag_of(text: &str) -> Option<(u64, &str)> {
    let (_, rest) = text.split_once(super::WRITER)?;
    let (tag, _token) = rest.rsplit_once(super::WRITER)?;
    let (epoch, identity) = tag.split_once(TAG_SEP)?;
    Some((epoch.parse().ok()?, identity))
}

/// Whether a state stored as `text` may be a stale copy on the server `identity` of a namespace
/// at restore epoch `epoch`: stored on another server, or before a restore. A state stored by an
/// older version (without a tag) counts as stale only once a restore was declared.
pub(crate) fn possibly_stale(text: &str, identity: &str, epoch: u64) -> bool {
    match tag_of(text) {
        Some((e, id)) => e != epoch || id != identity,
        None => epoch > 0,
    }
}

/// A text a server sent, kept only as far as it is plain (letters, digits, `-`, `_`, `.`,
/// `:`), at most 100 characters: an identity never holds what separates a state's parts.
// Used by MySQL and ZooKeeper only: unused in a build without one of them.
#[cfg_attr(not(all(feature = "mysql", feature = "zookeeper")), allow(dead_code))]
pub(crate) fn plain(text: &str) -> String {
    text.chars()
        .filter(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.' | ':'))
        .take(100)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tags_round_trip_and_tell_a_stale_copy() {
        let text = format!("0;5;-#{}#host/1/ab", tag(3, "redis:aa:bb"));
        assert_eq!(tag_of(&text), Some((3, "redis:aa:bb")));
        assert_eq!(
            super::super::decode_state(&text).map(|s| s.clock_id),
            Some(0)
        );
        assert!(!possibly_stale(&text, "redis:aa:bb", 3));
        assert!(possibly_stale(&text, "redis:aa:cc", 3));
        assert!(possibly_stale(&text, "redis:aa:bb", 4));
        // Stored by an older version: no tag, and its writer's token still last.
        let old = "0;5;-#host/1/ab";
        assert_eq!(tag_of(old), None);
        assert!(!possibly_stale(old, "redis:aa:bb", 0));
        assert!(possibly_stale(old, "redis:aa:bb", 1));
        assert_eq!(plain("ab#c;d/e:f"), "abcde:f");
    }

    #[test]
    fn stored_settings_settle_as_the_scripts_do_and_round_trip() {
        let view = |lineage: &str, parent: Option<&str>, replicas| ServerView {
            identity: lineage.into(),
            lineage: lineage.into(),
            parent: parent.map(str::to_string),
            replicas,
        };
        let settle = |s: &Stored, v: &ServerView| {
            s.settled(&Proposal {
                max_drift_ms: 2_000,
                view: v,
            })
        };
        let first = settle(&Stored::default(), &view("a", None, 2));
        assert_eq!(
            first.settings(),
            Settings {
                max_drift_ms: 2_000,
                replicas: 2,
                epoch: 0
            }
        );
        // Fewer online on the same lineage, or another lineage that is not its child: kept.
        assert_eq!(settle(&first, &view("a", None, 0)).replicas, 2);
        assert_eq!(settle(&first, &view("b", None, 0)).replicas, 2);
        // A promoted replica of "a": one less.
        let promoted = settle(&first, &view("c", Some("a"), 0));
        assert_eq!(
            (promoted.replicas, promoted.lineage.as_deref()),
            (1, Some("c"))
        );
        let restored = Stored {
            epoch: 3,
            ..Stored::default()
        };
        assert_eq!(Stored::decode(&restored.encode()), Some(restored.clone()));
        assert_eq!(Stored::decode(&promoted.encode()), Some(promoted));
        assert_eq!(Stored::decode("1 2 3"), None);
        assert_eq!(Stored::decode("x 2 3 a"), None);
    }
}
