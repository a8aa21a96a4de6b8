//! The Lua scripts of the Redis backend: every conditional step, atomic on the server. They
//! compare tokens and versions as strings (Lua's numbers are doubles and would round versions
//! above 2^53).

use redis::Script;

/// A Lua script: [`Script`] gives its SHA1 for `EVALSHA`; the code is sent by `EVAL` when the
/// server does not know it yet (after a restart or `SCRIPT FLUSH`).
pub(super) struct Lua {
    pub(super) code: &'static str,
    pub(super) script: Script,
}

impl Lua {
    pub(super) fn new(code: &'static str) -> Lua {
        Lua {
            code,
            script: Script::new(code),
        }
    }
}

/// The scripts, hashed once per connection object.
pub(super) struct Scripts {
    pub(super) settle_layout: Lua,
    pub(super) acquire: Lua,
    pub(super) renew: Lua,
    pub(super) release: Lua,
    pub(super) save: Lua,
    pub(super) reset: Lua,
    pub(super) mark_used: Lua,
    pub(super) settle_settings: Lua,
}

impl Scripts {
    pub(super) fn new() -> Scripts {
        Scripts {
            settle_layout: Lua::new(SETTLE_LAYOUT),
            acquire: Lua::new(ACQUIRE),
            renew: Lua::new(RENEW),
            release: Lua::new(RELEASE),
            save: Lua::new(SAVE),
            reset: Lua::new(RESET),
            mark_used: Lua::new(MARK_USED),
            settle_settings: Lua::new(SETTLE_SETTINGS),
        }
    }
}

/// KEYS[1]: layout. ARGV[1]: our record. Stores it unless one is there; returns the stored one.
pub(super) const SETTLE_LAYOUT: &str = r"
redis.call('SET', KEYS[1], ARGV[1], 'NX')
return redis.call('GET', KEYS[1])
";

/// KEYS[1]: lease. ARGV: token, ttl ms. Takes a free lease, or extends our own; 1 if ours.
pub(super) const ACQUIRE: &str = r"
if redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then
  return 1
end
if redis.call('GET', KEYS[1]) == ARGV[1] then
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
  return 1
end
return 0
";

/// KEYS[1]: lease. ARGV: token, ttl ms. Extends the lease while it is ours.
pub(super) const RENEW: &str = r"
if redis.call('GET', KEYS[1]) == ARGV[1] then
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
  return 1
end
return 0
";

/// KEYS[1]: lease. ARGV[1]: token. Ends the lease while it is ours.
pub(super) const RELEASE: &str = r"
if redis.call('GET', KEYS[1]) == ARGV[1] then
  redis.call('DEL', KEYS[1])
  return 1
end
return 0
";

/// KEYS: lease, state. ARGV: token, expected version, next version, next text. An expired
/// lease is a missing key, so GET gives false and the caller is no holder.
pub(super) const SAVE: &str = r"
if redis.call('GET', KEYS[1]) ~= ARGV[1] then
  return 'notholder'
end
local v = redis.call('HGET', KEYS[2], 'v') or '0'
if v ~= ARGV[2] then
  return 'moved'
end
redis.call('HSET', KEYS[2], 'v', ARGV[3], 's', ARGV[4])
return 'ok'
";

/// KEYS: lease, state. ARGV: expected version, next version, next text. Only while nobody holds
/// the lease.
pub(super) const RESET: &str = r"
if redis.call('EXISTS', KEYS[1]) == 1 then
  return 'notholder'
end
local v = redis.call('HGET', KEYS[2], 'v') or '0'
if v ~= ARGV[1] then
  return 'moved'
end
redis.call('HSET', KEYS[2], 'v', ARGV[2], 's', ARGV[3])
return 'ok'
";

/// KEYS[1]: the namespace's marks. ARGV: worker ID, reach (ms), both decimal. Makes the hash
/// with `created` (Unix ms, by the server's clock) if it has none, keeps the larger of the stored
/// and the given reach for the worker ID (compared as decimal text: longer is larger, then by
/// characters; Lua's doubles would round), and returns the hash's age (ms) and the reach stored
/// before (`0`: never marked). `TIME` before a write needs effects replication: the default from
/// Redis 5, and asked for on older servers.
pub(super) const MARK_USED: &str = r"
if redis.replicate_commands then redis.replicate_commands() end
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
redis.call('HSETNX', KEYS[1], 'created', string.format('%.0f', now))
local created = tonumber(redis.call('HGET', KEYS[1], 'created')) or now
local before = redis.call('HGET', KEYS[1], ARGV[1]) or '0'
if #ARGV[2] > #before or (#ARGV[2] == #before and ARGV[2] > before) then
  redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
end
local age = now - created
if age < 0 then age = 0 end
return {string.format('%.0f', age), before}
";

/// KEYS[1]: the namespace's settings. ARGV: max_drift (ms), lineage, parent lineage (empty:
/// none), replicas online. Keeps the stored max_drift (else stores ours) and epoch (else 0);
/// the replicas required: one less on a lineage whose parent is the stored one (a promoted
/// replica was one of them), kept on any other, and at least those online; then the lineage is
/// ours. Returns max_drift, replicas and epoch. Numbers stay far below 2^53.
pub(super) const SETTLE_SETTINGS: &str = r"
local h = KEYS[1]
redis.call('HSETNX', h, 'max_drift_ms', ARGV[1])
redis.call('HSETNX', h, 'epoch', '0')
local k = tonumber(redis.call('HGET', h, 'replicas') or '0') or 0
local was = redis.call('HGET', h, 'lineage') or ''
if was ~= '' and was ~= ARGV[2] and was == ARGV[3] then k = k - 1 end
local online = tonumber(ARGV[4])
if online > k then k = online end
if k < 0 then k = 0 end
redis.call('HSET', h, 'replicas', string.format('%d', k), 'lineage', ARGV[2])
return redis.call('HMGET', h, 'max_drift_ms', 'replicas', 'epoch')
";
