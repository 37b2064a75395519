//! What only the async client has to prove: its futures can be dropped at
//! any await without the client losing step, they are `Send` (a task on a
//! multi-thread runtime can own the client), and a long call (a sync of a
//! big table) lets the runtime's other tasks run.

use crate::common;

use std::future::Future;
use std::net::IpAddr;
use std::pin::pin;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::task::Poll;

use common::*;
use ipvsnl::sync::{PlanOptions, Scope, Syncer, Table};
use ipvsnl::{AsyncClient, Client, Destination, Request, Service, ServiceEntry, ServiceKey};

fn ip(s: &str) -> IpAddr {
    s.parse().unwrap()
}

/// `n` services of 4 destinations each, as requests.
fn table_requests(n: u16) -> Vec<Request> {
    let mut r = Vec::new();
    for i in 0..n {
        let k = ServiceKey::tcp(ip("10.6.0.1"), 1 + i);
        r.push(Request::add_service(Service::new(k)));
        for j in 1..=4 {
            r.push(Request::AddDestination(
                k,
                Destination::new(ip(&format!("10.7.0.{j}")), 80),
            ));
        }
    }
    r
}

/// Creates `n` services of 4 destinations in the caller's namespace and
/// returns the table.
fn fill(n: u16) -> Vec<ServiceEntry> {
    let mut c = Client::new().unwrap();
    assert!(c.apply(&table_requests(n)).iter().all(|o| o.is_ok()));
    let mut t = c.table().unwrap();
    t.sort_by_key(|e| *e.key());
    assert_eq!(t.len(), n as usize, "listed whole");
    t
}

/// Flushes the caller's namespace's table: each test does before it ends,
/// as a namespace torn down with a thousand services keeps the kernel busy
/// after the test is over.
fn flush() {
    Client::new().unwrap().flush().unwrap();
}

/// Polls `fut` up to `polls` times, letting the runtime run between polls
/// (tokio's budget makes a busy future yield); true if it finished.
async fn poll_some<F: Future>(fut: F, polls: usize) -> bool {
    let mut fut = pin!(fut);
    for _ in 0..polls {
        let done = std::future::poll_fn(|cx| Poll::Ready(fut.as_mut().poll(cx).is_ready())).await;
        if done {
            return true;
        }
        tokio::task::yield_now().await;
    }
    false
}

fn settings(mut t: Vec<ServiceEntry>) -> Vec<ServiceEntry> {
    t.sort_by_key(|e| *e.key());
    t
}

#[test]
#[ignore = "needs IPVS: runs in the VM via .ci/kernel-tests"]
fn dropped_futures_leave_the_client_usable() {
    fresh_netns();
    let want = fill(400);
    ops::runtime().block_on(async {
        let mut c = AsyncClient::new().unwrap();
        let mut abandoned = 0;
        for polls in [1, 2, 3, 5, 8, 13, 40] {
            // A listing dropped part way through...
            if !poll_some(c.table(), polls).await {
                abandoned += 1;
            }
            // ...and the next calls see only their own replies.
            let got = settings(c.table().await.unwrap());
            assert_eq!(got.len(), want.len(), "after {polls} polls");
            assert_eq!(
                got.iter().map(|e| e.key()).collect::<Vec<_>>(),
                want.iter().map(|e| e.key()).collect::<Vec<_>>()
            );
            assert!(got.iter().all(|e| e.destinations.len() == 4));
            let one = ServiceKey::tcp(ip("10.6.0.1"), 1);
            assert_eq!(c.service(&one).await.unwrap().key(), &one);
            // A visit dropped part way, then a whole one.
            let _ = poll_some(
                c.for_each_service(|_| std::ops::ControlFlow::Continue(())),
                polls,
            )
            .await;
            let mut n = 0;
            c.for_each_service(|_| {
                n += 1;
                std::ops::ControlFlow::Continue(())
            })
            .await
            .unwrap();
            assert_eq!(n, want.len());
        }
        assert!(
            abandoned >= 3,
            "only {abandoned} listings were dropped unfinished"
        );

        // A batch dropped part way: what it did is whatever the kernel did,
        // and the client reads the table right afterwards.
        let extra: Vec<Request> = (0..2000u16)
            .map(|i| Request::add_service(Service::new(ServiceKey::udp(ip("10.8.0.1"), 1 + i))))
            .collect();
        let finished = poll_some(c.apply(&extra), 2).await;
        let after = c.services().await.unwrap();
        let keys: std::collections::HashSet<ServiceKey> = after.iter().map(|e| *e.key()).collect();
        let present = extra
            .iter()
            .filter(|r| matches!(r, Request::AddService(s) if keys.contains(&s.key)))
            .count();
        assert_eq!(after.len(), want.len() + present);
        // The same as a second client sees.
        let other = Client::new().unwrap().services().unwrap();
        assert_eq!(other.len(), after.len(), "finished: {finished}");
        // And the rest of the batch applies with the right outcomes.
        let outcomes = c.apply(&extra).await;
        let exists = outcomes
            .iter()
            .filter(|o| matches!(o, Err(e) if e.is_already_exists()))
            .count();
        assert_eq!(
            exists, present,
            "the added ones are refused as existing, the others done"
        );
        assert!(outcomes
            .iter()
            .all(|o| o.is_ok() || o.as_ref().unwrap_err().is_already_exists()));
    });
    flush();
}

#[test]
#[ignore = "needs IPVS: runs in the VM via .ci/kernel-tests"]
fn listings_under_a_callers_short_deadline_after_a_stopped_visit() {
    // The caller gives each listing 2 s (its own deadline, shorter than the
    // client's 30 s time-out). A visit stopped at the first of 5 services
    // once left its dump's end unread; every later listing then waited for
    // it, and each was cancelled at 2 s, so the client never recovered.
    fresh_netns();
    ops::runtime().block_on(async {
        let mut c = AsyncClient::new().unwrap();
        for i in 1..=5 {
            let k = ServiceKey::tcp(ip("10.6.1.1"), i);
            c.add_service(&Service::new(k)).await.unwrap();
        }
        let mut seen = 0;
        c.for_each_service(|_| {
            seen += 1;
            std::ops::ControlFlow::Break(())
        })
        .await
        .unwrap();
        assert_eq!(seen, 1);
        let deadline = std::time::Duration::from_secs(2);
        let mut timed_out = 0;
        for _ in 0..8 {
            match tokio::time::timeout(deadline, c.services()).await {
                Ok(listed) => assert_eq!(listed.unwrap().len(), 5),
                Err(_) => timed_out += 1,
            }
        }
        assert_eq!(
            timed_out, 0,
            "listings cancelled at the caller's 2 s deadline"
        );
    });
}

#[test]
#[ignore = "needs IPVS: runs in the VM via .ci/kernel-tests"]
fn the_client_moves_into_a_task_of_a_multi_thread_runtime() {
    fresh_netns();
    let want = fill(20);
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    // Made on this thread (its namespace), then owned by a task that any
    // worker may run: the futures are Send.
    let mut c = {
        let _in_runtime = rt.enter();
        AsyncClient::new().unwrap()
    };
    let listed = rt
        .block_on(rt.spawn(async move {
            let t = c.table().await.unwrap();
            let s = c.services().await.unwrap();
            (t, s.len())
        }))
        .unwrap();
    assert_eq!(settings(listed.0).len(), want.len());
    assert_eq!(listed.1, want.len());
}

#[test]
#[ignore = "needs IPVS: runs in the VM via .ci/kernel-tests"]
fn a_sync_of_a_big_table_lets_other_tasks_run() {
    fresh_netns();
    // 1000 services of 4 destinations: the sync's listing alone is 1001
    // dumps, some 2000 exchanges with the kernel, each answered at once.
    let listed = fill(1000);
    let rt = ops::runtime();
    let ticks = Arc::new(AtomicUsize::new(0));
    rt.block_on(async {
        let mut c = AsyncClient::new().unwrap();
        let mut want = Table::from_entries(listed);
        let gone = ServiceKey::tcp(ip("10.6.0.1"), 1);
        want.remove(&gone);
        // On this one-thread runtime another task runs only when the sync
        // yields.
        let t = ticks.clone();
        let ticker = tokio::spawn(async move {
            loop {
                t.fetch_add(1, Ordering::Relaxed);
                tokio::task::yield_now().await;
            }
        });
        tokio::task::yield_now().await;
        let before = ticks.load(Ordering::Relaxed);
        let mut syncer = Syncer::new(PlanOptions::new(Scope::All));
        let report = syncer.sync_async(&mut c, &want).await.unwrap();
        let during = ticks.load(Ordering::Relaxed) - before;
        ticker.abort();
        assert!(report.is_complete(), "{report}");
        assert_eq!(report.requests().len(), 1, "{report}");
        eprintln!("the other task ran {during} times during the sync");
        assert!(
            during >= 3,
            "the other task ran {during} times during a sync that listed 1000 services"
        );
        assert!(syncer
            .list_async(&mut c)
            .await
            .unwrap()
            .same_settings(&want));
    });
    flush();
}

#[test]
#[ignore = "needs IPVS: runs in the VM via .ci/kernel-tests"]
fn the_watcher_sees_what_another_client_changes() {
    use ipvsnl::watch::Change;
    fresh_netns();
    let mut other = Client::new().unwrap();
    ops::runtime().block_on(async {
        let mut w = AsyncClient::new()
            .unwrap()
            .watch(std::time::Duration::from_millis(50));
        let limit = std::time::Duration::from_secs(20);
        let first = tokio::time::timeout(limit, w.next()).await.unwrap().unwrap();
        assert!(first.first && first.changes.is_empty(), "{first:?}");

        let k = ServiceKey::tcp(ip("10.11.0.1"), 80);
        let d = Destination::new(ip("10.12.0.1"), 80);
        other.add_service(&Service::new(k)).unwrap();
        other.add_destination(&k, &d).unwrap();
        let added = tokio::time::timeout(limit, w.next()).await.unwrap().unwrap();
        assert!(
            matches!(added.changes.as_slice(), [Change::ServiceAdded(e)] if *e.key() == k && e.destinations.len() == 1),
            "{added:?}"
        );
        other.edit_destination(&k, &d.with_weight(5)).unwrap();
        let edited = tokio::time::timeout(limit, w.next()).await.unwrap().unwrap();
        assert!(
            matches!(edited.changes.as_slice(), [Change::DestinationChanged { old, new, .. }] if old.weight == 1 && new.weight == 5),
            "{edited:?}"
        );
        other.delete_service(&k).unwrap();
        let removed = tokio::time::timeout(limit, w.next()).await.unwrap().unwrap();
        assert!(
            matches!(removed.changes.as_slice(), [Change::ServiceRemoved(e)] if *e.key() == k),
            "{removed:?}"
        );
    });
}
