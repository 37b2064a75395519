//! Unit tests of the rules reader: each command, each option spelling,
//! each error, the replay onto a table, and `ipvsadm -S -n` texts.

use std::net::{IpAddr, Ipv4Addr};

use super::*;
use crate::rules::Numeric;
use crate::{
    AddressFamily, DaemonRole, Destination, Forward, Netmask, Scheduler, Service, ServiceFlags,
    ServiceKey, SyncDaemon, Timeouts, Tunnel, TunnelFlags,
};

fn ip(s: &str) -> IpAddr {
    s.parse().unwrap()
}

fn web() -> ServiceKey {
    ServiceKey::tcp(ip("10.0.0.1"), 80)
}

fn one(line: &str) -> Request {
    parse_line(line, &Numeric).unwrap_or_else(|e| panic!("{line}: {e}"))
}

fn fails(line: &str) -> String {
    match parse_line(line, &Numeric) {
        Ok(r) => panic!("{line} parsed as {r:?}"),
        Err(e) => e.to_string(),
    }
}

/// Resolves `web` to 10.0.0.1 and `http` to 80 (any protocol).
struct Hosts;

impl crate::rules::Names for Hosts {
    fn host_v4(&self, name: &str) -> Option<Ipv4Addr> {
        (name == "web").then(|| Ipv4Addr::new(10, 0, 0, 1))
    }
    fn port(&self, name: &str, protocol: &str) -> Option<u16> {
        match (name, protocol) {
            ("http", _) => Some(80),
            ("domain", "udp") => Some(53),
            _ => None,
        }
    }
}

#[test]
fn add_service_with_every_setting() {
    let r = one("-A -t 10.0.0.1:80 -s sh -p 300 -M 255.255.255.0 --pe sip -b sh-fallback,sh-port");
    let want = Service::new(web())
        .with_scheduler(Scheduler::SourceHashing)
        .with_persistence(300)
        .with_netmask(Netmask::V4(Ipv4Addr::new(255, 255, 255, 0)))
        .with_persistence_engine("sip")
        .with_flags(ServiceFlags::SH_FALLBACK | ServiceFlags::SH_PORT);
    assert_eq!(r, Request::AddService(Box::new(want)));
}

#[test]
fn long_spellings_and_equals_forms_mean_the_same() {
    let short = one("-A -u 10.0.0.1:53 -s rr -p 60 -o");
    for line in [
        "--add-service --udp-service 10.0.0.1:53 --scheduler rr --persistent 60 --ops",
        "--add-service --udp-service=10.0.0.1:53 --scheduler=rr --persistent=60 --ops",
        "ipvsadm -A -u 10.0.0.1:53 -p 60 -o -s rr",
        "  -A\t-u 10.0.0.1:53 -s rr -p 60 -o\r",
    ] {
        assert_eq!(one(line), short, "{line}");
    }
}

#[test]
fn service_defaults() {
    let Request::AddService(s) = one("-A -t 10.0.0.1:80") else {
        panic!("not an add");
    };
    assert_eq!(s, Box::new(Service::new(web())));
    let Request::AddService(s) = one("-A -t 10.0.0.1:0 -p") else {
        panic!("not an add");
    };
    assert_eq!(s.timeout, DEFAULT_PERSISTENCE_TIMEOUT);
    assert!(s.flags.contains(ServiceFlags::PERSISTENT));
    // `-p` followed by an option takes no value.
    let Request::AddService(s) = one("-A -t 10.0.0.1 -p -s rr") else {
        panic!("not an add");
    };
    assert_eq!(
        (s.timeout, s.scheduler),
        (DEFAULT_PERSISTENCE_TIMEOUT, Scheduler::RoundRobin)
    );
}

#[test]
fn edit_and_delete_service() {
    let edit = one("-E -t 10.0.0.1:80 -s wrr");
    assert_eq!(
        edit,
        Request::EditService(Box::new(
            Service::new(web()).with_scheduler(Scheduler::WeightedRoundRobin)
        ))
    );
    assert_eq!(one("-D -t 10.0.0.1:80"), Request::DeleteService(web()));
    assert_eq!(
        one("--delete-service --sctp-service [2001:db8::1]:5060"),
        Request::DeleteService(ServiceKey::sctp(ip("2001:db8::1"), 5060))
    );
}

#[test]
fn fwmark_services() {
    let v4 = ServiceKey::fwmark(5, AddressFamily::Inet);
    let v6 = ServiceKey::fwmark(5, AddressFamily::Inet6);
    assert_eq!(one("-D -f 5"), Request::DeleteService(v4));
    assert_eq!(one("-D -f 0x5 -6"), Request::DeleteService(v6));
    assert_eq!(
        one("-D --fwmark-service 5 --ipv6"),
        Request::DeleteService(v6)
    );
    // ipvsadm -S prints marks above 2^31 as negative numbers.
    let big = ServiceKey::fwmark(3_000_000_000, AddressFamily::Inet);
    assert_eq!(one("-D -f -1294967296"), Request::DeleteService(big));
    assert_eq!(one("-D -f 3000000000"), Request::DeleteService(big));
    let Request::AddService(s) = one("-A -f 9 -6 -s wlc -p 20 -M 64") else {
        panic!("not an add");
    };
    assert_eq!(s.netmask, Netmask::V6(64));
    assert_eq!(s.key.family(), AddressFamily::Inet6);
}

#[test]
fn add_edit_delete_destination() {
    let d = Destination::new(ip("10.0.1.1"), 8080)
        .with_forward(Forward::Masquerade)
        .with_weight(1)
        .with_thresholds(100, 10);
    assert_eq!(
        one("-a -t 10.0.0.1:80 -r 10.0.1.1:8080 -m -w 1 -x 100 -y 10"),
        Request::AddDestination(web(), d)
    );
    assert_eq!(
        one("--edit-server -t 10.0.0.1:80 --real-server 10.0.1.1:8080 --masquerading --weight=1 --u-threshold 100 --l-threshold 10"),
        Request::EditDestination(web(), d)
    );
    assert_eq!(
        one("-d -t 10.0.0.1:80 -r 10.0.1.1:8080"),
        Request::DeleteDestination(web(), ip("10.0.1.1"), 8080)
    );
}

#[test]
fn destination_defaults_route_weight_one_service_port() {
    let want = Destination::new(ip("10.0.1.1"), 80).with_forward(Forward::Route);
    assert_eq!(
        one("-a -t 10.0.0.1:80 -r 10.0.1.1"),
        Request::AddDestination(web(), want)
    );
    assert_eq!(
        one("-a -t 10.0.0.1:80 -r 10.0.1.1 --gatewaying"),
        Request::AddDestination(web(), want)
    );
    let mark = ServiceKey::fwmark(5, AddressFamily::Inet);
    assert_eq!(
        one("-d -f 5 -r 192.168.1.9"),
        Request::DeleteDestination(mark, ip("192.168.1.9"), 0)
    );
    // An IPv6 real server without a port, bracketed or not.
    let v6 = ServiceKey::tcp(ip("2001:db8::1"), 443);
    for line in [
        "-d -t [2001:db8::1]:443 -r 2001:db8::5",
        "-d -t [2001:db8::1]:443 -r [2001:db8::5]",
    ] {
        assert_eq!(
            one(line),
            Request::DeleteDestination(v6, ip("2001:db8::5"), 443)
        );
    }
}

#[test]
fn tunnels() {
    let key = ServiceKey::fwmark(5, AddressFamily::Inet);
    let gue = Destination::new(ip("2001:db8::1"), 80)
        .with_forward(Forward::Tunnel(Tunnel::gue(6080)))
        .with_weight(1);
    assert_eq!(
        one("-a -f 5 -r [2001:db8::1]:80 -i --tun-type gue --tun-port 6080 --tun-nocsum"),
        Request::AddDestination(key, gue)
    );
    let Request::AddDestination(_, d) =
        one("-a -f 5 -r 10.0.1.1:0 --ipip --tun-type gre --tun-remcsum")
    else {
        panic!("not an add");
    };
    assert_eq!(
        d.forward,
        Forward::Tunnel(Tunnel::gre().with_flags(TunnelFlags::REMCSUM))
    );
    let Request::AddDestination(_, d) = one("-a -f 5 -r 10.0.1.1:0 -i -w 0") else {
        panic!("not an add");
    };
    assert_eq!((d.forward, d.weight), (Forward::Tunnel(Tunnel::ipip()), 0));
    let Request::AddDestination(_, d) =
        one("-a -f 5 -r 10.0.1.1:0 -i --tun-type=gue --tun-port=1 --tun-csum")
    else {
        panic!("not an add");
    };
    assert_eq!(
        d.forward,
        Forward::Tunnel(Tunnel::gue(1).with_flags(TunnelFlags::CSUM))
    );
}

#[test]
fn table_wide_commands() {
    assert_eq!(one("-C"), Request::Flush);
    assert_eq!(one("--clear"), Request::Flush);
    assert_eq!(one("-Z"), Request::Zero(None));
    assert_eq!(one("--zero -t 10.0.0.1:80"), Request::Zero(Some(web())));
    assert_eq!(
        one("--set 900 120 300"),
        Request::SetTimeouts(Timeouts::new(900, 120, 300))
    );
    assert_eq!(
        one("--set 0 0 20"),
        Request::SetTimeouts(Timeouts::new(0, 0, 20))
    );
}

#[test]
fn sync_daemons() {
    assert_eq!(
        one("--start-daemon master"),
        Request::StartDaemon(SyncDaemon::new(DaemonRole::Master, DEFAULT_SYNC_INTERFACE))
    );
    let want = SyncDaemon::new(DaemonRole::Backup, "eth1")
        .with_sync_id(9)
        .with_max_len(1400)
        .with_group(ip("ff02::81"))
        .with_port(9999)
        .with_ttl(3);
    assert_eq!(
        one("--start-daemon backup --mcast-interface eth1 --syncid 9 --sync-maxlen 1400 --mcast-group ff02::81 --mcast-port 9999 --mcast-ttl 3"),
        Request::StartDaemon(want)
    );
    assert_eq!(
        one("--stop-daemon=master"),
        Request::StopDaemon(DaemonRole::Master)
    );
    assert_eq!(
        one("--stop-daemon backup --syncid 3"),
        Request::StopDaemon(DaemonRole::Backup)
    );
}

#[test]
fn names_resolve_hosts_and_ports() {
    let r = parse_line("-a -t web:http -r web:8080 -m", &Hosts).unwrap();
    let d = Destination::new(ip("10.0.0.1"), 8080);
    assert_eq!(r, Request::AddDestination(web(), d));
    let r = parse_line("-D -u web:domain", &Hosts).unwrap();
    assert_eq!(
        r,
        Request::DeleteService(ServiceKey::udp(ip("10.0.0.1"), 53))
    );
    // `domain` is only known for UDP, and nothing resolves with Numeric.
    assert!(parse_line("-D -t web:domain", &Hosts).is_err());
    assert_eq!(
        fails("-D -t web:http"),
        "service address \"web:http\" is not an address with an optional port (10.0.0.1:80, [2001:db8::1]:80 or a host name)"
    );
}

#[test]
fn command_errors() {
    assert_eq!(
        fails("-t 10.0.0.1:80"),
        "\"-t\" is not a command; a rules line starts with one of -A -E -D -a -e -d -C -Z --set --start-daemon --stop-daemon"
    );
    assert!(fails("hello").starts_with("\"hello\" is not a command"));
    for listing in ["-L", "-l -n", "-S", "--save -n", "-R", "-h", "--version"] {
        let e = fails(listing);
        assert!(
            e.contains("is not a command a rules text holds"),
            "{listing}: {e}"
        );
    }
    assert_eq!(
        fails("-A -t 10.0.0.1:80 -a"),
        "one command per line: -a follows -A"
    );
    assert_eq!(fails(""), "the line holds no command");
    assert_eq!(fails("ipvsadm"), "the line holds no command");
}

#[test]
fn option_errors() {
    assert_eq!(fails("-A -t 10.0.0.1:80 --foo"), "unknown option \"--foo\"");
    assert_eq!(fails("-A -t 10.0.0.1:80 -Ln"), "unknown option \"-Ln\"");
    assert_eq!(
        fails("-A -t 10.0.0.1:80 extra"),
        "unexpected argument \"extra\""
    );
    assert_eq!(fails("-A -t"), "-t needs a value (ADDRESS:PORT)");
    assert_eq!(fails("-A -t -s rr"), "-t needs a value (ADDRESS:PORT)");
    assert_eq!(
        fails("-A -t 10.0.0.1:80 --pe --ops"),
        "--pe needs a value (a persistence engine name)"
    );
    assert_eq!(fails("-A -t 10.0.0.1:80 --ops=1"), "--ops takes no value");
    assert_eq!(fails("-A -t 10.0.0.1:80 -s rr -s wrr"), "-s is given twice");
    assert_eq!(
        fails("-A -t 10.0.0.1:80 -u 10.0.0.1:53"),
        "-u conflicts with -t: a line takes only one of them"
    );
    assert_eq!(
        fails("-a -t 10.0.0.1:80 -r 10.0.1.1 -g -m"),
        "-m conflicts with -g: a line takes only one of them"
    );
    assert_eq!(fails("-A -t 10.0.0.1:80 -w 1"), "-w does not apply to -A");
    assert_eq!(fails("-D -t 10.0.0.1:80 -s rr"), "-s does not apply to -D");
    assert_eq!(
        fails("-a -t 10.0.0.1:80 -r 10.0.1.1 -p"),
        "-p does not apply to -a"
    );
    assert_eq!(fails("-C -t 10.0.0.1:80"), "-t does not apply to -C");
    assert_eq!(fails("-A -t 10.0.0.1:80 -n"), "-n does not apply to -A");
    assert_eq!(
        fails("--stop-daemon master --mcast-ttl 2"),
        "--mcast-ttl does not apply to --stop-daemon"
    );
}

#[test]
fn missing_parts() {
    assert_eq!(
        fails("-A -s rr"),
        "-A needs a service (-t, -u or --sctp-service ADDRESS:PORT, or -f MARK)"
    );
    assert_eq!(
        fails("-a -t 10.0.0.1:80"),
        "-a needs a real server (-r ADDRESS[:PORT])"
    );
    assert_eq!(
        fails("-d -t 10.0.0.1:80"),
        "-d needs a real server (-r ADDRESS[:PORT])"
    );
    assert!(fails("--set 1 2").starts_with("--set needs three timeouts"));
    assert_eq!(fails("--set 1 2 3 4"), "unexpected argument \"4\"");
    assert_eq!(
        fails("--start-daemon"),
        "--start-daemon needs a value (master or backup)"
    );
}

#[test]
fn value_errors() {
    let cases = [
        ("-a -t 10.0.0.1:80 -r 10.0.1.1 -w abc", "weight \"abc\" is not a number from 0 to 2147483647"),
        ("-a -t 10.0.0.1:80 -r 10.0.1.1 -w 2147483648", "weight \"2147483648\" is not a number from 0 to 2147483647"),
        ("-a -t 10.0.0.1:80 -r 10.0.1.1 -w -1", "weight \"-1\" is not a number from 0 to 2147483647"),
        ("-a -t 10.0.0.1:80 -r 10.0.1.1 -x 1e3", "upper threshold \"1e3\" is not a number from 0 to 2147483647"),
        ("-a -t 10.0.0.1:80 -r 10.0.1.1 -y +3", "lower threshold \"+3\" is not a number from 0 to 2147483647"),
        ("-A -t 10.0.0.1:80 -s averyveryverylongname", "scheduler \"averyveryverylongname\" is not a name of 1 to 15 bytes of printable ASCII"),
        ("-A -t 10.0.0.1:80 -p 300 -M 24", "IPv4 netmask \"24\" is not a dotted mask such as 255.255.255.0"),
        ("-A -t [2001:db8::1]:80 -p 300 -M 129", "IPv6 netmask \"129\" is not a number from 1 to 128"),
        ("-A -t 10.0.0.1:80 --pe averyveryverylongname", "persistence engine \"averyveryverylongname\" is not a name of 1 to 15 bytes of printable ASCII"),
        ("-A -t 10.0.0.1:80 -s sh -b sh-port,bogus", "scheduler flag \"bogus\" is not one of flag-1, flag-2, flag-3, sh-fallback, sh-port, mh-fallback, mh-port"),
        ("-A -t 10.0.0.1:80 -p x", "persistence timeout \"x\" is not a number from 0 to 4294967295"),
        ("-D -f 0", "firewall mark \"0\" is not a number from 1 to 4294967295 (decimal, 0x hex, or negative as printed for marks above 2147483647)"),
        ("-D -f 4294967296", "firewall mark \"4294967296\" is not a number from 1 to 4294967295 (decimal, 0x hex, or negative as printed for marks above 2147483647)"),
        ("-a -t 10.0.0.1:80 -r 10.0.1.1 -i --tun-type vxlan", "tunnel type \"vxlan\" is not ipip, gue or gre"),
        ("-a -t 10.0.0.1:80 -r 10.0.1.1 -i --tun-type gue --tun-port 0", "tunnel port \"0\" is not a number from 1 to 65535"),
        ("--start-daemon primary", "sync daemon role \"primary\" is not master or backup"),
        ("--start-daemon master --mcast-interface averyveryverylongif", "multicast interface \"averyveryverylongif\" is not a name of 1 to 15 bytes without NUL or white space"),
        ("--start-daemon master --syncid 256", "sync id \"256\" is not a number from 0 to 255"),
        ("--start-daemon master --mcast-group 10.0.0.1", "multicast group \"10.0.0.1\" is not an IPv4 or IPv6 multicast address"),
        ("--start-daemon master --mcast-ttl 0", "multicast TTL \"0\" is not a number from 1 to 255"),
        ("--start-daemon master --sync-maxlen 65508", "sync message length \"65508\" is not a number from 1 to 65507"),
        ("--set 1 x 3", "TCP FIN timeout \"x\" is not a number from 0 to 2147483647"),
    ];
    for (line, want) in cases {
        assert_eq!(fails(line), want, "{line}");
    }
    for addr in [
        "80",
        "10.0.0.1:http",
        "10.0.0.1:65536",
        "[2001:db8::1",
        "[2001:db8::1]80",
        "[10.0.0.1]:80",
        "10.1:80",
        "::1]:80",
    ] {
        let e = fails(&format!("-D -t {addr}"));
        assert!(
            e.starts_with(&format!("service address \"{addr}\" is not")),
            "{addr}: {e}"
        );
    }
}

#[test]
fn settings_that_do_not_fit_together() {
    let cases = [
        (
            "-A -t 10.0.0.1:0",
            "TCP 10.0.0.1:0 has port 0, which only a persistent service (-p) may have",
        ),
        (
            "-A -t 10.0.0.1:80 -o",
            "-o (one-packet scheduling) is only for UDP and fwmark services",
        ),
        // Found checking the round trip the rules_text fuzz target
        // asserts: a netmask without -p was read, then printed (as
        // ipvsadm -S prints) without it, so the round trip lost it.
        (
            "-A -t 10.0.0.1:80 -M 255.255.255.0",
            "-M needs -p: a netmask is the granularity of persistence",
        ),
        (
            "-A -t 10.0.0.1:80 -b sh-port",
            "scheduler flag \"sh-port\" is for the sh scheduler, not wlc",
        ),
        (
            "-A -t 10.0.0.1:80 -s sh -b mh-port",
            "scheduler flag \"mh-port\" is for the mh scheduler, not sh",
        ),
        (
            "-A -t 10.0.0.1:80 -6",
            "-6 is only for fwmark services; -t takes its family from its address",
        ),
        ("-Z -6", "-6 needs a fwmark service (-f MARK)"),
        (
            "-a -t 10.0.0.1:80 -r 10.0.1.1 -m --tun-type gue",
            "--tun-type is only for tunnelled real servers (-i)",
        ),
        (
            "-a -t 10.0.0.1:80 -r 10.0.1.1 -i --tun-type gue",
            "a gue tunnel needs --tun-port PORT",
        ),
        (
            "-a -t 10.0.0.1:80 -r 10.0.1.1 -i --tun-type gre --tun-port 5",
            "--tun-port is only for gue tunnels, not gre",
        ),
        (
            "-a -t 10.0.0.1:80 -r 10.0.1.1 -i --tun-csum",
            "--tun-csum is for gue and gre tunnels, not ipip",
        ),
        (
            "-a -t 10.0.0.1:80 -r 10.0.1.1 -i --tun-type gre --tun-csum --tun-nocsum",
            "--tun-nocsum conflicts with --tun-csum: a line takes only one of them",
        ),
    ];
    for (line, want) in cases {
        assert_eq!(fails(line), want, "{line}");
    }
    // What the model refuses is refused, with the model's words.
    let e = fails("-a -t 10.0.0.1:80 -r [2001:db8::5]:80 -m");
    assert!(e.contains("needs tunnel forwarding"), "{e}");
    let e = fails("-a -t 10.0.0.1:80 -r 10.0.1.1 -x 5 -y 10");
    assert!(e.contains("lower threshold 10"), "{e}");
    let e = fails("-a -t 10.0.0.1:80 -r 224.0.0.1");
    assert!(e.contains("not a unicast address"), "{e}");
}

#[test]
fn a_text_reports_every_bad_line_in_order() {
    let text = "-A -t 10.0.0.1:80\n\n-a -t 10.0.0.1:80\n-A -t 10.0.0.2:80 -s rr\n-a -t 10.0.0.1:80 -r 10.0.1.1 -w abc\n-L\n";
    let e = parse(text, &Numeric).unwrap_err();
    let lines: Vec<usize> = e.lines().iter().map(BadLine::line).collect();
    assert_eq!(lines, [3, 5, 6]);
    assert!(matches!(e.lines()[0].error(), LineError::Missing { .. }));
    assert!(matches!(
        e.lines()[1].error(),
        LineError::BadValue { what: "weight", .. }
    ));
    assert!(matches!(
        e.lines()[2].error(),
        LineError::NotARulesCommand { .. }
    ));
    let shown = e.to_string();
    assert_eq!(shown.lines().count(), 3);
    assert!(
        shown.starts_with("line 3: -a needs a real server"),
        "{shown}"
    );
    let source = std::error::Error::source(&e.lines()[1]).map(|s| s.to_string());
    assert_eq!(
        source.as_deref(),
        Some("weight \"abc\" is not a number from 0 to 2147483647")
    );
    assert_eq!(e.clone().into_lines().len(), 3);
}

#[test]
fn blank_lines_and_line_numbers() {
    let rules = parse("\r\n   \n-C\r\n\t\n-Z", &Numeric).unwrap();
    let numbered: Vec<usize> = rules.iter().map(|(n, _)| n).collect();
    assert_eq!(numbered, [3, 5]);
    assert_eq!(rules.len(), 2);
    assert!(parse("", &Numeric).unwrap().is_empty());
    let owned: Vec<(usize, Request)> = rules.clone().into_iter().collect();
    assert_eq!(owned, [(3, Request::Flush), (5, Request::Zero(None))]);
    assert_eq!(rules.into_requests(), [Request::Flush, Request::Zero(None)]);
}
