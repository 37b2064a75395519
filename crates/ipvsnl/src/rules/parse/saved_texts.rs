//! Texts as a whole: the replay onto a table, and what `ipvsadm -S`
//! prints (the reference's transcripts), read back.

use std::net::{IpAddr, Ipv4Addr};

use super::*;
use crate::rules::Numeric;
use crate::{
    AddressFamily, Destination, Forward, Netmask, Scheduler, Service, ServiceFlags, ServiceKey,
    Tunnel, TunnelFlags,
};

fn ip(s: &str) -> IpAddr {
    s.parse().unwrap()
}

fn web() -> ServiceKey {
    ServiceKey::tcp(ip("10.0.0.1"), 80)
}

#[test]
fn replay_builds_the_table() {
    let text = "\
-A -t 10.0.0.1:80 -s rr
-a -t 10.0.0.1:80 -r 10.0.1.1:80 -m
-a -t 10.0.0.1:80 -r 10.0.1.2:80 -m -w 3
-e -t 10.0.0.1:80 -r 10.0.1.2:80 -g -w 4
-d -t 10.0.0.1:80 -r 10.0.1.1:80
-E -t 10.0.0.1:80 -s wrr
-A -u 10.0.0.1:53
-D -u 10.0.0.1:53
-Z -t 10.0.0.1:80
-Z
";
    let table = parse(text, &Numeric).unwrap().to_table().unwrap();
    let mut want = Table::new();
    want.insert(
        Service::new(web()).with_scheduler(Scheduler::WeightedRoundRobin),
        [Destination::new(ip("10.0.1.2"), 80)
            .with_forward(Forward::Route)
            .with_weight(4)],
    );
    assert_eq!(table, want);
    let cleared = parse(&format!("{text}-C\n-A -t 10.0.0.1:80\n"), &Numeric)
        .unwrap()
        .to_table()
        .unwrap();
    let mut want = Table::new();
    want.insert(Service::new(web()), []);
    assert_eq!(cleared, want);
}

#[test]
fn replay_refuses_what_the_kernel_would() {
    let text = "\
-E -t 10.0.0.1:80 -s rr
-A -t 10.0.0.1:80
-A -t 10.0.0.1:80 -s rr
-a -t 10.0.0.1:80 -r 10.0.1.1:80
-a -t 10.0.0.1:80 -r 10.0.1.1:80 -w 2
-e -t 10.0.0.1:80 -r 10.0.1.9:80
-d -t 10.0.0.1:81 -r 10.0.1.1:80
-Z -t 10.0.0.1:81
--set 1 2 3
--start-daemon master
--stop-daemon master
-D -t 10.0.0.1:80
-d -t 10.0.0.1:80 -r 10.0.1.1:80
";
    let e = parse(text, &Numeric).unwrap().to_table().unwrap_err();
    let shown: Vec<String> = e.lines().iter().map(ToString::to_string).collect();
    assert_eq!(
        shown,
        [
            "line 1: -E names TCP 10.0.0.1:80, which no earlier line adds",
            "line 3: -A adds TCP 10.0.0.1:80, which line 2 already adds",
            "line 5: -a adds real server 10.0.1.1:80 to TCP 10.0.0.1:80, which line 4 already adds",
            "line 6: -e names real server 10.0.1.9:80 of TCP 10.0.0.1:80, which no earlier line adds",
            "line 7: -d names TCP 10.0.0.1:81, which no earlier line adds",
            "line 8: -Z names TCP 10.0.0.1:81, which no earlier line adds",
            "line 9: --set does not change the service table (a table is built from -A -E -D -a -e -d -C -Z only)",
            "line 10: --start-daemon does not change the service table (a table is built from -A -E -D -a -e -d -C -Z only)",
            "line 11: --stop-daemon does not change the service table (a table is built from -A -E -D -a -e -d -C -Z only)",
            "line 13: -d names TCP 10.0.0.1:80, which no earlier line adds",
        ]
    );
    // Deleting a service forgets its real servers: adding both again is fine.
    let again = "-A -t 10.0.0.1:80\n-a -t 10.0.0.1:80 -r 10.0.1.1\n-D -t 10.0.0.1:80\n-A -t 10.0.0.1:80\n-a -t 10.0.0.1:80 -r 10.0.1.1\n-d -t 10.0.0.1:80 -r 10.0.1.1\n-a -t 10.0.0.1:80 -r 10.0.1.1\n";
    let table = parse(again, &Numeric).unwrap().to_table().unwrap();
    assert_eq!(table.destination_count(), 1);
}

/// `ipvsadm -S -n` of the reference's basic.cfg, stats.cfg and flags.cfg.
#[test]
fn reads_what_ipvsadm_saves() {
    let basic = "\
-A -t 10.0.0.1:80 -s wlc
-a -t 10.0.0.1:80 -r 192.168.1.1:8080 -g -w 5
-a -t 10.0.0.1:80 -r 192.168.1.2:80 -m -w 1
-A -u 10.0.0.1:53 -s rr -o
-a -u 10.0.0.1:53 -r 192.168.1.3:53 -i -w 0 --tun-type ipip
-A -t [2001:db8::1]:443 -s wrr -p 300 -M 64 --pe sip
-a -t [2001:db8::1]:443 -r [2001:db8::a0a0]:443 -m -w 10
-A -f 5 -s sh -p 360 -M 255.255.255.0 -b sh-fallback,sh-port
-a -f 5 -r 192.168.1.9:0 -g -w 2
";
    let table = parse(basic, &Numeric).unwrap().to_table().unwrap();
    assert_eq!((table.len(), table.destination_count()), (4, 5));
    let mark = table
        .get(&ServiceKey::fwmark(5, AddressFamily::Inet))
        .unwrap();
    assert_eq!(mark.service.scheduler, Scheduler::SourceHashing);
    assert_eq!(mark.service.timeout, 360);
    assert_eq!(
        mark.service.flags,
        ServiceFlags::PERSISTENT | ServiceFlags::SH_FALLBACK | ServiceFlags::SH_PORT
    );
    let udp = table.get(&ServiceKey::udp(ip("10.0.0.1"), 53)).unwrap();
    let d = udp.destination(&ip("192.168.1.3"), 53).unwrap().destination;
    assert_eq!((d.forward, d.weight), (Forward::Tunnel(Tunnel::ipip()), 0));

    let stats = "\
-A -t 10.0.0.1:80 -s wlc
-a -t 10.0.0.1:80 -r 192.168.1.1:80 -m -w 1
-a -t 10.0.0.1:80 -r 192.168.1.2:80 -m -w 1
-A --sctp-service [2001:db8:abcd:1234:5678:9abc:def0:1234]:65535 -s mh -b mh-fallback,mh-port
-a --sctp-service [2001:db8:abcd:1234:5678:9abc:def0:1234]:65535 -r 10.9.9.7:65535 -g -w 3
-a --sctp-service [2001:db8:abcd:1234:5678:9abc:def0:1234]:65535 -r 10.9.9.8:65535 -i -w 3 --tun-type ipip
-a --sctp-service [2001:db8:abcd:1234:5678:9abc:def0:1234]:65535 -r 10.9.9.9:65535 -i -w 3 --tun-type gre --tun-remcsum
-a --sctp-service [2001:db8:abcd:1234:5678:9abc:def0:1234]:65535 -r [2001:db8:abcd:1234:5678:9abc:def0:fff1]:65535 -i -w 2147483647 --tun-type gue --tun-port 6080 --tun-csum
";
    // Line 5 (from a stand-in kernel) routes an IPv4 server of an IPv6
    // service directly, which a kernel refuses: only that line is bad.
    let e = parse(stats, &Numeric).unwrap_err();
    assert_eq!(
        e.to_string(),
        "line 5: invalid destination: IPv4 destination 10.9.9.7 on an IPv6 service needs tunnel forwarding"
    );
    let stats = stats.replace("10.9.9.7:65535 -g", "10.9.9.7:65535 -i");
    let rules = parse(&stats, &Numeric).unwrap();
    let Some((8, Request::AddDestination(_, d))) = rules.iter().last() else {
        panic!("last line is not an -a");
    };
    assert_eq!(d.weight, crate::WEIGHT_MAX);
    assert_eq!(
        d.forward,
        Forward::Tunnel(Tunnel::gue(6080).with_flags(TunnelFlags::CSUM))
    );
    assert_eq!(rules.to_table().unwrap().destination_count(), 6);

    // The `-b ` ipvsadm leaves for flags it cannot name, and `-p 0`.
    let flags = "\
-A -t 10.0.0.1:80 -s sh -b 
-A -t 10.0.0.2:80 -s rr -b flag-1,flag-3
-A -t 10.0.0.3:80 -s none
-A -t 10.0.0.4:80 -s wlc -p 0 -M 0.0.0.0 --pe sip
-A -u 10.0.0.5:0 -s wlc -p 100 --pe sip -o
-A -f 9 -6 -s wlc -p 20 -M 64
";
    let table = parse(flags, &Numeric).unwrap().to_table().unwrap();
    assert_eq!(table.len(), 6);
    let rr = table.get(&ServiceKey::tcp(ip("10.0.0.2"), 80)).unwrap();
    assert_eq!(
        rr.service.flags,
        ServiceFlags::SCHED1 | ServiceFlags::SCHED3
    );
    let p0 = table.get(&ServiceKey::tcp(ip("10.0.0.4"), 80)).unwrap();
    assert_eq!(p0.service.timeout, 0);
    assert_eq!(p0.service.netmask, Netmask::V4(Ipv4Addr::UNSPECIFIED));
}

/// `ipvsadm -S` without `-n` (the reference's names.cfg), read back
/// through a `Names` that knows those names.
#[test]
fn reads_a_named_save_through_names() {
    struct Local;
    impl crate::rules::Names for Local {
        fn host_v4(&self, name: &str) -> Option<Ipv4Addr> {
            (name == "localhost").then_some(Ipv4Addr::LOCALHOST)
        }
        fn port(&self, name: &str, protocol: &str) -> Option<u16> {
            match (name, protocol) {
                ("http", "tcp") => Some(80),
                ("https", "tcp") => Some(443),
                ("domain", "udp") => Some(53),
                _ => None,
            }
        }
    }
    let text = "\
-A -t localhost:http -s rr
-a -t localhost:http -r localhost:https -m -w 1
-a -t localhost:http -r localhost:12345 -m -w 1
-A -u localhost:domain -s rr
-a -u localhost:domain -r localhost:domain -m -w 1
-A --sctp-service localhost:80 -s rr
-a --sctp-service localhost:80 -r localhost:80 -m -w 1
";
    let table = parse(text, &Local).unwrap().to_table().unwrap();
    let lo = IpAddr::V4(Ipv4Addr::LOCALHOST);
    let http = table.get(&ServiceKey::tcp(lo, 80)).unwrap();
    assert!(http.destination(&lo, 443).is_some());
    assert!(http.destination(&lo, 12345).is_some());
    assert!(table
        .get(&ServiceKey::udp(lo, 53))
        .unwrap()
        .destination(&lo, 53)
        .is_some());
    assert_eq!(table.len(), 3);
    let e = parse(text, &Numeric).unwrap_err();
    assert_eq!(e.lines().len(), 7);
}

/// Odd input gives errors, never a panic.
#[test]
fn odd_input_does_not_panic() {
    let odd = [
        "-",
        "--",
        "---",
        "-=",
        "--=",
        "--set=",
        "-A -t [",
        "-A -t []:",
        "-A -t ]",
        "-A -t :",
        "-A -t :80",
        "-a -t 1.2.3.4:80 -r",
        "-A -t 1.2.3.4:80 -b ,",
        "-A -f -",
        "-A -f 0x",
        "-A -f -0",
        "\u{0}",
        "-A -t 1.2.3.4:80 -s \u{e9}\u{e9}\u{e9}\u{e9}\u{e9}\u{e9}\u{e9}\u{e9}",
        "-A -t \u{1F600}:80",
        "--start-daemon=",
        "--set 1 2 -3",
    ];
    for line in odd {
        assert!(parse_line(line, &Numeric).is_err(), "{line:?}");
    }
}
