//! One namespace rule for every backend and every admin path: a namespace that `state show`
//! and `state reset` refuse (`team/app`, empty, a newline, 5,000 bytes) is refused by every
//! generator too, before anything reaches the server (real Redis and PostgreSQL).

use rimeflake_testkit::servers;

use rimeflake::{Backend, ErrorKind, Generator, Layout};
use servers::{Postgres, Redis};

#[test]
fn a_namespace_the_admin_paths_refuse_is_refused_by_every_backend() {
    let redis = Redis::start();
    let pg = Postgres::start();
    let dir = std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("namespaces-{}", std::process::id()));
    let long = "n".repeat(5_000);
    for ns in ["team/app", "", "a\nb", ".", "..", long.as_str()] {
        let shown = format!("{:?}", &ns[..ns.len().min(20)]);
        let builders = [
            ("memory", Generator::builder().worker_id(1).in_memory()),
            ("local", Generator::builder().state_dir(&dir)),
            (
                "redis",
                Generator::builder().backend(Backend::parse(&redis.url()).unwrap()),
            ),
            (
                "postgres",
                Generator::builder().backend(Backend::parse(&pg.url()).unwrap()),
            ),
        ];
        for (name, builder) in builders {
            let e = builder
                .namespace(ns)
                .build()
                .expect_err("a namespace state show cannot reach");
            assert_eq!(e.kind(), ErrorKind::Config, "{name} {shown}: {e}");
            assert!(e.message().contains("namespace"), "{name} {shown}: {e}");
        }
        for url in [redis.url(), pg.url()] {
            let backend = Backend::parse(&url).unwrap();
            let e = rimeflake::admin::remote::inspect(&backend, ns).expect_err("refused");
            assert_eq!(e.kind(), ErrorKind::Config, "{shown}: {e}");
            let e = rimeflake::admin::remote::reset(
                &backend,
                ns,
                &Layout::default(),
                1,
                &Default::default(),
            )
            .expect_err("refused");
            assert_eq!(e.kind(), ErrorKind::Config, "{shown}: {e}");
        }
    }
    // Nothing reached either server, nor the state directory.
    assert_eq!(redis.command(&["DBSIZE"]), ":0\r\n");
    assert_eq!(
        pg.psql("SELECT to_regclass('rimeflake_workers') IS NULL")
            .trim(),
        "t"
    );
    assert!(!dir.join("team").exists());
    let _ = std::fs::remove_dir_all(&dir);
}
