//! The test kit's server harness (`rimeflake_testkit::servers`): real Redis and PostgreSQL
//! servers start, answer, keep their data over a stop and restart, and hang while paused.

use rimeflake_testkit::servers;
use servers::{pg_bin, Postgres, Redis, PG_PASSWORD};

use std::io::{Read, Write};
use std::net::TcpStream;
use std::process::Command;
use std::time::Duration;

/// True when a fresh connection to the port gets no answer in half a second: a paused server
/// still completes the TCP handshake (the kernel does it) but never replies.
fn silent(port: u16, probe: &[u8]) -> bool {
    let mut conn = TcpStream::connect(("127.0.0.1", port)).expect("the kernel accepts");
    conn.set_read_timeout(Some(Duration::from_millis(500)))
        .unwrap();
    conn.write_all(probe).unwrap();
    // A closed connection (EOF) is an answer too: only a timeout means silence.
    match conn.read_exact(&mut [0u8; 1]) {
        Err(e) => matches!(
            e.kind(),
            std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
        ),
        Ok(()) => false,
    }
}

#[test]
fn redis_starts_keeps_its_data_and_pauses() {
    let mut redis = Redis::start();
    assert_eq!(redis.url(), format!("redis://127.0.0.1:{}/0", redis.port()));
    assert_eq!(redis.command(&["SET", "rimeflake:k", "v 1\r\n"]), "+OK\r\n");
    assert_eq!(redis.command(&["GET", "rimeflake:k"]), "$5\r\nv 1\r\n\r\n");
    assert_eq!(redis.command(&["GET", "missing"]), "$-1\r\n");
    assert_eq!(
        redis.command(&["CONFIG", "GET", "appendfsync"]),
        "*2\r\n$11\r\nappendfsync\r\n$6\r\nalways\r\n"
    );

    // The append-only file carries the key over a stop and a restart on the same port.
    let port = redis.port();
    redis.stop();
    redis.restart();
    assert_eq!(redis.port(), port);
    assert_eq!(redis.command(&["GET", "rimeflake:k"]), "$5\r\nv 1\r\n\r\n");

    redis.pause();
    assert!(silent(port, b"PING\r\n"), "a paused redis-server answered");
    redis.resume();
    assert_eq!(redis.command(&["PING"]), "+PONG\r\n");

    // Restart also works on a running server (it stops it first).
    redis.restart();
    assert_eq!(redis.command(&["DEL", "rimeflake:k"]), ":1\r\n");

    // With a password, command() authenticates; a bare connection is refused.
    let locked = Redis::start_with_password("pw-1");
    assert_eq!(
        locked.url(),
        format!("redis://:pw-1@127.0.0.1:{}/0", locked.port())
    );
    assert_eq!(locked.command(&["SET", "a", "b"]), "+OK\r\n");
    let mut bare = TcpStream::connect(("127.0.0.1", locked.port())).unwrap();
    bare.write_all(b"PING\r\n").unwrap();
    let mut reply = [0u8; 7];
    bare.read_exact(&mut reply).unwrap();
    assert_eq!(&reply, b"-NOAUTH");
}

/// psql as the password role through a URL; Err holds stderr.
fn psql_url(url: &str, sql: &str) -> Result<String, String> {
    let out = Command::new(pg_bin("psql"))
        .args([
            "-X",
            "-w",
            "-At",
            "-v",
            "ON_ERROR_STOP=1",
            "-d",
            url,
            "-c",
            sql,
        ])
        .env("PGCONNECT_TIMEOUT", "10")
        .output()
        .expect("run psql");
    if out.status.success() {
        Ok(String::from_utf8_lossy(&out.stdout).into_owned())
    } else {
        Err(String::from_utf8_lossy(&out.stderr).into_owned())
    }
}

#[test]
fn postgres_starts_keeps_its_data_and_pauses() {
    let mut pg = Postgres::start();
    assert_eq!(pg.psql("SELECT 1"), "1\n");
    assert_eq!(
        pg.url(),
        format!("postgresql://postgres@127.0.0.1:{}/rimeflake", pg.port())
    );
    assert_eq!(
        psql_url(&pg.url(), "SELECT current_user").unwrap(),
        "postgres\n"
    );
    assert_eq!(pg.psql("SHOW fsync"), "on\n");

    // The password role needs its password, and may create tables in schema public.
    let good = pg.url_with_password(PG_PASSWORD);
    assert_eq!(
        psql_url(&good, "SELECT current_user").unwrap(),
        "rimeflake_pw\n"
    );
    psql_url(
        &good,
        "CREATE TABLE owned_by_pw (x int); DROP TABLE owned_by_pw",
    )
    .unwrap();
    let bad = psql_url(&pg.url_with_password("wrong"), "SELECT 1").unwrap_err();
    assert!(bad.contains("password authentication failed"), "{bad}");
    let none = psql_url(&pg.url_with_password("").replace(":@", "@"), "SELECT 1").unwrap_err();
    assert!(none.contains("password"), "{none}");

    pg.psql("CREATE TABLE kept (x int); INSERT INTO kept VALUES (42)");
    let port = pg.port();
    pg.stop();
    pg.restart();
    assert_eq!(pg.port(), port);
    assert_eq!(pg.psql("SELECT x FROM kept"), "42\n");

    pg.pause();
    // The start of a startup packet: a running postmaster would answer or close.
    assert!(
        silent(port, &[0, 0, 0, 8, 4, 210, 22, 47]),
        "a paused postgres answered"
    );
    let ready = Command::new(pg_bin("pg_isready"))
        .args(["-q", "-t", "1", "-h", "127.0.0.1", "-p", &port.to_string()])
        .status()
        .unwrap();
    assert!(
        !ready.success(),
        "pg_isready says a paused postgres is ready"
    );
    pg.resume();
    assert_eq!(pg.psql("SELECT count(*) FROM kept"), "1\n");
}
