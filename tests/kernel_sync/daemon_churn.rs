//! A sync daemon stopped the moment it started, again and again on one
//! client: every stop is answered (within a second), by both clients, for
//! both roles, and so is a batch that starts and stops one in a single
//! datagram. And, on a bare socket, what the kernel answers such a stop.
//!
//! The kernel stops a daemon whose thread has not run yet (it is woken by
//! the start, but the scheduler may not have given it the CPU) with that
//! thread's "interrupted" exit code, and netlink sends no reply at all,
//! not even the ACK asked for, to a request that ends so. On 6.1 stops
//! sent straight after a start often go so; the library closes such a
//! request's batch with a no-op whose ACK tells it the stop was done.

use crate::common;
use crate::rawnl;

use std::time::{Duration, Instant};

use common::ops::Ops;
use ipvsnl::{AsyncClient, Client, ClientOptions, DaemonRole, Request, SyncDaemon};
use ipvsnl_wire::netlink_packet_core::{NLMSG_ERROR, NLMSG_NOOP, NLM_F_ACK, NLM_F_REQUEST};
use ipvsnl_wire::{DaemonAttr, IpvsAttr, IpvsCommand, IpvsMessage};
use rawnl::RawNl;

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

/// The answers (by sequence number, the errno; 0 for an ACK) of the
/// datagrams read from `nl` until the one to `last` came.
fn answers_until(nl: &RawNl, last: u32) -> Vec<(u32, i32)> {
    let mut out = Vec::new();
    while !out.iter().any(|a: &(u32, i32)| a.0 == last) {
        let d = nl.recv().expect("a reply before the socket's 10 s timeout");
        let mut at = 0;
        while at + 20 <= d.len() {
            let word = |o: usize| u32::from_ne_bytes(d[at + o..at + o + 4].try_into().unwrap());
            let len = word(0) as usize;
            let kind = u16::from_ne_bytes([d[at + 4], d[at + 5]]);
            if kind == NLMSG_ERROR {
                out.push((word(8), -(word(16) as i32)));
            }
            at += (len.max(16) + 3) & !3;
        }
    }
    out
}

/// The kernel's side, on a bare socket: 40 times a master is started and
/// then, in one datagram, stopped (an ACK asked) and sent a no-op (an ACK
/// asked). The no-op is always answered; the stop with its ACK or with
/// nothing at all, never an error; and the master is gone either way.
/// How many stops went unanswered is printed (it depends on when the
/// scheduler first runs the daemon's thread).
#[test]
#[ignore = "needs IPVS: runs in the VM via .ci/kernel-tests"]
fn syncd_a_stop_straight_after_the_start_is_acked_or_silent_and_done() {
    let mut c = blocking_client();
    let mut nl = RawNl::open().expect("a raw generic netlink socket");
    let master = SyncDaemon::new(DaemonRole::Master, "lo");
    let stop = || {
        IpvsMessage::new(
            IpvsCommand::DelDaemon,
            vec![IpvsAttr::Daemon(vec![DaemonAttr::State(1)])],
        )
    };
    let (rounds, mut silent) = (40, 0);
    for round in 1..=rounds {
        c.start_sync_daemon(&master).unwrap();
        let mut datagram = nl.request_bytes(stop(), false);
        let stop_seq = u32::from_ne_bytes(datagram[8..12].try_into().unwrap());
        let noop_seq = stop_seq + 1000;
        let mut noop = vec![0u8; 16];
        noop[0..4].copy_from_slice(&16u32.to_ne_bytes());
        noop[4..6].copy_from_slice(&NLMSG_NOOP.to_ne_bytes());
        noop[6..8].copy_from_slice(&(NLM_F_REQUEST | NLM_F_ACK).to_ne_bytes());
        noop[8..12].copy_from_slice(&noop_seq.to_ne_bytes());
        datagram.extend_from_slice(&noop);
        nl.send(&datagram).unwrap();
        let answers = answers_until(&nl, noop_seq);
        let to_stop: Vec<i32> = answers
            .iter()
            .filter(|a| a.0 == stop_seq)
            .map(|a| a.1)
            .collect();
        match to_stop[..] {
            [] => silent += 1,
            [0] => {}
            _ => panic!("round {round}: the stop was answered {to_stop:?}"),
        }
        assert_eq!(answers.last(), Some(&(noop_seq, 0)), "round {round}");
        assert_eq!(c.sync_daemons().unwrap(), vec![], "round {round}");
    }
    eprintln!(
        "kernel {}: {silent} of {rounds} stops straight after the start went unanswered",
        common::kernel_release()
    );
}
