//! `/proc/net/ip_vs_conn` on the emulator: the connections a test sets,
//! printed as the kernel prints them and read back by the library's
//! parser; and the kernel's own text for a real connection, set into the
//! emulator and printed again byte for byte (a kernel test: in the VM).

use std::process::Command;

use ipvsnl::connections::{self, Connection};
use ipvsnl::emulator::Kernel;

fn conn(proto: &str, client: &str, vip: &str, dest: &str, state: &str, expires: u32) -> Connection {
    let a = |s: &str| s.parse().unwrap();
    Connection::new(proto, a(client), a(vip), a(dest), state, expires)
}

#[test]
fn the_connections_set_are_listed_by_the_librarys_parser() {
    let set = vec![
        conn(
            "TCP",
            "192.168.10.1:54321",
            "10.0.0.1:80",
            "192.168.1.2:80",
            "ESTABLISHED",
            899,
        ),
        conn(
            "IP",
            "10.0.0.2:0",
            "10.0.0.1:80",
            "192.168.1.1:80",
            "NONE",
            6000,
        ),
        conn(
            "TCP",
            "[2001:db8::99]:50000",
            "[2001:db8::1]:443",
            "[2001:db8::a0a0]:443",
            "SYN_RECV",
            59,
        ),
        conn(
            "UDP",
            "192.168.10.5:5060",
            "10.0.0.1:5060",
            "192.168.1.4:5060",
            "UDP",
            170,
        )
        .with_persistence("sip", "3a01bc@example.com"),
        // A mixed-family tunnel: an IPv4 connection to an IPv6 server.
        conn(
            "TCP",
            "10.0.0.2:1024",
            "10.0.0.1:80",
            "[2001:db8::5]:80",
            "ESTABLISHED",
            10,
        ),
    ];
    let kernel = Kernel::new();
    let ns = kernel.init_netns();
    assert_eq!(connections::parse(&ns.proc_ip_vs_conn()).unwrap(), []);
    ns.set_connections(&set).unwrap();
    let text = ns.proc_ip_vs_conn();
    assert_eq!(connections::parse(&text).unwrap(), set, "{text}");
    // The kernel's columns (ipvsadm's parser reads them by position).
    let rows: Vec<&str> = text.lines().collect();
    assert_eq!(
        rows[3],
        "TCP 2001:0db8:0000:0000:0000:0000:0000:0099 C350 2001:0db8:0000:0000:0000:0000:0000:0001 01BB 2001:0db8:0000:0000:0000:0000:0000:a0a0 01BB SYN_RECV         59"
    );
    // Another namespace has its own table.
    assert_eq!(
        connections::parse(&kernel.netns("b").proc_ip_vs_conn()).unwrap(),
        []
    );
}

#[test]
fn a_connection_the_kernel_could_not_hold_is_refused_whole() {
    let kernel = Kernel::new();
    let ns = kernel.init_netns();
    let good = conn(
        "TCP",
        "10.0.0.2:1024",
        "10.0.0.1:80",
        "10.0.1.1:80",
        "ESTABLISHED",
        10,
    );
    ns.set_connections(std::slice::from_ref(&good)).unwrap();
    let mixed = conn(
        "TCP",
        "[2001:db8::2]:1024",
        "10.0.0.1:80",
        "10.0.1.1:80",
        "ESTABLISHED",
        10,
    );
    let e = ns.set_connections(&[good.clone(), mixed]).unwrap_err();
    assert!(e.to_string().contains("different families"), "{e}");
    let spaced = conn(
        "TCP",
        "10.0.0.2:1024",
        "10.0.0.1:80",
        "10.0.1.1:80",
        "NOT ONE",
        10,
    );
    let e = ns.set_connections(&[spaced]).unwrap_err();
    assert!(e.to_string().contains("one word"), "{e}");
    // Nothing half-applied.
    assert_eq!(connections::parse(&ns.proc_ip_vs_conn()).unwrap(), [good]);
}

fn ip(args: &[&str]) {
    let ok = Command::new("ip").args(args).status();
    assert!(ok.is_ok_and(|s| s.success()), "ip {args:?}");
}

#[test]
#[ignore = "needs IPVS: runs in the VM via .ci/kernel-tests"]
fn the_emulator_prints_the_kernels_connection_rows() {
    use ipvsnl::{Client, Destination, Forward, Service, ServiceKey};
    crate::differential::fresh_netns();
    ip(&["addr", "add", "10.9.0.1/32", "dev", "lo"]);
    ip(&["addr", "add", "10.9.0.2/32", "dev", "lo"]);
    ip(&["-6", "addr", "add", "fd09::1/128", "dev", "lo", "nodad"]);
    ip(&["-6", "addr", "add", "fd09::2/128", "dev", "lo", "nodad"]);
    let mut c = Client::new().unwrap();
    // A datagram from here to each service makes a connection (the
    // kernel schedules locally sent packets too).
    for (vip, server, from) in [
        ("10.9.0.1:5353", "10.9.0.2", "10.9.0.1:0"),
        ("[fd09::1]:5353", "fd09::2", "[fd09::1]:0"),
    ] {
        let vip: std::net::SocketAddr = vip.parse().unwrap();
        let key = ServiceKey::udp(vip.ip(), vip.port());
        c.add_service(&Service::new(key)).unwrap();
        let d = Destination::new(server.parse().unwrap(), 5353).with_forward(Forward::Masquerade);
        c.add_destination(&key, &d).unwrap();
        let sock = std::net::UdpSocket::bind(from).unwrap();
        sock.send_to(b"ping", vip).unwrap();
    }
    let path = "/proc/thread-self/net/ip_vs_conn";
    let text = std::fs::read_to_string(path).unwrap();
    let listed = connections::parse(&text).unwrap();
    assert_eq!(listed.len(), 2, "{text}");
    // Printed again by the emulator, in the kernel's order.
    let kernel = Kernel::new();
    kernel.init_netns().set_connections(&listed).unwrap();
    assert_eq!(kernel.init_netns().proc_ip_vs_conn(), text);
}
