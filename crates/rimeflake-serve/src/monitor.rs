//! The log of what happens to the generators while the service runs: a server lease lost and
//! regained, a switch to another clock-id after the clock went back, a move to another worker
//! ID. Read from each generator's stats ten times a second (they are atomics): the service
//! logs what the core decided, it decides nothing. A loss that ends between two looks is still
//! logged: the core counts every loss (`Stats::lease_losses`).

use crate::log::Log;
use crate::Shared;
use rimeflake::LeaseState;
use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

/// How often the generators are looked at.
const EVERY: Duration = Duration::from_millis(100);

#[derive(Clone, Copy, PartialEq, Eq)]
struct Seen {
    lease: LeaseState,
    losses: u64,
    clock_id: u64,
    switches: u64,
    worker: u64,
}

pub(crate) async fn watch(shared: Arc<Shared>, log: Log) {
    let mut seen: HashMap<String, Seen> = HashMap::new();
    loop {
        for issuer in shared.issuers() {
            let g = &issuer.generator;
            let stats = g.stats();
            let now = Seen {
                lease: stats.lease,
                losses: stats.lease_losses,
                clock_id: stats.clock_id,
                switches: stats.clock_id_bumps,
                worker: g.worker_id(),
            };
            let ns = issuer.namespace.as_str();
            let Some(before) = seen.insert(ns.to_string(), now) else {
                continue;
            };
            if before == now {
                continue;
            }
            let fields = |what: &str| {
                vec![
                    ("namespace", ns.into()),
                    ("worker", now.worker.into()),
                    ("clock_id", now.clock_id.into()),
                    ("what", what.into()),
                ]
            };
            if now.worker != before.worker {
                log.warn(
                    "worker_moved",
                    &format!(
                        "namespace {ns}: moved from worker {} to worker {} (another process took \
                         worker {})",
                        before.worker, now.worker, before.worker
                    ),
                    &fields("worker"),
                );
            }
            // Lost and held again (or lost again) since the last look.
            let unseen_loss = now.losses > before.losses && now.lease == before.lease;
            if unseen_loss && now.lease == LeaseState::Held {
                log.warn(
                    "lease_lost",
                    &format!(
                        "namespace {ns}: the lease of worker {} was lost, and is held again",
                        now.worker
                    ),
                    &fields("lease"),
                );
            } else if now.lease != before.lease || unseen_loss {
                match now.lease {
                    LeaseState::Lost => {
                        let why = g.ready().err().map_or(String::new(), |e| {
                            format!(": {}", crate::log::one_line(e.message()))
                        });
                        log.warn(
                            "lease_lost",
                            &format!("namespace {ns}: the lease of worker {} is lost, no ID until it is back{why}", now.worker),
                            &fields("lease"),
                        );
                    }
                    LeaseState::Held => log.info(
                        "lease_regained",
                        &format!(
                            "namespace {ns}: the lease of worker {} is held again",
                            now.worker
                        ),
                        &fields("lease"),
                    ),
                    _ => {}
                }
            }
            if now.switches != before.switches || now.clock_id != before.clock_id {
                log.warn(
                    "clock_id_switch",
                    &format!(
                        "namespace {ns}: switched from clock-id {} to clock-id {} (the clock went \
                         back, by up to {} ms so far)",
                        before.clock_id, now.clock_id, stats.largest_rollback_ms
                    ),
                    &fields("clock_id"),
                );
            }
        }
        tokio::time::sleep(EVERY).await;
    }
}
