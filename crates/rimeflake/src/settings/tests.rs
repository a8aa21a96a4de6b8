//! Unit tests of settings resolution: explicit > environment > default, and bad values named.

use super::*;
use crate::ErrorKind;
use std::path::Path;

fn env_of(vars: &[(&str, &str)]) -> impl Fn(&str) -> Option<OsString> {
    let vars: Vec<(String, OsString)> = vars
        .iter()
        .map(|(k, v)| (k.to_string(), OsString::from(v)))
        .collect();
    move |name| vars.iter().find(|(k, _)| k == name).map(|(_, v)| v.clone())
}

fn resolve_in(given: &Given, vars: &[(&str, &str)]) -> Result<Resolved> {
    resolve(given, &env_of(vars), &|| false)
}

fn config_err(r: Result<Resolved>, needle: &str) -> Error {
    let e = r.unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Config, "{e}");
    assert!(e.message().contains(needle), "{needle:?} not in {e}");
    e
}

const HOME: (&str, &str) = ("HOME", "/home/u");

#[test]
fn defaults_without_environment() {
    let r = resolve_in(&Given::default(), &[HOME]).unwrap();
    assert_eq!(r.layout, Layout::default());
    assert_eq!(r.worker, None);
    assert_eq!(r.namespace, "default");
    assert!(
        matches!(&r.storage, Storage::Local(d) if d == Path::new("/home/u/.local/state/rimeflake"))
    );
    assert!(r.warnings.is_empty());
}

#[test]
fn environment_fills_what_the_caller_left_out() {
    let vars = [
        HOME,
        (LAYOUT_ENV, "twitter"),
        (WORKER_ID_ENV, "42"),
        (STATE_DIR_ENV, "/srv/ids"),
    ];
    let r = resolve_in(&Given::default(), &vars).unwrap();
    assert_eq!(r.layout, Layout::twitter());
    assert_eq!(r.worker, Some(WorkerSource::Fixed(42)));
    assert_eq!(r.namespace, "twitter");
    assert!(matches!(&r.storage, Storage::Local(d) if d == Path::new("/srv/ids")));
    let r = resolve_in(
        &Given::default(),
        &[(BACKEND_ENV, "memory"), (WORKER_ID_ENV, "3")],
    )
    .unwrap();
    assert!(matches!(r.storage, Storage::Memory));
}

#[test]
fn explicit_settings_win_over_the_environment() {
    let given = Given {
        layout: Some(Layout::sonyflake()),
        worker: Some(WorkerSource::Fixed(7)),
        state_dir: Some("/mine".into()),
        namespace: Some("ns".into()),
        backend: Some(Backend::Local),
        ..Given::default()
    };
    let vars = [
        (LAYOUT_ENV, "not a layout"),
        (WORKER_ID_ENV, "abc"),
        (STATE_DIR_ENV, "/theirs"),
        (BACKEND_ENV, "bogus"),
    ];
    let r = resolve_in(&given, &vars).unwrap();
    assert_eq!(r.layout, Layout::sonyflake());
    assert_eq!(r.worker, Some(WorkerSource::Fixed(7)));
    assert_eq!(r.namespace, "ns");
    assert!(matches!(&r.storage, Storage::Local(d) if d == Path::new("/mine")));
}

#[test]
fn bad_environment_values_name_the_variable() {
    let g = Given::default();
    for bad in ["abc", "-1", "+5", "1.0", "99999999999999999999999"] {
        config_err(resolve_in(&g, &[HOME, (WORKER_ID_ENV, bad)]), WORKER_ID_ENV);
    }
    // 1024 is past the default layout's 10 worker bits; 7 is past js_safe's 3.
    config_err(
        resolve_in(&g, &[HOME, (WORKER_ID_ENV, "1024")]),
        WORKER_ID_ENV,
    );
    config_err(
        resolve_in(&g, &[HOME, (WORKER_ID_ENV, "8"), (LAYOUT_ENV, "js_safe")]),
        "RIMEFLAKE_WORKER_ID=8",
    );
    config_err(resolve_in(&g, &[HOME, (LAYOUT_ENV, "twiter")]), LAYOUT_ENV);
    config_err(resolve_in(&g, &[HOME, (LAYOUT_ENV, "time=41")]), LAYOUT_ENV);
    config_err(
        resolve_in(&g, &[HOME, (BACKEND_ENV, "rediss://h?sslmode=require")]),
        BACKEND_ENV,
    );
    config_err(resolve_in(&g, &[HOME, (BACKEND_ENV, "disk")]), BACKEND_ENV);
}

#[test]
fn empty_variables_count_as_unset() {
    let vars = [
        HOME,
        (LAYOUT_ENV, ""),
        (WORKER_ID_ENV, ""),
        (STATE_DIR_ENV, ""),
        (BACKEND_ENV, ""),
    ];
    let r = resolve_in(&Given::default(), &vars).unwrap();
    assert_eq!(r.layout, Layout::default());
    assert_eq!(r.worker, None);
}

#[test]
fn an_empty_state_dir_is_refused() {
    let given = Given {
        state_dir: Some(PathBuf::new()),
        ..Given::default()
    };
    config_err(resolve_in(&given, &[HOME]), "state_dir");
}

#[test]
fn memory_backend_takes_no_state_dir() {
    let given = Given {
        backend: Some(Backend::Memory),
        state_dir: Some("/x".into()),
        ..Given::default()
    };
    config_err(resolve_in(&given, &[]), "state_dir");
    // The environment's state directory is simply not used by a memory backend.
    let given = Given {
        backend: Some(Backend::Memory),
        ..Given::default()
    };
    assert!(resolve_in(&given, &[(STATE_DIR_ENV, "/x")]).is_ok());
}

#[test]
fn the_default_namespace_follows_the_layout() {
    for (spec, ns) in [
        ("default", "default".to_string()),
        ("twitter", "twitter".to_string()),
        ("sonyflake_v2", "sonyflake_v2".to_string()),
        ("js_safe", "js_safe".to_string()),
    ] {
        let r = resolve_in(&Given::default(), &[HOME, (LAYOUT_ENV, spec)]).unwrap();
        assert_eq!(r.namespace, ns);
    }
    let custom = Layout::from_spec("time=41,worker=10,sequence=12,epoch_ms=1420070400000").unwrap();
    let ns = custom.default_namespace();
    assert_eq!(ns, format!("custom-{:016x}", custom.fingerprint()));
    let baidu = Layout::from_spec("baidu,epoch_ms=1735689600000").unwrap();
    assert!(
        baidu.default_namespace().starts_with("baidu-"),
        "{}",
        baidu.default_namespace()
    );
}

#[test]
fn the_container_warning_is_a_warning_not_output() {
    let warn = |vars: &[(&str, &str)], given: &Given| {
        resolve(given, &env_of(vars), &|| true).unwrap().warnings
    };
    let w = warn(&[HOME], &Given::default());
    assert_eq!(w.len(), 1);
    assert_eq!(w[0].kind(), Warning::CONTAINER);
    assert!(
        !w[0].message().contains("distributed"),
        "{}",
        w[0].message()
    );
    assert!(
        !w[0].message().starts_with("rimeflake:"),
        "{}",
        w[0].message()
    );
    // A directory chosen on purpose, or silenced: no warning.
    assert!(warn(&[HOME, (STATE_DIR_ENV, "/v")], &Given::default()).is_empty());
    assert!(warn(
        &[HOME, ("RIMEFLAKE_NO_CONTAINER_WARNING", "1")],
        &Given::default()
    )
    .is_empty());
    let given = Given {
        state_dir: Some("/v".into()),
        ..Given::default()
    };
    assert!(warn(&[HOME], &given).is_empty());
}

#[cfg(feature = "redis")]
#[test]
fn a_server_backend_keeps_its_state_on_the_server() {
    let r = resolve_in(&Given::default(), &[HOME, (BACKEND_ENV, "redis://h:1/0")]).unwrap();
    assert!(matches!(r.storage, Storage::Remote(Backend::Redis(_))));
    let g = Given {
        state_dir: Some("/tmp/x".into()),
        ..Given::default()
    };
    config_err(
        resolve_in(&g, &[HOME, (BACKEND_ENV, "redis://h:1/0")]),
        "leave state_dir out",
    );
}

#[test]
fn the_lease_ttl_comes_from_the_builder_then_the_environment_then_ten_seconds() {
    let ms = Duration::from_millis;
    let r = resolve_in(&Given::default(), &[HOME]).unwrap();
    assert_eq!(r.lease_ttl, DEFAULT_LEASE_TTL);
    let r = resolve_in(&Given::default(), &[HOME, (LEASE_TTL_ENV, "")]).unwrap();
    assert_eq!(r.lease_ttl, DEFAULT_LEASE_TTL);
    let r = resolve_in(&Given::default(), &[HOME, (LEASE_TTL_ENV, "2500")]).unwrap();
    assert_eq!(r.lease_ttl, ms(2500));
    let given = Given {
        lease_ttl: Some(ms(700)),
        ..Given::default()
    };
    let r = resolve_in(&given, &[HOME, (LEASE_TTL_ENV, "2500")]).unwrap();
    assert_eq!(r.lease_ttl, ms(700));
    // The bounds are checked wherever the value came from, naming where.
    for bad in [
        "abc",
        "-1",
        "1.5",
        "199",
        "86400001",
        "99999999999999999999999",
    ] {
        config_err(
            resolve_in(&Given::default(), &[HOME, (LEASE_TTL_ENV, bad)]),
            LEASE_TTL_ENV,
        );
    }
    for (ttl, ok) in [
        (199, false),
        (200, true),
        (86_400_000, true),
        (86_400_001, false),
    ] {
        let given = Given {
            lease_ttl: Some(ms(ttl)),
            ..Given::default()
        };
        match resolve_in(&given, &[HOME]) {
            Ok(r) => assert!(ok && r.lease_ttl == ms(ttl), "{ttl}"),
            Err(e) => assert!(!ok && e.message().contains("lease_ttl"), "{ttl}: {e}"),
        }
    }
}

#[test]
fn ordinal_takes_the_worker_id_from_the_statefulset_pod() {
    let ord = (WORKER_ID_ENV, "ordinal");
    let r = resolve_in(&Given::default(), &[HOME, ord, ("HOSTNAME", "web-7")]).unwrap();
    assert_eq!(r.worker, Some(WorkerSource::Fixed(7)));
    let vars = [
        HOME,
        ord,
        ("HOSTNAME", "web-7"),
        ("RIMEFLAKE_POD_INDEX", "12"),
    ];
    let r = resolve_in(&Given::default(), &vars).unwrap();
    assert_eq!(r.worker, Some(WorkerSource::Fixed(12)));
    // What the caller gave wins, as for a number.
    let given = Given {
        worker: Some(WorkerSource::Fixed(2)),
        ..Given::default()
    };
    let r = resolve_in(&given, &[HOME, ord, ("HOSTNAME", "nope")]).unwrap();
    assert_eq!(r.worker, Some(WorkerSource::Fixed(2)));
    config_err(
        resolve_in(&Given::default(), &[HOME, ord, ("HOSTNAME", "build-box")]),
        "the host name \"build-box\" ($HOSTNAME) does not end in -<n>",
    );
    // Out of the layout's range: js_safe has 4 worker-ID bits.
    config_err(
        resolve_in(
            &Given::default(),
            &[HOME, ord, ("HOSTNAME", "web-16"), (LAYOUT_ENV, "js_safe")],
        ),
        "worker ID 16 (RIMEFLAKE_WORKER_ID=ordinal, host name web-16) is above layout js_safe's",
    );
}

#[test]
fn durability_warnings_are_quieted_only_by_1() {
    let quiet = |v: Option<&str>| {
        let mut vars = vec![HOME];
        vars.extend(v.map(|v| (NO_DURABILITY_WARNING_ENV, v)));
        resolve_in(&Given::default(), &vars).map(|r| r.quiet_durability)
    };
    assert!(!quiet(None).unwrap());
    assert!(!quiet(Some("")).unwrap(), "empty is unset");
    assert!(!quiet(Some("0")).unwrap());
    assert!(quiet(Some("1")).unwrap());
    for bad in ["yes", "true", "2"] {
        let e = quiet(Some(bad)).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::Config);
        assert!(e.message().contains(NO_DURABILITY_WARNING_ENV), "{e}");
    }
}

#[test]
fn waiting_at_every_takeover_comes_from_the_builder_then_only_1_in_the_environment() {
    let wait = |given: Option<bool>, v: Option<&str>| {
        let mut vars = vec![HOME];
        vars.extend(v.map(|v| (WAIT_AT_TAKEOVER_ENV, v)));
        let given = Given {
            wait_at_takeover: given,
            ..Given::default()
        };
        resolve_in(&given, &vars).map(|r| r.wait_at_takeover)
    };
    assert!(!wait(None, None).unwrap());
    assert!(!wait(None, Some("")).unwrap(), "empty is unset");
    assert!(!wait(None, Some("0")).unwrap());
    assert!(wait(None, Some("1")).unwrap());
    assert!(wait(Some(true), None).unwrap());
    assert!(!wait(Some(false), Some("1")).unwrap(), "the builder wins");
    for bad in ["yes", "true", "2"] {
        let e = wait(None, Some(bad)).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::Config);
        assert!(e.message().contains(WAIT_AT_TAKEOVER_ENV), "{e}");
    }
}

#[test]
fn the_lease_ttls_bounds_and_default_are_the_tables() {
    let row = crate::contract::Setting::LeaseTtl.info();
    let ms = |d: Duration| d.as_millis() as u64;
    assert_eq!(row.range, Some((ms(MIN_LEASE_TTL), ms(MAX_LEASE_TTL))));
    assert_eq!(row.default.millis(), ms(DEFAULT_LEASE_TTL));
}
