//! One controller body for both clients: a reconciling function written
//! once, generic over [`Operations`], with the sync engine's `*_on`
//! entry points, run with the blocking client and with the async one
//! (issue 41, item 1). Before them, the engine took each client by a
//! method of its own, and this file did not compile.

use std::future::Future;
use std::net::IpAddr;
use std::pin::pin;
use std::task::{Context, Poll, Waker};

use ipvsnl::emulator::{Fault, Kernel, When};
use ipvsnl::sync::{PlanOptions, Report, Scope, Syncer, Table};
use ipvsnl::{
    AsyncClient, Client, Destination, Error, Operations, RequestKind, Service, ServiceKey,
};

use super::ip;

fn vip() -> ServiceKey {
    ServiceKey::tcp(ip("10.0.0.1"), 443)
}

/// The desired table: `backends` behind the one virtual service.
fn want(backends: &[&str]) -> Table {
    let mut t = Table::new();
    t.insert(
        Service::new(vip()),
        backends.iter().map(|b| Destination::new(ip(b), 8443)),
    );
    t
}

/// The controller, written once: a dry run, a first sync (retried once
/// if incomplete), then a cached sync of a change, and the view listed.
async fn controller(ipvs: &mut impl Operations, syncer: &mut Syncer) -> Result<Vec<Report>, Error> {
    let first = want(&["10.1.0.1", "10.1.0.2"]);
    let dry = syncer.plan_on(ipvs, &first).await?;
    assert_eq!(dry.requests().len(), 3, "{dry}");
    let mut reports = vec![syncer.sync_on(ipvs, &first).await?];
    if !reports[0].is_complete() {
        reports.push(syncer.sync_on(ipvs, &first).await?);
    }
    let second = want(&["10.1.0.2", "10.1.0.3"]);
    reports.push(syncer.sync_cached_on(ipvs, &second).await?);
    let listed = syncer.list_on(ipvs).await?;
    let mut dests: Vec<IpAddr> = listed
        .get(&vip())
        .expect("the service")
        .destinations
        .iter()
        .map(|d| d.destination.addr)
        .collect();
    dests.sort();
    assert_eq!(dests, [ip("10.1.0.2"), ip("10.1.0.3")]);
    Ok(reports)
}

/// A kernel that leaves the first destination add unanswered.
fn faulty_kernel() -> Kernel {
    let k = Kernel::new();
    k.inject(When::next(RequestKind::AddDestination), Fault::LoseReply);
    k
}

/// What the kernel was asked, in order.
fn asked(k: &Kernel) -> Vec<Option<RequestKind>> {
    k.requests().iter().map(|t| t.kind).collect()
}

#[test]
fn one_controller_body_runs_over_both_clients() {
    let blocking_kernel = faulty_kernel();
    let mut syncer = Syncer::new(PlanOptions::new(Scope::All));
    let mut c = Client::emulated(&blocking_kernel);
    let blocking = ipvsnl::block_on(controller(&mut c, &mut syncer)).unwrap();

    let async_kernel = faulty_kernel();
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let on_tokio = runtime.block_on(async {
        let mut c = AsyncClient::emulated(&async_kernel);
        let mut syncer = Syncer::new(PlanOptions::new(Scope::All));
        controller(&mut c, &mut syncer).await.unwrap()
    });

    // The same engine: the same reports, the same requests, the same table.
    let shown = |r: &[Report]| r.iter().map(|r| r.to_string()).collect::<Vec<_>>();
    assert_eq!(shown(&blocking), shown(&on_tokio));
    assert!(
        blocking.last().unwrap().is_complete(),
        "{}",
        blocking.last().unwrap()
    );
    assert_eq!(asked(&blocking_kernel), asked(&async_kernel));
    assert_eq!(
        blocking_kernel.init_netns().table(),
        async_kernel.init_netns().table()
    );
}

#[test]
fn the_blocking_clients_sync_is_done_when_called() {
    let k = Kernel::new();
    let mut c = Client::emulated(&k);
    let mut syncer = Syncer::new(PlanOptions::new(Scope::All));
    let t = want(&["10.1.0.1"]);
    let future = syncer.sync_on(&mut c, &t);
    // Done before the future is polled, as the client's operations are
    // through the trait; then ready at its first poll.
    assert_eq!(k.init_netns().table().len(), 1);
    match pin!(future).poll(&mut Context::from_waker(Waker::noop())) {
        Poll::Ready(r) => assert!(r.unwrap().is_complete()),
        Poll::Pending => panic!("the blocking client's sync waited"),
    };
}

/// Generic code may spawn the engine's future: it is `Send` for any
/// client (the bound below is all it asks).
fn spawn_sync<C: Operations + Send + 'static>(
    mut client: C,
    mut syncer: Syncer,
    desired: Table,
) -> tokio::task::JoinHandle<Result<Report, Error>> {
    tokio::spawn(async move { syncer.sync_on(&mut client, &desired).await })
}

#[tokio::test]
async fn the_engines_future_is_spawnable_from_generic_code() {
    let k = Kernel::new();
    let syncer = Syncer::new(PlanOptions::new(Scope::All));
    let report = spawn_sync(AsyncClient::emulated(&k), syncer, want(&["10.1.0.1"]))
        .await
        .unwrap()
        .unwrap();
    assert!(report.is_complete(), "{report}");
    let syncer = Syncer::new(PlanOptions::new(Scope::All));
    let report = spawn_sync(Client::emulated(&k), syncer, want(&["10.1.0.2"]))
        .await
        .unwrap()
        .unwrap();
    assert!(report.is_complete(), "{report}");
    assert_eq!(k.init_netns().table()[0].destinations.len(), 1);
}
