//! The leadership state machine with times the test chooses: every
//! transition, the step-down deadline exact, the actions in order.

use std::time::Duration;

use ipvs_agent::fleet::leader::state_machine::{Action, Event, Leadership, Reason, Role, Timing};
use tokio::time::Instant;

const S: Duration = Duration::from_secs(1);
const MS: Duration = Duration::from_millis(1);

fn timing() -> Timing {
    Timing::new(5 * S, S).unwrap()
}

fn renewed(sent: Instant) -> Event {
    Event::KeepaliveOk { sent, ttl: 5 * S }
}

/// A leader elected at t0 on a keepalive sent at t0.
fn leader(t0: Instant) -> Leadership {
    let mut l = Leadership::new(timing());
    assert_eq!(l.handle(renewed(t0), t0), None);
    let c = l.handle(Event::CampaignWon, t0).unwrap();
    assert_eq!(
        (c.from, c.to, c.reason),
        (Role::Follower, Role::Leader, Reason::Elected)
    );
    l
}

#[test]
fn timing_is_checked() {
    assert!(Timing::new(S, Duration::from_millis(100)).is_err());
    assert!(Timing::new(Duration::from_millis(2500), S / 2).is_err());
    assert!(Timing::new(5 * S, Duration::ZERO).is_err());
    assert!(Timing::new(4 * S, 2 * S).is_err());
    let t = Timing::new(6 * S, 2 * S).unwrap();
    assert_eq!(t.keepalive_interval(), 2 * S);
    assert_eq!(Timing::default(), timing());
}

#[test]
fn a_new_candidate_is_a_follower_with_no_deadline() {
    let l = Leadership::new(timing());
    assert_eq!(
        (l.role(), l.elected(), l.deadline()),
        (Role::Follower, false, None)
    );
}

#[test]
fn winning_the_campaign_makes_a_leader_until_ttl_minus_margin_after_the_last_renewal() {
    let t0 = Instant::now();
    let mut l = leader(t0);
    assert_eq!(l.deadline(), Some(t0 + 4 * S));
    assert_eq!(l.tick(t0 + 4 * S - MS), None);
    let c = l.tick(t0 + 4 * S).unwrap();
    assert_eq!(
        (c.from, c.to, c.reason),
        (Role::Leader, Role::Follower, Reason::RenewalOverdue)
    );
    assert_eq!(c.actions(), &[Action::DropVips, Action::SyncBackup]);
    // Still elected: a later renewal proves the lease lived.
    assert!(l.elected());
    assert_eq!(l.deadline(), None);
}

#[test]
fn each_renewal_moves_the_deadline_to_its_send_time_plus_ttl_minus_margin() {
    let t0 = Instant::now();
    let mut l = leader(t0);
    let sent = t0 + 1666 * MS;
    // Answered late: the deadline counts from the send, not the answer.
    assert_eq!(l.handle(renewed(sent), sent + 900 * MS), None);
    assert_eq!(l.deadline(), Some(sent + 4 * S));
    assert_eq!(l.last_renewal(), Some(sent));
    // An answer to an older request does not move it back.
    assert_eq!(l.handle(renewed(t0 + MS), sent + S), None);
    assert_eq!(l.deadline(), Some(sent + 4 * S));
    // Failed keepalives change nothing before the deadline.
    assert_eq!(l.handle(Event::KeepaliveFailed, sent + 3 * S), None);
    let c = l.handle(Event::KeepaliveFailed, sent + 4 * S).unwrap();
    assert_eq!(c.reason, Reason::RenewalOverdue);
}

#[test]
fn the_latest_renewal_sets_the_deadline_with_the_ttl_etcd_reports() {
    let t0 = Instant::now();
    let mut l = leader(t0);
    let sent = t0 + S;
    l.handle(Event::KeepaliveOk { sent, ttl: 3 * S }, sent);
    // etcd counts the TTL from the latest renewal: 3 s - 1 s after it.
    assert_eq!(l.deadline(), Some(sent + 2 * S));
    // A TTL longer than asked is taken as the one asked.
    let sent = t0 + 2 * S;
    l.handle(Event::KeepaliveOk { sent, ttl: 60 * S }, sent);
    assert_eq!(l.deadline(), Some(sent + 4 * S));
}

#[test]
fn a_renewal_after_a_step_down_makes_it_leader_again() {
    let t0 = Instant::now();
    let mut l = leader(t0);
    l.tick(t0 + 4 * S).unwrap();
    let sent = t0 + 5 * S;
    let c = l.handle(renewed(sent), sent).unwrap();
    assert_eq!(
        (c.from, c.to, c.reason),
        (Role::Follower, Role::Leader, Reason::Renewed)
    );
    assert_eq!(c.actions(), &[Action::HoldVips, Action::SyncMaster]);
    assert_eq!(l.deadline(), Some(sent + 4 * S));
}

#[test]
fn a_renewal_answered_after_its_own_deadline_does_not_make_a_leader() {
    let t0 = Instant::now();
    let mut l = leader(t0);
    l.tick(t0 + 4 * S).unwrap();
    let sent = t0 + 2 * S;
    assert_eq!(l.handle(renewed(sent), sent + 4 * S), None);
    assert_eq!(l.role(), Role::Follower);
}

#[test]
fn winning_with_an_overdue_lease_waits_for_a_renewal() {
    let t0 = Instant::now();
    let mut l = Leadership::new(timing());
    l.handle(renewed(t0), t0);
    assert_eq!(l.handle(Event::CampaignWon, t0 + 4 * S), None);
    assert!(l.elected());
    let c = l.handle(renewed(t0 + 5 * S), t0 + 5 * S).unwrap();
    assert_eq!((c.to, c.reason), (Role::Leader, Reason::Renewed));
}

#[test]
fn winning_before_any_renewal_is_not_leading() {
    let t0 = Instant::now();
    let mut l = Leadership::new(timing());
    assert_eq!(l.handle(Event::CampaignWon, t0), None);
    assert_eq!(l.role(), Role::Follower);
}

#[test]
fn a_lost_lease_ends_leadership_at_once_and_a_renewal_does_not_restore_it() {
    let t0 = Instant::now();
    let mut l = leader(t0);
    let c = l.handle(Event::LeaseLost, t0 + S).unwrap();
    assert_eq!((c.to, c.reason), (Role::Follower, Reason::LeaseLost));
    assert!(!l.elected());
    // A new lease's renewal: not elected on it yet.
    assert_eq!(l.handle(renewed(t0 + 2 * S), t0 + 2 * S), None);
    assert_eq!(l.role(), Role::Follower);
}

#[test]
fn a_lost_leader_key_ends_leadership_at_once() {
    let t0 = Instant::now();
    let mut l = leader(t0);
    let c = l.handle(Event::LeaderLost, t0 + S).unwrap();
    assert_eq!((c.to, c.reason), (Role::Follower, Reason::LeaderLost));
    assert_eq!(l.handle(renewed(t0 + 2 * S), t0 + 2 * S), None);
    // Winning again on the same lease: leader again.
    let c = l.handle(Event::CampaignWon, t0 + 2 * S).unwrap();
    assert_eq!((c.to, c.reason), (Role::Leader, Reason::Elected));
}

#[test]
fn resigning_ends_leadership_and_a_follower_resigning_changes_nothing() {
    let t0 = Instant::now();
    let mut l = leader(t0);
    let c = l.handle(Event::Resigned, t0 + S).unwrap();
    assert_eq!(
        (c.from, c.to, c.reason),
        (Role::Leader, Role::Follower, Reason::Resigned)
    );
    assert_eq!(l.handle(Event::Resigned, t0 + S), None);
    assert_eq!(l.handle(Event::LeaderLost, t0 + S), None);
    assert_eq!(l.handle(Event::LeaseLost, t0 + S), None);
}

#[test]
fn a_follower_is_never_made_leader_by_time_or_renewals() {
    let t0 = Instant::now();
    let mut l = Leadership::new(timing());
    for i in 0..10 {
        let at = t0 + i * S;
        assert_eq!(l.handle(renewed(at), at), None);
        assert_eq!(l.handle(Event::KeepaliveFailed, at), None);
        assert_eq!(l.tick(at + S / 2), None);
    }
    assert_eq!(l.role(), Role::Follower);
}
