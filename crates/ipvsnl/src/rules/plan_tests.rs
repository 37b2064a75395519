//! Unit tests of the dry run: a plan printed by the rules printer of
//! `ipvsadm -S`.

use std::net::IpAddr;
use std::time::Instant;

use crate::rules::{destination_rule, request_rule, service_rule, Numeric};
use crate::sync::{plan, DrainLedger, Plan, PlanOptions, Table};
use crate::{
    Destination, Forward, Netmask, Request, Scheduler, Service, ServiceFlags, ServiceKey, Tunnel,
    TunnelFlags,
};

fn ip(s: &str) -> IpAddr {
    s.parse().unwrap()
}

fn key(i: u32) -> ServiceKey {
    ServiceKey::tcp(IpAddr::from([10, 0, (i >> 8) as u8, i as u8]), 80)
}

fn run(cur: &Table, want: &Table, opts: &PlanOptions) -> Plan {
    plan(cur, want, opts, &DrainLedger::new(), Instant::now())
}

#[test]
fn rules_cover_every_service_form() {
    let v6 = ServiceKey::tcp(ip("2001:db8::1"), 443);
    let fw = ServiceKey::fwmark(5, crate::AddressFamily::Inet);
    let sctp = ServiceKey::sctp(ip("10.0.0.9"), 9);
    let reqs = [
        Request::AddService(Box::new(
            Service::new(v6)
                .with_scheduler(Scheduler::WeightedRoundRobin)
                .with_persistence(300)
                .with_netmask(Netmask::V6(64))
                .with_persistence_engine("sip"),
        )),
        Request::AddService(Box::new(
            Service::new(fw)
                .with_scheduler(Scheduler::SourceHashing)
                .with_persistence(360)
                .with_netmask(Netmask::V4("255.255.255.0".parse().unwrap()))
                .with_flags(ServiceFlags::SH_FALLBACK | ServiceFlags::SH_PORT),
        )),
        Request::AddService(Box::new(
            Service::new(sctp).with_flags(ServiceFlags::ONE_PACKET),
        )),
        Request::AddDestination(
            v6,
            Destination::new(ip("2001:db8::5"), 443).with_forward(Forward::Route),
        ),
        Request::AddDestination(
            fw,
            Destination::new(ip("10.1.1.1"), 0).with_forward(Forward::Tunnel(Tunnel::ipip())),
        ),
        Request::DeleteDestination(v6, ip("2001:db8::5"), 443),
        Request::DeleteService(fw),
    ];
    assert_eq!(
        reqs.iter()
            .map(|r| request_rule(r, &Numeric) + "\n")
            .collect::<String>(),
        "-A -t [2001:db8::1]:443 -s wrr -p 300 -M 64 --pe sip\n\
         -A -f 5 -s sh -p 360 -M 255.255.255.0 -b sh-fallback,sh-port\n\
         -A --sctp-service 10.0.0.9:9 -s wlc -o\n\
         -a -t [2001:db8::1]:443 -r [2001:db8::5]:443 -g -w 1\n\
         -a -f 5 -r 10.1.1.1:0 -i -w 1 --tun-type ipip\n\
         -d -t [2001:db8::1]:443 -r [2001:db8::5]:443\n\
         -D -f 5\n"
    );
}

/// The dry run prints each request with the rules printer of `ipvsadm -S`
/// (`crate::rules`): a fwmark above 2^31 (negative, as ipvsadm prints it),
/// thresholds (not part of a rule), an unknown tunnel kind (no
/// `--tun-type`) and scheduler flag 3 (unnamed for sh and mh).
#[test]
fn dry_run_prints_what_save_prints() {
    use crate::{AddressFamily, TunnelKind};

    let fw = ServiceKey::fwmark(3_000_000_000, AddressFamily::Inet);
    let sh = key(1);
    let mh = ServiceKey::udp(ip("10.0.0.9"), 53);
    let odd_tunnel = Tunnel {
        kind: TunnelKind::from_raw(7),
        port: 0,
        flags: TunnelFlags::CSUM,
    };
    let mut want = Table::new();
    want.insert(
        Service::new(fw)
            .with_scheduler(Scheduler::RoundRobin)
            .with_flags(ServiceFlags::SCHED1 | ServiceFlags::SCHED3),
        [
            Destination::new(ip("10.0.1.1"), 0).with_thresholds(100, 10),
            Destination::new(ip("10.0.1.2"), 0).with_forward(Forward::Tunnel(odd_tunnel)),
        ],
    );
    want.insert(
        Service::new(sh)
            .with_scheduler(Scheduler::SourceHashing)
            .with_flags(ServiceFlags::SCHED3),
        [
            Destination::new(ip("10.0.1.3"), 80).with_forward(Forward::Tunnel(
                Tunnel::gue(6080).with_flags(TunnelFlags::CSUM),
            )),
        ],
    );
    want.insert(
        Service::new(mh)
            .with_scheduler(Scheduler::Maglev)
            .with_flags(ServiceFlags::SCHED1 | ServiceFlags::SCHED2 | ServiceFlags::SCHED3),
        [Destination::new(ip("10.0.1.4"), 53).with_thresholds(5, 0)],
    );
    // Edits: the same services with other settings in the current table.
    let mut cur = Table::new();
    for s in want.iter() {
        let mut svc = s.service.clone();
        svc.flags = ServiceFlags::empty();
        cur.insert(
            svc,
            s.destinations.iter().map(|d| d.destination.with_weight(9)),
        );
    }

    for (current, add, edit) in [(&Table::new(), "-A ", "-a "), (&cur, "-E ", "-e ")] {
        let p = run(current, &want, &PlanOptions::default());
        let printed = p.to_string();
        let mut saved = String::new();
        for r in p.requests() {
            let line = match r {
                Request::AddService(s) | Request::EditService(s) => {
                    service_rule(s, &Numeric).replacen("-A ", add, 1)
                }
                Request::AddDestination(k, d) | Request::EditDestination(k, d) => {
                    destination_rule(k, d, &Numeric).replacen("-a ", edit, 1)
                }
                other => panic!("unexpected {other:?}"),
            };
            saved.push_str(&line);
            saved.push('\n');
        }
        assert_eq!(p.len(), 7);
        assert_eq!(printed, saved);
    }

    // The exact text of a few of them.
    let p = run(&Table::new(), &want, &PlanOptions::default());
    let text = p.to_rules();
    let lines: Vec<&str> = text.lines().collect();
    for expected in [
        "-A -f -1294967296 -s rr -b flag-1,flag-3",
        "-a -f -1294967296 -r 10.0.1.1:0 -m -w 1",
        "-a -f -1294967296 -r 10.0.1.2:0 -i -w 1",
        "-A -t 10.0.0.1:80 -s sh -b ",
        "-a -t 10.0.0.1:80 -r 10.0.1.3:80 -i -w 1 --tun-type gue --tun-port 6080 --tun-csum",
        "-A -u 10.0.0.9:53 -s mh -b mh-fallback,mh-port",
        "-a -u 10.0.0.9:53 -r 10.0.1.4:53 -m -w 1",
    ] {
        assert!(lines.contains(&expected), "{expected:?} not in\n{text}");
    }
    assert_eq!(
        request_rule(&Request::DeleteService(fw), &Numeric),
        "-D -f -1294967296",
        "deletes name the service as save does"
    );
    assert_eq!(
        request_rule(
            &Request::DeleteDestination(mh, ip("10.0.1.4"), 53),
            &Numeric
        ),
        "-d -u 10.0.0.9:53 -r 10.0.1.4:53"
    );
}
