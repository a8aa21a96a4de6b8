//! Generators on remote leases, against real servers (Redis, PostgreSQL, MariaDB and ZooKeeper,
//! started on loopback by the harness in `servers/`): many processes in one namespace, servers
//! stopped, restarted and paused past the TTL, stolen leases, a full namespace, and
//! configuration mistakes.
//!
//! Each test runs against every server. Children (other "hosts") are this test binary run
//! again with `RIMEFLAKE_TEST_REMOTE_CHILD` set.

mod driver;
use driver::Driver;
use rimeflake_testkit::servers;

use rimeflake::{Backend, Error, ErrorKind, Generator, Layout, WorkerSource};
use servers::{MariaDb, Postgres, Redis, ZooKeeper, MY_PASSWORD};
use std::collections::HashSet;
use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};
use std::time::Duration;

/// A server of any kind, with the operations the tests need.
enum Server {
    Redis(Redis),
    Postgres(Postgres),
    MariaDb(MariaDb),
    ZooKeeper(ZooKeeper),
}

impl Server {
    fn all() -> Vec<Server> {
        vec![
            Server::Redis(Redis::start()),
            Server::Postgres(Postgres::start()),
            Server::MariaDb(MariaDb::start()),
            Server::ZooKeeper(ZooKeeper::start()),
        ]
    }
    fn url(&self) -> String {
        match self {
            Server::Redis(r) => r.url(),
            Server::Postgres(p) => p.url(),
            // A user without SUPER, so that `read_only` applies to it.
            Server::MariaDb(m) => m.url_with_password(MY_PASSWORD),
            Server::ZooKeeper(z) => z.url(),
        }
    }
    fn name(&self) -> &'static str {
        match self {
            Server::Redis(_) => "redis",
            Server::Postgres(_) => "postgres",
            Server::MariaDb(_) => "mariadb",
            Server::ZooKeeper(_) => "zookeeper",
        }
    }
    fn stop(&mut self) {
        match self {
            Server::Redis(r) => r.stop(),
            Server::Postgres(p) => p.stop(),
            Server::MariaDb(m) => m.stop(),
            Server::ZooKeeper(z) => z.stop(),
        }
    }
    fn restart(&mut self) {
        match self {
            Server::Redis(r) => r.restart(),
            Server::Postgres(p) => p.restart(),
            Server::MariaDb(m) => m.restart(),
            Server::ZooKeeper(z) => z.restart(),
        }
    }
    fn pause(&self) {
        match self {
            Server::Redis(r) => r.pause(),
            Server::Postgres(p) => p.pause(),
            Server::MariaDb(m) => m.pause(),
            Server::ZooKeeper(z) => z.pause(),
        }
    }
    fn resume(&self) {
        match self {
            Server::Redis(r) => r.resume(),
            Server::Postgres(p) => p.resume(),
            Server::MariaDb(m) => m.resume(),
            Server::ZooKeeper(z) => z.resume(),
        }
    }
    /// Whether the server can be up and answering but refuse writes. A ZooKeeper server that
    /// answers takes writes; one that lost its quorum answers nothing (that is
    /// tests/zookeeper_ensemble.rs).
    fn can_refuse_writes(&self) -> bool {
        !matches!(self, Server::ZooKeeper(_))
    }
    /// Up and answering, but refusing every write: Redis out of memory, PostgreSQL and MariaDB
    /// read-only.
    fn refuse_writes(&self, on: bool) {
        match self {
            Server::Redis(r) => r.out_of_memory(on),
            Server::Postgres(p) => p.read_only(on),
            Server::MariaDb(m) => {
                m.sql(&format!("SET GLOBAL read_only = {}", u8::from(on)));
            }
            Server::ZooKeeper(_) => unreachable!("see can_refuse_writes"),
        }
    }
    /// What the thief of [`Server::steal`] does next: writes the state as its own (the same
    /// reservations, its token as the writer, the version moved on), then lets the lease go.
    fn write_state_and_leave(&self, namespace: &str, worker: u64) {
        match self {
            Server::Redis(r) => {
                let state = format!("rimeflake:{{{namespace}:{worker}}}:state");
                let script = "local s = redis.call('HGET', KEYS[1], 's') \
                     redis.call('HSET', KEYS[1], 's', string.match(s, '^[^#]*') .. '#thief/1/0') \
                     return redis.call('HINCRBY', KEYS[1], 'v', 1)";
                let reply = r.command(&["EVAL", script, "1", &state]);
                assert!(reply.starts_with(':'), "{reply}");
                let lease = format!("rimeflake:{{{namespace}:{worker}}}:lease");
                r.command(&["DEL", &lease]);
            }
            Server::Postgres(p) => {
                p.psql(&format!(
                    "UPDATE rimeflake_workers SET state = split_part(state, '#', 1) || \
                     '#thief/1/0', version = version + 1, owner = NULL, lease_expires = NULL \
                     WHERE namespace = '{namespace}' AND worker_id = {worker}"
                ));
            }
            Server::MariaDb(m) => {
                m.sql(&format!(
                    "UPDATE rimeflake_workers SET state = CONCAT(SUBSTRING_INDEX(state, '#', 1), \
                     '#thief/1/0'), version = version + 1, owner = NULL, lease_expires = NULL \
                     WHERE namespace = '{namespace}' AND worker_id = {worker}"
                ));
            }
            Server::ZooKeeper(z) => {
                // The state node is "version state#writer": written one version on with the
                // thief as its writer, then the thief's lease node deleted.
                let worker = format!("/rimeflake/workers/{namespace}/{worker}");
                let got = z.cli(&format!("get {worker}/state"));
                let (version, state) = got
                    .lines()
                    .find_map(|l| {
                        let (v, rest) = l.split_once(' ')?;
                        Some((v.parse::<u64>().ok()?, rest.split('#').next()?.to_string()))
                    })
                    .unwrap_or_else(|| panic!("no state in {got}"));
                z.cli(&format!(
                    "set {worker}/state \"{} {state}#thief/1/0\"\ndelete {worker}/lease",
                    version + 1
                ));
            }
        }
    }

    /// Takes the lease of `worker` from whoever holds it, as an operator or a bug might.
    fn steal(&self, namespace: &str, worker: u64) {
        match self {
            Server::Redis(r) => {
                let key = format!("rimeflake:{{{namespace}:{worker}}}:lease");
                let reply = r.command(&["SET", &key, "thief/1/0", "PX", "60000"]);
                assert!(reply.starts_with("+OK"), "{reply}");
            }
            Server::Postgres(p) => {
                p.psql(&format!(
                    "UPDATE rimeflake_workers SET owner = 'thief/1/0', lease_expires = now() + \
                     interval '60 seconds' WHERE namespace = '{namespace}' AND worker_id = {worker}"
                ));
            }
            Server::MariaDb(m) => {
                m.sql(&format!(
                    "UPDATE rimeflake_workers SET owner = 'thief/1/0', lease_expires = \
                     UNIX_TIMESTAMP() * 1000 + 60000 WHERE namespace = '{namespace}' \
                     AND worker_id = {worker}"
                ));
            }
            Server::ZooKeeper(z) => {
                // The thief's lease is a node that outlives the shell's session: taken as
                // rimeflake takes one, the worker's node written with the thief's token.
                let worker = format!("/rimeflake/workers/{namespace}/{worker}");
                z.cli(&format!(
                    "delete {worker}/lease\ncreate {worker}/lease thief/1/0\nset {worker} thief/1/0"
                ));
            }
        }
    }

    /// Ends the thief's lease of [`Server::steal`].
    fn end_theft(&self, namespace: &str, worker: u64) {
        match self {
            Server::Redis(r) => {
                r.command(&["DEL", &format!("rimeflake:{{{namespace}:{worker}}}:lease")]);
            }
            Server::Postgres(p) => {
                p.psql(&format!(
                    "UPDATE rimeflake_workers SET owner = NULL WHERE namespace = '{namespace}'"
                ));
            }
            Server::MariaDb(m) => {
                m.sql(&format!(
                    "UPDATE rimeflake_workers SET owner = NULL WHERE namespace = '{namespace}'"
                ));
            }
            Server::ZooKeeper(z) => {
                z.cli(&format!(
                    "delete /rimeflake/workers/{namespace}/{worker}/lease"
                ));
            }
        }
    }
}

/// Something done to a server (stop it, pause it, ...).
type Step = fn(&mut Server);

/// The lease TTL of these tests' generators.
const TTL_MS: u64 = 2_000;

fn backend(url: &str) -> Backend {
    Backend::parse(url).expect("a backend this build has")
}

fn generator(url: &str, namespace: &str) -> rimeflake::Builder {
    Generator::builder()
        .layout(Layout::default())
        .backend(backend(url))
        .namespace(namespace)
        // Short, so that expiry comes quickly; long enough that each call's timeout (a tenth)
        // holds on a loaded 2-core machine.
        .lease_ttl(Duration::from_millis(TTL_MS))
        .max_wait(Duration::from_millis(300))
}

fn err_of<T: std::fmt::Debug>(r: Result<T, Error>, kind: ErrorKind, words: &[&str]) -> Error {
    let e = r.expect_err("an error");
    assert_eq!(e.kind(), kind, "{e}");
    for w in words {
        assert!(e.message().contains(w), "{w:?} not in: {e}");
    }
    e
}

fn sleep_ms(ms: u64) {
    std::thread::sleep(Duration::from_millis(ms));
}

// ---- (a) many processes, one namespace ---------------------------------------------------------

const PROCESSES: usize = 4;
const PER_PROCESS: usize = 8;
const IDS_PER_GENERATOR: usize = 62_500; // 32 generators: 2,000,000 IDs

/// The child's side: 8 generators on threads, each makes its IDs and prints
/// "W <worker> <first id>" then the IDs as one line of hex.
#[test]
fn child_runs_eight_generators() {
    let Ok(url) = std::env::var("RIMEFLAKE_TEST_REMOTE_CHILD") else {
        return; // only meaningful as a child of `generators_in_four_processes_share_one_namespace`
    };
    let threads: Vec<_> = (0..PER_PROCESS)
        .map(|_| {
            let url = url.clone();
            std::thread::spawn(move || {
                // The default TTL: 32 generators start at once on a small machine.
                let g = generator(&url, "many")
                    .lease_ttl(std::time::Duration::from_millis(
                        rimeflake::frontend::Setting::LeaseTtl
                            .info()
                            .default
                            .millis(),
                    ))
                    .build()
                    .unwrap();
                let ids: Vec<u64> = (0..IDS_PER_GENERATOR)
                    .map(|_| g.next_id().unwrap())
                    .collect();
                (g.worker_id(), ids, g)
            })
        })
        .collect();
    // Every generator is built and done before any closes: all 8 held their leases at once.
    let done: Vec<_> = threads.into_iter().map(|t| t.join().unwrap()).collect();
    let mut out = std::io::stdout().lock();
    writeln!(out).unwrap(); // off libtest's "test ... " line
    for (worker, ids, _) in &done {
        let hex: Vec<String> = ids.iter().map(|id| format!("{id:x}")).collect();
        writeln!(out, "W {worker} {}", hex.join(" ")).unwrap();
    }
    out.flush().unwrap();
    // Hold the leases until the parent has seen every process's output.
    let _ = std::io::Read::read_to_end(&mut std::io::stdin(), &mut Vec::new());
    drop(done);
}

#[test]
fn generators_in_four_processes_share_one_namespace() {
    for server in Server::all() {
        let children: Vec<_> = (0..PROCESSES)
            .map(|_| {
                Command::new(std::env::current_exe().unwrap())
                    .args(["child_runs_eight_generators", "--exact", "--nocapture"])
                    .args(["--test-threads=1"])
                    .env("RIMEFLAKE_TEST_REMOTE_CHILD", server.url())
                    .stdin(Stdio::piped())
                    .stdout(Stdio::piped())
                    .spawn()
                    .unwrap()
            })
            .collect();
        let mut workers = HashSet::new();
        let mut ids = HashSet::with_capacity(PROCESSES * PER_PROCESS * IDS_PER_GENERATOR);
        let mut kept = Vec::new();
        for mut child in children {
            let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
            let mut generators = 0;
            for line in lines.by_ref().map(|l| l.unwrap()) {
                // libtest may have begun the line ("test child_runs... ... "): "W " is ours.
                let Some((_, rest)) = line.split_once("W ") else {
                    continue; // libtest's own lines
                };
                let mut fields = rest.split(' ');
                let worker: u64 = fields.next().unwrap().parse().unwrap();
                assert!(
                    workers.insert(worker),
                    "worker ID {worker} twice ({})",
                    server.name()
                );
                let layout = Layout::default();
                let mut n = 0;
                for hex in fields {
                    let id = u64::from_str_radix(hex, 16).unwrap();
                    assert_eq!(layout.decode(id).unwrap().worker_id, worker);
                    assert!(ids.insert(id), "duplicate ID {id} ({})", server.name());
                    n += 1;
                }
                assert_eq!(n, IDS_PER_GENERATOR);
                generators += 1;
                if generators == PER_PROCESS {
                    break;
                }
            }
            assert_eq!(
                generators,
                PER_PROCESS,
                "a child failed ({})",
                server.name()
            );
            kept.push((child, lines)); // its leases stay held until every child has reported
        }
        assert_eq!(workers.len(), PROCESSES * PER_PROCESS);
        assert_eq!(ids.len(), PROCESSES * PER_PROCESS * IDS_PER_GENERATOR);
        for (mut child, rest) in kept {
            drop(child.stdin.take());
            rest.for_each(drop); // libtest's last words, read so that they meet no closed pipe
            assert!(child.wait().unwrap().success());
        }
    }
}

// ---- (b) the server stops, restarts, pauses ----------------------------------------------------

#[test]
fn stats_show_the_lease_held_its_renewals_and_the_lease_lost_while_the_server_is_down() {
    use rimeflake::LeaseState;
    // PostgreSQL keeps its identity across a restart; a restarted Redis is another server to a
    // holder whose lease lapsed, which then moves (the test below).
    let mut server = Server::Postgres(Postgres::start());
    let g = generator(&server.url(), "stats").build().unwrap();
    let s = g.stats();
    assert_eq!(s.lease, LeaseState::Held, "{s:?}");
    assert!(
        s.lease_remaining_ms > 0 && s.lease_remaining_ms <= TTL_MS,
        "{s:?}"
    );
    assert!(
        s.reservation_writes >= 1,
        "the state is written at start: {s:?}"
    );
    // Renewed every third of the TTL or so: a few renewals in two TTLs.
    for _ in 0..100 {
        if g.stats().lease_renewals >= 2 {
            break;
        }
        sleep_ms(50);
    }
    let s = g.stats();
    assert!(
        s.lease_renewals >= 2 && s.lease_renewal_failures == 0 && s.lease_losses == 0,
        "{s:?}"
    );
    server.stop();
    for _ in 0..200 {
        if g.stats().lease == LeaseState::Lost {
            break;
        }
        sleep_ms(50);
    }
    let lost = g.stats();
    assert_eq!(lost.lease, LeaseState::Lost, "{lost:?}");
    assert_eq!(lost.lease_remaining_ms, 0);
    assert!(lost.lease_renewal_failures >= 1, "{lost:?}");
    assert_eq!(lost.lease_losses, 1, "{lost:?}");
    assert_eq!(g.ready().unwrap_err().kind(), ErrorKind::Lease);
    assert_eq!(lost.ids_issued, 0, "ready() issues no ID");
    server.restart();
    for _ in 0..200 {
        if g.stats().lease == LeaseState::Held {
            break;
        }
        sleep_ms(50);
    }
    assert_eq!(g.stats().lease, LeaseState::Held, "{:?}", g.stats());
    assert_eq!(
        g.stats().lease_losses,
        1,
        "held again, the loss stays counted"
    );
    // The lease is back; the first write after it may still meet the connection the restart
    // closed, and the next one (20 ms later) then stores: ready once it has.
    for _ in 0..100 {
        if g.ready().is_ok() {
            break;
        }
        sleep_ms(20);
    }
    g.ready().unwrap();
    assert_eq!(g.stats().ids_issued, 0);
    g.close().unwrap();
}

#[test]
fn a_stopped_paused_or_write_refusing_server_gives_lease_errors_then_recovers_without_duplicates() {
    for mut server in Server::all() {
        let url = server.url();
        let g = generator(&url, "faults").build().unwrap();
        let worker = g.worker_id();
        assert!(g.stats().server_skew_ms.abs() < 1_000, "{}", server.name());
        let d = Driver::start(g);
        d.wait_for(10, &format!("IDs ({})", server.name()), |i, _| i > 1_000);

        // Stopped past two TTLs, paused past the TTL, then up but refusing every write (out
        // of memory, read-only): each time the lease runs out, the generator stops with lease
        // errors and issues nothing, and goes on once the server is back.
        let outages: [(&str, Step, Step); 3] = [
            ("stopped", Server::stop, Server::restart),
            ("paused", |s| s.pause(), |s| s.resume()),
            (
                "refusing writes",
                |s| s.refuse_writes(true),
                |s| s.refuse_writes(false),
            ),
        ];
        for (what, begin, end) in outages {
            if what == "refusing writes" && !server.can_refuse_writes() {
                continue;
            }
            let name = format!("{what} ({})", server.name());
            let (_, errors) = d.counts();
            begin(&mut server);
            d.wait_for(10, &format!("lease errors, {name}"), |_, e| e > errors + 10);
            sleep_ms(1_000);
            let (before, _) = d.counts();
            sleep_ms(300);
            assert_eq!(d.counts().0, before, "IDs issued without a lease, {name}");
            end(&mut server);
            d.wait_for(15, &format!("IDs after, {name}"), |i, _| i > before + 1_000);
        }

        let (ids, errors, g) = d.finish();
        // A restarted Redis has a new run ID: to a holder whose lease lapsed meanwhile it is
        // another server, which may lack what another holder stored on the one before
        // (docs/many-hosts.md), so a generator that leases its worker ID moves to another one
        // (one with a fixed worker ID starts again on it: the test below). The other servers
        // keep their identity across a restart.
        if server.name() != "redis" {
            assert_eq!(g.worker_id(), worker, "{}", server.name());
        }
        assert!(
            ids.windows(2).all(|w| w[0] < w[1]),
            "IDs not strictly increasing ({})",
            server.name()
        );
        assert!(
            errors.iter().all(|k| *k == ErrorKind::Lease),
            "{errors:?} ({})",
            server.name()
        );
        g.close().unwrap();
    }
}

/// A generator with a fixed worker ID (a StatefulSet's ordinal) on Redis, stopped past the
/// TTL: the restarted Redis has a new run ID, another server to a holder whose lease lapsed
/// meanwhile, so nothing more is stored under that lease (another process may have held the
/// worker ID on the server that was lost). It starts again on the same worker ID, as a process
/// restart would, above anything issued meanwhile: lease errors until then, then IDs again,
/// strictly increasing, none repeated.
#[test]
fn a_fixed_worker_id_starts_again_on_it_after_a_redis_restart_past_the_ttl() {
    let mut server = Server::Redis(Redis::start());
    let g = generator(&server.url(), "rejoin")
        .worker_id(5)
        .build()
        .unwrap();
    let d = Driver::start(g);
    d.wait_for(10, "IDs", |i, _| i > 1_000);
    let (_, errors) = d.counts();
    server.stop();
    d.wait_for(10, "lease errors while Redis is down", |_, e| {
        e > errors + 10
    });
    sleep_ms(TTL_MS);
    let (before, _) = d.counts();
    sleep_ms(300);
    assert_eq!(d.counts().0, before, "IDs issued without a lease");
    server.restart();
    // The new start begins a reach (max_drift and the reservation ahead) ahead of the clock,
    // and waits for the clock to near it before its first ID.
    d.wait_for(
        20,
        "IDs after the restart, on the same worker ID",
        |i, _| i > before + 1_000,
    );
    let (ids, errors, g) = d.finish();
    assert_eq!(g.worker_id(), 5);
    let layout = Layout::default();
    assert!(ids
        .iter()
        .all(|&id| layout.decode(id).unwrap().worker_id == 5));
    assert!(
        ids.windows(2).all(|w| w[0] < w[1]),
        "IDs not strictly increasing"
    );
    assert_eq!(ids.iter().collect::<HashSet<_>>().len(), ids.len());
    assert!(errors.iter().all(|k| *k == ErrorKind::Lease), "{errors:?}");
    g.close().unwrap();
}

// ---- (d) a full namespace -----------------------------------------------------------------------

#[test]
fn a_full_namespace_is_the_no_free_worker_error_and_a_held_worker_id_a_lease_error() {
    for server in Server::all() {
        let url = server.url();
        let range = WorkerSource::LocalLease { range: Some(5..=6) };
        let a = generator(&url, "full")
            .worker(range.clone())
            .build()
            .unwrap();
        let b = generator(&url, "full")
            .worker(range.clone())
            .build()
            .unwrap();
        let mut held = [a.worker_id(), b.worker_id()];
        held.sort();
        assert_eq!(held, [5, 6]);
        err_of(
            generator(&url, "full").worker(range.clone()).build(),
            ErrorKind::NoFreeWorker,
            &["from 5 to 6", "full"],
        );
        err_of(
            generator(&url, "full").worker_id(5).build(),
            ErrorKind::Lease,
            &["worker ID 5", "held"],
        );
        // Closing frees the worker ID at once (no wait for the TTL), and its state stays.
        let last = a.next_id().unwrap();
        let freed = a.worker_id();
        a.close().unwrap();
        let c = generator(&url, "full").worker(range).build().unwrap();
        assert_eq!(c.worker_id(), freed);
        if c.worker_id() == Layout::default().decode(last).unwrap().worker_id {
            assert!(c.next_id().unwrap() > last, "{}", server.name());
        }
        drop((b, c));
    }
}

// ---- (e) a stolen lease cannot move the state --------------------------------------------------

#[test]
fn a_holder_whose_lease_was_taken_stops_and_cannot_move_the_state() {
    for server in Server::all() {
        let url = server.url();
        let g = generator(&url, "stolen").worker_id(3).build().unwrap();
        let mut mine: Vec<u64> = (0..1_000).map(|_| g.next_id().unwrap()).collect();
        server.steal("stolen", 3);
        // Within a renewal period (a quarter of the TTL) the holder notices and stops.
        let mut stopped = None;
        for _ in 0..200 {
            match g.next_id() {
                Ok(id) => mine.push(id),
                Err(e) => {
                    stopped = Some(e);
                    break;
                }
            }
            sleep_ms(5);
        }
        let e = stopped.expect("the holder never stopped");
        assert_eq!(e.kind(), ErrorKind::Lease, "{e}");
        assert!(e.message().contains("worker ID 3"), "{e}");
        // It cannot write the state either: close's final write is refused.
        err_of(g.close(), ErrorKind::Lease, &["worker ID 3"]);
        // Once the thief's lease is gone, a newcomer continues above everything issued.
        server.end_theft("stolen", 3);
        let next = generator(&url, "stolen").worker_id(3).build().unwrap();
        let id = next.next_id().unwrap();
        assert!(
            mine.iter().all(|&m| m < id),
            "the newcomer repeated the old holder's range ({})",
            server.name()
        );
        next.close().unwrap();
    }
}

#[test]
fn a_leased_worker_id_taken_by_another_process_moves_the_generator_to_another_one() {
    // The other process still holds it; or it wrote the state and left, so the worker ID comes
    // back to this generator's lease with a state it no longer knows.
    for leaves in [false, true] {
        for server in Server::all() {
            moves_to_another_worker_id(&server, leaves);
        }
    }
}

/// One run of the test above on `server`: the thief stays, or (`leaves`) writes and leaves.
fn moves_to_another_worker_id(server: &Server, leaves: bool) {
    let url = server.url();
    let what = format!("{}, thief leaves: {leaves}", server.name());
    let g = generator(&url, "moved")
        .worker(WorkerSource::LocalLease { range: Some(0..=7) })
        .build()
        .unwrap();
    let first = g.worker_id();
    let mut ids: Vec<u64> = (0..1_000).map(|_| g.next_id().unwrap()).collect();
    server.steal("moved", first);
    let mut errors = 0;
    if leaves {
        // Once the holder has noticed (its lease errors), the thief writes and leaves.
        let started = rimeflake::clock::monotonic_ns();
        while let Ok(id) = g.next_id() {
            ids.push(id);
            assert!(rimeflake::clock::monotonic_ns() - started < 10_000_000_000);
            sleep_ms(5);
        }
        errors += 1;
        server.write_state_and_leave("moved", first);
    }
    // Lease errors while the keeper finds out, then IDs again under another worker ID.
    let started = rimeflake::clock::monotonic_ns();
    while rimeflake::clock::monotonic_ns() - started < 10_000_000_000 {
        match g.next_id() {
            Ok(id) => {
                ids.push(id);
                sleep_ms(1);
            }
            Err(e) => {
                assert_eq!(e.kind(), ErrorKind::Lease, "{e}");
                errors += 1;
                sleep_ms(5);
            }
        }
        if g.worker_id() != first {
            break;
        }
    }
    assert_ne!(
        g.worker_id(),
        first,
        "still on the stolen worker ID ({what})"
    );
    assert!(errors > 0, "{what}");
    ids.extend((0..1_000).map(|_| g.next_id().unwrap()));
    let layout = Layout::default();
    let moved = ids
        .iter()
        .filter(|&&id| layout.decode(id).unwrap().worker_id != first);
    assert!(moved.count() >= 1_000, "{what}");
    let unique: HashSet<u64> = ids.iter().copied().collect();
    assert_eq!(unique.len(), ids.len(), "{what}");
    g.close().unwrap();
    // A fixed worker ID cannot move: that generator stays failed (the stolen-lease test).
}

// ---- (f) configuration mistakes -----------------------------------------------------------------

#[test]
fn a_wrong_password_an_unreachable_server_and_a_typo_fail_clearly_and_quickly() {
    let redis = Redis::start_with_password("right-pw");
    let pg = Postgres::start();
    let wrong_redis = format!("redis://:wrong-pw@127.0.0.1:{}/0", redis.port());
    let wrong_pg = pg.url_with_password("wrong-pw");
    for url in [&wrong_redis, &wrong_pg] {
        let started = rimeflake::clock::monotonic_ns();
        // A TTL of 10 s gives each call 1 s: SCRAM's key stretching is slow in a debug build.
        let build = generator(url, "auth")
            .lease_ttl(Duration::from_secs(10))
            .build();
        let e = err_of(build, ErrorKind::Config, &["password"]);
        assert!(!e.message().contains("wrong-pw"), "{e}");
        assert!(rimeflake::clock::monotonic_ns() - started < 5_000_000_000);
    }
    // The right password works.
    let g = generator(&redis.url(), "auth").build().unwrap();
    g.next_id().unwrap();
    g.close().unwrap();

    // Nothing listens on this port: a lease error naming the server, within the timeout.
    let closed_port = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap().port()
    };
    for url in [
        format!("redis://127.0.0.1:{closed_port}/0"),
        format!("postgresql://postgres@127.0.0.1:{closed_port}/rimeflake"),
    ] {
        let started = rimeflake::clock::monotonic_ns();
        err_of(
            generator(&url, "down").build(),
            ErrorKind::Lease,
            &["127.0.0.1"],
        );
        assert!(rimeflake::clock::monotonic_ns() - started < 5_000_000_000);
    }
    for typo in [
        "redis://127.0.0.1:notaport/0",
        "postgresql://127.0.0.1:notaport/x",
    ] {
        err_of(generator(typo, "typo").build(), ErrorKind::Config, &[]);
    }
    err_of(
        Backend::parse("redis:/127.0.0.1"),
        ErrorKind::Config,
        &["unknown"],
    );
}

// ---- the state travels with the worker ID -------------------------------------------------------

/// The child's side of the crash test: takes worker ID 9, prints its last ID, waits to be killed.
#[test]
fn child_holds_worker_nine() {
    let Ok(url) = std::env::var("RIMEFLAKE_TEST_REMOTE_CRASH") else {
        return; // only meaningful as a child of `the_state_travels_with_the_worker_id...`
    };
    let g = generator(&url, "travel").worker_id(9).build().unwrap();
    let last = (0..10_000).map(|_| g.next_id().unwrap()).max().unwrap();
    println!("LAST {last}");
    std::io::stdout().flush().unwrap();
    let _ = std::io::Read::read_to_end(&mut std::io::stdin(), &mut Vec::new());
    sleep_ms(60_000);
}

#[test]
fn the_state_travels_with_the_worker_id_and_a_namespace_keeps_one_layout() {
    for server in Server::all() {
        let url = server.url();
        let mut child = Command::new(std::env::current_exe().unwrap())
            .args(["child_holds_worker_nine", "--exact", "--nocapture"])
            .env("RIMEFLAKE_TEST_REMOTE_CRASH", &url)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        let last: u64 = BufReader::new(child.stdout.take().unwrap())
            .lines()
            .map(|l| l.unwrap())
            .find_map(|l| {
                l.split_once("LAST ")
                    .and_then(|(_, n)| n.trim().parse().ok())
            })
            .expect("the child's last ID");
        // A crash: the lease is not released, so the next holder waits out the TTL.
        child.kill().unwrap();
        child.wait().unwrap();
        err_of(
            generator(&url, "travel").worker_id(9).build(),
            ErrorKind::Lease,
            &["held"],
        );
        sleep_ms(TTL_MS + 200);
        let b = generator(&url, "travel").worker_id(9).build().unwrap();
        assert!(b.next_id().unwrap() > last, "{}", server.name());
        b.close().unwrap();
        err_of(
            generator(&url, "travel").layout(Layout::twitter()).build(),
            ErrorKind::Config,
            &["namespace travel", "layout"],
        );
        // `state show` sees the worker ID, its state and no holder.
        let found = rimeflake::admin::remote::inspect(&backend(&url), "travel").unwrap();
        assert!(found.layout.is_some(), "{found:?}");
        let w9 = found.workers.iter().find(|w| w.worker_id == 9).unwrap();
        assert!(w9.holder.is_none(), "{w9:?}");
        assert!(w9.state.as_ref().unwrap().closed_at.is_some(), "{w9:?}");
    }
}
