//! A password given in any form the drivers take reaches no message: every form logs in to a
//! real server (Redis and PostgreSQL with password authentication, started by the harness in
//! crates/rimeflake-testkit/src/servers.rs), then `gen` (with a warning that names the server),
//! `state show`, `state reset`, a layout refused, a server that cannot be reached and a database
//! that does not exist all run with it, and their output holds the password in none of its
//! forms.

use rimeflake_testkit::servers;

use servers::{PG_PASSWORD, PG_PASSWORD_ROLE};
use std::process::{Command, Output, Stdio};

const BIN: &str = env!("CARGO_BIN_EXE_rimeflake");

/// The password as the URL gives it, byte by byte: `%73%65...`.
fn encoded(text: &str) -> String {
    text.bytes().map(|b| format!("%{b:02X}")).collect()
}

fn run(args: &[&str], url: &str) -> Output {
    Command::new(BIN)
        .args(args)
        .args(["--backend", url])
        .env_remove("RIMEFLAKE_BACKEND")
        .stdin(Stdio::null())
        .output()
        .expect("rimeflake runs")
}

fn text(out: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

/// Panics when `shown` holds the password in any form the URLs of this test give it.
fn assert_hidden(shown: &str, context: &str) {
    for secret in [
        PG_PASSWORD.to_string(),
        encoded(PG_PASSWORD),
        encoded(PG_PASSWORD).to_lowercase(),
        // A part of it: a URL cut at a character it holds would show the rest.
        "ecret".to_string(),
    ] {
        assert!(
            !shown.contains(&secret),
            "{context}: the password ({secret}) is shown:\n{shown}"
        );
    }
}

/// Runs every command on `url` (which logs in) and checks that none shows the password.
/// `unreachable` and `no_db` are the same URL on a closed port and with an unknown database;
/// `warning` is a word of the durability warning the server's settings cause.
fn check_every_message(url: &str, unreachable: &str, no_db: Option<&str>, warning: &str) {
    let ns = ["--namespace", "pwforms", "--worker", "3"];
    let out = run(&[&["gen", "-n", "2"], &ns[..]].concat(), url);
    let said = text(&out);
    assert!(out.status.success(), "gen on {url}: {said}");
    assert!(said.contains(warning), "no warning from {url}: {said}");
    assert_hidden(&said, "gen (with its warning)");

    let out = run(&["state", "show", "--namespace", "pwforms"], url);
    let said = text(&out);
    assert!(
        out.status.success() && said.contains("worker     3"),
        "state show on {url}: {said}"
    );
    assert_hidden(&said, "state show");

    // Through the environment too.
    let out = Command::new(BIN)
        .args(["state", "show", "--namespace", "pwforms"])
        .env("RIMEFLAKE_BACKEND", url)
        .output()
        .unwrap();
    let said = text(&out);
    assert!(
        out.status.success(),
        "state show ($RIMEFLAKE_BACKEND): {said}"
    );
    assert_hidden(&said, "state show ($RIMEFLAKE_BACKEND)");

    // A state that is not corrupt is not reset: the refusal names the backend.
    let out = run(&[&["state", "reset"], &ns[..]].concat(), url);
    let said = text(&out);
    assert!(!out.status.success(), "state reset on {url}: {said}");
    assert_hidden(&said, "state reset");

    let out = run(&[&["gen", "--layout", "twitter"], &ns[..]].concat(), url);
    let said = text(&out);
    assert!(
        !out.status.success() && said.contains("created with layout"),
        "another layout on {url}: {said}"
    );
    assert_hidden(&said, "a layout refused");

    for (bad, what) in [
        (Some(unreachable), "unreachable"),
        (no_db, "no such database"),
    ] {
        let Some(bad) = bad else { continue };
        for args in [&["gen"][..], &["state", "show"][..]] {
            let out = run(args, bad);
            let said = text(&out);
            assert!(!out.status.success(), "{what}: {args:?} {bad}: {said}");
            assert_hidden(&said, what);
        }
    }
}

/// A port nothing listens on.
fn closed_port() -> u16 {
    let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    l.local_addr().unwrap().port()
}

#[test]
fn postgresql_passwords_in_every_form_are_never_shown() {
    let pg = servers::Postgres::start();
    let (role, pw, enc) = (PG_PASSWORD_ROLE, PG_PASSWORD, encoded(PG_PASSWORD));
    let forms = |port: u16, db: &str| -> Vec<String> {
        let base = format!("127.0.0.1:{port}/{db}");
        vec![
            format!("postgresql://{role}:{pw}@{base}?sslmode=disable"),
            format!("postgresql://{role}:{enc}@{base}"),
            format!("postgres://{role}@{base}?sslmode=disable&password={pw}"),
            format!("postgresql://{role}@{base}?sslmode=disable&pass%77ord={pw}"),
            format!("postgresql://{role}@{base}?%70assword={enc}"),
            format!("postgresql://{base}?user={role}&%70%61%73%73%77%6F%72%64={pw}"),
            // The password both ways: the query's wins in the driver, and neither shows.
            format!("postgresql://{role}:{enc}@{base}?password={enc}"),
        ]
    };
    let (good, unreachable, no_db) = (
        forms(pg.port(), "rimeflake"),
        forms(closed_port(), "rimeflake"),
        forms(pg.port(), "no_such_db"),
    );
    // A warning names the server: it must not carry the password either. (rimeflake's sessions
    // commit with synchronous_commit on, and the harness starts the server with fsync on, so no
    // durability warning comes: the warning of a start after `state restored` does.)
    let first = run(
        &["gen", "--namespace", "pwforms", "--worker", "3"],
        &good[0],
    );
    assert!(first.status.success(), "{}", text(&first));
    for i in 0..good.len() {
        let out = run(&["state", "restored", "--namespace", "pwforms"], &good[i]);
        assert!(
            out.status.success(),
            "state restored on {}: {}",
            good[i],
            text(&out)
        );
        assert_hidden(&text(&out), "state restored");
        check_every_message(&good[i], &unreachable[i], Some(&no_db[i]), "stale copy");
    }
    // A libpq key=value string is not a URL rimeflake takes: refused, without the password.
    let kv = format!(
        "host=127.0.0.1 port={} user={role} password={pw} dbname=rimeflake",
        pg.port()
    );
    for args in [&["gen"][..], &["state", "show"][..]] {
        let out = run(args, &kv);
        let said = text(&out);
        assert!(
            !out.status.success() && said.contains("not shown"),
            "{said}"
        );
        assert_hidden(&said, "a key=value string");
    }
}

#[test]
fn redis_passwords_in_every_form_are_never_shown() {
    let redis = servers::Redis::start_with_password(PG_PASSWORD);
    // The durability warning names the server: it must not carry the password either.
    redis.command(&["CONFIG", "SET", "appendfsync", "everysec"]);
    let (pw, enc) = (PG_PASSWORD, encoded(PG_PASSWORD));
    let forms = |port: u16| -> Vec<String> {
        vec![
            format!("redis://:{pw}@127.0.0.1:{port}/0"),
            format!("redis://default:{pw}@127.0.0.1:{port}/0"),
            format!("redis://:{enc}@127.0.0.1:{port}"),
            format!("redis://%64efault:{enc}@127.0.0.1:{port}/0"),
        ]
    };
    let (good, unreachable) = (forms(redis.port()), forms(closed_port()));
    for i in 0..good.len() {
        check_every_message(&good[i], &unreachable[i], None, "appendfsync");
    }
    // A wrong password is refused, and not shown either.
    let wrong = format!("redis://:{}x@127.0.0.1:{}/0", enc, redis.port());
    let out = run(&["gen"], &wrong);
    let said = text(&out);
    assert!(!out.status.success() && said.contains("password"), "{said}");
    assert_hidden(&said, "a wrong password");
}
