//! A sync daemon stopped the moment it started, again and again on one
//! client: every stop is answered (within a second), by both clients, for
//! both roles, and so is a batch that starts and stops one in a single
//! datagram.
//!
//! The kernel stops a daemon whose thread has not run yet (it is woken by
//! the start, but the scheduler may not have given it the CPU) with that
//! thread's "interrupted" exit code, and netlink sends no reply at all,
//! not even the ACK asked for, to a request that ends so. 6.1 does this to
//! most stops sent straight after a start; the library closes such a
//! request's batch with a no-op whose ACK tells it the stop was done.

mod common;

use std::time::{Duration, Instant};

use common::ops::Ops;
use ipvsnl::{AsyncClient, Client, ClientOptions, DaemonRole, Request, SyncDaemon};

/// Start-stop rounds per test.
const ROUNDS: usize = 20;

/// The longest a stop may take to be answered.
const ANSWERED_WITHIN: Duration = Duration::from_secs(1);

/// The clients' receive timeout: a stop left unanswered fails its round
/// after this, not after the default 30 s.
fn options() -> ClientOptions {
    ClientOptions::default().with_timeout(Duration::from_secs(3))
}

/// `ROUNDS` times: start `role` on lo, stop it at once; each stop answered
/// well and in time, and the listing empty after it.
async fn start_stop_rounds<C: Ops>(c: &mut C, role: DaemonRole) {
    let daemon = SyncDaemon::new(role, "lo");
    for round in 1..=ROUNDS {
        let at = |what: &str| format!("{} client, {role}, round {round}: {what}", C::NAME);
        c.start_sync_daemon(&daemon)
            .await
            .unwrap_or_else(|e| panic!("{}: {e}", at("start")));
        let t = Instant::now();
        let stopped = c.stop_sync_daemon(role).await;
        let took = t.elapsed();
        if let Err(e) = stopped {
            panic!("{} after {took:?}: {e}", at("stop"));
        }
        assert!(took < ANSWERED_WITHIN, "{} took {took:?}", at("stop"));
        let listed = c.sync_daemons().await.unwrap();
        assert_eq!(listed, vec![], "{}", at("listed after the stop"));
    }
}

/// `ROUNDS` times: one batch that starts `role` on lo and stops it; both
/// requests done, the batch answered in time.
async fn start_stop_batches<C: Ops>(c: &mut C, role: DaemonRole) {
    let batch = [
        Request::StartDaemon(SyncDaemon::new(role, "lo")),
        Request::StopDaemon(role),
    ];
    for round in 1..=ROUNDS {
        let t = Instant::now();
        let results = c.apply(&batch).await;
        let took = t.elapsed();
        for (r, req) in results.iter().zip(&batch) {
            if let Err(e) = r {
                panic!(
                    "{} client, round {round}: {req} after {took:?}: {e}",
                    C::NAME
                );
            }
        }
        assert_eq!(results.len(), 2);
        assert!(
            took < ANSWERED_WITHIN,
            "{} client, round {round}: the batch took {took:?}",
            C::NAME
        );
        assert_eq!(c.sync_daemons().await.unwrap(), vec![], "round {round}");
    }
}

fn blocking_client() -> Client {
    common::fresh_netns();
    Client::with_options(options()).expect("blocking client")
}

/// Runs `body` with an async client in a fresh namespace.
fn with_async_client<F: std::future::Future<Output = ()>>(body: impl FnOnce(AsyncClient) -> F) {
    common::fresh_netns();
    common::ops::runtime().block_on(async {
        body(AsyncClient::with_options(options()).expect("async client")).await
    });
}

#[test]
#[ignore = "needs IPVS: runs in the VM via .ci/kernel-tests"]
fn syncd_churn_master_blocking() {
    let mut c = blocking_client();
    common::ops::runtime().block_on(start_stop_rounds(&mut c, DaemonRole::Master));
}

#[test]
#[ignore = "needs IPVS: runs in the VM via .ci/kernel-tests"]
fn syncd_churn_backup_blocking() {
    let mut c = blocking_client();
    common::ops::runtime().block_on(start_stop_rounds(&mut c, DaemonRole::Backup));
}

#[test]
#[ignore = "needs IPVS: runs in the VM via .ci/kernel-tests"]
fn syncd_churn_master_tokio() {
    with_async_client(|mut c| async move { start_stop_rounds(&mut c, DaemonRole::Master).await });
}

#[test]
#[ignore = "needs IPVS: runs in the VM via .ci/kernel-tests"]
fn syncd_churn_backup_tokio() {
    with_async_client(|mut c| async move { start_stop_rounds(&mut c, DaemonRole::Backup).await });
}

#[test]
#[ignore = "needs IPVS: runs in the VM via .ci/kernel-tests"]
fn syncd_churn_one_batch_blocking() {
    let mut c = blocking_client();
    common::ops::runtime().block_on(start_stop_batches(&mut c, DaemonRole::Master));
}

#[test]
#[ignore = "needs IPVS: runs in the VM via .ci/kernel-tests"]
fn syncd_churn_one_batch_tokio() {
    with_async_client(|mut c| async move { start_stop_batches(&mut c, DaemonRole::Backup).await });
}
