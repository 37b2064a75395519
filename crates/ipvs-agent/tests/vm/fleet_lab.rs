//! The fleet's lab for the VM tests (`fleet_vm*.rs`; root, namespaces,
//! Debian's etcd: `.ci/fleet-tests`).
//!
//! One L2 segment, 10.0.0.0/24: a bridge `br0` in namespace `fl-sw` with a
//! veth port for each of three directors `fl-d1`..`fl-d3` (10.0.0.1-3 on
//! their `eth0`), two real servers `fl-r1`, `fl-r2` (10.0.0.11-12; the VIP
//! on their `lo`, `arp_ignore` 1 and `arp_announce` 2: direct routing) and
//! a client `fl-c` (10.0.0.200).
//!
//! etcd is off that segment: three members in one namespace `fl-etcd`
//! (10.9.0.1-3 on its `lo`), and each director reaches them over a link of
//! its own (`etcd0` 10.1.N.2 to `eN` 10.1.N.1), so a director can be cut
//! off from etcd alone while it still serves. The members share a
//! namespace because what the tests do to etcd is kill members, not
//! partition them from each other; one namespace keeps that to one link a
//! director.
//!
//! Each director runs `ipvs-agent run --etcd ... --vip 10.0.0.100/32
//! --vip-interface eth0 --sync-interface eth0 --listen 127.0.0.1:9102
//! --state-dir /tmp/fleet-lab/dN.state` (and, with [`Lab::peers`],
//! `--peer-listen 10.0.0.N:7946 --peers ...`: the segment is the peer
//! link) as a child (`ip netns exec`); its log is `/tmp/fleet-lab/dN.log`,
//! printed when a test fails.

use std::io::{Read, Write};
use std::net::{IpAddr, Ipv4Addr, TcpStream};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use ipvsnl::connections::Connection;
use ipvsnl::sync::Table;
use ipvsnl::{Client, Destination, Forward, Scheduler, Service, ServiceKey};

use super::fleet_vip::{in_netns, ip};

/// The service's VIP, held by the leader on its `eth0`.
pub(crate) const VIP: Ipv4Addr = Ipv4Addr::new(10, 0, 0, 100);
/// The service's port (the real servers listen on it too).
pub(crate) const PORT: u16 = 80;
/// The real servers.
pub(crate) const SERVERS: [Ipv4Addr; 2] =
    [Ipv4Addr::new(10, 0, 0, 11), Ipv4Addr::new(10, 0, 0, 12)];
/// The client.
pub(crate) const CLIENT: Ipv4Addr = Ipv4Addr::new(10, 0, 0, 200);
/// The election's lease TTL (the agent's default).
pub(crate) const TTL: Duration = ipvs_agent::fleet::leader::state_machine::DEFAULT_TTL;
/// How long a test waits for something that must happen.
pub(crate) const PATIENCE: Duration = Duration::from_secs(30);

const DIR: &str = "/tmp/fleet-lab";
pub(crate) const ENDPOINTS: &str = "http://10.9.0.1:2379,http://10.9.0.2:2379,http://10.9.0.3:2379";
const NAMESPACES: [&str; 8] = [
    "fl-sw", "fl-etcd", "fl-d1", "fl-d2", "fl-d3", "fl-r1", "fl-r2", "fl-c",
];

/// The agent with the `fleet` feature: `IPVSNL_FLEET_AGENT` in the VM
/// (`.ci/fleet-tests` stages it), else the one cargo built with this test.
fn agent() -> PathBuf {
    std::env::var_os("IPVSNL_FLEET_AGENT")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_BIN_EXE_ipvs-agent")))
}

pub(crate) fn sh(script: &str) {
    let out = Command::new("sh")
        .args(["-ec", script])
        .output()
        .expect("run sh");
    assert!(
        out.status.success(),
        "{script}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// The configuration file the tests publish: one TCP service on the VIP,
/// round robin, the two real servers by direct routing with `weights`.
pub(crate) fn config(weights: [u32; 2]) -> String {
    let mut text = format!(
        "[agent]\nresync = \"10m\"\n\n[[service]]\nname = \"web\"\nprotocol = \"tcp\"\n\
         address = \"{VIP}\"\nport = {PORT}\nscheduler = \"rr\"\n\
         check = {{ kind = \"tcp\", interval = \"1s\", timeout = \"1s\", fall = 2, rise = 2 }}\n"
    );
    for (s, w) in SERVERS.iter().zip(weights) {
        text.push_str(&format!(
            "\n[[service.server]]\naddress = \"{s}\"\nport = {PORT}\nweight = {w}\nforward = \"route\"\n"
        ));
    }
    text
}

/// The table [`config`] asks for, written with the library's types.
pub(crate) fn wanted(weights: [u32; 2]) -> Table {
    let mut t = Table::new();
    t.insert(
        Service::new(ServiceKey::tcp(IpAddr::V4(VIP), PORT)).with_scheduler(Scheduler::RoundRobin),
        SERVERS.iter().zip(weights).map(|(a, w)| {
            Destination::new(IpAddr::V4(*a), PORT)
                .with_weight(w)
                .with_forward(Forward::Route)
        }),
    );
    t
}

/// Polls until `f` gives something or `limit` passed.
pub(crate) fn wait_for<T>(limit: Duration, mut f: impl FnMut() -> Option<T>) -> Option<T> {
    let until = Instant::now() + limit;
    loop {
        if let Some(v) = f() {
            return Some(v);
        }
        if Instant::now() > until {
            return None;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// The lab: namespaces, links, etcd members, directors, real servers.
/// Dropping it kills every process and deletes the namespaces.
pub(crate) struct Lab {
    etcd: Vec<Option<Child>>,
    directors: Vec<Option<Child>>,
    servers_stop: Arc<AtomicBool>,
    /// Whether the directors start with the peer link (`--peers` on the
    /// segment, port [`PEER_PORT`]).
    pub(crate) peers: bool,
    /// More `ipvs-agent run` arguments ([`Lab::agent_args`]).
    agent_args: Vec<String>,
}

/// The peer link's port on each director's segment address.
pub(crate) const PEER_PORT: u16 = 7946;

impl Lab {
    /// The topology, the three etcd members (healthy) and the real
    /// servers listening; no director yet.
    pub(crate) fn new() -> Lab {
        cleanup();
        std::fs::create_dir_all(DIR).expect("the lab's directory");
        let mut s = String::new();
        for n in NAMESPACES {
            s.push_str(&format!("ip netns add {n}; ip -n {n} link set lo up\n"));
        }
        s.push_str("ip -n fl-sw link add br0 type bridge; ip -n fl-sw link set br0 up\n");
        let mut segment: Vec<(String, Ipv4Addr)> = (1..=3)
            .map(|i| (format!("d{i}"), Ipv4Addr::new(10, 0, 0, i)))
            .collect();
        segment.push(("r1".into(), SERVERS[0]));
        segment.push(("r2".into(), SERVERS[1]));
        segment.push(("c".into(), CLIENT));
        for (n, a) in &segment {
            s.push_str(&format!(
                "ip -n fl-{n} link add eth0 type veth peer name p-{n} netns fl-sw\n\
                 ip -n fl-sw link set p-{n} master br0 up\n\
                 ip -n fl-{n} addr add {a}/24 dev eth0; ip -n fl-{n} link set eth0 up\n"
            ));
        }
        for i in 1..=3 {
            s.push_str(&format!(
                "ip -n fl-etcd addr add 10.9.0.{i}/32 dev lo\n\
                 ip -n fl-d{i} link add etcd0 type veth peer name e{i} netns fl-etcd\n\
                 ip -n fl-d{i} addr add 10.1.{i}.2/24 dev etcd0; ip -n fl-d{i} link set etcd0 up\n\
                 ip -n fl-etcd addr add 10.1.{i}.1/24 dev e{i}; ip -n fl-etcd link set e{i} up\n\
                 ip -n fl-d{i} route add 10.9.0.0/24 via 10.1.{i}.1\n"
            ));
        }
        for r in ["r1", "r2"] {
            s.push_str(&format!(
                "ip -n fl-{r} addr add {VIP}/32 dev lo\n\
                 ip netns exec fl-{r} sh -c 'echo 1 >/proc/sys/net/ipv4/conf/all/arp_ignore; \
                 echo 2 >/proc/sys/net/ipv4/conf/all/arp_announce'\n"
            ));
        }
        sh(&s);
        let mut lab = Lab {
            etcd: (0..3).map(|_| None).collect(),
            directors: (0..3).map(|_| None).collect(),
            servers_stop: Arc::new(AtomicBool::new(false)),
            peers: false,
            agent_args: Vec::new(),
        };
        for i in 0..3 {
            lab.start_etcd(i);
        }
        assert!(
            wait_for(PATIENCE, || lab.etcd_healthy().then_some(())).is_some(),
            "etcd not healthy within {PATIENCE:?}"
        );
        for (i, a) in SERVERS.iter().enumerate() {
            super::fleet_traffic::serve(format!("fl-r{}", i + 1), *a, lab.servers_stop.clone());
        }
        lab
    }

    /// Starts etcd member `i` (0-based) on its data directory (kept
    /// across restarts).
    pub(crate) fn start_etcd(&mut self, i: usize) {
        let n = i + 1;
        let cluster = "e1=http://10.9.0.1:2380,e2=http://10.9.0.2:2380,e3=http://10.9.0.3:2380";
        let log = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(format!("{DIR}/e{n}.log"))
            .expect("etcd log");
        let child = Command::new("ip")
            .args([
                "netns",
                "exec",
                "fl-etcd",
                "etcd",
                "--name",
                &format!("e{n}"),
            ])
            .args(["--data-dir", &format!("{DIR}/e{n}")])
            .args(["--listen-peer-urls", &format!("http://10.9.0.{n}:2380")])
            .args([
                "--initial-advertise-peer-urls",
                &format!("http://10.9.0.{n}:2380"),
            ])
            .args(["--listen-client-urls", &format!("http://10.9.0.{n}:2379")])
            .args([
                "--advertise-client-urls",
                &format!("http://10.9.0.{n}:2379"),
            ])
            .args([
                "--initial-cluster",
                cluster,
                "--initial-cluster-state",
                "new",
            ])
            .args(["--log-level", "warn"])
            .stdin(Stdio::null())
            .stdout(log.try_clone().unwrap())
            .stderr(log)
            .spawn()
            .expect("start etcd");
        self.etcd[i] = Some(child);
    }

    /// SIGKILLs etcd member `i`.
    pub(crate) fn kill_etcd(&mut self, i: usize) {
        if let Some(mut c) = self.etcd[i].take() {
            let _ = c.kill();
            let _ = c.wait();
        }
    }

    /// Whether every running member answers `etcdctl endpoint health`.
    pub(crate) fn etcd_healthy(&self) -> bool {
        let endpoints: Vec<String> = (0..3)
            .filter(|i| self.etcd[*i].is_some())
            .map(|i| format!("http://10.9.0.{}:2379", i + 1))
            .collect();
        Command::new("ip")
            .args([
                "netns",
                "exec",
                "fl-etcd",
                "etcdctl",
                "--command-timeout=1s",
            ])
            .arg(format!("--endpoints={}", endpoints.join(",")))
            .args(["endpoint", "health"])
            .output()
            .is_ok_and(|o| o.status.success())
    }

    /// Starts director `i` (0-based): `ipvs-agent run --etcd ...` in its
    /// namespace.
    pub(crate) fn start_director(&mut self, i: usize) {
        let n = i + 1;
        let log = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(format!("{DIR}/d{n}.log"))
            .expect("director log");
        // Its own record of the VIPs it added (the directors share the
        // file system).
        let mut extra = vec!["--state-dir".to_string(), format!("{DIR}/d{n}.state")];
        if self.peers {
            let others: Vec<String> = (1..=3)
                .filter(|m| *m != n)
                .map(|m| format!("10.0.0.{m}:{PEER_PORT}"))
                .collect();
            extra.extend([
                "--peer-listen".to_string(),
                format!("10.0.0.{n}:{PEER_PORT}"),
                "--peers".to_string(),
                others.join(","),
            ]);
        }
        let child = Command::new("ip")
            .args(["netns", "exec", &format!("fl-d{n}")])
            .arg(agent())
            .args(["run", "--etcd", ENDPOINTS])
            .args(["--vip", &format!("{VIP}/32"), "--vip-interface", "eth0"])
            .args(["--sync-interface", "eth0", "--listen", "127.0.0.1:9102"])
            .args(&extra)
            .args(&self.agent_args)
            .stdin(Stdio::null())
            .stdout(log.try_clone().unwrap())
            .stderr(log)
            .spawn()
            .expect("start the agent");
        self.directors[i] = Some(child);
    }

    /// Adds `args` to the `ipvs-agent run` of every director started from
    /// now on (a second `--vip`, say).
    pub(crate) fn agent_args(&mut self, args: &[&str]) {
        self.agent_args.extend(args.iter().map(|a| a.to_string()));
    }

    /// SIGKILLs director `i`'s agent.
    pub(crate) fn kill_director(&mut self, i: usize) {
        if let Some(mut c) = self.directors[i].take() {
            let _ = c.kill();
            let _ = c.wait();
        }
    }

    /// SIGTERMs director `i`'s agent and waits for it to exit.
    pub(crate) fn stop_director(&mut self, i: usize) {
        if let Some(mut c) = self.directors[i].take() {
            // SAFETY: kill(2) on our child's pid, not yet reaped.
            unsafe { libc::kill(c.id() as libc::pid_t, libc::SIGTERM) };
            let _ = c.wait();
        }
    }

    /// Publishes `text` with `ipvs-agent publish` (from `fl-etcd`);
    /// panics unless it exits 0. Its report line.
    pub(crate) fn publish(&self, text: &str) -> String {
        let file = format!("{DIR}/published.toml");
        std::fs::write(&file, text).expect("write the file to publish");
        let out = Command::new("ip")
            .args(["netns", "exec", "fl-etcd"])
            .arg(agent())
            .args(["publish", &file, "--etcd", ENDPOINTS])
            .output()
            .expect("run ipvs-agent publish");
        assert!(
            out.status.success(),
            "publish: {}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).trim().to_owned()
    }

    /// Whether director `i`'s (0-based) `eth0` holds the VIP now.
    pub(crate) fn holds(&self, i: usize) -> bool {
        ip(&[
            "-n",
            &format!("fl-d{}", i + 1),
            "-o",
            "addr",
            "show",
            "dev",
            "eth0",
        ])
        .contains(&format!("inet {VIP}/32"))
    }

    /// The directors (0-based) whose `eth0` holds the VIP now.
    pub(crate) fn holders(&self) -> Vec<usize> {
        (0..3).filter(|i| self.holds(*i)).collect()
    }

    /// Sets director `i`'s link to etcd (its `eN` end in `fl-etcd`) up or down.
    pub(crate) fn etcd_link(&self, i: usize, up: bool) {
        let state = if up { "up" } else { "down" };
        ip(&[
            "-n",
            "fl-etcd",
            "link",
            "set",
            &format!("e{}", i + 1),
            state,
        ]);
    }

    /// Sets director `i`'s service link (its bridge port) up or down.
    pub(crate) fn segment_link(&self, i: usize, up: bool) {
        let state = if up { "up" } else { "down" };
        ip(&[
            "-n",
            "fl-sw",
            "link",
            "set",
            &format!("p-d{}", i + 1),
            state,
        ]);
    }

    /// A library client in director `i`'s namespace.
    pub(crate) fn client(&self, i: usize) -> Client {
        Client::in_namespace(format!("/run/netns/fl-d{}", i + 1))
            .expect("a client in the namespace")
    }

    /// Director `i`'s connection table (`/proc/net/ip_vs_conn`).
    pub(crate) fn connections(&self, i: usize) -> Vec<Connection> {
        let out = Command::new("ip")
            .args(["netns", "exec", &format!("fl-d{}", i + 1)])
            .args(["cat", "/proc/net/ip_vs_conn"])
            .output()
            .expect("read ip_vs_conn");
        ipvsnl::connections::parse(&String::from_utf8_lossy(&out.stdout)).expect("parse ip_vs_conn")
    }

    /// Director `i`'s `/metrics` sample of the line starting `series ` (a
    /// name with its labels), or `None`.
    pub(crate) fn metric(&self, i: usize, series: &str) -> Option<f64> {
        let text = in_netns(&format!("fl-d{}", i + 1), || {
            let mut s = TcpStream::connect("127.0.0.1:9102").ok()?;
            s.set_read_timeout(Some(Duration::from_secs(5))).ok()?;
            s.write_all(b"GET /metrics HTTP/1.0\r\nHost: x\r\n\r\n")
                .ok()?;
            let mut text = String::new();
            s.read_to_string(&mut text).ok()?;
            Some(text)
        })
        .join()
        .unwrap()?;
        let prefix = format!("{series} ");
        text.lines()
            .find_map(|l| l.strip_prefix(&prefix))
            .and_then(|v| v.trim().parse().ok())
    }

    /// Director `i`'s log so far.
    pub(crate) fn log(&self, i: usize) -> String {
        std::fs::read_to_string(format!("{DIR}/d{}.log", i + 1)).unwrap_or_default()
    }

    /// The time (`ts=`, guest wall clock, seconds) of the last line of
    /// director `i`'s log that holds every one of `words`.
    pub(crate) fn logged_at(&self, i: usize, words: &[&str]) -> Option<f64> {
        self.log(i)
            .lines()
            .rev()
            .find(|l| words.iter().all(|w| l.contains(w)))
            .and_then(|l| l.strip_prefix("ts="))
            .and_then(|l| l.split(' ').next())
            .and_then(|t| t.parse().ok())
    }
}

impl Drop for Lab {
    fn drop(&mut self) {
        for i in 0..3 {
            self.kill_director(i);
            self.kill_etcd(i);
        }
        self.servers_stop.store(true, Ordering::Relaxed);
        if std::thread::panicking() {
            for i in 0..3 {
                eprintln!("---- director {} log\n{}", i + 1, self.log(i));
            }
        }
        cleanup();
    }
}

fn cleanup() {
    for n in NAMESPACES {
        let _ = Command::new("ip").args(["netns", "del", n]).output();
    }
    let _ = std::fs::remove_dir_all(DIR);
}
