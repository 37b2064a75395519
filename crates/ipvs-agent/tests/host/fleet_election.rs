//! The election against a real etcd (fleet_etcd): two candidates, one
//! leader; the leader resigns or its lease is revoked: the other leads;
//! etcd stopped: the leader steps down TTL - margin after its last
//! renewal, before its lease could end; etcd back: one leader again.

use std::time::Duration;

use ipvs_agent::fleet::leader::election::{Election, ElectionOptions, Status};
use ipvs_agent::fleet::leader::state_machine::{Reason, Role, Timing};
use ipvs_agent::fleet::store::etcd::Etcd;
use tokio::sync::watch;
use tokio::time::Instant;

use crate::fleet_etcd::EtcdServer;

const TTL: Duration = Duration::from_secs(3);
const MARGIN: Duration = Duration::from_secs(1);

fn candidate(etcd: &Etcd, name: &str) -> Election {
    let timing = Timing::new(TTL, MARGIN).unwrap();
    Election::start(
        etcd,
        ElectionOptions::new("/e/leader", name).with_timing(timing),
    )
}

/// Waits until `status` says `role`; panics after `within`.
async fn until_role(status: &mut watch::Receiver<Status>, role: Role, within: Duration) -> Status {
    let wait = async {
        loop {
            let s = status.borrow_and_update().clone();
            if s.role == role {
                return s;
            }
            status.changed().await.expect("the election task ended");
        }
    };
    tokio::time::timeout(within, wait)
        .await
        .unwrap_or_else(|_| panic!("not {role} within {within:?}: {:?}", status.borrow()))
}

/// Watches both for `during`: never two leaders at once; the leader at the end.
async fn one_leader(
    a: &mut watch::Receiver<Status>,
    b: &mut watch::Receiver<Status>,
    during: Duration,
) -> usize {
    let until = Instant::now() + during;
    loop {
        let (ra, rb) = (a.borrow_and_update().role, b.borrow_and_update().role);
        assert!(
            !(ra == Role::Leader && rb == Role::Leader),
            "two leaders: {:?} {:?}",
            a.borrow(),
            b.borrow()
        );
        if Instant::now() >= until {
            assert!(ra == Role::Leader || rb == Role::Leader, "no leader");
            return if ra == Role::Leader { 0 } else { 1 };
        }
        tokio::select! {
            _ = a.changed() => {}
            _ = b.changed() => {}
            _ = tokio::time::sleep_until(until) => {}
        }
    }
}

/// Two candidates; waits for one to lead; (leader, follower) statuses.
async fn two(etcd: &Etcd) -> [(Election, watch::Receiver<Status>); 2] {
    let a = candidate(etcd, "a");
    let mut sa = a.status();
    until_role(&mut sa, Role::Leader, 10 * TTL).await;
    let b = candidate(etcd, "b");
    let sb = b.status();
    [(a, sa), (b, sb)]
}

#[tokio::test]
async fn two_candidates_one_leader_and_a_resign_hands_over() {
    let server = EtcdServer::start();
    let etcd = Etcd::connect(&server.endpoints()).await.unwrap();
    let [(a, mut sa), (b, mut sb)] = two(&etcd).await;
    // Two TTLs of renewals: a leads throughout, b never.
    assert_eq!(one_leader(&mut sa, &mut sb, 2 * TTL).await, 0);
    assert!(sb.borrow().lease.is_some() && !sb.borrow().elected);
    let resigned = Instant::now();
    a.resign().await;
    let s = until_role(&mut sb, Role::Leader, TTL).await;
    eprintln!("resign: b leads {:?} after a resigned", s.since - resigned);
    assert_eq!(s.reason, Some(Reason::Elected));
    assert_eq!(sa.borrow().role, Role::Follower);
    // a campaigns again behind b: b stays leader.
    assert_eq!(one_leader(&mut sa, &mut sb, TTL).await, 1);
    b.stop().await;
    // b's stop resigned and revoked its lease: a leads again.
    until_role(&mut sa, Role::Leader, TTL).await;
    a.stop().await;
}

#[tokio::test]
async fn a_revoked_lease_ends_leadership_and_the_other_leads() {
    let server = EtcdServer::start();
    let etcd = Etcd::connect(&server.endpoints()).await.unwrap();
    let [(_a, mut sa), (_b, mut sb)] = two(&etcd).await;
    until_role(&mut sb, Role::Follower, TTL).await;
    // b's campaign is waiting (its lease granted); revoke a's lease half
    // a keepalive interval away from a's renewals (they began when it led).
    tokio::time::sleep(TTL / 2).await;
    let lease = sa.borrow().lease.unwrap();
    let revoked = Instant::now();
    etcd.client().lease_revoke(lease).await.unwrap();
    let new = until_role(&mut sb, Role::Leader, TTL).await;
    let old = until_role(&mut sa, Role::Follower, TTL).await;
    eprintln!(
        "revoke: b leads after {:?}, a steps down after {:?} (reason {:?})",
        new.since - revoked,
        old.since - revoked,
        old.reason
    );
    assert_eq!(new.reason, Some(Reason::Elected));
    assert!(matches!(
        old.reason,
        Some(Reason::LeaseLost | Reason::LeaderLost)
    ));
    // a learns it at its next keepalive or leader check: within one
    // keepalive interval and the time to ask.
    assert!(old.since - revoked < TTL / 3 + TTL / 3);
    // a gets a new lease and campaigns behind b.
    assert_eq!(one_leader(&mut sa, &mut sb, TTL).await, 1);
    let a_lease = sa.borrow().lease;
    assert!(a_lease.is_some() && a_lease != Some(lease));
}

#[tokio::test]
async fn with_etcd_stopped_the_leader_steps_down_before_its_lease_ends_and_one_leads_after() {
    let mut server = EtcdServer::start();
    let etcd = Etcd::connect(&server.endpoints()).await.unwrap();
    let [(_a, mut sa), (_b, mut sb)] = two(&etcd).await;
    assert_eq!(one_leader(&mut sa, &mut sb, TTL).await, 0);
    server.kill();
    let s = until_role(&mut sa, Role::Follower, 2 * TTL).await;
    let last = s.last_renewal.expect("a renewal before");
    let after = s.since - last;
    eprintln!("etcd stopped: the leader stepped down {after:?} after its last renewal");
    assert_eq!(s.reason, Some(Reason::RenewalOverdue));
    // Not before TTL - margin, and before the lease could end at etcd.
    assert!(after >= TTL - MARGIN && after < TTL, "{after:?}");
    assert!(
        s.elected,
        "still the election's leader: only its lease is in doubt"
    );
    assert_eq!(sb.borrow().role, Role::Follower);
    // Restarting blocks (it waits for /health): off the runtime's thread,
    // so the candidates' tasks run meanwhile.
    let _server = tokio::task::spawn_blocking(move || {
        server.restart();
        server
    })
    .await
    .unwrap();
    // etcd kept both leases (restored with their TTL): a's key still
    // leads, its next renewal makes it leader again; b stays a follower.
    let s = until_role(&mut sa, Role::Leader, 4 * TTL).await;
    assert_eq!(s.reason, Some(Reason::Renewed));
    assert_eq!(one_leader(&mut sa, &mut sb, 2 * TTL).await, 0);
}
