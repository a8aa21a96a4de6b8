//! [`WorkerSource::resolve_as`]: from where a worker ID comes to the lease to take for it.
//!
//! Fixed, environment and Kubernetes worker IDs become [`LeaseRequest::Exact`]: they too are
//! locked in the state directory, so two processes on one host cannot run the same one.

use super::local::LeaseRequest;
use super::WorkerSource;
use crate::contract::{Frontend, Setting};
use crate::error::{Error, Result};

/// The environment variable [`WorkerSource::FromEnv`] reads.
pub use crate::env::WORKER_ID_ENV;
/// The environment variable [`WorkerSource::KubernetesOrdinal`] reads first: expose the pod's
/// `apps.kubernetes.io/pod-index` label in it with the downward API.
pub const POD_INDEX_ENV: &str = "RIMEFLAKE_POD_INDEX";
/// The value of [`WORKER_ID_ENV`] that takes the worker ID from the pod's ordinal in a
/// Kubernetes StatefulSet: [`POD_INDEX_ENV`] when set, else the trailing `-<n>` of the host name
/// (`$HOSTNAME`, else the system's), as `web-3` gives 3.
pub const ORDINAL: &str = "ordinal";

impl WorkerSource {
    /// The lease to take for this source, for a layout whose largest worker ID is
    /// `max_worker_id`, with the environment and host name given (for tests).
    ///
    /// # Errors
    /// [`ErrorKind::Config`](crate::ErrorKind::Config) when the worker ID is missing, not a
    /// number, above `max_worker_id`, or (Kubernetes) cannot be told from the host name.
    #[cfg(test)]
    pub(crate) fn resolve_with(
        &self,
        max_worker_id: u64,
        env: &dyn Fn(&str) -> Option<String>,
        host: &dyn Fn() -> Option<String>,
    ) -> Result<LeaseRequest> {
        self.resolve_in(max_worker_id, env, host, Frontend::Rust)
    }

    /// The lease to take for this source, for a layout whose largest worker ID is
    /// `max_worker_id`, naming a fixed worker ID as `spelling` does.
    pub(crate) fn resolve_as(
        &self,
        max_worker_id: u64,
        spelling: Frontend,
    ) -> Result<LeaseRequest> {
        self.resolve_in(
            max_worker_id,
            &|name| std::env::var(name).ok(),
            &super::local::hostname,
            spelling,
        )
    }

    fn resolve_in(
        &self,
        max_worker_id: u64,
        env: &dyn Fn(&str) -> Option<String>,
        host: &dyn Fn() -> Option<String>,
        spelling: Frontend,
    ) -> Result<LeaseRequest> {
        let (id, from) = match self {
            WorkerSource::Fixed(id) => (*id, spelling.setting(Setting::WorkerId).to_string()),
            WorkerSource::FromEnv => {
                let raw = env(WORKER_ID_ENV).ok_or_else(|| {
                    Error::config(format!(
                        "{WORKER_ID_ENV} is not set: set it to this process's worker ID \
                         (0..={max_worker_id}), or let the generator lease one"
                    ))
                })?;
                if raw.trim() == ORDINAL {
                    ordinal(env, host)?
                } else {
                    (parse_id(&raw, WORKER_ID_ENV)?, WORKER_ID_ENV.to_string())
                }
            }
            WorkerSource::KubernetesOrdinal { statefulset } => {
                kubernetes_ordinal(statefulset.as_deref(), env, host)?
            }
            WorkerSource::LocalLease { range } => {
                let range = range.clone().unwrap_or(0..=max_worker_id);
                if range.is_empty() || *range.end() > max_worker_id {
                    return Err(Error::config(format!(
                        "worker_range {}..={}: must be a non-empty range within this layout's \
                         worker IDs 0..={max_worker_id}",
                        range.start(),
                        range.end()
                    )));
                }
                return Ok(LeaseRequest::Any { range });
            }
        };
        if id > max_worker_id {
            return Err(Error::config(format!(
                "worker ID {id} (from {from}) is above this layout's largest worker ID \
                 {max_worker_id}"
            )));
        }
        Ok(LeaseRequest::Exact(id))
    }
}

pub(crate) fn parse_id(raw: &str, from: &str) -> Result<u64> {
    let t = raw.trim();
    // Digits only: "+5", "0x5" or "5.0" are more likely mistakes than intent.
    if t.is_empty() || !t.bytes().all(|b| b.is_ascii_digit()) {
        return Err(Error::config(format!(
            "{from}={raw:?} is not a worker ID: expected a non-negative integer"
        )));
    }
    t.parse()
        .map_err(|_| Error::config(format!("{from}={raw:?} is too large for a worker ID")))
}

/// The worker ID `RIMEFLAKE_WORKER_ID=ordinal` stands for, and where it was read: the pod index
/// in [`POD_INDEX_ENV`], else the trailing `-<n>` of `$HOSTNAME` (else of `host`, the system's
/// host name). Empty variables count as unset.
///
/// # Errors
/// [`ErrorKind::Config`](crate::ErrorKind::Config): a pod index that is not a number, or a host
/// name without a trailing `-<n>` (the message says what it read).
pub(crate) fn ordinal(
    env: &dyn Fn(&str) -> Option<String>,
    host: &dyn Fn() -> Option<String>,
) -> Result<(u64, String)> {
    let set = |name: &str| env(name).filter(|v| !v.is_empty());
    if let Some(raw) = set(POD_INDEX_ENV) {
        return Ok((
            parse_id(&raw, POD_INDEX_ENV)?,
            format!("{WORKER_ID_ENV}={ORDINAL}, {POD_INDEX_ENV}"),
        ));
    }
    let (name, from) = match set("HOSTNAME") {
        Some(h) => (h, "$HOSTNAME"),
        None => (host().unwrap_or_default(), "the system's host name"),
    };
    let digits = name
        .rsplit_once('-')
        .filter(|(base, n)| {
            !base.is_empty() && !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit())
        })
        // StatefulSet ordinals are written without leading zeros.
        .filter(|(_, n)| *n == "0" || !n.starts_with('0'))
        .and_then(|(_, n)| n.parse::<u64>().ok());
    match digits {
        Some(n) => Ok((n, format!("{WORKER_ID_ENV}={ORDINAL}, host name {name}"))),
        None => Err(Error::config(format!(
            "{WORKER_ID_ENV}={ORDINAL}: {POD_INDEX_ENV} is not set and the host name {name:?} \
             ({from}) does not end in -<n> as a StatefulSet pod's does (web-3): run it in a \
             StatefulSet, expose the pod's apps.kubernetes.io/pod-index label in \
             {POD_INDEX_ENV} with the downward API, or give a number"
        ))),
    }
}

fn kubernetes_ordinal(
    statefulset: Option<&str>,
    env: &dyn Fn(&str) -> Option<String>,
    host: &dyn Fn() -> Option<String>,
) -> Result<(u64, String)> {
    if let Some(raw) = env(POD_INDEX_ENV) {
        return Ok((parse_id(&raw, POD_INDEX_ENV)?, POD_INDEX_ENV.to_string()));
    }
    let host = host().unwrap_or_default();
    if looks_like_deployment_pod(&host) {
        return Err(Error::config(format!(
            "host name {host:?} looks like a Deployment's pod (random suffix): its pods have no \
             stable index, so two could share a worker ID. Use a StatefulSet (and expose \
             apps.kubernetes.io/pod-index in {POD_INDEX_ENV}), or another worker source"
        )));
    }
    let Some(set) = statefulset else {
        return Err(Error::config(format!(
            "Kubernetes ordinal: {POD_INDEX_ENV} is not set and no StatefulSet name was given to \
             read the index from the host name {host:?}: expose the pod's \
             apps.kubernetes.io/pod-index label in {POD_INDEX_ENV} with the downward API, or \
             give the StatefulSet's name"
        )));
    };
    let ordinal = host
        .strip_prefix(set)
        .and_then(|rest| rest.strip_prefix('-'))
        // StatefulSet ordinals are written without leading zeros.
        .filter(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
        .filter(|n| *n == "0" || !n.starts_with('0'))
        .and_then(|n| n.parse().ok());
    match ordinal {
        Some(n) => Ok((n, format!("host name {host}"))),
        None => Err(Error::config(format!(
            "host name {host:?} is not a pod of StatefulSet {set:?} (expected \"{set}-<n>\"): \
             check the StatefulSet's name, or expose apps.kubernetes.io/pod-index in \
             {POD_INDEX_ENV}"
        ))),
    }
}

/// `<name>-<pod-template-hash>-<suffix>`: a hash of 6 to 10 and a suffix of 5 lower-case
/// letters and digits, as Deployments (through ReplicaSets) name their pods.
fn looks_like_deployment_pod(host: &str) -> bool {
    let mut parts = host.rsplit('-');
    let (Some(suffix), Some(hash), Some(name)) = (parts.next(), parts.next(), parts.next()) else {
        return false;
    };
    let random = |s: &str, lens: std::ops::RangeInclusive<usize>| {
        lens.contains(&s.len())
            && s.bytes()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit())
            && !s.bytes().all(|b| b.is_ascii_digit())
    };
    !name.is_empty() && random(suffix, 5..=5) && random(hash, 6..=10)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ErrorKind;

    fn resolve(source: &WorkerSource, vars: &[(&str, &str)], host: &str) -> Result<LeaseRequest> {
        let vars: Vec<(String, String)> = vars
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        let host = host.to_string();
        source.resolve_with(
            1023,
            &move |name| vars.iter().find(|(k, _)| k == name).map(|(_, v)| v.clone()),
            &move || Some(host.clone()),
        )
    }

    fn config_err(r: Result<LeaseRequest>, needle: &str) {
        let e = r.unwrap_err();
        assert_eq!(e.kind(), ErrorKind::Config);
        assert!(e.message().contains(needle), "{needle:?} not in {e}");
    }

    #[test]
    fn fixed_and_env_ids_are_exact_and_range_checked() {
        let fixed = WorkerSource::Fixed(5);
        assert_eq!(resolve(&fixed, &[], "h").unwrap(), LeaseRequest::Exact(5));
        config_err(resolve(&WorkerSource::Fixed(1024), &[], "h"), "1023");
        let env = WorkerSource::FromEnv;
        let ok = resolve(&env, &[(WORKER_ID_ENV, " 17 ")], "h").unwrap();
        assert_eq!(ok, LeaseRequest::Exact(17));
        config_err(resolve(&env, &[], "h"), "is not set");
        config_err(
            resolve(&env, &[(WORKER_ID_ENV, "x1")], "h"),
            "not a worker ID",
        );
        config_err(
            resolve(&env, &[(WORKER_ID_ENV, "-1")], "h"),
            "not a worker ID",
        );
        config_err(resolve(&env, &[(WORKER_ID_ENV, "2000")], "h"), "above");
    }

    #[test]
    fn kubernetes_reads_the_pod_index_or_the_statefulset_host_name() {
        let k = |s: Option<&str>| WorkerSource::KubernetesOrdinal {
            statefulset: s.map(str::to_string),
        };
        let by_env = resolve(&k(None), &[(POD_INDEX_ENV, "3")], "whatever").unwrap();
        assert_eq!(by_env, LeaseRequest::Exact(3));
        assert_eq!(
            resolve(&k(Some("web")), &[], "web-12").unwrap(),
            LeaseRequest::Exact(12)
        );
        assert_eq!(
            resolve(&k(Some("my-db")), &[], "my-db-0").unwrap(),
            LeaseRequest::Exact(0)
        );
        config_err(resolve(&k(None), &[], "web-12"), "StatefulSet name");
        config_err(
            resolve(&k(Some("web")), &[], "api-3"),
            "not a pod of StatefulSet",
        );
        config_err(resolve(&k(Some("web")), &[], "web-03"), "not a pod");
        config_err(
            resolve(&k(Some("web")), &[], "web-7d9f8b6c5-x2k4p"),
            "Deployment",
        );
        config_err(resolve(&k(None), &[], "web-7d9f8b6c5-x2k4p"), "Deployment");
        config_err(resolve(&k(Some("web")), &[], "web-2000"), "above");
    }

    #[test]
    fn ordinal_reads_the_pod_index_then_the_host_name() {
        let env = WorkerSource::FromEnv;
        let ord = (WORKER_ID_ENV, "ordinal");
        assert_eq!(
            resolve(
                &env,
                &[ord, (POD_INDEX_ENV, "5"), ("HOSTNAME", "web-3")],
                "h"
            )
            .unwrap(),
            LeaseRequest::Exact(5)
        );
        assert_eq!(
            resolve(&env, &[ord, ("HOSTNAME", "web-3")], "other-9").unwrap(),
            LeaseRequest::Exact(3)
        );
        // Empty variables count as unset; the system's host name comes last.
        let empty = [ord, (POD_INDEX_ENV, ""), ("HOSTNAME", "")];
        assert_eq!(
            resolve(&env, &empty, "my-db-0").unwrap(),
            LeaseRequest::Exact(0)
        );
        config_err(
            resolve(&env, &[ord, (POD_INDEX_ENV, "x")], "h"),
            POD_INDEX_ENV,
        );
        for bad in [
            "web",
            "web-",
            "-3",
            "web-03",
            "web-3a",
            "web-7d9f8b6c5-x2k4p",
        ] {
            let e = resolve(&env, &[ord, ("HOSTNAME", bad)], "h").unwrap_err();
            assert_eq!(e.kind(), ErrorKind::Config);
            let m = e.message();
            assert!(m.contains(&format!("{bad:?} ($HOSTNAME)")), "{m}");
            assert!(m.contains("-<n>") && m.contains(POD_INDEX_ENV), "{m}");
        }
        config_err(
            resolve(&env, &[ord], "localhost"),
            "\"localhost\" (the system's",
        );
        config_err(
            resolve(&env, &[ord, ("HOSTNAME", "web-1024")], "h"),
            "worker ID 1024 (from RIMEFLAKE_WORKER_ID=ordinal, host name web-1024) is above",
        );
    }

    #[test]
    fn leases_cover_the_layout_or_the_given_range() {
        let all = WorkerSource::LocalLease { range: None };
        assert_eq!(
            resolve(&all, &[], "h").unwrap(),
            LeaseRequest::Any { range: 0..=1023 }
        );
        let some = WorkerSource::LocalLease {
            range: Some(10..=19),
        };
        assert_eq!(
            resolve(&some, &[], "h").unwrap(),
            LeaseRequest::Any { range: 10..=19 }
        );
        let too_big = WorkerSource::LocalLease {
            range: Some(1000..=1024),
        };
        config_err(resolve(&too_big, &[], "h"), "worker_range");
        #[allow(clippy::reversed_empty_ranges)]
        let empty = WorkerSource::LocalLease { range: Some(5..=4) };
        config_err(resolve(&empty, &[], "h"), "non-empty");
    }
}
