//! The names of the Redis backend's keys (redis.rs says what each holds): a worker's lease and
//! state share the cluster hash tag of the namespace and the worker ID, a namespace's own keys
//! the tag of the namespace.

/// What opens a namespace's keys, up to and including the `{` of the hash tag. A namespace
/// that starts with `}` would leave the tag empty (Redis then hashes each whole key, and a
/// worker's lease and state land in different slots): its keys get the tag `{/}` first, which
/// holds all of them in one slot, and which no other namespace's keys begin with (a namespace
/// holds no `/`).
pub(super) fn opening(namespace: &str) -> &'static str {
    if namespace.starts_with('}') {
        "rimeflake:{/}{"
    } else {
        "rimeflake:{"
    }
}

pub(crate) fn lease_key(namespace: &str, worker_id: u64) -> String {
    format!("{}{namespace}:{worker_id}}}:lease", opening(namespace))
}

pub(super) fn state_key(namespace: &str, worker_id: u64) -> String {
    format!("{}{namespace}:{worker_id}}}:state", opening(namespace))
}

pub(super) fn layout_key(namespace: &str) -> String {
    format!("{}{namespace}}}:layout", opening(namespace))
}

pub(crate) fn workers_key(namespace: &str) -> String {
    format!("{}{namespace}}}:workers", opening(namespace))
}

pub(super) fn used_key(namespace: &str) -> String {
    format!("{}{namespace}}}:used", opening(namespace))
}

/// The keys of a namespace (its layout, and its set of workers), and none of a worker's: the
/// layout key ends in `t`, the workers key in `s`, a worker's `lease` and `state` in `e`.
pub(super) const NAMESPACE_KEYS: &str = "rimeflake:{*}:*[ts]";

/// The namespace whose layout or workers key `key` is.
pub(super) fn namespace_of(key: &str) -> Option<&str> {
    // The keys of a namespace that starts with `}` open with the tag `{/}` (see `opening`).
    let rest = key
        .strip_prefix("rimeflake:{/}{")
        .filter(|rest| rest.starts_with('}'))
        .or_else(|| key.strip_prefix("rimeflake:{"))?;
    rest.strip_suffix("}:layout")
        .or_else(|| rest.strip_suffix("}:workers"))
}
