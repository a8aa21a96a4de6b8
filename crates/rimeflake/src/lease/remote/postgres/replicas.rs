//! PostgreSQL standbys: what the server says of itself (its system identifier and timeline,
//! whether commits wait for a synchronous standby), the namespace's settings, and the refusal of
//! lease and state writes that would not go through a synchronous standby while the namespace
//! requires one (see the `replication` module of the remote leases).

use super::sql::{NEW_EPOCH, SERVER_VIEW, SETTLE_SETTINGS, SYNCHRONOUS};
use super::{col, to_i64, to_u64, Done, Fail, PgConn, Session};
use crate::error::{Error, ErrorKind, Result};
use crate::lease::remote::replication::plain;
use crate::lease::remote::{Proposal, ServerView, Settings};

impl Session {
    /// Whether commits wait for a synchronous standby now.
    pub(super) async fn synchronous(&mut self) -> Done<bool> {
        let rows = self.query(SYNCHRONOUS, &[]).await?;
        Ok(rows
            .first()
            .map(|r| col::<bool>(r, 0))
            .transpose()?
            .unwrap_or(false))
    }
}

impl PgConn {
    /// The error of a write refused because commits no longer wait for a synchronous standby.
    pub(super) fn unsynchronous(&self) -> Error {
        Error::new(
            ErrorKind::Lease,
            format!(
                "PostgreSQL at {}: its namespace requires every lease and state write to be \
                 committed through a synchronous standby, and synchronous_standby_names is \
                 empty here (an old primary cut off from its standby and set to commit alone?): \
                 writes are refused until it is set again; if the standby is gone for good, \
                 see `rimeflake state replicas`",
                self.shown
            ),
        )
    }

    /// [`Conn::server`](super::Conn::server): the system identifier and the timeline make the
    /// identity and the lineage (a promotion or a point-in-time recovery starts a new timeline,
    /// a restore into another cluster has another identifier); a restart keeps both.
    pub(super) fn server_view(&mut self) -> Result<ServerView> {
        let url = self.shown.clone();
        self.call("look at the server", |mut s| async move {
            let out = async {
                let rows = s.query(SERVER_VIEW, &[]).await?;
                let row = rows.first().ok_or_else(|| {
                    Fail::Ours(Error::new(ErrorKind::Lease, "the server sent no row"))
                })?;
                if col::<bool>(row, 0)? {
                    return Err(Fail::Ours(Error::new(
                        ErrorKind::Lease,
                        format!(
                            "PostgreSQL at {url} is a standby (in recovery): leases and states \
                             are written to the primary only; give the primary's address, or a \
                             virtual IP that follows it"
                        ),
                    )));
                }
                let system = plain(&col::<String>(row, 1)?);
                let wal: String = col(row, 2)?;
                let timeline = wal
                    .get(..8)
                    .and_then(|t| u32::from_str_radix(t, 16).ok())
                    .unwrap_or(0);
                let lineage = |t: u32| format!("pg:{system}:{t}");
                Ok(ServerView {
                    identity: lineage(timeline),
                    lineage: lineage(timeline),
                    parent: (timeline > 1).then(|| lineage(timeline - 1)),
                    replicas: u32::from(col::<bool>(row, 3)?),
                })
            }
            .await;
            (s, out)
        })
    }

    /// [`Conn::settle_settings`](super::Conn::settle_settings).
    pub(super) fn settle(&mut self, namespace: &str, ours: &Proposal<'_>) -> Result<Settings> {
        let drift = to_i64(ours.max_drift_ms, "max_drift (ms)")?;
        let online = i64::from(ours.view.replicas);
        let (lineage, parent) = (
            ours.view.lineage.as_str(),
            ours.view.parent.as_deref().unwrap_or(""),
        );
        self.call("settle the namespace's settings", |mut s| async move {
            let out = async {
                let params: [&(dyn tokio_postgres::types::ToSql + Sync); 5] =
                    [&namespace, &drift, &lineage, &parent, &online];
                let rows = s.query(SETTLE_SETTINGS, &params).await?;
                let row = rows.first().ok_or_else(|| {
                    Fail::Ours(Error::new(
                        ErrorKind::Lease,
                        format!("the record of namespace {namespace} vanished as it was settled"),
                    ))
                })?;
                Ok(Settings {
                    max_drift_ms: to_u64(col(row, 0)?, "max_drift")?,
                    replicas: to_u64(col(row, 1)?, "replicas")? as u32,
                    epoch: to_u64(col(row, 2)?, "epoch")?,
                })
            }
            .await;
            (s, out)
        })
    }

    /// [`Conn::new_epoch`](super::Conn::new_epoch).
    pub(super) fn raise_epoch(&mut self, namespace: &str) -> Result<u64> {
        self.call("raise the restore epoch", |mut s| async move {
            let out = async {
                let rows = s.query(NEW_EPOCH, &[&namespace]).await?;
                let row = rows.first().ok_or_else(|| {
                    Fail::Ours(Error::new(
                        ErrorKind::State,
                        format!("namespace {namespace} is not on this server"),
                    ))
                })?;
                to_u64(col(row, 0)?, "epoch")
            }
            .await;
            (s, out)
        })
    }
}
