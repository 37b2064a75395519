//! The operation suite of `tests/kernel_operations.rs` (the workspace's
//! kernel tests, run in the VM), run on both clients against the emulated
//! kernel on the host, without root: each body is the kernel test's,
//! word for word but for the harness (a kernel per test instead of a
//! fresh namespace). `<body>::blocking` and `<body>::tokio`.

#![allow(async_fn_in_trait)]

use std::net::IpAddr;
use std::ops::ControlFlow;

use ipvsnl::emulator::Kernel;
use ipvsnl::sync::{PlanOptions, Report, Scope, Syncer, Table};
use ipvsnl::{
    AddressFamily, AsyncClient, Client, DaemonRole, Destination, Error, Forward, Operations,
    Request, Scheduler, Service, ServiceEntry, ServiceFlags, ServiceKey, SyncDaemon, Timeouts,
    Tunnel,
};

/// A client's operations, and the sync engine run on it (as
/// tests/common/ops.rs).
trait Ops: Operations {
    const NAME: &'static str;
    async fn sync(&mut self, s: &mut Syncer, t: &Table) -> Result<Report, Error>;
    async fn sync_cached(&mut self, s: &mut Syncer, t: &Table) -> Result<Report, Error>;
    async fn list(&mut self, s: &Syncer) -> Result<Table, Error>;
}

impl Ops for Client {
    const NAME: &'static str = "blocking";
    async fn sync(&mut self, s: &mut Syncer, t: &Table) -> Result<Report, Error> {
        s.sync(self, t)
    }
    async fn sync_cached(&mut self, s: &mut Syncer, t: &Table) -> Result<Report, Error> {
        s.sync_cached(self, t)
    }
    async fn list(&mut self, s: &Syncer) -> Result<Table, Error> {
        s.list(self)
    }
}

impl Ops for AsyncClient {
    const NAME: &'static str = "tokio";
    async fn sync(&mut self, s: &mut Syncer, t: &Table) -> Result<Report, Error> {
        s.sync_async(self, t).await
    }
    async fn sync_cached(&mut self, s: &mut Syncer, t: &Table) -> Result<Report, Error> {
        s.sync_cached_async(self, t).await
    }
    async fn list(&mut self, s: &Syncer) -> Result<Table, Error> {
        s.list_async(self).await
    }
}

/// The keys `for_each_service` visits, stopping after `stop_after`.
async fn visit_keys(c: &mut impl Operations, stop_after: usize) -> Result<Vec<ServiceKey>, Error> {
    let mut out = Vec::new();
    c.for_each_service(|e: &ServiceEntry| {
        out.push(*e.key());
        if out.len() >= stop_after {
            ControlFlow::Break(())
        } else {
            ControlFlow::Continue(())
        }
    })
    .await?;
    Ok(out)
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a tokio runtime")
}

/// For each async body, `<body>::blocking` and `<body>::tokio`, each on a
/// kernel of its own.
macro_rules! both {
    ($($body:ident),* $(,)?) => {$(
        mod $body {
            #[test]
            fn blocking() {
                let kernel = super::Kernel::new();
                let mut c = ipvsnl::Client::emulated(&kernel);
                super::runtime().block_on(super::$body(&mut c));
            }

            #[test]
            fn tokio() {
                let kernel = super::Kernel::new();
                super::runtime().block_on(async {
                    let mut c = ipvsnl::AsyncClient::emulated(&kernel);
                    super::$body(&mut c).await
                });
            }
        }
    )*};
}

fn ip(s: &str) -> IpAddr {
    s.parse().unwrap()
}

/// Every kind of key (the test-support crate's `every_kind_of_key`).
fn keys() -> Vec<ServiceKey> {
    vec![
        ServiceKey::tcp(ip("10.0.0.1"), 80),
        ServiceKey::udp(ip("10.0.0.1"), 53),
        ServiceKey::sctp(ip("10.0.0.1"), 9000),
        ServiceKey::tcp(ip("2001:db8::1"), 443),
        ServiceKey::udp(ip("2001:db8::1"), 53),
        ServiceKey::sctp(ip("2001:db8::1"), 65535),
        ServiceKey::tcp(ip("10.0.0.2"), 0),
        ServiceKey::fwmark(1, AddressFamily::Inet),
        ServiceKey::fwmark(1, AddressFamily::Inet6),
        ServiceKey::fwmark(u32::MAX, AddressFamily::Inet),
    ]
}

/// A listing taken again until it has `$n` entries (kept from the kernel
/// suite: one emulated namespace never skips, so the first is whole).
macro_rules! whole {
    ($n:expr, $list:expr) => {{
        let got = $list;
        assert_eq!(got.len(), $n);
        got
    }};
}

both!(
    services_every_kind,
    destinations_every_forwarding_method,
    errors_keep_their_meaning,
    pipelined_apply_reports_each_request,
    listings_agree,
    config_info_and_totals,
    sync_daemons_start_list_stop,
    sync_engine_converges_and_caches,
);

async fn services_every_kind(c: &mut impl Ops) {
    assert!(c.family_id().await.unwrap() >= 0x10);
    assert!(c.services().await.unwrap().is_empty());
    let schedulers = [
        Scheduler::RoundRobin,
        Scheduler::WeightedRoundRobin,
        Scheduler::WeightedLeastConnection,
        Scheduler::SourceHashing,
    ];
    let mut want = Vec::new();
    for (i, k) in keys().into_iter().enumerate() {
        let s = Service::new(k).with_scheduler(schedulers[i % schedulers.len()].clone());
        c.add_service(&s)
            .await
            .unwrap_or_else(|e| panic!("add {k}: {e}"));
        want.push(s);
    }
    let mut listed: Vec<Service> = c
        .services()
        .await
        .unwrap()
        .into_iter()
        .map(|e| e.service)
        .collect();
    listed.sort_by_key(|s| s.key);
    want.sort_by_key(|s| s.key);
    assert_eq!(listed, want, "{}", C::name(c));
    // Edit: persistence and flags; read back one by one.
    for s in &mut want {
        *s = s
            .clone()
            .with_persistence(300)
            .with_flags(ServiceFlags::PERSISTENT);
        c.edit_service(s).await.unwrap();
        assert_eq!(&c.service(&s.key).await.unwrap().service, s);
    }
    for s in &want {
        c.delete_service(&s.key).await.unwrap();
        assert!(c.service(&s.key).await.unwrap_err().is_not_found());
    }
    assert!(c.services().await.unwrap().is_empty());
}

/// `C::name(c)`: the client's name, for messages.
trait Named {
    fn name(&self) -> &'static str;
}
impl<T: Ops> Named for T {
    fn name(&self) -> &'static str {
        T::NAME
    }
}
use Named as C;

async fn destinations_every_forwarding_method(c: &mut impl Ops) {
    let svc = ServiceKey::tcp(ip("10.0.0.1"), 80);
    c.add_service(&Service::new(svc)).await.unwrap();
    let dests = [
        Destination::new(ip("10.1.0.1"), 80),
        Destination::new(ip("10.1.0.2"), 80).with_forward(Forward::Route),
        Destination::new(ip("10.1.0.3"), 80).with_forward(Forward::Tunnel(Tunnel::ipip())),
        Destination::new(ip("10.1.0.4"), 80)
            .with_forward(Forward::Tunnel(Tunnel::gre()))
            .with_weight(7)
            .with_thresholds(100, 10),
    ];
    for d in &dests {
        c.add_destination(&svc, d)
            .await
            .unwrap_or_else(|e| panic!("{}: {e}", d.addr));
    }
    let mut listed: Vec<Destination> = c
        .destinations(&svc)
        .await
        .unwrap()
        .into_iter()
        .map(|d| d.destination)
        .collect();
    listed.sort_by_key(|d| d.addr);
    assert_eq!(listed, dests, "{}", C::name(c));
    let edited = dests[0].with_weight(0);
    c.edit_destination(&svc, &edited).await.unwrap();
    let got = c.destinations(&svc).await.unwrap();
    let found = got
        .iter()
        .find(|d| d.destination.addr == edited.addr)
        .unwrap();
    assert_eq!(found.destination.weight, 0);
    c.delete_destination(&svc, dests[1].addr, 80).await.unwrap();
    assert_eq!(c.destinations(&svc).await.unwrap().len(), 3);
    let table = c.table().await.unwrap();
    assert_eq!(table.len(), 1);
    assert_eq!(table[0].destinations.len(), 3);
}

async fn errors_keep_their_meaning(c: &mut impl Ops) {
    let svc = ServiceKey::udp(ip("10.0.0.9"), 53);
    let e = c.delete_service(&svc).await.unwrap_err();
    assert!(e.is_not_found(), "{e}");
    c.add_service(&Service::new(svc)).await.unwrap();
    let e = c.add_service(&Service::new(svc)).await.unwrap_err();
    assert!(e.is_already_exists(), "{e}");
    let d = Destination::new(ip("10.1.0.1"), 53);
    c.add_destination(&svc, &d).await.unwrap();
    assert!(c
        .add_destination(&svc, &d)
        .await
        .unwrap_err()
        .is_already_exists());
    let e = c
        .edit_destination(&svc, &Destination::new(ip("10.1.0.2"), 53))
        .await
        .unwrap_err();
    assert!(e.is_not_found(), "{e}");
    // Refused before anything is sent: an IPv6 destination of an IPv4 service
    // with masquerading.
    let e = c
        .add_destination(&svc, &Destination::new(ip("2001:db8::5"), 53))
        .await
        .unwrap_err();
    assert!(e.is_invalid_input(), "{e}");
    // The client is still in step after every failure.
    assert_eq!(c.destinations(&svc).await.unwrap().len(), 1);
}

async fn pipelined_apply_reports_each_request(c: &mut impl Ops) {
    let mut requests = Vec::new();
    for i in 0..300u16 {
        let k = ServiceKey::tcp(ip("10.2.0.1"), 1000 + i);
        requests.push(Request::add_service(Service::new(k)));
        requests.push(Request::AddDestination(
            k,
            Destination::new(ip("10.3.0.1"), 80),
        ));
    }
    // One refused in the middle (it exists already), one not sent (invalid).
    requests.insert(
        301,
        Request::add_service(Service::new(ServiceKey::tcp(ip("10.2.0.1"), 1000))),
    );
    requests.insert(
        400,
        Request::AddDestination(
            ServiceKey::tcp(ip("10.2.0.1"), 1000),
            Destination::new(ip("2001:db8::5"), 80),
        ),
    );
    let outcomes = c.apply(&requests).await;
    assert_eq!(outcomes.len(), requests.len());
    let failed: Vec<usize> = outcomes
        .iter()
        .enumerate()
        .filter(|(_, o)| o.is_err())
        .map(|(i, _)| i)
        .collect();
    assert_eq!(failed, [301, 400], "{}", C::name(c));
    assert!(outcomes[301].as_ref().unwrap_err().is_already_exists());
    assert!(outcomes[400].as_ref().unwrap_err().is_invalid_input());
    let table = whole!(300, c.table().await.unwrap());
    assert_eq!(table.len(), 300);
    assert!(table.iter().all(|e| e.destinations.len() == 1));
}

async fn listings_agree(c: &mut impl Ops) {
    let ks = keys();
    for k in &ks {
        c.add_service(&Service::new(*k)).await.unwrap();
        if let ServiceKey::Inet { addr, port, .. } = k {
            let real = if addr.is_ipv4() {
                ip("10.9.0.1")
            } else {
                ip("2001:db8::9")
            };
            c.add_destination(k, &Destination::new(real, *port))
                .await
                .unwrap();
        }
    }
    let table = whole!(ks.len(), c.table().await.unwrap());
    let services = whole!(ks.len(), c.services().await.unwrap());
    assert_eq!(
        table.iter().map(|e| e.key()).collect::<Vec<_>>(),
        services.iter().map(|e| e.key()).collect::<Vec<_>>()
    );
    // Only the wanted get destinations.
    let only = ks[0];
    let some = c.table_with_destinations_of(|k| *k == only).await.unwrap();
    for e in &some {
        assert_eq!(e.destinations.is_empty(), *e.key() != only, "{}", e.key());
    }
    // A visit stopped early, then a full one: nothing of the first leaks.
    let first = visit_keys(c, 2).await.unwrap();
    assert_eq!(first.len(), 2);
    let all = whole!(ks.len(), visit_keys(c, usize::MAX).await.unwrap());
    assert_eq!(all.len(), ks.len());
    assert_eq!(
        whole!(ks.len(), c.services().await.unwrap()).len(),
        ks.len()
    );
}

async fn config_info_and_totals(c: &mut impl Ops) {
    let info = c.info().await.unwrap();
    assert!(info.version >= 0x010200, "{info:?}");
    assert!(info.conn_tab_size > 0);
    c.set_timeouts(&Timeouts::new(1000, 100, 200))
        .await
        .unwrap();
    assert_eq!(c.timeouts().await.unwrap(), Timeouts::new(1000, 100, 200));
    let totals = c.totals().await.unwrap();
    assert_eq!(totals.conns, 0, "a fresh namespace has no connections");
    let svc = ServiceKey::tcp(ip("10.0.0.1"), 80);
    c.add_service(&Service::new(svc)).await.unwrap();
    c.zero(Some(&svc)).await.unwrap();
    c.zero(None).await.unwrap();
    c.flush().await.unwrap();
    assert!(c.services().await.unwrap().is_empty());
}

async fn sync_daemons_start_list_stop(c: &mut impl Ops) {
    assert!(c.sync_daemons().await.unwrap().is_empty());
    let master = SyncDaemon::new(DaemonRole::Master, "lo").with_sync_id(9);
    c.start_sync_daemon(&master).await.unwrap();
    let listed = c.sync_daemons().await.unwrap();
    assert_eq!(listed.len(), 1, "{listed:?}");
    assert_eq!(listed[0].role, DaemonRole::Master);
    assert_eq!(listed[0].interface, "lo");
    assert_eq!(listed[0].sync_id, 9);
    // Straight after the start: the kernel's thread may not have run yet
    // (tests/kernel_sync_daemon_churn.rs), and the stop is answered all
    // the same.
    c.stop_sync_daemon(DaemonRole::Master)
        .await
        .unwrap_or_else(|e| panic!("{}: stop: {e}", C::name(c)));
    assert!(c.sync_daemons().await.unwrap().is_empty());
}

async fn sync_engine_converges_and_caches(c: &mut impl Ops) {
    let mut want = Table::new();
    for i in 0..50u16 {
        let k = ServiceKey::tcp(ip("10.4.0.1"), 2000 + i);
        want.insert(
            Service::new(k).with_scheduler(Scheduler::WeightedRoundRobin),
            (0..3).map(|j| Destination::new(ip(&format!("10.5.0.{}", j + 1)), 80)),
        );
    }
    let mut syncer = Syncer::new(PlanOptions::new(Scope::All));
    let report = c.sync(&mut syncer, &want).await.unwrap();
    assert!(report.is_complete(), "{report}");
    assert_eq!(report.requests().len(), 50 * 4);
    assert!(c.list(&syncer).await.unwrap().same_settings(&want));
    // Nothing changed: the cached view plans nothing.
    let again = c.sync_cached(&mut syncer, &want).await.unwrap();
    assert!(again.requests().is_empty(), "{again}");
    // One change, from the cache.
    let k = ServiceKey::tcp(ip("10.4.0.1"), 2000);
    want.remove(&k);
    let one = c.sync_cached(&mut syncer, &want).await.unwrap();
    assert_eq!(one.requests().len(), 1, "{one}");
    assert!(c.list(&syncer).await.unwrap().same_settings(&want));
}
