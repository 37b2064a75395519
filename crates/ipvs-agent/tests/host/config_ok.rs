//! Valid files: the example is accepted and maps onto the library's
//! types as it says; defaults, inheritance of a service's check; one error
//! anywhere and nothing is accepted.

use std::net::IpAddr;
use std::path::Path;
use std::time::Duration;

use ipvs_agent::config::{load, parse_str, Below, CheckKind, Config, LoadError, StartState};
use ipvsnl::{
    AddressFamily, Forward, Netmask, Scheduler, ServiceFlags, ServiceKey, Tunnel, TunnelFlags,
};

const EXAMPLE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/examples/agent.toml");

fn example() -> Config {
    load(Path::new(EXAMPLE)).unwrap_or_else(|e| panic!("{e}"))
}

fn ip(s: &str) -> IpAddr {
    s.parse().unwrap()
}

#[test]
fn the_example_is_accepted_and_maps_onto_the_librarys_types() {
    let c = example();
    assert_eq!(c.agent.resync, Duration::from_secs(30));
    assert_eq!(c.agent.drain_max, Duration::from_secs(300));
    assert_eq!(c.agent.start_wait, Duration::from_secs(3));
    assert_eq!(c.services.len(), 4);

    let web = &c.services[0];
    assert_eq!(web.name.as_deref(), Some("web"));
    assert_eq!(web.service.key, ServiceKey::tcp(ip("192.0.2.10"), 80));
    assert_eq!(web.service.scheduler, Scheduler::WeightedRoundRobin);
    assert_eq!(web.quorum.min_weight, 20);
    assert_eq!(web.quorum.below, Below::Keep);
    let sorry = web.sorry.unwrap();
    assert_eq!(
        (sorry.addr, sorry.port, sorry.weight),
        (ip("10.0.9.1"), 8080, 1)
    );
    let weights: Vec<u32> = web.servers.iter().map(|s| s.destination.weight).collect();
    assert_eq!(weights, [10, 10, 20]);
    let d2 = &web.servers[1].destination;
    assert_eq!((d2.upper_threshold, d2.lower_threshold), (1000, 800));
    assert_eq!(d2.forward, Forward::Masquerade);
    // The service's check, inherited.
    let check = web.servers[0].check.as_ref().unwrap();
    assert_eq!(check.interval, Duration::from_secs(2));
    assert_eq!(check.timeout, Duration::from_secs(1));
    assert_eq!(check.jitter, Duration::from_millis(200));
    assert_eq!(
        (check.rise, check.fall, check.start),
        (2, 3, StartState::Up)
    );
    let CheckKind::Http(h) = &check.kind else {
        panic!("{check:?}")
    };
    assert_eq!(h.tls, None);
    assert_eq!((h.path.as_str(), h.status), ("/healthz", 200));
    assert_eq!(h.body_contains.as_deref(), Some("ok"));
    // The third server's own check, started down.
    let own = web.servers[2].check.as_ref().unwrap();
    assert_eq!((own.rise, own.fall, own.start), (3, 2, StartState::Down));
    assert_eq!(own.timeout, Duration::from_secs(3));

    let tls = &c.services[1];
    assert_eq!(tls.service.scheduler, Scheduler::SourceHashing);
    assert!(tls
        .service
        .flags
        .contains(ServiceFlags::PERSISTENT | ServiceFlags::SH_PORT));
    assert_eq!(tls.service.timeout, 300);
    assert_eq!(
        tls.service.netmask,
        Netmask::V4("255.255.255.0".parse().unwrap())
    );
    assert!(tls.remove_after_drain);
    // A server without a port takes the service's.
    assert_eq!(tls.servers[0].destination.port, 443);
    assert_eq!(tls.servers[0].destination.forward, Forward::Route);
    let CheckKind::Http(h) = &tls.servers[0].check.as_ref().unwrap().kind else {
        panic!()
    };
    assert_eq!(h.tls.map(|t| t.verify), Some(false));

    let dns = &c.services[2];
    assert_eq!(dns.service.key, ServiceKey::udp(ip("2001:db8::53"), 53));
    assert!(dns.service.flags.contains(ServiceFlags::ONE_PACKET));
    assert_eq!(dns.quorum.below, Below::Withdraw);
    assert_eq!(
        dns.servers[2].destination.forward,
        Forward::Tunnel(Tunnel::gue(6080).with_flags(TunnelFlags::CSUM))
    );
    let CheckKind::Dns(q) = &dns.servers[0].check.as_ref().unwrap().kind else {
        panic!()
    };
    assert_eq!(
        (q.name.as_str(), q.qtype, q.rcode, q.port),
        ("health.example.", 1, 0, None)
    );

    let marked = &c.services[3];
    assert_eq!(
        marked.service.key,
        ServiceKey::fwmark(7, AddressFamily::Inet)
    );
    assert!(marked.service.flags.contains(ServiceFlags::MH_FALLBACK));
    // A firewall-mark service's servers default to port 0.
    assert_eq!(marked.servers[0].destination.port, 0);
    assert_eq!(
        marked.servers[1].destination.forward,
        Forward::Tunnel(Tunnel::gre())
    );
    assert!(matches!(
        &marked.servers[0].check.as_ref().unwrap().kind,
        CheckKind::Command { argv } if argv[0] == "/usr/local/bin/check-backend"
    ));
    assert!(matches!(
        marked.servers[1].check.as_ref().unwrap().kind,
        CheckKind::Tcp { port: Some(22) }
    ));
    // Every service and server is one the library itself accepts.
    for vs in &c.services {
        vs.service.validate().unwrap();
        for s in &vs.servers {
            s.destination.validate_for(&vs.service.key).unwrap();
        }
    }
}

#[test]
fn a_minimal_service_takes_the_documented_defaults() {
    let c = parse_str(
        "m.toml",
        "[[service]]\nprotocol = \"sctp\"\naddress = \"192.0.2.1\"\nport = 9\n\
         [[service.server]]\naddress = \"10.0.0.1\"\n",
    )
    .unwrap();
    let vs = &c.services[0];
    assert_eq!(vs.service.scheduler, Scheduler::WeightedLeastConnection);
    assert_eq!(vs.service.flags, ServiceFlags::empty());
    assert_eq!(vs.quorum.min_weight, 1);
    assert_eq!(vs.quorum.below, Below::Keep);
    assert!(vs.sorry.is_none() && !vs.remove_after_drain);
    let d = vs.servers[0].destination;
    assert_eq!((d.port, d.weight, d.forward), (9, 1, Forward::Masquerade));
    assert!(vs.servers[0].check.is_none());
}

#[test]
fn a_check_with_only_its_kind_takes_the_documented_defaults() {
    let c = parse_str(
        "m.toml",
        "[[service]]\nprotocol = \"tcp\"\naddress = \"192.0.2.1\"\nport = 443\n\
         [[service.server]]\naddress = \"10.0.0.1\"\ncheck = { kind = \"https\" }\n",
    )
    .unwrap();
    let check = c.services[0].servers[0].check.clone().unwrap();
    assert_eq!(check.interval, Duration::from_secs(2));
    assert_eq!(check.timeout, Duration::from_secs(1));
    assert_eq!(check.jitter, Duration::ZERO);
    assert_eq!(
        (check.rise, check.fall, check.start),
        (2, 3, StartState::Up)
    );
    let CheckKind::Http(h) = check.kind else {
        panic!()
    };
    assert_eq!(h.tls.map(|t| t.verify), Some(true));
    assert_eq!((h.path.as_str(), h.status, h.port), ("/", 200, None));
}

#[test]
fn one_error_anywhere_and_nothing_is_accepted() {
    let good = std::fs::read_to_string(EXAMPLE).unwrap();
    let bad = format!("{good}\n[[service.server]]\naddress = \"10.0.1.3\"\nweight = -5\n");
    let e = parse_str("agent.toml", &bad).unwrap_err();
    assert_eq!(e.len(), 1, "{e}");
    let line = good.lines().count() + 4;
    assert_eq!(
        e.to_string(),
        format!("agent.toml:{line}:10: `weight` must be an integer from 0 to 2147483647, found -5")
    );
}

#[test]
fn a_file_that_cannot_be_read_says_so() {
    let e = load(Path::new("/nonexistent/agent.toml")).unwrap_err();
    assert!(matches!(e, LoadError::Read { .. }));
    assert!(
        e.to_string()
            .starts_with("/nonexistent/agent.toml: cannot read: "),
        "{e}"
    );
}

#[test]
fn start_wait_defaults_to_3s_and_may_be_0() {
    let server = "[[service]]\nprotocol = \"tcp\"\naddress = \"192.0.2.1\"\nport = 80\n\
                  [[service.server]]\naddress = \"10.0.0.1\"\n";
    let c = parse_str("t.toml", server).unwrap();
    assert_eq!(c.agent.start_wait, Duration::from_secs(3));
    for (text, want) in [("0s", 0), ("500ms", 500), ("1m", 60_000)] {
        let file = format!("[agent]\nstart_wait = \"{text}\"\n{server}");
        let c = parse_str("t.toml", &file).unwrap();
        assert_eq!(c.agent.start_wait, Duration::from_millis(want));
    }
}
