//! Generators on remote leases over TLS, against real servers with TLS on (started by the
//! harness in `servers/`, with certificates the `openssl` command makes for `localhost`): what
//! each URL checks (the CA, the host name, libpq's `sslmode`s, MySQL's `ssl-mode`s), client
//! certificates, a server
//! restarted under a running generator, an impostor's certificate while one runs (it stops,
//! fail-closed, and goes on when the real one is back), and every refusal a clear config error.

use rimeflake_testkit::servers;

use rimeflake::{Backend, Error, ErrorKind, Generator, Layout};
use servers::{MariaDb, Postgres, Redis, MY_CERT_ROLE, PG_CERT_ROLE};
use std::time::Duration;

const TTL_MS: u64 = 2_000;

fn generator(url: &str, namespace: &str) -> rimeflake::Builder {
    Generator::builder()
        .layout(Layout::default())
        .backend(Backend::parse(url).expect("a backend this build has"))
        .namespace(namespace)
        // Each call gets a tenth: a TLS handshake (and SCRAM) in a debug build needs room.
        .lease_ttl(Duration::from_millis(TTL_MS))
        .max_wait(Duration::from_millis(300))
}

/// Builds a generator on `url`, which must fail with `kind` saying each of `words`, within 5 s
/// and without the password.
fn refused(url: &str, kind: ErrorKind, words: &[&str]) -> Error {
    let started = rimeflake::clock::monotonic_ns();
    let e = generator(url, "refused")
        .build()
        .expect_err(&format!("{url} connected"));
    eprintln!("{url}\n  -> {e}");
    assert_eq!(e.kind(), kind, "{url}: {e}");
    for w in words {
        assert!(e.message().contains(w), "{w:?} not in: {e}");
    }
    assert!(!e.message().contains("s3cret"), "{e}");
    let took = rimeflake::clock::monotonic_ns() - started;
    assert!(took < 5_000_000_000, "{url}: {} ms", took / 1_000_000);
    e
}

/// Builds a generator on `url` and takes IDs from it.
fn works(url: &str, namespace: &str) -> Generator {
    let g = generator(url, namespace)
        .build()
        .unwrap_or_else(|e| panic!("{url}: {e}"));
    let ids = g.next_ids(1_000).unwrap();
    assert!(ids.windows(2).all(|w| w[0] < w[1]));
    g
}

/// Takes IDs from `g` for `ms` (so its lease is renewed a few times), then checks that it still
/// issues them: a server restarted before made every renewal reconnect over TLS.
fn keeps_working(g: &Generator, ms: u64) {
    let until = rimeflake::clock::monotonic_ns() + ms * 1_000_000;
    let mut last = 0;
    let mut errors = 0;
    while rimeflake::clock::monotonic_ns() < until {
        match g.next_id() {
            Ok(id) => {
                assert!(id > last, "{id} after {last}");
                last = id;
            }
            Err(e) => {
                assert_eq!(e.kind(), ErrorKind::Lease, "{e}");
                errors += 1;
            }
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    let id = g
        .next_id()
        .unwrap_or_else(|e| panic!("after {errors} lease errors: {e}"));
    assert!(id > last);
}

/// While the server shows a certificate the URL's CA did not sign (an impostor in its place,
/// or a rotation to a CA the URL does not trust), `g` cannot renew its lease: it stops issuing
/// IDs before the lease could have expired, gives lease errors meanwhile, and goes on above
/// its last ID once the real certificate is back.
fn an_impostor_gets_no_renewals(g: &Generator, impostor: impl Fn(), real: impl Fn()) {
    let now = rimeflake::clock::monotonic_ns;
    let mut last = g.next_id().unwrap();
    impostor();
    let until = now() + 3 * TTL_MS * 1_000_000;
    loop {
        match g.next_id() {
            Ok(id) => {
                assert!(id > last);
                last = id;
            }
            Err(e) => {
                assert_eq!(e.kind(), ErrorKind::Lease, "{e}");
                break;
            }
        }
        assert!(
            now() < until,
            "IDs {} ms after the impostor came",
            3 * TTL_MS
        );
        std::thread::sleep(Duration::from_millis(5));
    }
    for _ in 0..50 {
        let e = g.next_id().expect_err("an ID without a lease");
        assert_eq!(e.kind(), ErrorKind::Lease, "{e}");
        std::thread::sleep(Duration::from_millis(10));
    }
    real();
    let until = now() + 15_000_000_000;
    let id = loop {
        if let Ok(id) = g.next_id() {
            break id;
        }
        assert!(
            now() < until,
            "no ID 15 s after the real certificate came back"
        );
        std::thread::sleep(Duration::from_millis(20));
    };
    assert!(id > last);
}

#[test]
fn redis_over_tls_checks_the_ca_and_the_host_name() {
    let mut redis = Redis::start_tls();
    let (tls, plain) = (redis.tls_port(), redis.port());
    let ca = redis.certs().path("ca.pem").display().to_string();
    let other = redis.certs().path("other-ca.pem").display().to_string();
    let good = redis.tls_url();

    let g = works(&good, "tls");
    // Restarted: every renewal and the re-acquire go over new TLS connections.
    redis.restart();
    keeps_working(&g, 2 * TTL_MS);
    an_impostor_gets_no_renewals(
        &g,
        || redis.serve_certificate("impostor"),
        || redis.serve_certificate("server"),
    );
    g.close().unwrap();

    // The system's store did not sign the test CA; another CA did not either.
    refused(
        &format!("rediss://localhost:{tls}/0"),
        ErrorKind::Config,
        &["not trusted", "sslrootcert"],
    );
    refused(
        &format!("rediss://localhost:{tls}/0?sslrootcert={other}"),
        ErrorKind::Config,
        &["not trusted", "other-ca.pem"],
    );
    // The certificate names localhost, not 127.0.0.1.
    refused(
        &format!("rediss://127.0.0.1:{tls}/0?sslrootcert={ca}"),
        ErrorKind::Config,
        &["host name"],
    );
    // TLS to the plain port: the server takes the handshake for part of a command and waits
    // for the rest; the handshake's bytes are random in part, so a few tries.
    for _ in 0..3 {
        refused(
            &format!("rediss://localhost:{plain}/0?sslrootcert={ca}"),
            ErrorKind::Config,
            &[
                &format!("TLS handshake with localhost:{plain} failed"),
                "does not speak TLS",
                "redis://",
            ],
        );
    }
    // Plain to the TLS port: the server hangs up.
    refused(
        &format!("redis://localhost:{tls}/0"),
        ErrorKind::Lease,
        &["localhost"],
    );
    refused(
        &format!("rediss://:s3cret@localhost:{tls}/0?sslrootcert=/nonexistent/ca.pem"),
        ErrorKind::Config,
        &["sslrootcert=/nonexistent/ca.pem"],
    );
    // A FIFO or a directory named as a certificate fails at once, without blocking.
    let fifo = redis.certs().path("fifo.pem");
    let c_path = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
    // SAFETY: a valid NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(c_path.as_ptr(), 0o600) }, 0);
    let dir = redis.certs().path("");
    for path in [&fifo, &dir] {
        refused(
            &format!("rediss://localhost:{tls}/0?sslrootcert={}", path.display()),
            ErrorKind::Config,
            &["not a regular file"],
        );
    }
    let e = Backend::parse(&format!("rediss://:s3cret@localhost:{tls}/0#insecure")).unwrap_err();
    assert!(e.message().contains("#insecure") && !e.message().contains("s3cret"));

    // A server that asks for client certificates: refused without one, served with one.
    let reply = redis.command(&["CONFIG", "SET", "tls-auth-clients", "yes"]);
    assert!(reply.starts_with("+OK"), "{reply}");
    refused(&good, ErrorKind::Config, &["client certificate"]);
    let (cert, key) = (
        redis.certs().path("client.pem"),
        redis.certs().path("client.key"),
    );
    let mtls = format!("{good}&sslcert={}&sslkey={}", cert.display(), key.display());
    works(&mtls, "tls").close().unwrap();
    refused(
        &format!("{good}&sslcert={}&sslkey={ca}", cert.display()),
        ErrorKind::Config,
        &["sslkey="],
    );
}

#[test]
fn postgres_over_tls_checks_as_libpq_does() {
    let mut pg = Postgres::start_tls();
    let port = pg.port();
    let ca = pg.certs().path("ca.pem").display().to_string();
    let other = pg.certs().path("other-ca.pem").display().to_string();
    let url =
        |host: &str, query: &str| format!("postgresql://postgres@{host}:{port}/rimeflake?{query}");
    // The server refuses plain TCP: every connection that works is TLS, and these are checked
    // on the server's side too.
    let on_tls = || {
        pg.psql(
            "SELECT count(*) FROM pg_stat_ssl s JOIN pg_stat_activity a USING (pid) \
             WHERE a.application_name = 'rimeflake' AND s.ssl",
        )
    };

    let full = pg.tls_url();
    let g = works(&full, "tls");
    // The store's connection, and the keeper's once it has renewed (a new namespace's start
    // waits a while, so the keeper may have renewed already).
    assert!(matches!(on_tls().trim(), "1" | "2"), "{}", on_tls());
    pg.restart();
    keeps_working(&g, 2 * TTL_MS);
    an_impostor_gets_no_renewals(
        &g,
        || pg.serve_certificate("impostor"),
        || pg.serve_certificate("server"),
    );
    g.close().unwrap();

    // verify-ca checks the chain and not the name; require and prefer (the default) check
    // nothing without sslrootcert, as libpq.
    for query in [
        format!("sslmode=verify-ca&sslrootcert={ca}"),
        "sslmode=require".to_string(),
        String::new(),
    ] {
        works(&url("127.0.0.1", &query), "tls").close().unwrap();
    }
    refused(
        &url(
            "127.0.0.1",
            &format!("sslmode=verify-full&sslrootcert={ca}"),
        ),
        ErrorKind::Config,
        &["host name", "verify-ca"],
    );
    refused(
        &url(
            "localhost",
            &format!("sslmode=verify-full&sslrootcert={other}"),
        ),
        ErrorKind::Config,
        &["not trusted", "other-ca.pem"],
    );
    // require with sslrootcert checks the chain (libpq: as verify-ca).
    refused(
        &url("127.0.0.1", &format!("sslmode=require&sslrootcert={other}")),
        ErrorKind::Config,
        &["not trusted"],
    );
    refused(
        &url("localhost", "sslmode=verify-full"),
        ErrorKind::Config,
        &["sslrootcert"],
    );
    // Plain TCP is refused by the server's pg_hba.conf.
    refused(
        &url("127.0.0.1", "sslmode=disable"),
        ErrorKind::Config,
        &["pg_hba"],
    );

    // The certificate role: refused without its client certificate, in with it.
    let cert_url = |query: &str| {
        format!("postgresql://{PG_CERT_ROLE}@localhost:{port}/rimeflake?sslmode=verify-full&sslrootcert={ca}{query}")
    };
    refused(
        &cert_url(""),
        ErrorKind::Config,
        &["client certificate", "sslcert"],
    );
    let (cert, key) = (pg.certs().path("client.pem"), pg.certs().path("client.key"));
    let with_cert = format!("&sslcert={}&sslkey={}", cert.display(), key.display());
    works(&cert_url(&with_cert), "tls-cert").close().unwrap();
    let e = Backend::parse(&cert_url(&format!("&sslcert={}", cert.display()))).unwrap_err();
    assert!(e.message().contains("go together"), "{e}");

    // A server without TLS: require is refused; the default goes on in plain TCP.
    let plain = Postgres::start();
    let plain_url = |query: &str| format!("{}?{query}", plain.url());
    refused(&plain_url("sslmode=require"), ErrorKind::Config, &["TLS"]);
    works(&plain_url("sslmode=prefer"), "plain")
        .close()
        .unwrap();
}

#[test]
fn mysql_over_tls_checks_as_mysql_does() {
    let mut db = MariaDb::start_tls();
    let port = db.port();
    let ca = db.certs().path("ca.pem").display().to_string();
    let other = db.certs().path("other-ca.pem").display().to_string();
    let url = |host: &str, query: &str| format!("mysql://root@{host}:{port}/rimeflake?{query}");
    // The server refuses plain TCP (require_secure_transport): every connection that works is
    // TLS.
    let full = db.tls_url();
    let g = works(&full, "tls");
    db.restart();
    keeps_working(&g, 2 * TTL_MS);
    an_impostor_gets_no_renewals(
        &g,
        || db.serve_certificate("impostor"),
        || db.serve_certificate("server"),
    );
    g.close().unwrap();

    // VERIFY_CA checks the chain and not the name; REQUIRED and PREFERRED (the default) check
    // nothing without ssl-ca.
    for query in [
        format!("ssl-mode=VERIFY_CA&ssl-ca={ca}"),
        "ssl-mode=REQUIRED".to_string(),
        String::new(),
    ] {
        works(&url("127.0.0.1", &query), "tls").close().unwrap();
    }
    refused(
        &url(
            "127.0.0.1",
            &format!("ssl-mode=VERIFY_IDENTITY&ssl-ca={ca}"),
        ),
        ErrorKind::Config,
        &["host name", "ssl-mode=VERIFY_CA"],
    );
    refused(
        &url(
            "localhost",
            &format!("ssl-mode=VERIFY_IDENTITY&ssl-ca={other}"),
        ),
        ErrorKind::Config,
        &["not trusted", "ssl-ca=", "other-ca.pem"],
    );
    refused(
        &url("127.0.0.1", &format!("ssl-mode=REQUIRED&ssl-ca={other}")),
        ErrorKind::Config,
        &["not trusted"],
    );
    refused(
        &url("localhost", "ssl-mode=VERIFY_IDENTITY"),
        ErrorKind::Config,
        &["ssl-ca=PATH"],
    );
    // Plain TCP is refused by the server.
    refused(
        &url("127.0.0.1", "ssl-mode=DISABLED"),
        ErrorKind::Config,
        &["refused the login", "without TLS"],
    );

    // The certificate user: refused without its client certificate, in with it.
    let cert_url = |query: &str| {
        format!(
            "mysql://{MY_CERT_ROLE}@localhost:{port}/rimeflake?ssl-mode=VERIFY_IDENTITY\
             &ssl-ca={ca}{query}"
        )
    };
    refused(
        &cert_url(""),
        ErrorKind::Config,
        &["refused the login", "client certificate"],
    );
    let (cert, key) = (db.certs().path("client.pem"), db.certs().path("client.key"));
    let with_cert = format!("&ssl-cert={}&ssl-key={}", cert.display(), key.display());
    works(&cert_url(&with_cert), "tls-cert").close().unwrap();
    let e = Backend::parse(&cert_url(&format!("&ssl-cert={}", cert.display()))).unwrap_err();
    assert!(e.message().contains("go together"), "{e}");

    // A server without TLS: REQUIRED is refused; the default goes on in plain TCP.
    let plain = MariaDb::start();
    let plain_url = |query: &str| format!("{}?{query}", plain.url());
    refused(&plain_url("ssl-mode=REQUIRED"), ErrorKind::Config, &["TLS"]);
    works(&plain_url("ssl-mode=PREFERRED"), "plain")
        .close()
        .unwrap();
}
