//! The deployment files as shipped: the systemd unit passes `systemd-analyze verify` and a
//! `systemd-analyze security` exposure of at most 2.0 and sets an open-file limit for the
//! default connections; the Kubernetes manifest parses, its container's arguments and
//! environment run `rimeflake serve` (worker ID = the pod's ordinal), its probes answer 200 on
//! that server, and its disruption budget selects its pods; the OpenAPI description matches the
//! server's real answers, path by path.

use common::support::TempDir;

mod common;
use common::{python, repo, tool, Server};

use serde_json::Value;
use std::process::Command;

/// The documents of a YAML file, as JSON (PyYAML, in the tests' venv).
fn yaml(path: &str) -> Vec<Value> {
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/clients/yaml2json.py");
    let out = Command::new(python())
        .args([script, repo().join(path).to_str().unwrap()])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{path}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

#[test]
fn the_systemd_unit_verifies_is_sandboxed_and_allows_the_connections() {
    let analyze = tool("systemd-analyze", "apt-get install systemd");
    let dir = TempDir::new("serve-systemd");
    let unit =
        std::fs::read_to_string(repo().join("examples/systemd/rimeflake-serve.service")).unwrap();
    // The unit as installed, with the binary where this build has it.
    let bin = common::binary();
    let installed = unit.replace("/usr/local/bin/rimeflake", bin.to_str().unwrap());
    let path = format!("{}/rimeflake-serve.service", dir.path());
    std::fs::write(&path, &installed).unwrap();
    let out = Command::new(&analyze)
        .args(["verify", &path])
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(
        out.status.success() && said.trim().is_empty(),
        "verify: {said}"
    );
    let out = Command::new(&analyze)
        // The threshold is in tenths: 20 is an exposure of 2.0, which it then exits 1 above.
        .args(["security", "--offline=true", "--threshold=20", &path])
        .output()
        .unwrap();
    let report = String::from_utf8_lossy(&out.stdout).into_owned();
    let exposure = report
        .lines()
        .find_map(|l| {
            l.split("exposure level for rimeflake-serve.service: ")
                .nth(1)
        })
        .and_then(|v| v.split_whitespace().next()?.parse::<f64>().ok())
        .unwrap_or_else(|| panic!("no exposure level in:\n{report}"));
    eprintln!("systemd-analyze security: exposure {exposure}");
    assert!(out.status.success() && exposure <= 2.0, "{report}");

    let setting = |key: &str| {
        unit.lines()
            .find_map(|l| l.strip_prefix(&format!("{key}=")))
            .unwrap_or_else(|| panic!("no {key}= in the unit"))
    };
    // The default --max-connections (1024) and the service's own files fit the limit: the
    // service starts under it without raising anything.
    let nofile: u64 = setting("LimitNOFILE").parse().unwrap();
    assert!(nofile >= 1024 + 256, "LimitNOFILE={nofile}");
    assert_eq!(setting("KillSignal"), "SIGTERM");
    let exec: Vec<&str> = setting("ExecStart").split_whitespace().skip(1).collect();
    assert_eq!(exec[..2], ["serve", "--listen"]);
    // The service as the unit runs it, under the unit's open-file limit: started, with
    // nothing to raise.
    let state = TempDir::new("serve-systemd-state");
    let mut cmd = Command::new(common::binary());
    // SAFETY: setrlimit in the child before exec, on values we own; async-signal-safe.
    unsafe {
        std::os::unix::process::CommandExt::pre_exec(&mut cmd, move || {
            let lim = libc::rlimit {
                rlim_cur: nofile as libc::rlim_t,
                rlim_max: nofile as libc::rlim_t,
            };
            match libc::setrlimit(libc::RLIMIT_NOFILE, &lim) {
                0 => Ok(()),
                _ => Err(std::io::Error::last_os_error()),
            }
        });
    }
    let args = [&exec[3..], &["--state-dir", state.path()]].concat();
    let mut server = Server::start_with(cmd, "127.0.0.1:0", &args, &[]);
    assert_eq!(server.get("/healthz").0, 200);
    assert!(server.stop().success());
    let log = server.stderr.lock().unwrap().clone();
    assert!(!log.contains("raised the open-file limit"), "{log}");
}

#[test]
fn the_kubernetes_manifest_runs_worker_id_ordinal_and_its_probes_answer() {
    let docs = yaml("examples/kubernetes/rimeflake-serve.yaml");
    let kind = |k: &str| -> Vec<&Value> { docs.iter().filter(|d| d["kind"] == k).collect() };
    let set = kind("StatefulSet")[0];
    let pdb = kind("PodDisruptionBudget")[0];
    assert_eq!(kind("Service").len(), 2);
    let pod = &set["spec"]["template"];
    let labels = &pod["metadata"]["labels"];
    // The budget and the services select the StatefulSet's pods.
    for selector in [
        &pdb["spec"]["selector"]["matchLabels"],
        &set["spec"]["selector"]["matchLabels"],
    ]
    .into_iter()
    .chain(kind("Service").iter().map(|s| &s["spec"]["selector"]))
    {
        for (k, v) in selector.as_object().unwrap() {
            assert_eq!(&labels[k], v, "selector {k}={v} matches no pod label");
        }
    }
    assert_eq!(pdb["spec"]["maxUnavailable"], 1);
    assert_eq!(
        set["spec"]["serviceName"],
        kind("Service")
            .iter()
            .find(|s| s["spec"]["clusterIP"] == "None")
            .unwrap()["metadata"]["name"]
    );

    let c = &pod["spec"]["containers"][0];
    let env: Vec<(&str, &Value)> = c["env"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| (e["name"].as_str().unwrap(), e))
        .collect();
    let var = |name: &str| env.iter().find(|(n, _)| *n == name).unwrap().1;
    assert_eq!(var("RIMEFLAKE_WORKER_ID")["value"], "ordinal");
    assert_eq!(
        var("RIMEFLAKE_POD_INDEX")["valueFrom"]["fieldRef"]["fieldPath"],
        "metadata.labels['apps.kubernetes.io/pod-index']"
    );
    assert_eq!(
        var("RIMEFLAKE_STATE_DIR")["value"],
        c["volumeMounts"][0]["mountPath"]
    );
    assert_eq!(
        c["volumeMounts"][0]["name"],
        set["spec"]["volumeClaimTemplates"][0]["metadata"]["name"]
    );
    let args: Vec<&str> = c["args"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a.as_str().unwrap())
        .collect();
    let listen = args[args.iter().position(|a| *a == "--listen").unwrap() + 1];
    let port = c["ports"][0]["containerPort"].as_u64().unwrap();
    assert_eq!(listen, format!("0.0.0.0:{port}"));
    let grace = pod["spec"]["terminationGracePeriodSeconds"]
        .as_u64()
        .unwrap();
    let shutdown: u64 = args[args
        .iter()
        .position(|a| *a == "--shutdown-timeout")
        .unwrap()
        + 1]
    .parse()
    .unwrap();
    assert!(
        grace > shutdown,
        "the grace period {grace} s ends before --shutdown-timeout"
    );

    // The container as pod 2 would run it: its arguments (on a free loopback port) and
    // environment, the pod-index label as the downward API gives it, the token from its secret.
    let state = TempDir::new("serve-k8s");
    // Without `serve --listen 0.0.0.0:8080`, which the harness puts first as serve 127.0.0.1:0.
    let args: Vec<&str> = args
        .iter()
        .enumerate()
        .filter(|(i, a)| *i > 0 && **a != "--listen" && **a != listen)
        .map(|(_, a)| *a)
        .collect();
    let mut cmd = Command::new(common::binary());
    common::support::without_rimeflake_env(&mut cmd);
    let mut server = Server::start_with(
        cmd,
        "127.0.0.1:0",
        &args,
        &[
            ("RIMEFLAKE_WORKER_ID", "ordinal"),
            ("RIMEFLAKE_POD_INDEX", "2"),
            ("RIMEFLAKE_STATE_DIR", state.path()),
            ("RIMEFLAKE_SERVE_TOKEN", "k8s-token"),
        ],
    );
    for probe in ["readinessProbe", "livenessProbe", "startupProbe"] {
        let p = &c[probe]["httpGet"];
        assert_eq!(p["port"], c["ports"][0]["name"], "{probe}");
        let (status, body) = server.get(p["path"].as_str().unwrap());
        assert_eq!(status, 200, "{probe}: {body}");
    }
    let (status, body) = server.get_with("/id", &["Authorization: Bearer k8s-token"]);
    assert_eq!(status, 200, "{body}");
    let id: u64 = body.trim().parse().unwrap();
    assert_eq!(
        rimeflake::Layout::default().decode(id).unwrap().worker_id,
        2
    );
    assert!(server.stop().success());
    // Its log is JSON, one object a line, for the cluster's collector.
    for line in server.stderr.lock().unwrap().lines() {
        serde_json::from_str::<Value>(line).unwrap_or_else(|e| panic!("{line:?}: {e}"));
    }
}

/// `v` with a `$ref` followed, within `spec`.
fn deref<'a>(spec: &'a Value, v: &'a Value) -> &'a Value {
    match v["$ref"].as_str() {
        Some(r) => {
            let mut at = spec;
            for part in r.trim_start_matches("#/").split('/') {
                at = &at[part];
            }
            deref(spec, at)
        }
        None => v,
    }
}

#[test]
fn the_openapi_description_matches_the_servers_answers() {
    let spec = yaml("docs/openapi.yaml").remove(0);
    let dir = TempDir::new("serve-openapi");
    let token = "api-token";
    let mut server = Server::start(
        &["--worker", "3", "--state-dir", dir.path()],
        &[("RIMEFLAKE_SERVE_TOKEN", token)],
    );
    let auth = format!("Authorization: Bearer {token}");
    let paths = spec["paths"].as_object().unwrap();

    // Every path the server serves is described (the server lists them on a 404).
    let (status, body) = server.get_with("/no-such-path", &[&auth]);
    assert_eq!(status, 404);
    let served: Vec<&str> = body
        .trim()
        .split("the paths are ")
        .nth(1)
        .unwrap()
        .split(", ")
        .map(|p| p.split('?').next().unwrap())
        .collect();
    for p in &served {
        assert!(paths.contains_key(*p), "{p} is served but not described");
    }
    assert_eq!(served.len(), paths.len(), "{served:?}");

    let mut asked = 0;
    for (path, item) in paths {
        let op = &item["get"];
        let params: Vec<&Value> = op["parameters"].as_array().map_or(Vec::new(), |ps| {
            ps.iter().map(|p| deref(&spec, p)).collect()
        });
        // With the required parameters only, then with every one; as text, then as JSON.
        for all in [false, true] {
            let mut url = path.clone();
            let mut query = Vec::new();
            for p in &params {
                let name = p["name"].as_str().unwrap();
                let example = match &p["example"] {
                    Value::String(s) => s.clone(),
                    v => v.to_string(),
                };
                match p["in"].as_str().unwrap() {
                    "path" => url = url.replace(&format!("{{{name}}}"), &example),
                    _ if all || p["required"] == true => query.push(format!("{name}={example}")),
                    _ => {}
                }
            }
            if !query.is_empty() {
                url = format!("{url}?{}", query.join("&"));
            }
            for accept in [None, Some("Accept: application/json")] {
                let mut headers = vec![auth.as_str()];
                headers.extend(accept);
                let a = common::Conn::open(server.addr).ask("GET", &url, &headers);
                asked += 1;
                let what = format!("GET {url} ({accept:?}): {} {}", a.status, a.body);
                let response = deref(&spec, &op["responses"][a.status.to_string()]);
                assert!(response.is_object(), "undescribed status: {what}");
                let ct = a.header("content-type").unwrap().split(';').next().unwrap();
                let schema = &response["content"][ct]["schema"];
                assert!(schema.is_object(), "undescribed content type {ct}: {what}");
                let schema = deref(&spec, schema);
                if ct == "application/json" {
                    let v: Value = serde_json::from_str(&a.body).unwrap();
                    for r in schema["required"].as_array().unwrap() {
                        assert!(v.get(r.as_str().unwrap()).is_some(), "no {r}: {what}");
                    }
                    for k in v.as_object().unwrap().keys() {
                        assert!(
                            schema["properties"].get(k).is_some(),
                            "undescribed {k}: {what}"
                        );
                    }
                }
                for h in ["retry-after", "rimeflake-error"] {
                    if a.header(h).is_some() {
                        let described = response["headers"]
                            .as_object()
                            .is_some_and(|hs| hs.keys().any(|k| k.eq_ignore_ascii_case(h)));
                        assert!(described, "undescribed header {h}: {what}");
                    }
                }
            }
        }
        // Without the token: 401 where the description asks for one, else the same answer.
        let open = op["security"].as_array().is_some_and(|s| s.is_empty());
        let url = path.replace("{key}", "k").replace("{id}", "1");
        let (status, _) = server.get(&url);
        if open {
            assert_ne!(status, 401, "{path} is described as open");
        } else {
            assert_eq!(status, 401, "{path} is described as needing the token");
            assert!(
                op["responses"]["401"].is_object(),
                "{path}: 401 undescribed"
            );
        }
    }
    eprintln!("openapi: {asked} answers checked against docs/openapi.yaml");
    assert!(server.stop().success());
}
