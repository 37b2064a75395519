//! Settings listings read IPv4 destinations through the socket-option
//! interface (`IP_VS_SO_GET_DESTS`) where it gives every field, netlink
//! elsewhere (issue 23). Judged against netlink alone
//! (`ClientOptions::with_socket_option_listing(false)`), field by field:
//! on random tables of every kind of service and destination, and under a
//! writer churning another namespace's services.

use crate::common;

use std::collections::HashMap;
use std::net::{IpAddr, Ipv4Addr};

use common::churn::Churn;
use common::serial;
use common::*;
use ipvsnl::{
    AddressFamily, AsyncClient, Client, ClientOptions, Destination, Forward, Netmask, Request,
    Scheduler, Service, ServiceEntry, ServiceKey, Tunnel, TunnelFlags,
};

/// A small xorshift generator: the tables are random, their seed printed
/// (and taken from `IPVSNL_SEED` when set), so a failure can be replayed.
struct Rng(u64);

impl Rng {
    fn seeded() -> Self {
        let seed = std::env::var("IPVSNL_SEED")
            .ok()
            .and_then(|s| s.parse().ok())
            .unwrap_or_else(|| {
                let t = std::time::SystemTime::now()
                    .duration_since(std::time::UNIX_EPOCH)
                    .unwrap();
                t.as_nanos() as u64 | 1
            });
        eprintln!("seed: IPVSNL_SEED={seed}");
        Rng(seed)
    }

    fn below(&mut self, n: u64) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0 % n
    }

    fn one_in(&mut self, n: u64) -> bool {
        self.below(n) == 0
    }
}

fn v4(a: u8, b: u8, c: u8, d: u8) -> IpAddr {
    IpAddr::V4(Ipv4Addr::new(a, b, c, d))
}

fn v6(hi: u16, i: u16, j: u16) -> IpAddr {
    format!("fd00::{hi:x}:{i:x}:{j:x}").parse().unwrap()
}

/// Service `i` of a random kind: TCP, UDP or SCTP over IPv4, TCP over
/// IPv6, a firewall mark of either family.
fn random_key(rng: &mut Rng, i: u16) -> ServiceKey {
    let [hi, lo] = i.to_be_bytes();
    match rng.below(6) {
        0 => ServiceKey::tcp(v4(10, 10, hi, lo), 80),
        1 => ServiceKey::udp(v4(10, 11, hi, lo), 53),
        2 => ServiceKey::sctp(v4(10, 12, hi, lo), 9000),
        3 => ServiceKey::tcp(v6(0x10, i, 1), 443),
        4 => ServiceKey::fwmark(1000 + u32::from(i), AddressFamily::Inet),
        _ => ServiceKey::fwmark(100_000 + u32::from(i), AddressFamily::Inet6),
    }
}

fn random_service(rng: &mut Rng, key: ServiceKey) -> Service {
    let schedulers = [
        Scheduler::RoundRobin,
        Scheduler::WeightedRoundRobin,
        Scheduler::WeightedLeastConnection,
        Scheduler::SourceHashing,
        Scheduler::Maglev,
    ];
    let mut s = Service::new(key).with_scheduler(schedulers[rng.below(5) as usize].clone());
    if rng.one_in(3) {
        s = s.with_persistence(1 + rng.below(600) as u32);
        if key.family() == AddressFamily::Inet && rng.one_in(2) {
            s = s.with_netmask(Netmask::V4(Ipv4Addr::new(255, 255, 255, 0)));
        }
        if rng.one_in(2) {
            s = s.with_persistence_engine("sip");
        }
    }
    s
}

/// A random forwarding method, every tunnel kind with ports and flags.
fn random_forward(rng: &mut Rng) -> Forward {
    match rng.below(9) {
        0 | 1 => Forward::Masquerade,
        2 => Forward::Local,
        3 => Forward::Route,
        4 => Forward::Bypass,
        5 => Forward::Tunnel(Tunnel::ipip()),
        6 => Forward::Tunnel(Tunnel::gue(6000 + rng.below(100) as u16)),
        7 => Forward::Tunnel(Tunnel::gue(6080).with_flags(TunnelFlags::REMCSUM)),
        _ => Forward::Tunnel(Tunnel::gre().with_flags(TunnelFlags::CSUM)),
    }
}

/// Destination `j` of service `i`: of the service's family, or (one in
/// six) of the other one behind a tunnel (the kernel takes no other);
/// weights from 0, thresholds one in three.
fn random_destination(rng: &mut Rng, key: &ServiceKey, i: u16, j: u8) -> Destination {
    let mut family = key.family();
    let mut forward = random_forward(rng);
    if rng.one_in(6) {
        family = match family {
            AddressFamily::Inet => AddressFamily::Inet6,
            _ => AddressFamily::Inet,
        };
        forward = Forward::Tunnel(Tunnel::ipip());
    }
    let [hi, lo] = i.to_be_bytes();
    let addr = match family {
        AddressFamily::Inet => v4(10, 20 + hi, lo, j + 1),
        _ => v6(0x20, i, u16::from(j) + 1),
    };
    let mut d = Destination::new(addr, 8000 + u16::from(j))
        .with_forward(forward)
        .with_weight(rng.below(4) as u32);
    if rng.one_in(3) {
        let upper = 10 + rng.below(1000) as u32;
        d = d.with_thresholds(upper, rng.below(u64::from(upper)) as u32);
    }
    d
}

/// Creates `n` random services of up to six destinations each.
fn random_table(rng: &mut Rng, c: &mut Client, n: u16) {
    let mut requests = Vec::new();
    for i in 0..n {
        let key = random_key(rng, i);
        requests.push(Request::add_service(random_service(rng, key)));
        for j in 0..rng.below(7) as u8 {
            let d = random_destination(rng, &key, i, j);
            requests.push(Request::AddDestination(key, d));
        }
    }
    for (r, outcome) in requests.iter().zip(c.apply(&requests)) {
        outcome.unwrap_or_else(|e| panic!("{r:?}: {e}"));
    }
}

fn netlink_only() -> Client {
    Client::with_options(ClientOptions::default().with_socket_option_listing(false)).unwrap()
}

/// Panics, naming the first service that differs, unless the two listings
/// hold the same services, each equal field by field (its destinations in
/// the same order). The services' order is not compared: those a listing's
/// check found after a dump skipped them (the other test's writer makes
/// dumps skip) come last.
fn assert_same(how: &str, got: &[ServiceEntry], want: &[ServiceEntry]) {
    let by_key: HashMap<ServiceKey, &ServiceEntry> = got.iter().map(|s| (*s.key(), s)).collect();
    assert_eq!(by_key.len(), got.len(), "{how}: a service listed twice");
    for w in want {
        let g = by_key
            .get(w.key())
            .unwrap_or_else(|| panic!("{how}: service {} missing", w.key()));
        assert_eq!(*g, w, "{how}: service {} differs", w.key());
    }
    assert_eq!(got.len(), want.len(), "{how}: services listed");
}

#[test]
#[ignore = "needs IPVS: runs in the VM via .ci/kernel-tests"]
fn settings_listings_equal_netlink_field_by_field_on_random_tables() {
    // Not beside the other test's writer: the first listing of a new
    // client may miss an IPv6 service every dump of it skipped (documented
    // at `Client::table`), and these clients are new.
    let _turn = serial(&CHURN);
    let mut rng = Rng::seeded();
    for round in 0..4 {
        fresh_netns();
        let mut c = Client::new().unwrap();
        random_table(&mut rng, &mut c, 150);
        let want = netlink_only().table_settings().unwrap();
        assert_same(
            &format!("round {round}"),
            &c.table_settings().unwrap(),
            &want,
        );
        let tunnelled_v4 = want
            .iter()
            .filter(|s| s.key().family() == AddressFamily::Inet)
            .filter(|s| {
                s.destinations
                    .iter()
                    .any(|d| matches!(d.destination.forward, Forward::Tunnel(_)))
            })
            .count();
        assert!(tunnelled_v4 > 0, "round {round}: no tunnel to fall back on");
        // The settings of `table` are those of the settings listing.
        let mut full = netlink_only().table().unwrap();
        for s in &mut full {
            s.stats = Default::default();
            for d in &mut s.destinations {
                d.stats = Default::default();
            }
        }
        assert_same(&format!("round {round}: table"), &full, &want);
        // The async client takes the same paths, inline.
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        let by_async = rt.block_on(async {
            let mut a = AsyncClient::new().unwrap();
            a.table_settings().await.unwrap()
        });
        assert_same(&format!("round {round}: async"), &by_async, &want);
    }
}

/// 200 IPv4 and 20 IPv6 services of two destinations each, one of them
/// (every fifth service) a tunnel to the other family; returns nothing:
/// the caller lists what is there.
fn steady_table(c: &mut Client) {
    let mut requests = Vec::new();
    for i in 0..220u16 {
        let [hi, lo] = i.to_be_bytes();
        let key = if i < 200 {
            ServiceKey::tcp(v4(10, 30, hi, lo), 80)
        } else {
            ServiceKey::tcp(v6(0x30, i, 1), 80)
        };
        requests.push(Request::add_service(Service::new(key)));
        for j in 0..2u8 {
            let other = i % 5 == 0 && j == 1;
            let d = match (key.family() == AddressFamily::Inet) != other {
                true => Destination::new(v4(10, 40 + hi, lo, j + 1), 80),
                false => Destination::new(v6(0x40, i, u16::from(j) + 1), 80),
            };
            let d = match other {
                true => d.with_forward(Forward::Tunnel(Tunnel::ipip())),
                false => d.with_weight(u32::from(j)),
            };
            requests.push(Request::AddDestination(key, d));
        }
    }
    assert!(c.apply(&requests).iter().all(Result::is_ok), "fill");
}

#[test]
#[ignore = "needs IPVS: runs in the VM via .ci/kernel-tests"]
fn settings_listings_stay_whole_while_another_namespace_churns() {
    let _turn = serial(&CHURN);
    fresh_netns();
    let mut c = Client::new().unwrap();
    steady_table(&mut c);
    // A listing before the churn: from then on the client remembers the
    // IPv6 services, which no snapshot vouches for (see `Client::table`).
    c.table_settings().unwrap();
    let want: HashMap<ServiceKey, ServiceEntry> = netlink_only()
        .table_settings()
        .unwrap()
        .into_iter()
        .map(|s| (*s.key(), s))
        .collect();
    assert_eq!(want.len(), 220);
    let churn = Churn::start();
    for i in 0..60 {
        let got = c.table_settings().unwrap();
        assert_eq!(got.len(), want.len(), "listing {i}: services listed");
        for s in &got {
            let w = want.get(s.key()).unwrap_or_else(|| panic!("{}", s.key()));
            assert_eq!(s, w, "listing {i}: service {}", s.key());
        }
    }
    let rounds = churn.stop();
    eprintln!("the writer made {rounds} rounds");
}

/// The tests here take turns: one churns the kernel's service tables, the
/// other wants them still.
static CHURN: std::sync::Mutex<()> = std::sync::Mutex::new(());
