//! Bad input to the library's API: names, numbers out of range and
//! impossible combinations, each refused by `Request::validate` (or by the
//! constructor that checks it) with an error naming what is wrong.

use std::net::{IpAddr, Ipv4Addr};

use ipvsnl::{
    AddressFamily, DaemonRole, Destination, Forward, Netmask, Request, Scheduler, Service,
    ServiceKey, SyncDaemon, Timeouts, Tunnel, IFNAME_MAX, THRESHOLD_MAX, WEIGHT_MAX,
};

/// What is given: a name to `Scheduler::new`, or a request.
pub enum Input {
    /// `Scheduler::new(name)`.
    Scheduler(&'static str),
    /// A request, checked with `Request::validate`.
    Request(Request),
}

/// One bad input and the exact `Display` of its error.
pub struct Case {
    pub name: &'static str,
    pub input: Input,
    pub error: &'static str,
}

fn ip(s: &str) -> IpAddr {
    s.parse().unwrap()
}

pub fn v4() -> ServiceKey {
    ServiceKey::tcp(ip("10.0.0.1"), 80)
}

fn v6() -> ServiceKey {
    ServiceKey::udp(ip("2001:db8::1"), 53)
}

fn mark0() -> ServiceKey {
    ServiceKey::fwmark(0, AddressFamily::Inet)
}

pub fn server() -> Destination {
    Destination::new(ip("10.0.1.1"), 80)
}

fn add(s: Service) -> Input {
    Input::Request(Request::add_service(s))
}

fn pe(name: &str) -> Input {
    add(Service::new(v4())
        .with_persistence(60)
        .with_persistence_engine(name))
}

fn daemon(interface: &str) -> SyncDaemon {
    SyncDaemon::new(DaemonRole::Master, interface)
}

fn start(d: SyncDaemon) -> Input {
    Input::Request(Request::StartDaemon(d))
}

fn dest(key: ServiceKey, d: Destination) -> Input {
    Input::Request(Request::AddDestination(key, d))
}

fn to_v4(d: Destination) -> Input {
    dest(v4(), d)
}

/// A tunnel with a port, whatever its kind.
fn ported(mut t: Tunnel, port: u16) -> Tunnel {
    t.port = port;
    t
}

fn case(name: &'static str, input: Input, error: &'static str) -> Case {
    Case { name, input, error }
}

/// Every bad input of the API, by area.
pub fn cases() -> Vec<Case> {
    let mut all = names();
    all.extend(numbers());
    all.extend(combinations());
    all
}

fn names() -> Vec<Case> {
    vec![
        case("scheduler: empty", Input::Scheduler(""), "invalid scheduler name: it is empty"),
        case(
            "scheduler: 16 bytes",
            Input::Scheduler("1234567890123456"),
            "invalid scheduler name: \"1234567890123456\" is 16 bytes long; the kernel allows at most 15",
        ),
        case(
            "scheduler: 200 bytes",
            Input::Scheduler(concat!(
                "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx",
                "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"
            )),
            concat!(
                "invalid scheduler name: \"",
                "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx",
                "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx",
                "\" is 200 bytes long; the kernel allows at most 15"
            ),
        ),
        case(
            "scheduler: 16 bytes of UTF-8 in 8 characters",
            Input::Scheduler("\u{e9}\u{e9}\u{e9}\u{e9}\u{e9}\u{e9}\u{e9}\u{e9}"),
            "invalid scheduler name: \"\u{e9}\u{e9}\u{e9}\u{e9}\u{e9}\u{e9}\u{e9}\u{e9}\" is 16 bytes long; the kernel allows at most 15",
        ),
        case("scheduler: NUL", Input::Scheduler("r\0r"), "invalid scheduler name: \"r\\0r\" contains a NUL byte"),
        case("scheduler: lone NUL", Input::Scheduler("\0"), "invalid scheduler name: \"\\0\" contains a NUL byte"),
        case("scheduler: space", Input::Scheduler("r r"), "invalid scheduler name: \"r r\" contains white space"),
        case("scheduler: tab", Input::Scheduler("rr\t"), "invalid scheduler name: \"rr\\t\" contains white space"),
        case("scheduler: newline", Input::Scheduler("\nrr"), "invalid scheduler name: \"\\nrr\" contains white space"),
        case(
            "scheduler: Unicode space",
            Input::Scheduler("r\u{a0}r"),
            "invalid scheduler name: \"r\\u{a0}r\" contains white space",
        ),
        case(
            "scheduler: non-ASCII",
            Input::Scheduler("r\u{e9}"),
            "invalid scheduler name: \"r\u{e9}\" is not printable ASCII (it names a kernel module)",
        ),
        case(
            "scheduler: control byte",
            Input::Scheduler("r\u{7}"),
            "invalid scheduler name: \"r\\u{7}\" is not printable ASCII (it names a kernel module)",
        ),
        case(
            "scheduler: DEL",
            Input::Scheduler("rr\u{7f}"),
            "invalid scheduler name: \"rr\\u{7f}\" is not printable ASCII (it names a kernel module)",
        ),
        case("engine: empty", pe(""), "invalid persistence engine: it is empty"),
        case(
            "engine: 16 bytes",
            pe("sipsipsipsipsips"),
            "invalid persistence engine: \"sipsipsipsipsips\" is 16 bytes long; the kernel allows at most 15",
        ),
        case("engine: NUL", pe("s\0p"), "invalid persistence engine: \"s\\0p\" contains a NUL byte"),
        case("engine: space", pe("s p"), "invalid persistence engine: \"s p\" contains white space"),
        case(
            "engine: non-ASCII",
            pe("s\u{ec}p"),
            "invalid persistence engine: \"s\u{ec}p\" is not printable ASCII (it names a kernel module)",
        ),
        case(
            "engine: control byte",
            pe("sip\u{1b}"),
            "invalid persistence engine: \"sip\\u{1b}\" is not printable ASCII (it names a kernel module)",
        ),
        case("interface: empty", start(daemon("")), "invalid sync daemon interface: it is empty"),
        case(
            "interface: IFNAME_MAX + 1",
            start(daemon(&"e".repeat(IFNAME_MAX + 1))),
            "invalid sync daemon interface: \"eeeeeeeeeeeeeeee\" is 16 bytes long; the kernel allows at most 15",
        ),
        case(
            "interface: NUL",
            start(daemon("eth\0x")),
            "invalid sync daemon interface: \"eth\\0x\" contains a NUL byte",
        ),
        case(
            "interface: space",
            start(daemon("eth 0")),
            "invalid sync daemon interface: \"eth 0\" contains white space",
        ),
        case(
            "interface: of a backup daemon",
            start(SyncDaemon::new(DaemonRole::Backup, "")),
            "invalid sync daemon interface: it is empty",
        ),
    ]
}

fn numbers() -> Vec<Case> {
    let v6_mask = |p: u8| add(Service::new(v6()).with_netmask(Netmask::V6(p)));
    vec![
        case(
            "weight: WEIGHT_MAX + 1",
            to_v4(server().with_weight(WEIGHT_MAX + 1)),
            "invalid weight: 2147483648 is above the kernel's maximum 2147483647",
        ),
        case(
            "weight: u32::MAX",
            to_v4(server().with_weight(u32::MAX)),
            "invalid weight: 4294967295 is above the kernel's maximum 2147483647",
        ),
        case(
            "weight: on an edit",
            Input::Request(Request::EditDestination(v4(), server().with_weight(WEIGHT_MAX + 1))),
            "invalid weight: 2147483648 is above the kernel's maximum 2147483647",
        ),
        case(
            "upper threshold: THRESHOLD_MAX + 1",
            to_v4(server().with_thresholds(THRESHOLD_MAX + 1, 0)),
            "invalid thresholds: upper 2147483648 / lower 0: the kernel's maximum is 2147483647",
        ),
        case(
            "lower threshold: THRESHOLD_MAX + 1",
            to_v4(server().with_thresholds(THRESHOLD_MAX, THRESHOLD_MAX + 1)),
            "invalid thresholds: upper 2147483647 / lower 2147483648: the kernel's maximum is 2147483647",
        ),
        case(
            "thresholds: both u32::MAX",
            to_v4(server().with_thresholds(u32::MAX, u32::MAX)),
            "invalid thresholds: upper 4294967295 / lower 4294967295: the kernel's maximum is 2147483647",
        ),
        case(
            "thresholds: lower above upper",
            to_v4(server().with_thresholds(10, 20)),
            "invalid thresholds: lower threshold 20 is above upper threshold 10 (0 means no upper threshold, so a lower one needs an upper one)",
        ),
        case(
            "thresholds: lower without upper",
            to_v4(server().with_thresholds(0, 1)),
            "invalid thresholds: lower threshold 1 is above upper threshold 0 (0 means no upper threshold, so a lower one needs an upper one)",
        ),
        case("IPv6 prefix 0", v6_mask(0), "invalid netmask: IPv6 prefix length 0 is outside 1..=128"),
        case("IPv6 prefix 129", v6_mask(129), "invalid netmask: IPv6 prefix length 129 is outside 1..=128"),
        case("IPv6 prefix 255", v6_mask(255), "invalid netmask: IPv6 prefix length 255 is outside 1..=128"),
        case(
            "fwmark 0: add service",
            add(Service::new(mark0())),
            "invalid fwmark: 0 is not a mark: the kernel would read the service as address-keyed",
        ),
        case(
            "fwmark 0: IPv6 edit service",
            Input::Request(Request::edit_service(Service::new(ServiceKey::fwmark(0, AddressFamily::Inet6)))),
            "invalid fwmark: 0 is not a mark: the kernel would read the service as address-keyed",
        ),
        case(
            "fwmark 0: delete service",
            Input::Request(Request::DeleteService(mark0())),
            "invalid fwmark: 0 is not a mark: the kernel would read the service as address-keyed",
        ),
        case(
            "fwmark 0: zero",
            Input::Request(Request::Zero(Some(mark0()))),
            "invalid fwmark: 0 is not a mark: the kernel would read the service as address-keyed",
        ),
        case(
            "fwmark 0: add destination",
            dest(mark0(), server()),
            "invalid fwmark: 0 is not a mark: the kernel would read the service as address-keyed",
        ),
        case(
            "fwmark 0: delete destination",
            Input::Request(Request::DeleteDestination(mark0(), ip("10.0.1.1"), 80)),
            "invalid fwmark: 0 is not a mark: the kernel would read the service as address-keyed",
        ),
        case(
            "sync id 256",
            start(daemon("eth0").with_sync_id(256)),
            "invalid sync id: 256 is above 255",
        ),
        case(
            "sync id u32::MAX",
            start(daemon("eth0").with_sync_id(u32::MAX)),
            "invalid sync id: 4294967295 is above 255",
        ),
        case("multicast TTL 0", start(daemon("eth0").with_ttl(0)), "invalid multicast TTL: must be 1 to 255"),
        case(
            "multicast group: unicast IPv4",
            start(daemon("eth0").with_group(ip("10.0.0.1"))),
            "invalid multicast group: 10.0.0.1 is not a multicast address",
        ),
        case(
            "multicast group: IPv6 loopback",
            start(daemon("eth0").with_group(ip("::1"))),
            "invalid multicast group: ::1 is not a multicast address",
        ),
        case(
            "TCP timeout above INT_MAX",
            Input::Request(Request::SetTimeouts(Timeouts::new(1 << 31, 0, 0))),
            "invalid timeout: TCP timeout 2147483648 is above 2147483647 (the kernel reads it as a negative int)",
        ),
        case(
            "TCP FIN timeout u32::MAX",
            Input::Request(Request::SetTimeouts(Timeouts::new(0, u32::MAX, 0))),
            "invalid timeout: TCP FIN timeout 4294967295 is above 2147483647 (the kernel reads it as a negative int)",
        ),
        case(
            "UDP timeout above INT_MAX",
            Input::Request(Request::SetTimeouts(Timeouts::new(900, 120, 3_000_000_000))),
            "invalid timeout: UDP timeout 3000000000 is above 2147483647 (the kernel reads it as a negative int)",
        ),
    ]
}

fn combinations() -> Vec<Case> {
    let tunnel = |t: Tunnel| server().with_forward(Forward::Tunnel(t));
    let v6_server = Destination::new(ip("2001:db8::2"), 80);
    vec![
        case(
            "IPv6 server, IPv4 service, masquerading",
            to_v4(v6_server),
            "invalid destination: IPv6 destination 2001:db8::2 on an IPv4 service needs tunnel forwarding",
        ),
        case(
            "IPv6 server, IPv4 service, direct routing",
            to_v4(v6_server.with_forward(Forward::Route)),
            "invalid destination: IPv6 destination 2001:db8::2 on an IPv4 service needs tunnel forwarding",
        ),
        case(
            "IPv4 server, IPv6 service",
            dest(v6(), server().with_forward(Forward::Route)),
            "invalid destination: IPv4 destination 10.0.1.1 on an IPv6 service needs tunnel forwarding",
        ),
        case(
            "IPv4 server, IPv6 fwmark service, edit",
            Input::Request(Request::EditDestination(ServiceKey::fwmark(7, AddressFamily::Inet6), server())),
            "invalid destination: IPv4 destination 10.0.1.1 on an IPv6 service needs tunnel forwarding",
        ),
        case("GUE without a port", to_v4(tunnel(Tunnel::gue(0))), "invalid tunnel: a GUE tunnel needs a port"),
        case(
            "IPIP with a port",
            to_v4(tunnel(ported(Tunnel::ipip(), 6080))),
            "invalid tunnel: a tunnel port is only meaningful for GUE",
        ),
        case(
            "GRE with a port",
            to_v4(tunnel(ported(Tunnel::gre(), 1))),
            "invalid tunnel: a tunnel port is only meaningful for GUE",
        ),
        case(
            "IPv6 netmask on an IPv4 service",
            add(Service::new(v4()).with_netmask(Netmask::V6(64))),
            "invalid netmask: IPv6 netmask 64 on an IPv4 service",
        ),
        case(
            "IPv4 netmask on an IPv6 service",
            add(Service::new(v6()).with_netmask(Netmask::V4(Ipv4Addr::new(255, 255, 255, 0)))),
            "invalid netmask: IPv4 netmask 255.255.255.0 on an IPv6 service",
        ),
        case(
            "IPv4 netmask on an IPv6 fwmark service, edit",
            Input::Request(Request::edit_service(Service::new(ServiceKey::fwmark(9, AddressFamily::Inet6)).with_netmask(Netmask::V4(Ipv4Addr::BROADCAST)))),
            "invalid netmask: IPv4 netmask 255.255.255.255 on an IPv6 service",
        ),
        case(
            "server 0.0.0.0",
            to_v4(Destination::new(ip("0.0.0.0"), 80)),
            "invalid destination: 0.0.0.0 is not a unicast address",
        ),
        case(
            "server 255.255.255.255",
            to_v4(Destination::new(ip("255.255.255.255"), 80)),
            "invalid destination: 255.255.255.255 is not a unicast address",
        ),
        case(
            "server 224.0.0.1",
            to_v4(Destination::new(ip("224.0.0.1"), 80)),
            "invalid destination: 224.0.0.1 is not a unicast address",
        ),
        case(
            "server ::",
            dest(v6(), Destination::new(ip("::"), 80)),
            "invalid destination: :: is not a unicast address",
        ),
        case(
            "server ff02::1",
            dest(v6(), Destination::new(ip("ff02::1"), 80)),
            "invalid destination: ff02::1 is not a unicast address",
        ),
    ]
}

/// Checks `Scheduler::new` refuses what a scheduler request cannot carry:
/// the error, kind and all.
pub fn scheduler_error(name: &str) -> ipvsnl::Error {
    Scheduler::new(name).expect_err(name).into()
}
