//! Cross-check with Debian's ipvsadm in the same namespace: what the library
//! writes, `ipvsadm -S -n` reads back as expected; what ipvsadm writes, the
//! library lists as the same typed values.

use crate::common;

use std::net::{IpAddr, Ipv4Addr};

use common::*;
use ipvsnl::{
    AddressFamily, Client, DaemonRole, Destination, Forward, Netmask, Scheduler, Service,
    ServiceFlags, ServiceKey, SyncDaemon, Timeouts, Tunnel, TunnelFlags,
};

fn ip(s: &str) -> IpAddr {
    s.parse().unwrap()
}

fn sorted_lines(s: &str) -> Vec<String> {
    let mut v: Vec<String> = s.lines().map(str::to_owned).collect();
    v.sort();
    v
}

#[test]
#[ignore = "needs IPVS: runs in the VM via .ci/kernel-tests"]
fn what_the_library_writes_ipvsadm_saves() {
    fresh_netns();
    let mut c = Client::new().unwrap();
    let web = ServiceKey::tcp(ip("10.0.0.1"), 80);
    let dns = ServiceKey::udp(ip("10.0.0.1"), 53);
    let v6 = ServiceKey::tcp(ip("2001:db8::1"), 443);
    let mark = ServiceKey::fwmark(5, AddressFamily::Inet);
    let sctp = ServiceKey::sctp(ip("2001:db8:abcd:1234:5678:9abc:def0:1234"), 65535);
    let mark6 = ServiceKey::fwmark(9, AddressFamily::Inet6);
    let services = [
        Service::new(web).with_scheduler(Scheduler::RoundRobin),
        Service::new(dns)
            .with_scheduler(Scheduler::RoundRobin)
            .with_flags(ServiceFlags::ONE_PACKET),
        Service::new(v6)
            .with_scheduler(Scheduler::WeightedRoundRobin)
            .with_persistence(300)
            .with_netmask(Netmask::V6(64))
            .with_persistence_engine("sip"),
        Service::new(mark)
            .with_scheduler(Scheduler::SourceHashing)
            .with_persistence(360)
            .with_netmask(Netmask::V4(Ipv4Addr::new(255, 255, 255, 0)))
            .with_flags(ServiceFlags::SH_FALLBACK | ServiceFlags::SH_PORT),
        Service::new(sctp)
            .with_scheduler(Scheduler::Maglev)
            .with_flags(ServiceFlags::MH_FALLBACK | ServiceFlags::MH_PORT),
        Service::new(mark6)
            .with_persistence(20)
            .with_netmask(Netmask::V6(64)),
    ];
    for s in &services {
        c.add_service(s).unwrap();
    }
    let dests = [
        (web, Destination::new(ip("192.168.1.1"), 8080)),
        (
            web,
            Destination::new(ip("192.168.1.2"), 80)
                .with_forward(Forward::Route)
                .with_weight(5),
        ),
        (
            web,
            Destination::new(ip("192.168.1.4"), 80)
                .with_forward(Forward::Tunnel(Tunnel::gre().with_flags(TunnelFlags::CSUM)))
                .with_weight(2),
        ),
        (
            dns,
            Destination::new(ip("192.168.1.3"), 53)
                .with_forward(Forward::Tunnel(Tunnel::ipip()))
                .with_weight(0),
        ),
        (
            sctp,
            Destination::new(ip("2001:db8:abcd:1234:5678:9abc:def0:fff1"), 65535)
                .with_forward(Forward::Tunnel(
                    Tunnel::gue(6080).with_flags(TunnelFlags::CSUM),
                ))
                .with_weight(ipvsnl::WEIGHT_MAX),
        ),
        (
            v6,
            Destination::new(ip("2001:db8::5"), 443).with_forward(Forward::Tunnel(
                Tunnel::gue(6081).with_flags(TunnelFlags::REMCSUM),
            )),
        ),
        (
            mark,
            Destination::new(ip("192.168.2.1"), 0).with_forward(Forward::Route),
        ),
    ];
    for (k, d) in &dests {
        c.add_destination(k, d).unwrap();
    }
    let saved = ipvsadm_ok(&["-S", "-n"]);
    let want = "\
-A -t 10.0.0.1:80 -s rr
-a -t 10.0.0.1:80 -r 192.168.1.1:8080 -m -w 1
-a -t 10.0.0.1:80 -r 192.168.1.2:80 -g -w 5
-a -t 10.0.0.1:80 -r 192.168.1.4:80 -i -w 2 --tun-type gre --tun-csum
-A -u 10.0.0.1:53 -s rr -o
-a -u 10.0.0.1:53 -r 192.168.1.3:53 -i -w 0 --tun-type ipip
-A -t [2001:db8::1]:443 -s wrr -p 300 -M 64 --pe sip
-a -t [2001:db8::1]:443 -r [2001:db8::5]:443 -i -w 1 --tun-type gue --tun-port 6081 --tun-remcsum
-A -f 5 -s sh -p 360 -M 255.255.255.0 -b sh-fallback,sh-port
-a -f 5 -r 192.168.2.1:0 -g -w 1
-A --sctp-service [2001:db8:abcd:1234:5678:9abc:def0:1234]:65535 -s mh -b mh-fallback,mh-port
-a --sctp-service [2001:db8:abcd:1234:5678:9abc:def0:1234]:65535 -r [2001:db8:abcd:1234:5678:9abc:def0:fff1]:65535 -i -w 2147483647 --tun-type gue --tun-port 6080 --tun-csum
-A -f 9 -6 -s wlc -p 20 -M 64
";
    assert_eq!(
        sorted_lines(&saved),
        sorted_lines(want),
        "ipvsadm -S -n:\n{saved}"
    );

    // Timeouts and daemons read back by ipvsadm.
    c.set_timeouts(&Timeouts::new(1000, 60, 200)).unwrap();
    assert_eq!(
        ipvsadm_ok(&["-L", "--timeout"]),
        "Timeout (tcp tcpfin udp): 1000 60 200\n"
    );
    let d = SyncDaemon::new(DaemonRole::Master, "lo")
        .with_sync_id(42)
        .with_max_len(1200)
        .with_port(7000)
        .with_ttl(4)
        .with_group(ip("224.0.0.90"));
    c.start_sync_daemon(&d).unwrap();
    assert_eq!(
        ipvsadm_ok(&["-L", "--daemon"]),
        "master sync daemon (mcast=lo, syncid=42, maxlen=1200, group=224.0.0.90, port=7000, ttl=4)\n"
    );
    // Flush and zero through the library, seen by ipvsadm.
    c.zero(None).unwrap();
    c.flush().unwrap();
    assert_eq!(ipvsadm_ok(&["-S", "-n"]), "");
}

#[test]
#[ignore = "needs IPVS: runs in the VM via .ci/kernel-tests"]
fn what_ipvsadm_writes_the_library_lists() {
    fresh_netns();
    let cmds: &[&[&str]] = &[
        &[
            "-A",
            "-t",
            "10.0.0.1:80",
            "-s",
            "wrr",
            "-p",
            "600",
            "-M",
            "255.255.0.0",
        ],
        &[
            "-a",
            "-t",
            "10.0.0.1:80",
            "-r",
            "10.1.0.1:80",
            "-g",
            "-w",
            "3",
            "-x",
            "100",
            "-y",
            "10",
        ],
        &[
            "-a",
            "-t",
            "10.0.0.1:80",
            "-r",
            "10.1.0.2",
            "-i",
            "--tun-type",
            "gue",
            "--tun-port",
            "6080",
            "--tun-csum",
            "-w",
            "0",
        ],
        &[
            "-a",
            "-t",
            "10.0.0.1:80",
            "-r",
            "10.1.0.3:8080",
            "-m",
            "-x",
            "7",
        ],
        &[
            "-A",
            "-u",
            "[2001:db8::1]:53",
            "-s",
            "sh",
            "-b",
            "sh-fallback,sh-port",
            "-o",
        ],
        &[
            "-a",
            "-u",
            "[2001:db8::1]:53",
            "-r",
            "[2001:db8::2]:53",
            "-i",
            "--tun-type",
            "gre",
            "--tun-csum",
        ],
        &[
            "-A", "-f", "42", "-6", "-s", "mh", "-b", "mh-port", "-p", "30", "-M", "96",
        ],
        &["-a", "-f", "42", "-6", "-r", "2001:db8::7", "-g"],
        &[
            "-A",
            "-u",
            "10.0.0.5:5060",
            "-s",
            "rr",
            "-p",
            "60",
            "--pe",
            "sip",
        ],
        &["-A", "--sctp-service", "10.0.0.6:5000", "-s", "fo"],
        &[
            "-a",
            "--sctp-service",
            "10.0.0.6:5000",
            "-r",
            "10.1.0.9:5001",
            "-m",
            "-w",
            "100",
        ],
        &["--set", "10", "20", "30"],
        MASTER_DAEMON_EVERY_OPTION,
    ];
    for args in cmds {
        ipvsadm_ok(args);
    }
    let mut c = Client::new().unwrap();
    let web = ServiceKey::tcp(ip("10.0.0.1"), 80);
    let dns6 = ServiceKey::udp(ip("2001:db8::1"), 53);
    let mark = ServiceKey::fwmark(42, AddressFamily::Inet6);
    let sip = ServiceKey::udp(ip("10.0.0.5"), 5060);
    let sctp = ServiceKey::sctp(ip("10.0.0.6"), 5000);
    let mut want_services = vec![
        Service::new(web)
            .with_scheduler(Scheduler::WeightedRoundRobin)
            .with_persistence(600)
            .with_netmask(Netmask::V4(Ipv4Addr::new(255, 255, 0, 0))),
        Service::new(dns6)
            .with_scheduler(Scheduler::SourceHashing)
            .with_flags(
                ServiceFlags::SH_FALLBACK | ServiceFlags::SH_PORT | ServiceFlags::ONE_PACKET,
            ),
        Service::new(mark)
            .with_scheduler(Scheduler::Maglev)
            .with_flags(ServiceFlags::MH_PORT)
            .with_persistence(30)
            .with_netmask(Netmask::V6(96)),
        Service::new(sip)
            .with_scheduler(Scheduler::RoundRobin)
            .with_persistence(60)
            .with_persistence_engine("sip"),
        Service::new(sctp).with_scheduler(Scheduler::WeightedFailover),
    ];
    want_services.sort_by_key(|s| s.key);
    let mut got: Vec<Service> = c
        .services()
        .unwrap()
        .into_iter()
        .map(|e| e.service)
        .collect();
    got.sort_by_key(|s| s.key);
    assert_eq!(got, want_services);

    let mut want_web = vec![
        Destination::new(ip("10.1.0.1"), 80)
            .with_forward(Forward::Route)
            .with_weight(3)
            .with_thresholds(100, 10),
        Destination::new(ip("10.1.0.2"), 80)
            .with_forward(Forward::Tunnel(
                Tunnel::gue(6080).with_flags(TunnelFlags::CSUM),
            ))
            .with_weight(0),
        Destination::new(ip("10.1.0.3"), 8080).with_thresholds(7, 0),
    ];
    want_web.sort();
    let mut got_web = settings_of(&mut c, &web);
    got_web.sort();
    assert_eq!(got_web, want_web);
    let got = settings_of(&mut c, &dns6);
    assert_eq!(
        got,
        vec![Destination::new(ip("2001:db8::2"), 53)
            .with_forward(Forward::Tunnel(Tunnel::gre().with_flags(TunnelFlags::CSUM)))]
    );
    let got = settings_of(&mut c, &mark);
    assert_eq!(
        got,
        vec![Destination::new(ip("2001:db8::7"), 0).with_forward(Forward::Route)]
    );
    let got = settings_of(&mut c, &sctp);
    assert_eq!(
        got,
        vec![Destination::new(ip("10.1.0.9"), 5001).with_weight(100)]
    );
    assert!(c.destinations(&sip).unwrap().is_empty());

    assert_eq!(c.timeouts().unwrap(), Timeouts::new(10, 20, 30));
    let daemons = c.sync_daemons().unwrap();
    assert_eq!(
        daemons,
        vec![SyncDaemon::new(DaemonRole::Master, "lo")
            .with_sync_id(5)
            .with_max_len(1000)
            .with_group(ip("224.0.0.99"))
            .with_port(7777)
            .with_ttl(2)]
    );
    // ipvsadm deletes, the library sees it gone.
    ipvsadm_ok(&["-d", "-t", "10.0.0.1:80", "-r", "10.1.0.3:8080"]);
    assert_eq!(c.destinations(&web).unwrap().len(), 2);
    ipvsadm_ok(&["-D", "-f", "42", "-6"]);
    assert!(c.service(&mark).unwrap_err().is_not_found());
    ipvsadm_ok(&["--stop-daemon", "master"]);
    assert!(c.sync_daemons().unwrap().is_empty());
    ipvsadm_ok(&["-C"]);
    assert!(c.services().unwrap().is_empty());
}

/// The settings of a service's destinations, as listed.
fn settings_of(c: &mut Client, key: &ServiceKey) -> Vec<Destination> {
    c.destinations(key)
        .unwrap()
        .into_iter()
        .map(|d| d.destination)
        .collect()
}
