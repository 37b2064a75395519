//! Services configured with the library carry traffic, with every
//! forwarding method: NAT, direct routing, and IP-in-IP, GUE and GRE
//! tunnels, over IPv4 and IPv6, for TCP, UDP and SCTP.
//!
//! Each test builds its own client, director and two real servers
//! (tests/common/topology.rs), configures a TCP, a UDP and an SCTP service
//! on one VIP with `ipvsnl::Client` (round robin, both real servers), sends
//! real traffic from the client and checks:
//!
//! * every request reached a real server intact (length and digest, as the
//!   server reports them) and from the client's own address, and round
//!   robin alternated between the servers;
//! * the counters read back through the library match what the traffic
//!   did: connections exactly (per service and per destination, the latter
//!   against the replies of that server), UDP packets and bytes exactly, TCP
//!   and SCTP bytes equal to the payload (and what the client's TCP sent
//!   twice) plus headers that fit the packets counted, both ways (the
//!   replies route back through the director);
//!   rates non-zero and below the counts; active and inactive connections.

use crate::common;

use std::collections::BTreeMap;
use std::net::{IpAddr, SocketAddr};
use std::thread;
use std::time::{Duration, Instant};

use ipvsnl::{Client, Destination, Scheduler, Service, ServiceEntry, ServiceKey, Stats};
use ipvsnl_test_support::commands::ip_batch;
use ipvsnl_test_support::digest::{datagrams, payload, Conn, Proto, Reply};
use ipvsnl_test_support::lab::forwarding::{vip_on_lo, Family, ForwardingLab, Method, PORT};
use ipvsnl_test_support::netns::{load_module, sysctl};

const PROTOS: [Proto; 3] = [Proto::Tcp, Proto::Udp, Proto::Sctp];
/// Request sizes of the TCP connections (the first is held open a while).
const TCP_SIZES: [usize; 4] = [3000, 20000, 1, 45000];
/// Request sizes of the SCTP associations.
const SCTP_SIZES: [usize; 2] = [5000, 30000];
/// UDP: flows (one socket, one IPVS connection each) of this many datagrams.
const UDP_FLOWS: usize = 4;
const UDP_DATAGRAMS: usize = 3;
/// The client's source port of a protocol's first connection (UDP: flow);
/// the `i`th comes from this plus `i`. Chosen, not left to the kernel,
/// whose pick may be the port of an earlier connection, closed by then but
/// still in the IPVS table: a UDP flow would join it instead of being
/// scheduled, a TCP connection would have it expired (one short in the
/// counts). Below the ephemeral range (32768-60999), so no other socket of
/// the client's namespace holds one.
const FIRST_CLIENT_PORT: u16 = 20000;

/// The source ports of `n` connections of one protocol.
fn client_ports(n: usize) -> Vec<u16> {
    (FIRST_CLIENT_PORT..).take(n).collect()
}

fn service_key(proto: Proto, addr: SocketAddr) -> ServiceKey {
    match proto {
        Proto::Tcp => ServiceKey::tcp(addr.ip(), addr.port()),
        Proto::Udp => ServiceKey::udp(addr.ip(), addr.port()),
        Proto::Sctp => ServiceKey::sctp(addr.ip(), addr.port()),
    }
}

/// What went through one service to one real server, as the client saw it.
#[derive(Debug, Default, Clone, Copy)]
struct Counts {
    /// Connections (UDP: flows).
    conns: u64,
    /// UDP datagrams each way.
    datagrams: u64,
    /// Bytes the client sent (payload only, the stream framing included).
    sent: u64,
    /// Bytes of the replies.
    received: u64,
    /// Bytes the client sent again, at most (counted again by IPVS).
    retransmitted: u64,
}

impl Counts {
    fn add(&mut self, other: &Counts) {
        self.conns += other.conns;
        self.datagrams += other.datagrams;
        self.sent += other.sent;
        self.received += other.received;
        self.retransmitted += other.retransmitted;
    }
}

/// Per real server name.
type Traffic = BTreeMap<String, Counts>;

/// Configures a service of each of `protos` on the VIP, each with both
/// real servers and the lab's forwarding method, and checks what the kernel
/// reports back.
fn configure(lab: &ForwardingLab, ipvs: &mut Client, protos: &[Proto]) {
    let method = lab.method;
    for &proto in protos {
        let key = service_key(proto, lab.service_addr());
        ipvs.add_service(&Service::new(key).with_scheduler(Scheduler::RoundRobin))
            .unwrap_or_else(|e| panic!("add {key}: {e}"));
        for rs in &lab.servers {
            let dest =
                Destination::new(rs.addr, method.server_port()).with_forward(method.forward());
            ipvs.add_destination(&key, &dest)
                .unwrap_or_else(|e| panic!("add {} to {key}: {e}", rs.addr));
        }
        let back = ipvs.destinations(&key).expect("list destinations");
        assert_eq!(back.len(), 2, "{key}: {back:?}");
        for d in back {
            assert_eq!(d.destination.forward, method.forward(), "{key}: {d:?}");
            assert_eq!(d.destination.port, method.server_port(), "{key}: {d:?}");
        }
    }
}

/// Checks each reply reports its request intact, from the client's
/// address and the connection's port (`ports`, in order), and that round
/// robin alternated; returns the server names.
fn check_replies(
    lab: &ForwardingLab,
    what: &str,
    sent: &[Vec<u8>],
    replies: &[Reply],
    ports: &[u16],
) -> Vec<String> {
    assert_eq!(sent.len(), replies.len(), "{what}");
    let client = lab.family.client();
    for ((s, r), &port) in sent.iter().zip(replies).zip(ports) {
        r.assert_got(s, client);
        assert_eq!(
            r.peer,
            SocketAddr::new(client, port),
            "{what}: {} saw the connection's own source port: {r:?}",
            r.server
        );
    }
    let names: Vec<String> = replies.iter().map(|r| r.server.clone()).collect();
    for pair in names.windows(2) {
        assert_ne!(
            pair[0], pair[1],
            "{what}: round robin repeated a server: {names:?}"
        );
    }
    names
}

/// One TCP or SCTP exchange per size, one connection after another, from
/// ports of their own; the first connection is held open while the
/// director's active count is checked.
fn stream_traffic(
    lab: &ForwardingLab,
    ipvs: &mut Client,
    proto: Proto,
    sizes: &[usize],
) -> Traffic {
    let (client, to) = (lab.family.client(), lab.service_addr());
    let key = service_key(proto, to);
    let requests: Vec<Vec<u8>> = (0..).zip(sizes).map(|(i, &n)| payload(i, n)).collect();
    let ports = client_ports(sizes.len());
    let from: Vec<SocketAddr> = ports.iter().map(|&p| SocketAddr::new(client, p)).collect();
    let held_from = from[0];
    let held = lab
        .client
        .exec(move || Conn::open(proto, held_from, to))
        .unwrap_or_else(|e| panic!("{key}: connect from {held_from}: {e}"));
    let active = wait_for(ipvs, &key, "one active connection", |ds| {
        ds.iter().map(|d| d.1).sum::<u32>() == 1
    });
    eprintln!("{key}: one connection open: (active, inactive) per destination {active:?}");
    assert!(
        active.iter().all(|d| d.2 == 0),
        "{key}: no connection closed yet, none inactive: {active:?}"
    );
    let reqs = requests.clone();
    let (replies, retransmitted): (Vec<Reply>, Vec<u64>) = lab.client.exec(move || {
        let mut out = vec![held.exchange(proto, &reqs[0]).expect("held exchange")];
        for (r, &from) in reqs.iter().zip(&from).skip(1) {
            let conn =
                Conn::open(proto, from, to).unwrap_or_else(|e| panic!("connect from {from}: {e}"));
            out.push(conn.exchange(proto, r).expect("exchange"));
        }
        out.into_iter().unzip()
    });
    let what = format!("{key} from ports {ports:?}");
    let names = check_replies(lab, &what, &requests, &replies, &ports);
    let open_at = active.iter().find(|d| d.1 == 1).expect("the active one").0;
    assert_eq!(
        lab.server_at(open_at).name,
        names[0],
        "{key}: the destination counted active is the server that answered"
    );
    let mut traffic = Traffic::new();
    for (i, name) in names.iter().enumerate() {
        let c = traffic.entry(name.clone()).or_default();
        c.conns += 1;
        c.sent += 8 + requests[i].len() as u64;
        c.received += replies[i].size;
        c.retransmitted += retransmitted[i];
    }
    traffic
}

/// UDP_FLOWS sockets, UDP_DATAGRAMS datagrams each, one after another,
/// from ports of their own.
fn udp_traffic(lab: &ForwardingLab) -> Traffic {
    let (client, to) = (lab.family.client(), lab.service_addr());
    let ports = client_ports(UDP_FLOWS);
    let flows: Vec<Vec<Vec<u8>>> = (0..UDP_FLOWS)
        .map(|f| {
            (0..UDP_DATAGRAMS)
                .map(|d| {
                    let k = f * UDP_DATAGRAMS + d;
                    payload(100 + k as u64, 64 + 97 * k)
                })
                .collect()
        })
        .collect();
    let (sent, from) = (flows.clone(), ports.clone());
    let replies = lab.client.exec(move || -> Vec<Vec<Reply>> {
        sent.iter()
            .zip(from)
            .map(|(f, port)| {
                datagrams(SocketAddr::new(client, port), to, f)
                    .unwrap_or_else(|e| panic!("UDP flow from port {port}: {e}"))
            })
            .collect()
    });
    let mut traffic = Traffic::new();
    let mut first = Vec::new();
    for ((flow, got), port) in flows.iter().zip(&replies).zip(&ports) {
        let names = got.iter().map(|r| r.server.clone()).collect::<Vec<_>>();
        assert!(
            names.iter().all(|n| *n == names[0]),
            "one flow, one server: {names:?}"
        );
        for (s, r) in flow.iter().zip(got) {
            r.assert_got(s, client);
            assert_eq!(
                r.peer,
                SocketAddr::new(client, *port),
                "{} saw the flow's own source port: {r:?}",
                r.server
            );
        }
        first.push(got[0].clone());
        let c = traffic.entry(names[0].clone()).or_default();
        c.conns += 1;
        c.datagrams += flow.len() as u64;
        c.sent += flow.iter().map(|d| d.len() as u64).sum::<u64>();
        c.received += got.iter().map(|r| r.size).sum::<u64>();
    }
    let firsts: Vec<Vec<u8>> = flows.iter().map(|f| f[0].clone()).collect();
    check_replies(
        lab,
        &format!("UDP flows from ports {ports:?}"),
        &firsts,
        &first,
        &ports,
    );
    traffic
}

/// Polls the destinations of `key` (address, active, inactive) until
/// `done` holds (at most 5 s).
fn wait_for(
    ipvs: &mut Client,
    key: &ServiceKey,
    what: &str,
    done: impl Fn(&[(IpAddr, u32, u32)]) -> bool,
) -> Vec<(IpAddr, u32, u32)> {
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        let ds: Vec<(IpAddr, u32, u32)> = ipvs
            .destinations(key)
            .expect("list destinations")
            .iter()
            .map(|d| (d.destination.addr, d.active_conns, d.inactive_conns))
            .collect();
        if done(&ds) {
            return ds;
        }
        assert!(Instant::now() < deadline, "{key}: never {what}: {ds:?}");
        thread::sleep(Duration::from_millis(50));
    }
}

fn rates(s: &Stats) -> [u64; 5] {
    [s.cps, s.in_pps, s.out_pps, s.in_bps, s.out_bps]
}

/// The table once the kernel's estimator has run after the traffic: the
/// counters are copied from the per-CPU ones on its tick (every 2 s per
/// estimator), and the same pass recomputes the rates, which decay once the
/// traffic stopped; so when every service's and destination's rates differ
/// from a first read taken after the traffic, their counters include all
/// of it.
fn settled_table(ipvs: &mut Client) -> Vec<ServiceEntry> {
    let all_rates = |t: &[ServiceEntry]| -> Vec<[u64; 5]> {
        t.iter()
            .flat_map(|s| {
                std::iter::once(rates(&s.stats))
                    .chain(s.destinations.iter().map(|d| rates(&d.stats)))
            })
            .collect()
    };
    let first = all_rates(&ipvs.table().expect("table"));
    let deadline = Instant::now() + Duration::from_secs(12);
    loop {
        thread::sleep(Duration::from_millis(200));
        let table = ipvs.table().expect("table");
        let now = all_rates(&table);
        if now.len() == first.len() && now.iter().zip(&first).all(|(a, b)| a != b) {
            return table;
        }
        assert!(
            Instant::now() < deadline,
            "the estimator did not tick for every service and destination in 12 s:\n{first:?}\n{table:#?}"
        );
    }
}

/// Bytes of headers a packet of `proto` over `family` has, at least and at
/// most, as IPVS counts it (the IP packet, before any encapsulation), and
/// what the handshake may add once per connection.
fn headers(proto: Proto, family: Family) -> (u64, u64, u64) {
    let ip = family.ip_header();
    match proto {
        // 20 bytes of TCP header, up to 60 with options.
        Proto::Tcp => (ip + 20, ip + 60, 0),
        Proto::Udp => (ip + 8, ip + 8, 0),
        // The common header (12) and one chunk header (4) at least; at most
        // a DATA chunk's header (16) and padding (3) with a SACK chunk
        // bundled (16, or more with gap reports: 64 in all). The INIT, INIT
        // ACK and COOKIE ECHO chunks (the state cookie goes both ways) come
        // once per association: 1024 bytes for them.
        Proto::Sctp => (ip + 12 + 4, ip + 12 + 64, 1024),
    }
}

/// Checks one direction's packets and bytes: `payload` bytes sent in
/// `c.datagrams` (UDP) or in however many segments the stack chose, with
/// `resent` bytes of them sent twice.
fn check_direction(
    what: &str,
    proto: Proto,
    family: Family,
    c: &Counts,
    (payload, resent): (u64, u64),
    (packets, bytes): (u64, u64),
) {
    let (min, max, handshake) = headers(proto, family);
    if proto == Proto::Udp {
        assert_eq!(
            (packets, bytes),
            (c.datagrams, payload + c.datagrams * min),
            "{what}: UDP packets and bytes"
        );
        return;
    }
    assert!(
        packets >= 3 * c.conns,
        "{what}: {packets} packets for {} connections",
        c.conns
    );
    assert!(
        payload + min * packets <= bytes
            && bytes <= payload + resent + max * packets + handshake * c.conns,
        "{what}: {bytes} bytes is not {payload} of payload ({resent} of it sent twice) \
         plus {min} to {max} per packet for {packets} packets (and {handshake} per connection)"
    );
}

/// Checks the counters and rates of a service or destination against what
/// went through it.
fn check_stats(lab: &ForwardingLab, proto: Proto, what: &str, s: &Stats, c: &Counts) {
    eprintln!("{what}: {s:?} for {c:?}");
    assert_eq!(s.conns, c.conns, "{what}: connections");
    let family = lab.family;
    let inbound = (c.sent, c.retransmitted);
    check_direction(
        &format!("{what} in"),
        proto,
        family,
        c,
        inbound,
        (s.in_packets, s.in_bytes),
    );
    // The real servers' replies come back through the director, which
    // counts them as the connection's outgoing traffic with every method
    // (with direct routing and tunnels too, where it only forwards them).
    // They are small: a retransmitted one fits in the headers' margin.
    let outbound = (c.received, 0);
    check_direction(
        &format!("{what} out"),
        proto,
        family,
        c,
        outbound,
        (s.out_packets, s.out_bytes),
    );
    // Byte rates only: a rate is shown rounded to a whole number per
    // second, and a destination's six UDP packets make a packet rate that
    // may decay to 0 by the time the counters settle.
    assert!(
        s.in_bps > 0 && s.out_bps > 0,
        "{what}: the estimator saw the traffic: {s:?}"
    );
    assert!(
        s.cps <= s.conns
            && s.in_pps <= s.in_packets
            && s.out_pps <= s.out_packets
            && s.in_bps <= s.in_bytes
            && s.out_bps <= s.out_bytes,
        "{what}: rates above the counts: {s:?}"
    );
}

/// Checks a service's counters and its destinations' against `traffic`.
fn check_service(lab: &ForwardingLab, proto: Proto, table: &[ServiceEntry], traffic: &Traffic) {
    let key = service_key(proto, lab.service_addr());
    let entry = table
        .iter()
        .find(|e| e.service.key == key)
        .expect("the service");
    let mut total = Counts::default();
    traffic.values().for_each(|c| total.add(c));
    check_stats(lab, proto, &key.to_string(), &entry.stats, &total);
    assert_eq!(entry.destinations.len(), 2);
    for d in &entry.destinations {
        let name = &lab.server_at(d.destination.addr).name;
        let c = traffic.get(name).copied().unwrap_or_default();
        let what = format!("{key} -> {name}");
        check_stats(lab, proto, &what, &d.stats, &c);
        eprintln!(
            "{what}: active {}, inactive {}",
            d.active_conns, d.inactive_conns
        );
        // Closed connections wait out their timeouts in the table as
        // inactive ones.
        assert_eq!(
            (d.active_conns, d.inactive_conns),
            (0, c.conns as u32),
            "{what}: active and inactive connections once all are closed"
        );
    }
}

fn forwarding(method: Method, family: Family) {
    load_module("sctp");
    let started = Instant::now();
    let lab = ForwardingLab::build(method, family);
    let mut ipvs = Client::new().expect("netlink client in the director's namespace");
    configure(&lab, &mut ipvs, &PROTOS);
    let tcp = stream_traffic(&lab, &mut ipvs, Proto::Tcp, &TCP_SIZES);
    let udp = udp_traffic(&lab);
    let sctp = stream_traffic(&lab, &mut ipvs, Proto::Sctp, &SCTP_SIZES);
    let traffic_done = started.elapsed();
    let table = settled_table(&mut ipvs);
    for (proto, t) in [(Proto::Tcp, &tcp), (Proto::Udp, &udp), (Proto::Sctp, &sctp)] {
        check_service(&lab, proto, &table, t);
    }
    eprintln!(
        "{method:?} {family:?}: traffic done after {traffic_done:?}, counters settled after {:?}",
        started.elapsed()
    );
}

/// Each connection and UDP flow is a connection of its own, whatever
/// ports the kernel hands out. One from the port of an earlier one (closed
/// by then) meets that one's IPVS connection, still in the table: a UDP
/// flow joins it and goes to its server unscheduled (round robin seemed to
/// repeat a server, `["rs2", "rs1", "rs1", "rs2"]`: flow 3 came from flow
/// 2's port); a TCP connection has it expired and is scheduled anew, one
/// connection short in the counts. The kernel picks a port at random (UDP
/// among the 28232 of its ephemeral range, TCP's bind among half of them),
/// a closed socket's included, so with 4 TCP connections and 4 UDP flows
/// that happened about once in 1500 runs of a test. With the client's
/// range narrowed to two ports (fewer than the connections; of different
/// parity, as the kernel prefers) it would be certain, or a connection
/// could not be made at all.
#[test]
#[ignore = "needs IPVS: runs in the VM via .ci/kernel-tests"]
fn forwarding_connections_from_ports_of_their_own() {
    load_module("sctp");
    let lab = ForwardingLab::build(Method::Gue, Family::V6);
    lab.client
        .exec(|| sysctl("net.ipv4.ip_local_port_range", "40000 40001"));
    let mut ipvs = Client::new().expect("netlink client in the director's namespace");
    configure(&lab, &mut ipvs, &PROTOS);
    let traffic = [
        stream_traffic(&lab, &mut ipvs, Proto::Tcp, &TCP_SIZES),
        udp_traffic(&lab),
        stream_traffic(&lab, &mut ipvs, Proto::Sctp, &SCTP_SIZES),
    ];
    for (proto, t) in PROTOS.into_iter().zip(&traffic) {
        let key = service_key(proto, lab.service_addr());
        let closed = wait_for(&mut ipvs, &key, "every connection closed", |ds| {
            ds.iter().all(|d| d.1 == 0)
        });
        for (addr, active, inactive) in closed {
            let name = &lab.server_at(addr).name;
            let conns = t.get(name).map_or(0, |c| c.conns);
            assert_eq!(
                (active, inactive),
                (0, conns as u32),
                "{key} -> {name}: one IPVS connection per connection it answered"
            );
        }
    }
}

/// The VIP the topology puts on `lo` can be bound as soon as the command
/// returns: a real server's echo servers bind it at once. An IPv6 address
/// left to duplicate address detection is tentative, and cannot be bound,
/// until the kernel's DAD work has run (a moment later, on `lo` too): under
/// load that came after the bind (`forwarding_route_ipv6`: "bind Tcp
/// [fd00:100::1]:5000: Cannot assign requested address", 2 runs in 85 on
/// 6.12). The kernel says which addresses skip it (`nodad`), so this holds
/// whether or not the work has run yet.
#[test]
#[ignore = "needs IPVS: runs in the VM via .ci/kernel-tests"]
fn forwarding_vip_bindable_at_once() {
    common::fresh_netns();
    ip_batch(&[vip_on_lo(Family::V6)]);
    let vip = SocketAddr::new(Family::V6.vip(), PORT);
    let bound = std::net::TcpListener::bind(vip);
    let out = common::run("ip", &["-6", "-o", "addr", "show", "dev", "lo"]);
    let shown = String::from_utf8_lossy(&out.stdout);
    let line = shown
        .lines()
        .find(|l| l.contains(&format!(" {}/", vip.ip())))
        .unwrap_or_else(|| panic!("the VIP on lo: {shown}"));
    assert!(
        line.contains("nodad") && !line.contains("tentative"),
        "the VIP skips duplicate address detection: {line}"
    );
    assert!(
        bound.is_ok(),
        "bind {vip} as soon as it is added: {bound:?}"
    );
}

/// One kernel test per method and family, named `forwarding_...` (the
/// `.ci/kernel-tests -- forwarding_` filter).
macro_rules! forwarding_tests {
    ($($name:ident: $method:ident, $family:ident;)*) => {$(
        #[test]
        #[ignore = "needs IPVS: runs in the VM via .ci/kernel-tests"]
        fn $name() {
            forwarding(Method::$method, Family::$family);
        }
    )*};
}

forwarding_tests! {
    forwarding_masquerade_ipv4: Masquerade, V4;
    forwarding_masquerade_ipv6: Masquerade, V6;
    forwarding_route_ipv4: DirectRouting, V4;
    forwarding_route_ipv6: DirectRouting, V6;
    forwarding_ipip_ipv4: Ipip, V4;
    forwarding_ipip_ipv6: Ipip, V6;
    forwarding_gue_ipv4: Gue, V4;
    forwarding_gue_ipv6: Gue, V6;
    forwarding_gre_ipv4: Gre, V4;
    forwarding_gre_ipv6: Gre, V6;
}
