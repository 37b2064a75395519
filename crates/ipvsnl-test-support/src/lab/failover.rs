//! Two directors, a client and a real server, each in a network namespace
//! of its own, for the sync-daemon and failover tests.
//!
//! A namespace here is a thread that made a fresh namespace and then
//! runs what it is sent ([`Node::run`]): sockets it opens, programs it
//! spawns and `/proc/thread-self/net` it reads are its namespace's.
//!
//! There is no shared L2 segment (this lab predates the bridge module in
//! the VM's kernels, which the fleet's lab uses): every link is a veth pair,
//! and the client reaches the virtual address through a route that
//! [`FailoverLab::client_via`] points at one director or the other, which is what
//! the router in front of a keepalived pair does when the address moves.
//!
//! ```text
//!            sync0 10.30.0.1 ---- sync0 10.30.0.2
//!   director A                                   director B
//!     up0 10.31.0.1   rs0 10.40.0.1      up0 10.32.0.1   rs0 10.40.0.3
//!        |                  \                 |            /
//!     to-a 10.31.0.2         from-a 10.40.0.2  to-b       from-b 10.40.0.2
//!   client               real server (VIP on lo, direct routing)
//!     from-rs 10.50.0.1 ---- to-client 10.50.0.2
//! ```
//!
//! Each director also routes the client's other link through the client.
//! The real server has 10.40.0.2 on both of its director links, so a
//! connection entry made on A (real server 10.40.0.2) is good on B too; it
//! answers the client directly over its own link (direct routing), so the
//! directors only see the client's half of each connection.

use std::io::{BufRead, BufReader, Write};
use std::net::{IpAddr, SocketAddr, TcpListener, TcpStream};
use std::thread;
use std::time::{Duration, Instant};

use crate::commands::{run, sh};
use crate::echo::{Answer, EchoServer};
use crate::netns::Netns;
use ipvsnl::connections::Connection;
use ipvsnl::{Client, Destination, Forward, Scheduler, Service, ServiceKey};

/// The virtual address (on the active director's client link).
pub const VIP: &str = "10.77.0.100";
/// The virtual port.
pub const VPORT: u16 = 80;
/// The real server, as both directors reach it.
pub const RS: &str = "10.40.0.2";
/// The client's address (on its link to A; it keeps it when it goes
/// through B).
pub const CLIENT: &str = "10.31.0.2";
/// The directors' sync link: the interface name on both.
pub const SYNC_IF: &str = "sync0";
/// The sync link's MTU (the daemons' default message length follows it).
pub const SYNC_MTU: u32 = 1400;
/// Director A's and B's addresses facing the client.
const A_UP: &str = "10.31.0.1";
const B_UP: &str = "10.32.0.1";

/// A thread in a network namespace of its own, running closures it is
/// sent: the forwarding topology's [`Netns`], with the calls these tests
/// make on a director, a client or a real server.
pub struct Node {
    name: &'static str,
    ns: Netns,
}

/// `/proc/thread-self/net/<name>`: the calling thread's namespace's view.
fn proc_net_path(name: &str) -> std::path::PathBuf {
    std::path::PathBuf::from("/proc/thread-self/net").join(name)
}

impl Node {
    /// Starts the thread and its fresh namespace.
    pub fn spawn(name: &'static str) -> Node {
        Node {
            name,
            ns: Netns::new(name),
        }
    }

    /// Runs `f` on the node's thread (so in its namespace) and returns what
    /// it returns; a panic in `f` is raised again here.
    pub fn run<R: Send + 'static>(&self, f: impl FnOnce() -> R + Send + 'static) -> R {
        self.ns.exec(f)
    }

    /// `ip ARGS...` (white-space separated) in the node's namespace.
    pub fn ip(&self, args: &str) {
        let args: Vec<String> = args.split_whitespace().map(str::to_owned).collect();
        let name = self.name;
        self.run(move || {
            let refs: Vec<&str> = args.iter().map(String::as_str).collect();
            let out = run("ip", &refs);
            assert!(
                out.status.success(),
                "{name}: ip {}: {}",
                refs.join(" "),
                String::from_utf8_lossy(&out.stderr)
            );
        });
    }

    /// The MTU of interface `ifname`, as `ip -o link` shows it.
    pub fn mtu(&self, ifname: &str) -> u32 {
        let args = ["-o", "link", "show", "dev", ifname].map(str::to_owned);
        let out = self.run(move || run("ip", &args));
        let text = String::from_utf8_lossy(&out.stdout).into_owned();
        let mut words = text.split_whitespace();
        words.find(|w| *w == "mtu");
        words
            .next()
            .and_then(|m| m.parse().ok())
            .unwrap_or_else(|| panic!("no mtu in {text:?}"))
    }

    /// An IPVS client whose socket is in the node's namespace.
    pub fn client(&self) -> Client {
        self.run(|| Client::new().expect("IPVS client"))
    }

    /// The node's connection table (`/proc/thread-self/net/ip_vs_conn`).
    pub fn connections(&self) -> Vec<Connection> {
        self.run(|| {
            ipvsnl::connections::read_from(proc_net_path("ip_vs_conn")).expect("read ip_vs_conn")
        })
    }

    /// The raw text of `/proc/thread-self/net/<name>` in the node.
    pub fn proc_net(&self, name: &'static str) -> String {
        self.run(move || {
            let path = proc_net_path(name);
            std::fs::read_to_string(&path)
                .unwrap_or_else(|e| panic!("reading {}: {e}", path.display()))
        })
    }
}

/// Waits (once per process, at most 10 s) until the kernel makes veth
/// pairs: on 6.1 tests that start together raced the module's autoload,
/// and `ip link add ... type veth` said "Error: Unknown device type." to
/// all but one. Run on a node (the probe pair lives in its namespace).
fn veth_ready() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        let made = poll(Duration::from_secs(10), || {
            let out = run(
                "ip",
                &[
                    "link", "add", "probe0", "type", "veth", "peer", "name", "probe1",
                ],
            );
            out.status.success().then_some(())
        });
        assert!(made.is_some(), "no veth pair in 10 s");
        sh("ip", &["link", "del", "probe0"]);
    });
}

/// A veth pair from `x` (interface `xi`, address `xa`/24) to `y` (`yi`,
/// `ya`/24), both ends up.
fn link(x: &Node, xi: &str, xa: &str, y: &Node, yi: &str, ya: &str) {
    x.ip(&format!(
        "link add {xi} type veth peer name {yi} netns {}",
        y.ns.tid()
    ));
    for (n, i, a) in [(x, xi, xa), (y, yi, ya)] {
        n.ip(&format!("addr add {a}/24 dev {i}"));
        n.ip(&format!("link set {i} up"));
    }
}

/// The four namespaces, wired as the module's picture shows, with the
/// same DR service (`VIP:80` to the real server, round robin) on both
/// directors and the VIP on A.
pub struct FailoverLab {
    /// Director A (the VIP's at first).
    pub a: Node,
    /// Director B.
    pub b: Node,
    /// The client.
    pub client: Node,
    /// The real server.
    pub server: Node,
    /// An IPVS client in director A.
    pub ca: Client,
    /// An IPVS client in director B.
    pub cb: Client,
}

impl FailoverLab {
    /// Builds it: every namespace, link and route, the service on both
    /// directors, the client routed through A.
    #[allow(clippy::new_without_default)]
    pub fn new() -> FailoverLab {
        let a = Node::spawn("director-a");
        let b = Node::spawn("director-b");
        let client = Node::spawn("client");
        let server = Node::spawn("real-server");
        for n in [&a, &b, &client, &server] {
            n.run(|| {
                // No reverse-path filter (the client's replies come from
                // the real server's link), no IPv6 DAD (a daemon with an
                // IPv6 group needs a usable link-local address at once).
                for p in [
                    "ipv4/conf/all/rp_filter",
                    "ipv4/conf/default/rp_filter",
                    "ipv6/conf/default/accept_dad",
                ] {
                    let p = format!("/proc/sys/net/{p}");
                    std::fs::write(&p, "0").unwrap_or_else(|e| panic!("{p}: {e}"));
                }
            });
        }
        a.run(veth_ready);
        link(&a, SYNC_IF, "10.30.0.1", &b, SYNC_IF, "10.30.0.2");
        for n in [&a, &b] {
            n.ip(&format!("link set {SYNC_IF} mtu {SYNC_MTU}"));
        }
        link(&a, "up0", A_UP, &client, "to-a", CLIENT);
        link(&b, "up0", B_UP, &client, "to-b", "10.32.0.2");
        link(&a, "rs0", "10.40.0.1", &server, "from-a", RS);
        link(&b, "rs0", "10.40.0.3", &server, "from-b", RS);
        link(
            &client,
            "from-rs",
            "10.50.0.1",
            &server,
            "to-client",
            "10.50.0.2",
        );
        // Each director routes to the client's other link through the
        // client (what it says to a client is a reset, at most).
        a.ip("route add 10.32.0.0/24 via 10.31.0.2");
        b.ip("route add 10.31.0.0/24 via 10.32.0.2");
        server.ip(&format!("addr add {VIP}/32 dev lo"));
        // Back to the client, whichever of its addresses it connects from.
        for net in ["10.31.0.0/24", "10.32.0.0/24"] {
            server.ip(&format!("route add {net} via 10.50.0.1"));
        }
        a.ip(&format!("addr add {VIP}/32 dev up0"));
        let mut lab = FailoverLab {
            ca: a.client(),
            cb: b.client(),
            a,
            b,
            client,
            server,
        };
        lab.client_via(&Side::A);
        let key = FailoverLab::key();
        for c in [&mut lab.ca, &mut lab.cb] {
            c.add_service(&Service::new(key).with_scheduler(Scheduler::RoundRobin))
                .expect("add the service");
            c.add_destination(
                &key,
                &Destination::new(ip(RS), 80).with_forward(Forward::Route),
            )
            .expect("add the DR destination");
        }
        lab
    }

    /// The virtual service.
    pub fn key() -> ServiceKey {
        ServiceKey::tcp(ip(VIP), VPORT)
    }

    /// Points the client's route to the VIP at one director.
    pub fn client_via(&self, side: &Side) {
        let (gw, dev) = match side {
            Side::A => (A_UP, "to-a"),
            Side::B => (B_UP, "to-b"),
        };
        self.client
            .ip(&format!("route replace {VIP}/32 via {gw} dev {dev}"));
    }

    /// Connects from the client to the VIP (the socket stays in the
    /// client's namespace wherever it is used).
    pub fn connect(&self) -> TcpStream {
        let addr = SocketAddr::new(ip(VIP), VPORT);
        let s = self
            .client
            .run(move || TcpStream::connect_timeout(&addr, Duration::from_secs(10)))
            .unwrap_or_else(|e| panic!("connect {addr}: {e}\n{}", self.state()));
        s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
        s
    }

    /// Addresses, routes, neighbours, link counters and IPVS connections
    /// of every node, for failure messages.
    pub fn state(&self) -> String {
        let mut out = String::new();
        for n in [&self.a, &self.b, &self.client, &self.server] {
            out += &format!("== {}\n", n.name);
            for args in [
                &["-o", "addr"][..],
                &["route"],
                &["neigh"],
                &["-s", "-o", "link"],
            ] {
                let o = n.run(move || run("ip", args));
                out += &String::from_utf8_lossy(&o.stdout);
            }
            if n.name.starts_with("director") {
                out += &n.proc_net("ip_vs_conn");
            }
        }
        out
    }
}

/// One of the two directors.
pub enum Side {
    /// Director A.
    A,
    /// Director B.
    B,
}

/// `s` as an address (panics if it is not one).
pub fn ip(s: &str) -> IpAddr {
    s.parse().expect("an address")
}

/// Sends `line` and a newline on `s` and returns the reply line (without
/// its newline).
pub fn exchange(s: &TcpStream, line: &str) -> String {
    try_exchange(s, line).unwrap_or_else(|e| panic!("reply to {line:?}: {e}"))
}

/// [`exchange`], giving the error of the send or the receive.
pub fn try_exchange(s: &TcpStream, line: &str) -> std::io::Result<String> {
    let mut w = s;
    w.write_all(format!("{line}\n").as_bytes())?;
    let mut reply = String::new();
    BufReader::new(s).read_line(&mut reply)?;
    Ok(reply.trim_end_matches('\n').to_owned())
}

/// The reply the real server gives to `line`.
pub fn echoed(line: &str) -> String {
    format!("rs:{line}")
}

/// A line echo server on the real server (`VIP:80`): each line `x` is
/// answered `rs:x` ([`Answer::Lines`]); a connection ends at the client's
/// close, after 20 s of silence, or when the server is dropped.
pub fn echo_server(server: &Node) -> EchoServer {
    let listener = server
        .run(|| TcpListener::bind((ip(VIP), VPORT)).expect("bind the VIP on the real server"));
    let answer = Answer::Lines { prefix: echoed("") };
    EchoServer::start(listener, answer, Duration::from_secs(120))
}

/// Polls `f` every 100 ms until it gives `Some`, for at most `limit`;
/// `None` if it never did.
pub fn poll<T>(limit: Duration, mut f: impl FnMut() -> Option<T>) -> Option<T> {
    let deadline = Instant::now() + limit;
    loop {
        if let Some(v) = f() {
            return Some(v);
        }
        if Instant::now() >= deadline {
            return None;
        }
        thread::sleep(Duration::from_millis(100));
    }
}

/// The connection of `node`'s table from the client's `port` to the VIP.
pub fn entry_for(node: &Node, port: u16) -> Option<Connection> {
    node.connections().into_iter().find(|c| {
        c.protocol == "TCP"
            && c.client_addr == ip(CLIENT)
            && c.client_port == port
            && c.virtual_addr == ip(VIP)
            && c.virtual_port == VPORT
    })
}
