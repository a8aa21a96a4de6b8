//! ZooKeeper (Debian's `zookeeper` package, its jar run directly by `java`): one server, or an
//! ensemble of three on loopback.
//!
//! A single server ticks every 10 ms and takes sessions from 20 ms to a day, so the tests'
//! short leases are sessions it ends on time; an ensemble ticks every 50 ms (its servers ping
//! each other every tick, which a loaded machine must keep up with).

use super::{deadline, fresh_dir, log_stdio, now_ns, Process, Server, INSTALL};
use std::fs;
use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

/// ZooKeeper's jar (with the libraries its manifest names).
pub fn zookeeper_jar() -> PathBuf {
    let jar = PathBuf::from("/usr/share/java/zookeeper.jar");
    assert!(jar.is_file(), "{} is missing: {INSTALL}", jar.display());
    jar
}

/// A JVM that starts quickly and stays small: a test's server holds a few hundred nodes.
fn java(main: &str) -> Command {
    let mut cmd = Command::new("java");
    cmd.args([
        "-Xmx96m",
        "-Xss512k",
        "-XX:+UseSerialGC",
        "-XX:TieredStopAtLevel=1",
        "-Dzookeeper.admin.enableServer=false",
        "-Dzookeeper.jmx.log4j.disable=true",
        "-cp",
    ])
    .arg(zookeeper_jar())
    .arg(main)
    .stdin(Stdio::null());
    cmd
}

/// One server of a ZooKeeper ensemble (or a server on its own).
pub struct ZooKeeper {
    process: Process,
    /// `(peer port, election port)` per server of the ensemble, this one's included; empty on
    /// its own.
    peers: Vec<(u16, u16, u16)>,
    /// This server's number in the ensemble (from 1).
    myid: usize,
}

impl Server for ZooKeeper {
    fn process(&mut self) -> &mut Process {
        &mut self.process
    }

    fn spawn_and_wait(&mut self) -> Result<(), String> {
        self.write_config();
        let log = self.process.dir.join("zookeeper.log");
        let child = java("org.apache.zookeeper.server.quorum.QuorumPeerMain")
            .arg(self.process.dir.join("zoo.cfg"))
            .stdout(log_stdio(&log))
            .stderr(log_stdio(&log))
            .spawn()
            .unwrap_or_else(|e| panic!("cannot run java (for ZooKeeper): {e}"));
        let port = self.process.port;
        let alone = self.peers.is_empty();
        self.process
            .wait_ready(child, 60, Duration::from_millis(50), || {
                // On its own, a server is ready once it serves (`srvr` names its mode, where
                // `ruok` answers as soon as it listens); in an ensemble, once it answers (the
                // others start beside it, and the ensemble waits for its leader).
                if alone {
                    four_letters(port, "srvr").is_some_and(|r| r.contains("Mode:"))
                } else {
                    four_letters(port, "ruok").is_some_and(|r| r == "imok")
                }
            })
    }
}

/// A four-letter command's answer, or `None` when the server does not answer in 2 s.
pub fn four_letters(port: u16, word: &str) -> Option<String> {
    let mut s = TcpStream::connect(("127.0.0.1", port)).ok()?;
    s.set_read_timeout(Some(Duration::from_secs(2))).ok()?;
    s.write_all(word.as_bytes()).ok()?;
    let mut out = String::new();
    s.read_to_string(&mut out).ok()?;
    Some(out)
}

impl ZooKeeper {
    /// A server on its own.
    pub fn start() -> ZooKeeper {
        let mut zk = ZooKeeper::unstarted(fresh_dir("zookeeper"), Vec::new(), 0);
        zk.start_on_free_port();
        zk
    }

    fn unstarted(dir: PathBuf, peers: Vec<(u16, u16, u16)>, myid: usize) -> ZooKeeper {
        ZooKeeper {
            process: Process::new(
                "zookeeper",
                dir,
                &["zookeeper.log"],
                // SIGTERM: the JVM's shutdown; the data (its synced log) stays.
                (libc::SIGTERM, "SIGTERM", 30),
                None,
            ),
            peers,
            myid,
        }
    }

    fn write_config(&self) {
        let dir = &self.process.dir;
        let data = dir.join("data");
        fs::create_dir_all(&data).expect("create ZooKeeper's data directory");
        let mut cfg = format!(
            "dataDir={}\nclientPort={}\nclientPortAddress=127.0.0.1\n\
             4lw.commands.whitelist=*\nmaxClientCnxns=0\nmaxSessionTimeout=86400000\n",
            data.display(),
            self.process.port
        );
        if self.peers.is_empty() {
            cfg.push_str("tickTime=10\nminSessionTimeout=20\n");
        } else {
            cfg.push_str(
                "tickTime=50\nminSessionTimeout=100\ninitLimit=100\nsyncLimit=20\n\
                 cnxTimeout=500\nelectionPortBindRetry=20\n",
            );
            for (i, (_, peer, election)) in self.peers.iter().enumerate() {
                cfg.push_str(&format!("server.{}=127.0.0.1:{peer}:{election}\n", i + 1));
            }
            fs::write(data.join("myid"), format!("{}\n", self.myid)).expect("write myid");
        }
        fs::write(dir.join("zoo.cfg"), cfg).expect("write zoo.cfg");
    }

    /// `zookeeper://127.0.0.1:PORT/rimeflake`.
    pub fn url(&self) -> String {
        format!("zookeeper://127.0.0.1:{}/rimeflake", self.process.port)
    }

    pub fn port(&self) -> u16 {
        self.process.port
    }

    pub fn dir(&self) -> &Path {
        &self.process.dir
    }

    /// Runs commands of ZooKeeper's own shell against this server, one a line (`deleteall
    /// /rimeflake/...`, `get /x`), in one JVM, and returns what it printed.
    pub fn cli(&self, script: &str) -> String {
        let mut child = java("org.apache.zookeeper.ZooKeeperMain")
            .args(["-server", &format!("127.0.0.1:{}", self.process.port)])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap_or_else(|e| panic!("cannot run java (for ZooKeeper's shell): {e}"));
        let mut stdin = child.stdin.take().expect("piped");
        writeln!(stdin, "{script}\nquit").expect("write to ZooKeeper's shell");
        drop(stdin);
        let out = child.wait_with_output().expect("ZooKeeper's shell ran");
        let text = format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(out.status.success(), "zkCli {script:?} failed:\n{text}");
        text
    }

    /// `leader`, `follower` or `standalone`, as the server says (`srvr`); `None` while it
    /// serves no clients.
    pub fn mode(&self) -> Option<String> {
        let out = four_letters(self.process.port, "srvr")?;
        out.lines()
            .find_map(|l| l.strip_prefix("Mode: "))
            .map(|m| m.trim().to_string())
    }

    /// SIGTERM and wait: the data stays.
    pub fn stop(&mut self) {
        self.process.stop();
    }

    /// SIGKILL, as a crash: what it acknowledged stays (its log is synced before it answers).
    pub fn kill(&mut self) {
        if let Some(mut child) = self.process.child.take() {
            super::kill_tree(&mut child);
        }
    }

    /// Starts the server again on the same ports and data (stopping it first if it runs).
    pub fn restart(&mut self) {
        self.restart_process();
    }

    /// SIGSTOP: connections stay open at the kernel, nothing answers.
    pub fn pause(&self) {
        self.process.pause();
    }

    pub fn resume(&self) {
        self.process.resume();
    }
}

/// Three ZooKeeper servers on loopback forming one ensemble.
pub struct Ensemble {
    pub servers: Vec<ZooKeeper>,
}

impl Ensemble {
    /// Starts three servers and waits until they have elected a leader.
    pub fn start() -> Ensemble {
        let port = super::free_port;
        let peers: Vec<(u16, u16, u16)> = (0..3).map(|_| (port(), port(), port())).collect();
        let mut servers: Vec<ZooKeeper> = peers
            .iter()
            .enumerate()
            .map(|(i, (client, _, _))| {
                let dir = fresh_dir(&format!("zookeeper-{}", i + 1));
                let mut zk = ZooKeeper::unstarted(dir, peers.clone(), i + 1);
                zk.process.port = *client;
                zk
            })
            .collect();
        for zk in &mut servers {
            if let Err(log) = zk.spawn_and_wait() {
                panic!("a ZooKeeper server of the ensemble did not start:\n{log}");
            }
        }
        let ensemble = Ensemble { servers };
        ensemble.wait_for_leader();
        ensemble
    }

    /// `zookeeper://127.0.0.1:P1,127.0.0.1:P2,127.0.0.1:P3/rimeflake`.
    pub fn url(&self) -> String {
        let hosts: Vec<String> = self
            .servers
            .iter()
            .map(|s| format!("127.0.0.1:{}", s.port()))
            .collect();
        format!("zookeeper://{}/rimeflake", hosts.join(","))
    }

    /// The index of the leader, once one is elected and the others follow it (60 s at most).
    pub fn wait_for_leader(&self) -> usize {
        let until = deadline(60);
        loop {
            let modes: Vec<Option<String>> = self.servers.iter().map(ZooKeeper::mode).collect();
            let running = self.servers.iter().filter(|s| s.process.child.is_some());
            let serving = modes.iter().filter(|m| m.is_some()).count();
            if let Some(i) = modes.iter().position(|m| m.as_deref() == Some("leader")) {
                if serving == running.count() {
                    return i;
                }
            }
            assert!(
                now_ns() < until,
                "no leader elected in 60 s: {modes:?}\n{}",
                self.servers
                    .iter()
                    .map(|s| s.process.logs())
                    .collect::<Vec<_>>()
                    .join("\n")
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}
