//! `rimeflake gen` on a server whose host name the resolver never answers for: it fails within
//! the call timeout, for Redis, PostgreSQL, MySQL and ZooKeeper alike. The resolver is a DNS server of the test
//! (a UDP socket on a loopback address that reads queries and never answers), named in a
//! resolv.conf that only the child process sees: it runs in a mount namespace of its own
//! (`unshare -m`, as root) with that file bound over /etc/resolv.conf.

use rimeflake_testkit::support;
use support::Since;

use std::net::UdpSocket;
use std::path::PathBuf;
use std::process::Command;
use std::time::Duration;

const BIN: &str = env!("CARGO_BIN_EXE_rimeflake");

#[test]
fn a_host_name_the_resolver_never_answers_for_fails_within_the_timeout() {
    // A loopback address of its own, so parallel runs do not share port 53.
    let pid = std::process::id();
    let ip = format!("127.{}.{}.{}", 100 + pid % 100, (pid / 100) % 250 + 1, 53);
    let dns = UdpSocket::bind(format!("{ip}:53"))
        .unwrap_or_else(|e| panic!("bind {ip}:53 (the test runs as root): {e}"));
    // Reads (and so drops) every query, for as long as the test runs.
    std::thread::spawn(move || {
        let mut buf = [0u8; 512];
        while dns.recv_from(&mut buf).is_ok() {}
    });
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("resolver-{pid}"));
    std::fs::create_dir_all(&dir).unwrap();
    let conf = dir.join("resolv.conf");
    // glibc's default: 5 s per try, 2 tries, for A and AAAA: about 20 s without a deadline.
    std::fs::write(
        &conf,
        format!("nameserver {ip}\noptions timeout:5 attempts:2\n"),
    )
    .unwrap();
    let marker = format!("nameserver {ip}");
    for url in [
        "redis://never-answered.example:6379/0",
        "postgresql://u@never-answered.example:5432/db?sslmode=disable",
        "mysql://u@never-answered.example:3306/db?ssl-mode=DISABLED",
        "zookeeper://never-answered.example:2181/rimeflake",
    ] {
        let start = Since::now();
        let script = format!(
            "mount --bind '{}' /etc/resolv.conf && grep -q '{marker}' /etc/resolv.conf || exit 99; \
             exec '{BIN}' gen --namespace resolver --backend '{url}'",
            conf.display()
        );
        let out = Command::new("unshare")
            .args(["-m", "sh", "-c", &script])
            // The default TTL, 10 s: each server call within 1 s.
            .env_remove("RIMEFLAKE_LEASE_TTL_MS")
            .env_remove("RIMEFLAKE_BACKEND")
            .output()
            .expect("unshare runs");
        let took = start.elapsed();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_ne!(
            out.status.code(),
            Some(99),
            "the resolv.conf was not bound (unshare -m needs root): {stderr}"
        );
        assert!(!out.status.success(), "{url}: {stderr}");
        assert!(
            stderr.contains("within 1000 ms"),
            "{url}: not a timeout: {stderr}"
        );
        assert!(
            took < Duration::from_millis(3_000),
            "{url}: failed after {took:?}: {stderr}"
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}
