//! What the ipvs-agent kernel tests share: the daemon as a child process of
//! the test's (director's) namespace with its HTTP endpoint, its
//! configuration file, its metrics, the kernel's weights, waiting with a
//! deadline, and connections held through a service.
//!
//! The tests' checks run every 200 ms (timeout 100 ms, fall 2, rise 2): a
//! failing server is out within fall x interval + timeout + one sync.
//! Bounds asserted here are generous for TCG (a slow, shared emulator);
//! what was measured is printed (`--nocapture` shows it).

use crate::common;

use std::fmt::Write as _;
use std::fs;
use std::net::{IpAddr, SocketAddr};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::thread;
use std::time::{Duration, Instant};

use common::prom::{find, samples, Sample};
use ipvsnl::sync::Table;
use ipvsnl::{Client, Destination, Scheduler, Service, ServiceKey};
use ipvsnl_test_support::client::{try_http_get, Conn};
use ipvsnl_test_support::lab::backends::{Backend, Serve};
use ipvsnl_test_support::netns::gettid;
use ipvsnl_test_support::oracle::kernel_table;

/// The check of the tests that measure a reaction: every 200 ms, fall 2,
/// rise 2. Its timeout is the whole interval: a refused connection fails
/// at once whatever the timeout, and a guest that TCG stalls (the build
/// machine is shared) would otherwise fail healthy servers.
pub const FAST_CHECK: &str =
    r#"{ kind = "tcp", interval = "200ms", timeout = "200ms", fall = 2, rise = 2 }"#;

/// The check of the tests that count requests: a healthy server must not
/// fail one check (a first failure since start takes a server out), so
/// the timeout is long.
pub const TCP_CHECK: &str =
    r#"{ kind = "tcp", interval = "1s", timeout = "1s", fall = 2, rise = 2 }"#;

/// The upper bound asserted on a reaction (out after a kill, back after a
/// restart): about ten times what it takes without load, for TCG.
pub const REACTION_LIMIT: Duration = Duration::from_secs(6);

/// How long a test waits for something that must happen.
pub const PATIENCE: Duration = Duration::from_secs(30);

/// One virtual service of a test's file: its protocol, VIP and port, the
/// check of its servers (an inline TOML table) and its servers (address,
/// port, weight).
pub struct Svc {
    pub protocol: &'static str,
    pub vip: IpAddr,
    pub port: u16,
    pub check: String,
    pub servers: Vec<(IpAddr, u16, u32)>,
}

impl Svc {
    /// A TCP service on `vip:port` over `servers`, checked by TCP.
    pub fn tcp(vip: &str, port: u16, servers: Vec<(IpAddr, u16, u32)>) -> Svc {
        Svc {
            protocol: "tcp",
            vip: vip.parse().expect("a VIP"),
            port,
            check: TCP_CHECK.to_owned(),
            servers,
        }
    }

    /// The same with another check.
    pub fn checked(mut self, check: &str) -> Svc {
        self.check = check.to_owned();
        self
    }

    /// Its key.
    pub fn key(&self) -> ServiceKey {
        match self.protocol {
            "udp" => ServiceKey::udp(self.vip, self.port),
            _ => ServiceKey::tcp(self.vip, self.port),
        }
    }
}

/// The configuration file for `services` (round robin, masquerade), with
/// a resync period long enough that none happens during a test.
pub fn config_text(services: &[Svc]) -> String {
    let mut out = String::from("[agent]\nresync = \"10m\"\n");
    for s in services {
        let _ = write!(
            out,
            "\n[[service]]\nname = \"{}-{}-{}\"\nprotocol = \"{}\"\naddress = \"{}\"\nport = {}\n\
             scheduler = \"rr\"\ncheck = {}\n",
            s.protocol, s.vip, s.port, s.protocol, s.vip, s.port, s.check
        );
        for (addr, port, weight) in &s.servers {
            let _ = write!(
                out,
                "\n[[service.server]]\naddress = \"{addr}\"\nport = {port}\nweight = {weight}\n"
            );
        }
    }
    out
}

/// The table the file of `services` asks for, written with the library's
/// types (not the agent's): what the kernel must hold while every server
/// is healthy.
pub fn wanted_table(services: &[Svc]) -> Table {
    let mut t = Table::new();
    for s in services {
        t.insert(
            Service::new(s.key()).with_scheduler(Scheduler::RoundRobin),
            s.servers
                .iter()
                .map(|(a, p, w)| Destination::new(*a, *p).with_weight(*w)),
        );
    }
    t
}

/// Adds the VIPs of `services` to the director's `lo`.
pub fn add_vips(services: &[Svc]) {
    let mut lines = Vec::new();
    for s in services {
        let line = format!("addr add {}/32 dev lo", s.vip);
        if !lines.contains(&line) {
            lines.push(line);
        }
    }
    ipvsnl_test_support::commands::ip_batch(&lines);
}

/// A scratch directory of the test's own (removed when dropped).
pub struct Scratch(PathBuf);

impl Scratch {
    pub fn new(test: &str) -> Scratch {
        let dir = std::env::temp_dir().join(format!(
            "ipvs-agent-{test}-{}-{}",
            std::process::id(),
            gettid()
        ));
        let _ = fs::remove_dir_all(&dir);
        fs::create_dir_all(&dir).expect("a scratch directory");
        Scratch(dir)
    }

    pub fn path(&self, name: &str) -> PathBuf {
        self.0.join(name)
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = fs::remove_dir_all(&self.0);
    }
}

/// `ipvs-agent run FILE --netns (this thread's namespace) --listen
/// 127.0.0.1:PORT --state-dir (FILE's directory)/state`, started from the
/// calling thread (so its checks run in the director's namespace), its
/// log in a file; killed when dropped. Its ownership record is the
/// test's own: tests run in parallel, each in its namespace.
pub struct Agent {
    child: Child,
    listen: String,
    log: PathBuf,
}

impl Agent {
    /// Starts the agent on `config`; `log` names its log file.
    pub fn start(config: &std::path::Path, port: u16, log: PathBuf) -> Agent {
        let netns = format!("/proc/{}/task/{}/ns/net", std::process::id(), gettid());
        let listen = format!("127.0.0.1:{port}");
        let stderr = fs::File::create(&log).expect("the agent's log file");
        let child = Command::new(common::tool("ipvs-agent"))
            .arg("run")
            .arg(config)
            .args(["--netns", &netns, "--listen", &listen])
            .arg("--state-dir")
            .arg(
                config
                    .parent()
                    .expect("a file in a directory")
                    .join("state"),
            )
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(stderr)
            .spawn()
            .expect("spawn ipvs-agent");
        Agent { child, listen, log }
    }

    /// The agent's log so far.
    pub fn log(&self) -> String {
        fs::read_to_string(&self.log).unwrap_or_default()
    }

    /// Waits until `/ready` answers 200 (the first sync done); the time it
    /// took.
    pub fn wait_ready(&mut self) -> Duration {
        let started = Instant::now();
        let ready = wait_for(PATIENCE, || {
            self.assert_running();
            let status = try_http_get(&self.listen, "/ready").map(|r| r.0);
            (status.ok() == Some(200)).then_some(())
        });
        assert!(
            ready.is_some(),
            "/ready not 200 in {PATIENCE:?}; log:\n{}",
            self.log()
        );
        started.elapsed()
    }

    /// `GET /ready`: its status.
    pub fn ready_status(&self) -> u16 {
        match try_http_get(&self.listen, "/ready") {
            Ok((status, _)) => status,
            Err(e) => panic!("GET /ready: {e}; log:\n{}", self.log()),
        }
    }

    /// Panics (with the log) if the agent has exited.
    pub fn assert_running(&mut self) {
        if let Ok(Some(status)) = self.child.try_wait() {
            panic!("ipvs-agent exited ({status}); log:\n{}", self.log());
        }
    }

    /// The samples of `/metrics`.
    pub fn metrics(&self) -> Vec<Sample> {
        match try_http_get(&self.listen, "/metrics") {
            Ok((200, body)) => samples(&body),
            Ok((status, body)) => panic!("/metrics: {status} {body}; log:\n{}", self.log()),
            Err(e) => panic!("GET /metrics: {e}; log:\n{}", self.log()),
        }
    }

    /// The value of the sample `name` with labels `labels` (0 when absent,
    /// as a counter not yet incremented is).
    pub fn metric(&self, name: &str, labels: &[(&str, &str)]) -> f64 {
        value(&self.metrics(), name, labels)
    }

    /// Requests the agent's syncs sent to the kernel so far.
    pub fn requests_sent(&self) -> f64 {
        self.metric("ipvs_agent_sync_requests_total", &[("outcome", "done")])
    }

    /// Sends `signal` to the agent.
    pub fn signal(&self, signal: libc::c_int) {
        let pid = libc::pid_t::try_from(self.child.id()).expect("a pid");
        // SAFETY: kill(2) with our own child's pid and a signal number.
        let rc = unsafe { libc::kill(pid, signal) };
        assert_eq!(rc, 0, "kill: {}", std::io::Error::last_os_error());
    }

    /// SIGKILL, and the agent reaped.
    pub fn kill(mut self) {
        self.signal(libc::SIGKILL);
        let _ = self.child.wait();
    }
}

impl Drop for Agent {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The value of a sample (0 when absent).
pub fn value(all: &[Sample], name: &str, labels: &[(&str, &str)]) -> f64 {
    find(all, name, labels).map_or(0.0, |s| {
        s.value
            .parse()
            .unwrap_or_else(|e| panic!("{name} {labels:?} = {:?}: {e}", s.value))
    })
}

/// Calls `f` every 10 ms until it gives `Some`, for at most `limit`.
pub fn wait_for<T>(limit: Duration, mut f: impl FnMut() -> Option<T>) -> Option<T> {
    let deadline = Instant::now() + limit;
    loop {
        if let Some(v) = f() {
            return Some(v);
        }
        if Instant::now() >= deadline {
            return None;
        }
        thread::sleep(Duration::from_millis(10));
    }
}

/// The kernel's weight of `server` in service `key` (None: not there).
pub fn kernel_weight(c: &mut Client, key: &ServiceKey, server: SocketAddr) -> Option<u32> {
    let t = kernel_table(c);
    let s = t.get(key)?;
    s.destination(&server.ip(), server.port())
        .map(|d| d.destination.weight)
}

/// Waits until the kernel's weight of `server` is `weight`; the time it
/// took, panicking (with the agent's log) past `limit`.
pub fn wait_weight(
    c: &mut Client,
    agent: &Agent,
    key: &ServiceKey,
    server: SocketAddr,
    weight: u32,
    limit: Duration,
) -> Duration {
    let started = Instant::now();
    let done = wait_for(limit, || {
        (kernel_weight(c, key, server) == Some(weight)).then_some(())
    });
    let took = started.elapsed();
    assert!(
        done.is_some(),
        "{key} {server}: weight {:?}, not {weight}, after {took:?}; agent's log:\n{}",
        kernel_weight(c, key, server),
        agent.log()
    );
    took
}

/// Connections through `vip` held open, at least one to each of `servers`
/// (round robin: a few rounds are enough); the others are reset.
pub fn hold_one_each(vip: SocketAddr, servers: &[IpAddr]) -> Vec<Conn> {
    let mut held: Vec<Conn> = Vec::new();
    for _ in 0..servers.len() * 4 {
        let c = Conn::open(vip, None);
        if held.iter().any(|h| h.server() == c.server()) {
            c.reset();
        } else {
            held.push(c);
        }
        if held.len() == servers.len() {
            break;
        }
    }
    let mut reached: Vec<IpAddr> = held.iter().map(Conn::server).collect();
    reached.sort();
    let mut want = servers.to_vec();
    want.sort();
    assert_eq!(reached, want, "held connections through {vip}");
    held
}

/// Asserts that every held connection still carries data.
pub fn assert_alive(what: &str, held: &mut [Conn]) {
    for (i, c) in held.iter_mut().enumerate() {
        let msg = format!("{what} {i}\n");
        let back = c
            .echo(msg.as_bytes())
            .unwrap_or_else(|e| panic!("{what}: the connection to {} is cut: {e}", c.server()));
        assert_eq!(back, msg.as_bytes(), "{what}: echo from {}", c.server());
    }
}

/// Two real servers on port 8081, the first serving HTTP, the second
/// silent (it accepts and never answers: its check fails by timeout),
/// behind one TCP service 10.40.0.2:80 whose servers are checked by
/// `check`.
pub fn http_and_silent(check: &str) -> (Vec<Backend>, Svc) {
    let rs: Vec<Backend> = (1..=2).map(Backend::start).collect();
    rs[0].serve(8081, Serve::Http);
    rs[1].serve(8081, Serve::Silent);
    let service = Svc::tcp(
        "10.40.0.2",
        80,
        rs.iter().map(|b| (b.addr(), 8081, 1)).collect(),
    )
    .checked(check);
    (rs, service)
}
