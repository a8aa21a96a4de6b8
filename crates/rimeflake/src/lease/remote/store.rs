//! [`RemoteStore`]: the state of a leased worker ID on its server, written only while the lease
//! is this holder's and the state is the version it last read or wrote.

use super::replication::{possibly_stale, tag};
use super::{decode_state, encode_state, Conn, Saved, Versioned, WRITER};
use crate::backend::Backend;
use crate::error::{Error, ErrorKind, Result};
use crate::state::{StateStore, WorkerState};
use std::sync::atomic::{AtomicBool, Ordering::SeqCst};
use std::sync::{Arc, Mutex};

/// The state of a leased worker ID on its server: every save is conditional on the lease's
/// token and on the version this store last read or wrote.
pub(crate) struct RemoteStore {
    pub(crate) conn: Mutex<Box<dyn Conn>>,
    pub(super) namespace: String,
    pub(super) worker_id: u64,
    pub(super) token: String,
    pub(super) backend: Backend,
    /// The version last read or written by this store.
    pub(super) version: Mutex<u64>,
    /// The process that took the lease: a forked child never writes through it.
    pub(super) pid: u32,
    /// Shared with the lease's keeper: told when another process moved the state.
    pub(super) keeper: Arc<super::keeper::Shared>,
    /// Another process stored its state over this store's version: no save of this store can
    /// succeed again (its version is stale for good), so none is sent.
    pub(super) moved: AtomicBool,
    /// The state the last load found may be a stale copy: stored on another server than this
    /// one, or before a restore was declared (see `replication::possibly_stale`).
    pub(super) stale: AtomicBool,
    /// The host of the holder that wrote the state the last load found.
    pub(super) writer: Mutex<Option<String>>,
}

impl std::fmt::Debug for RemoteStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.describe())
    }
}

/// The version a save writes over `version`: one more, but where no state is stored (a worker ID
/// never used, or one whose state the server lost), a number drawn from the writer's token, far
/// from 0. So versions do not start again from 1 after a loss: a holder that lost its lease
/// across it and takes it back cannot find its old version reached again by another holder's
/// writes, and overwrite them.
pub(crate) fn next_version(version: u64, token: &str) -> u64 {
    if version != 0 {
        return version + 1;
    }
    // FNV-1a of the token: each holder's own start, below 2^53 and above 2^20.
    let hash = token.bytes().fold(0xcbf2_9ce4_8422_2325u64, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    });
    (hash >> 11).max(1 << 20)
}

/// Why a store whose state another process moved writes no more.
const MOVED: &str = "another process stored its state meanwhile (it held the worker ID while this \
                     one had lost the lease)";

/// Why a store whose lease came back on another server than the one it was lost on writes no
/// more.
const ELSEWHERE: &str = "the lease came back on another server than the one it was lost on (a \
                         replica promoted, a server restarted): another process may have held \
                         the worker ID meanwhile and stored its state on the server that was \
                         lost";

impl RemoteStore {
    /// The store of `worker_id`'s state in `namespace` on the server `backend` names, over
    /// `conn`, for the lease `token` holds, sharing `keeper` with the lease; nothing read yet.
    pub(crate) fn new(
        conn: Box<dyn Conn>,
        namespace: &str,
        worker_id: u64,
        token: &str,
        backend: &Backend,
        keeper: Arc<super::keeper::Shared>,
    ) -> RemoteStore {
        RemoteStore {
            conn: Mutex::new(conn),
            namespace: namespace.to_string(),
            worker_id,
            token: token.to_string(),
            backend: backend.clone(),
            version: Mutex::new(0),
            pid: crate::fork::pid(),
            keeper,
            moved: AtomicBool::new(false),
            stale: AtomicBool::new(false),
            writer: Mutex::new(None),
        }
    }

    fn lost(&self, why: &str) -> Error {
        Error::new(
            ErrorKind::Lease,
            format!(
                "worker ID {} of namespace {} on {}: {why}; this generator issues no more IDs \
                 under it",
                self.worker_id, self.namespace, self.backend
            ),
        )
    }
}

impl RemoteStore {
    /// Whether the state the last load found may be a stale copy.
    pub(crate) fn loaded_stale(&self) -> bool {
        self.stale.load(SeqCst)
    }

    /// The host of the holder that wrote the state the last load found (its token's first
    /// part), when it says.
    pub(crate) fn loaded_writer_host(&self) -> Option<String> {
        self.writer
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }
}

impl StateStore for RemoteStore {
    fn load(&self) -> Result<Option<WorkerState>> {
        let found = self
            .conn
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .load(&self.namespace, self.worker_id)?;
        let mut version = self.version.lock().unwrap_or_else(|p| p.into_inner());
        match found {
            None => {
                *version = 0;
                self.stale.store(false, SeqCst);
                Ok(None)
            }
            Some(v) => {
                *self.writer.lock().unwrap_or_else(|p| p.into_inner()) = v
                    .text
                    .rsplit_once(WRITER)
                    .and_then(|(_, token)| token.split('/').next())
                    .filter(|h| !h.is_empty())
                    .map(str::to_string);
                let seen = self.keeper.seen();
                self.stale
                    .store(possibly_stale(&v.text, &seen.identity, seen.epoch), SeqCst);
                let state = decode_state(&v.text).ok_or_else(|| {
                    Error::new(
                        ErrorKind::State,
                        format!(
                            "{} holds a corrupt state ({:?}): nothing is reset silently; see \
                             `rimeflake state reset --backend`",
                            self.describe(),
                            v.text.chars().take(80).collect::<String>()
                        ),
                    )
                })?;
                *version = v.version;
                Ok(Some(state))
            }
        }
    }

    fn save(&self, state: &WorkerState) -> Result<()> {
        if self.pid != crate::fork::pid() {
            return Err(self.lost("this process is a fork of the one that holds the lease"));
        }
        if self.moved.load(SeqCst) {
            // Said again at every try: the worker ID may have been lost and given back since
            // (which clears what the generator was told).
            self.keeper.state_moved(self.lost(MOVED));
            return Err(self.lost(MOVED));
        }
        if self.keeper.changed_while_lapsed() {
            // Whatever this server holds: a write of another holder on the server that was lost
            // may lie above it, and its IDs above this holder's reservation.
            self.keeper.state_elsewhere(self.lost(ELSEWHERE));
            return Err(self.lost(ELSEWHERE));
        }
        let ticket = self.keeper.write_ticket();
        let mut version = self.version.lock().unwrap_or_else(|p| p.into_inner());
        let mut conn = self.conn.lock().unwrap_or_else(|p| p.into_inner());
        // The writer's token goes with the state, last: a write whose answer was lost (the call
        // timed out, the server ran it later) is then recognised as ours, not another holder's.
        // Before it, the tag of the server it is written to, as last seen.
        let seen = self.keeper.seen();
        let text = format!(
            "{}{WRITER}{}{WRITER}{}",
            encode_state(state),
            tag(seen.epoch, &seen.identity),
            self.token
        );
        // Over a possibly stale copy, the first write draws its version afresh, as over no
        // state: the holder that wrote the copy may have written the versions after it elsewhere
        // (on the lost primary), and taking the worker ID back later, must not find one of them
        // here again and write over this holder's state.
        let mut fresh = self.stale.load(SeqCst);
        let mut outcome = Saved::Moved;
        for _ in 0..2 {
            let next = Versioned {
                version: next_version(if fresh { 0 } else { *version }, &self.token),
                text: text.clone(),
            };
            outcome = conn.save(
                &self.namespace,
                self.worker_id,
                &self.token,
                *version,
                &next,
            )?;
            match outcome {
                Saved::Yes => {
                    *version = next.version;
                    self.stale.store(false, SeqCst);
                    self.keeper.stored(ticket);
                    return Ok(());
                }
                Saved::Moved => match conn.load(&self.namespace, self.worker_id)? {
                    // Our own write is there, of another version: a later one whose answer was
                    // lost, or an earlier one on a server that lost the writes after it (a
                    // replica promoted before it had them). Either way nobody else's write
                    // survived here (it would carry their token), and nobody wrote on the server
                    // that was lost either: the lease had not lapsed when the server changed
                    // (else `changed_while_lapsed` refused above), so nobody could take the
                    // worker ID there but by force. Go on from its version.
                    Some(v)
                        if v.text
                            .rsplit_once(WRITER)
                            .is_some_and(|(_, t)| t == self.token) =>
                    {
                        *version = v.version;
                        fresh = false;
                    }
                    // No state, or another's: someone else may have written in between, even
                    // where the state is gone (lost with everything else since): stop.
                    _ => break,
                },
                Saved::NotHolder => break,
            }
        }
        match outcome {
            Saved::Yes => Ok(()),
            Saved::NotHolder => Err(self.lost(
                "the lease was lost (it expired, and may have been taken by another process)",
            )),
            Saved::Moved => {
                self.moved.store(true, SeqCst);
                self.keeper.state_moved(self.lost(MOVED));
                Err(self.lost(MOVED))
            }
        }
    }

    fn describe(&self) -> String {
        format!(
            "worker ID {} of namespace {} on {}",
            self.worker_id, self.namespace, self.backend
        )
    }
}
