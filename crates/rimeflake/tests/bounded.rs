//! Waits on a server that does not answer stay bounded and interruptible: a start-up that
//! reaches a server that accepts connections and never answers gives way to its interrupt hook
//! (Ctrl-C in Python) within a slice; a move to another worker ID after another process took
//! this one's runs off the caller's thread, so calls meanwhile fail with a lease error within
//! `max_wait` while the server is stopped (SIGSTOP), and the move completes once it is back.

use rimeflake_testkit::servers;
use rimeflake_testkit::support;

use rimeflake::{Backend, ErrorKind, Generator};
use servers::Redis;
use std::io::Read;
use std::net::TcpListener;
use std::time::Duration;
use support::Since;

#[test]
fn a_start_up_waiting_on_a_silent_server_is_interrupted_within_a_slice() {
    // Accepts connections, reads what is sent, never answers.
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    std::thread::spawn(move || {
        for conn in listener.incoming().flatten() {
            std::thread::spawn(move || {
                let mut conn = conn;
                let mut buf = [0u8; 1024];
                while matches!(conn.read(&mut buf), Ok(n) if n > 0) {}
            });
        }
    });
    for url in [
        format!("redis://127.0.0.1:{port}/0"),
        format!("postgresql://u@127.0.0.1:{port}/db?sslmode=disable"),
    ] {
        let start = Since::now();
        let mut asked = 0;
        let result = Generator::builder()
            .backend(Backend::parse(&url).unwrap())
            .namespace("bounded")
            // Each server call may take 2 s (a tenth of the TTL, at most 2 s).
            .lease_ttl(Duration::from_secs(60))
            .build_with(&mut || {
                asked += 1;
                start.elapsed() > Duration::from_millis(300)
            });
        let took = start.elapsed();
        let e = result.expect_err("the server never answers");
        assert_eq!(e.kind(), ErrorKind::Interrupted, "{url}: {e}");
        assert!(asked >= 2, "{url}: the hook was asked {asked} times");
        assert!(
            took < Duration::from_millis(800),
            "{url}: interrupted after {took:?}"
        );
    }
}

#[test]
fn a_move_to_another_worker_id_runs_off_the_callers_thread() {
    let redis = Redis::start();
    let max_wait = Duration::from_millis(200);
    let generator = Generator::builder()
        .backend(Backend::parse(&redis.url()).unwrap())
        .namespace("moving")
        // Each server call may take 1 s; renewals every 2.5 s.
        .lease_ttl(Duration::from_secs(10))
        .max_wait(max_wait)
        .build()
        .unwrap();
    generator.next_id().unwrap();
    let first = generator.worker_id();
    // Another process takes the worker ID; the keeper finds it lost at its next renewal and
    // taken at the one after (no call is made meanwhile: the first call decides to move).
    let key = format!("rimeflake:{{moving:{first}}}:lease");
    let stolen = redis.command(&["SET", &key, "another-host/1/ab", "PX", "600000"]);
    assert_eq!(stolen, "+OK\r\n");
    std::thread::sleep(Duration::from_millis(8_000));

    // The server stops: the move cannot finish, and the calls do not wait for it.
    redis.pause();
    for _ in 0..3 {
        let start = Since::now();
        let e = generator
            .next_id()
            .expect_err("no lease while the server is stopped");
        let took = start.elapsed();
        assert_eq!(e.kind(), ErrorKind::Lease, "{e}");
        assert!(
            took < max_wait + Duration::from_millis(300),
            "a call waited {took:?} for the move"
        );
    }
    redis.resume();

    // Back: a later call finds the move done (or starts it again) and goes on elsewhere.
    let waiting = Since::now();
    let id = loop {
        let start = Since::now();
        let r = generator.next_id();
        assert!(
            start.elapsed() < max_wait + Duration::from_millis(300),
            "a call waited {:?}",
            start.elapsed()
        );
        match r {
            Ok(id) => break id,
            Err(e) => {
                assert_eq!(e.kind(), ErrorKind::Lease, "{e}");
                assert!(
                    waiting.elapsed() < Duration::from_secs(30),
                    "never moved: {e}"
                );
                std::thread::sleep(Duration::from_millis(100));
            }
        }
    };
    let moved = generator.worker_id();
    assert_ne!(moved, first);
    assert_eq!(generator.layout().decode(id).unwrap().worker_id, moved);
    generator.close().unwrap();
}
