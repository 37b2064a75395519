//! The peer link's rule with times the test chooses (`fleet::peers::reports` and
//! `Leadership::with_peers`): a leader cut off from etcd keeps its VIPs
//! exactly while every peer supports it, steps down at once or at the
//! support's exact end otherwise; a new leader waits for its own support
//! to expire and for a holder to let go.

use std::time::Duration;

use ipvs_agent::fleet::leader::state_machine::{Backing, Event, Leadership, Reason, Role, Timing};
use ipvs_agent::fleet::peers::reports::{PeerTiming, Peers, Report};
use tokio::time::Instant;

const S: Duration = Duration::from_secs(1);
const MS: Duration = Duration::from_millis(1);

fn timing() -> Timing {
    Timing::for_ttl(5 * S).unwrap()
}

fn peer_timing() -> PeerTiming {
    PeerTiming::for_ttl(5 * S)
}

fn renewed(sent: Instant) -> Event {
    Event::KeepaliveOk { sent, ttl: 5 * S }
}

fn report(blind: bool, elected: bool, holding: bool, echo: Option<Instant>) -> Report {
    Report::new(blind, elected, holding, echo)
}

/// Peer `peer` reports itself etcd-blind, not elected, echoing `echo`.
fn blind(peer: usize, echo: Instant) -> Event {
    Event::PeerReport {
        peer,
        report: report(true, false, false, Some(echo)),
    }
}

/// A leader with two peers, elected at t0 on a keepalive sent at t0.
fn leader(t0: Instant) -> Leadership {
    let mut l = Leadership::with_peers(timing(), Peers::new(2, peer_timing()));
    assert_eq!(l.handle(renewed(t0), t0), None);
    // Won: it leads once its link has sent a report saying so.
    assert_eq!(l.handle(Event::CampaignWon, t0), None);
    let c = l.handle(sent(false), t0 + MS).unwrap();
    assert_eq!((c.to, c.reason), (Role::Leader, Reason::Elected));
    assert_eq!(l.backing(), Some(Backing::Lease));
    l
}

fn sent(supports: bool) -> Event {
    Event::ReportSent { supports }
}

#[test]
fn the_timing_follows_the_ttl_and_the_ttl_is_bounded() {
    let t = timing();
    assert_eq!((t.ttl, t.margin), (5 * S, S));
    assert_eq!(Timing::default(), t);
    let p = peer_timing();
    assert_eq!((p.heartbeat, p.support, p.settle), (250 * MS, S, 1250 * MS));
    assert_eq!(Timing::for_ttl(2 * S).unwrap().margin, 400 * MS);
    for bad in [S, 301 * S, 2500 * MS, Duration::ZERO] {
        assert_eq!(
            Timing::for_ttl(bad).unwrap_err(),
            format!("lease TTL {bad:?}: whole seconds from 2 to 300")
        );
    }
}

#[test]
fn support_needs_every_peer_blind_not_elected_and_echoing_a_recent_stamp() {
    let t0 = Instant::now();
    let mut p = Peers::new(2, peer_timing());
    assert_eq!(p.support_until(t0, None), None, "nobody heard");
    p.received(0, report(true, false, false, Some(t0)), t0);
    assert_eq!(p.support_until(t0, None), None, "one peer of two heard");
    p.received(1, report(true, false, false, Some(t0 + 200 * MS)), t0);
    assert_eq!(
        p.support_until(t0, None),
        Some(t0 + S),
        "the older echo bounds it"
    );
    assert_eq!(p.support_until(t0 + S - MS, None), Some(t0 + S));
    assert_eq!(
        p.support_until(t0 + S, None),
        None,
        "expired at echo + support"
    );
    for (r, why) in [
        (report(false, false, false, Some(t0)), "reaches etcd"),
        (
            report(true, true, false, Some(t0)),
            "believes itself elected",
        ),
        (
            report(true, false, false, None),
            "echoes none of our stamps",
        ),
    ] {
        p.received(0, r, t0);
        assert_eq!(p.support_until(t0, None), None, "a peer that {why}");
    }
    assert_eq!(Peers::new(0, peer_timing()).support_until(t0, None), None);
    // A report of an unknown peer is ignored.
    p.received(7, report(true, false, false, Some(t0)), t0);
    assert_eq!(p.report(7), None);
}

#[test]
fn takeover_waits_for_our_own_support_to_expire_and_for_a_holder() {
    let t0 = Instant::now();
    let mut p = Peers::new(2, peer_timing());
    assert_eq!(p.takeover_at(), None);
    p.sent(false, t0);
    assert_eq!(p.takeover_at(), None, "a report that supports nobody");
    p.sent(true, t0 + S);
    assert_eq!(p.takeover_at(), Some(t0 + S + 1250 * MS));
    p.received(1, report(false, true, true, None), t0 + 3 * S);
    assert_eq!(
        p.takeover_at(),
        Some(t0 + 4 * S),
        "a peer holds: support after it"
    );
    p.received(1, report(false, false, false, None), t0 + 3 * S + MS);
    assert_eq!(p.takeover_at(), Some(t0 + S + 1250 * MS), "it let go");
}

/// etcd down for everyone: the leader keeps the VIPs past its lease's
/// deadline while both peers report blind, and steps down exactly when
/// the last support ends.
#[test]
fn etcd_down_for_all_the_leader_holds_while_every_peer_is_blind() {
    let t0 = Instant::now();
    let mut l = leader(t0);
    assert_eq!(l.deadline(), Some(t0 + 4 * S));
    assert!(!l.blind(t0));
    assert_eq!(l.handle(Event::KeepaliveFailed, t0 + 2 * S), None);
    assert!(l.blind(t0 + 2 * S));
    // Its reports: blind but elected, supporting nobody.
    let r = l.report(t0 + 2 * S);
    assert!(r.blind && r.elected && r.holding && !r.supports());
    // The peers' reports every 250 ms, each echoing our stamp 100 ms old.
    let mut at = t0 + 2 * S;
    while at < t0 + 20 * S {
        for peer in 0..2 {
            assert_eq!(l.handle(blind(peer, at - 100 * MS), at), None, "at {at:?}");
        }
        assert_eq!(l.tick(at), None);
        at += 250 * MS;
    }
    assert_eq!(l.role(), Role::Leader);
    assert_eq!(l.backing(), Some(Backing::Peers));
    // The reports stop: the support ends at the last echo + 1 s, exactly.
    let last = at - 250 * MS - 100 * MS;
    assert_eq!(l.deadline(), Some(last + S));
    assert_eq!(l.tick(last + S - MS), None);
    let c = l.tick(last + S).unwrap();
    assert_eq!(
        (c.from, c.to, c.reason),
        (Role::Leader, Role::Follower, Reason::PeerSupportEnded)
    );
    // etcd back: a renewal proves the lease never expired: leader again.
    let c = l.handle(renewed(t0 + 30 * S), t0 + 30 * S).unwrap();
    assert_eq!((c.to, c.reason), (Role::Leader, Reason::Renewed));
    assert_eq!(l.backing(), Some(Backing::Lease));
}

/// Only the leader cut off: the peers reach etcd, so it steps down at its
/// lease's deadline as without peers.
#[test]
fn the_leader_alone_cut_off_steps_down_at_its_deadline() {
    let t0 = Instant::now();
    let mut l = leader(t0);
    l.handle(Event::KeepaliveFailed, t0 + 2 * S);
    for peer in 0..2 {
        let r = report(false, false, false, Some(t0 + 3 * S));
        l.handle(Event::PeerReport { peer, report: r }, t0 + 3 * S + 10 * MS);
    }
    assert_eq!(l.deadline(), Some(t0 + 4 * S));
    assert_eq!(l.tick(t0 + 4 * S - MS), None);
    let c = l.tick(t0 + 4 * S).unwrap();
    assert_eq!((c.to, c.reason), (Role::Follower, Reason::RenewalOverdue));
    // One peer blind, the other not: still no support.
    l.handle(blind(0, t0 + 5 * S), t0 + 5 * S);
    assert_eq!(l.role(), Role::Follower);
    assert_eq!(l.deadline(), None);
}

/// A peer that reaches etcd (or believes itself elected) ends a
/// peer-backed hold at once, at the instant its report comes.
#[test]
fn a_peer_that_reaches_etcd_ends_the_hold_at_once() {
    for (reaches, elected) in [(true, false), (false, true)] {
        let t0 = Instant::now();
        let mut l = leader(t0);
        l.handle(Event::KeepaliveFailed, t0 + 2 * S);
        for peer in 0..2 {
            l.handle(blind(peer, t0 + 3900 * MS), t0 + 3950 * MS);
        }
        assert_eq!(l.tick(t0 + 4 * S), None);
        assert_eq!(l.backing(), Some(Backing::Peers));
        let news = report(!reaches, elected, false, Some(t0 + 4100 * MS));
        let c = l
            .handle(
                Event::PeerReport {
                    peer: 1,
                    report: news,
                },
                t0 + 4200 * MS,
            )
            .unwrap();
        assert_eq!(
            (c.to, c.reason),
            (Role::Follower, Reason::PeerSupportEnded),
            "reaches {reaches}, elected {elected}"
        );
    }
}

/// Within its lease a leader needs no peer: a silent peer link changes
/// nothing until the deadline.
#[test]
fn within_its_lease_a_leader_needs_no_peer() {
    let t0 = Instant::now();
    let mut l = leader(t0);
    for i in 1..=3 {
        let at = t0 + i * S;
        l.handle(renewed(at), at);
        assert_eq!(l.tick(at), None);
    }
    assert_eq!(l.backing(), Some(Backing::Lease));
    assert_eq!(l.deadline(), Some(t0 + 7 * S));
}

/// Dropped at its deadline before the peers said blind, the leader takes
/// the VIPs back once they all do.
#[test]
fn a_leader_that_stepped_down_takes_the_vips_back_when_every_peer_is_blind() {
    let t0 = Instant::now();
    let mut l = leader(t0);
    l.tick(t0 + 4 * S).unwrap();
    assert_eq!(l.handle(blind(0, t0 + 4100 * MS), t0 + 4200 * MS), None);
    let c = l.handle(blind(1, t0 + 4150 * MS), t0 + 4250 * MS).unwrap();
    assert_eq!(
        (c.from, c.to, c.reason),
        (Role::Follower, Role::Leader, Reason::PeersBlind)
    );
    assert_eq!(l.deadline(), Some(t0 + 5100 * MS));
}

/// A director that sent supporting reports (blind, not elected) and is
/// then elected adds the VIPs only 1.25 s after the last of them.
#[test]
fn a_new_leader_waits_until_its_own_support_has_expired() {
    let t0 = Instant::now();
    let mut l = Leadership::with_peers(timing(), Peers::new(2, peer_timing()));
    // Blind before any lease: its reports support.
    assert!(l.report(t0).supports());
    l.handle(Event::ReportSent { supports: true }, t0);
    let sent = t0 + 500 * MS;
    l.handle(renewed(sent), sent);
    assert!(!l.report(sent).supports());
    assert_eq!(l.handle(Event::CampaignWon, sent), None);
    assert_eq!(l.deadline(), None, "no report sent since the election");
    l.handle(Event::ReportSent { supports: false }, sent + MS);
    assert_eq!(l.deadline(), Some(t0 + 1250 * MS));
    assert_eq!(l.tick(t0 + 1249 * MS), None);
    let c = l.tick(t0 + 1250 * MS).unwrap();
    assert_eq!((c.to, c.reason), (Role::Leader, Reason::Elected));
}

/// The overlap of a revoked lease or deleted key: the new leader waits
/// while the old one says it holds, and takes over when it says it let go
/// (or 1 s after it was last heard).
#[test]
fn a_new_leader_waits_for_the_old_one_to_let_go() {
    let t0 = Instant::now();
    let mut l = Leadership::with_peers(timing(), Peers::new(2, peer_timing()));
    l.handle(renewed(t0), t0);
    let old = |holding| Event::PeerReport {
        peer: 0,
        report: report(false, true, holding, None),
    };
    l.handle(old(true), t0 + 100 * MS);
    assert_eq!(l.handle(Event::CampaignWon, t0 + 200 * MS), None);
    assert_eq!(l.handle(sent(false), t0 + 250 * MS), None);
    l.handle(old(true), t0 + 350 * MS);
    assert_eq!(l.deadline(), Some(t0 + 1350 * MS));
    let c = l.handle(old(false), t0 + 600 * MS).unwrap();
    assert_eq!(
        (c.from, c.to, c.reason),
        (Role::Follower, Role::Leader, Reason::Elected)
    );

    // Never heard letting go: 1 s after its last report.
    let mut l = Leadership::with_peers(timing(), Peers::new(2, peer_timing()));
    l.handle(renewed(t0), t0);
    l.handle(old(true), t0 + 100 * MS);
    assert_eq!(l.handle(Event::CampaignWon, t0 + 200 * MS), None);
    assert_eq!(l.handle(sent(false), t0 + 250 * MS), None);
    assert_eq!(l.tick(t0 + 1099 * MS), None);
    assert_eq!(l.tick(t0 + 1100 * MS).unwrap().to, Role::Leader);
}

/// The race of a report the link was sending while the campaign won: a
/// supporting one told after the election delays the takeover by the
/// settle; the takeover waits for a report sent after the election.
#[test]
fn a_supporting_report_sent_as_the_campaign_won_delays_the_takeover() {
    let t0 = Instant::now();
    let mut l = Leadership::with_peers(timing(), Peers::new(2, peer_timing()));
    l.handle(sent(false), t0);
    l.handle(renewed(t0 + S), t0 + S);
    assert_eq!(l.handle(Event::CampaignWon, t0 + S), None);
    assert_eq!(l.deadline(), None);
    // The link was sending a supporting report (computed before the win).
    assert_eq!(l.handle(sent(true), t0 + S + 10 * MS), None);
    assert_eq!(l.deadline(), Some(t0 + 2260 * MS));
    assert_eq!(l.handle(sent(false), t0 + S + 20 * MS), None);
    assert_eq!(l.tick(t0 + 2259 * MS), None);
    let c = l.tick(t0 + 2260 * MS).unwrap();
    assert_eq!((c.to, c.reason), (Role::Leader, Reason::Elected));
}

/// Without peers configured nothing waits and nothing holds past the
/// lease (the rule of `fleet_leadership.rs`).
#[test]
fn without_peers_peer_events_change_nothing() {
    let t0 = Instant::now();
    let mut l = Leadership::new(timing());
    l.handle(renewed(t0), t0);
    l.handle(Event::ReportSent { supports: true }, t0);
    assert_eq!(l.handle(Event::CampaignWon, t0).unwrap().to, Role::Leader);
    assert_eq!(l.handle(blind(0, t0 + 3 * S), t0 + 3 * S), None);
    assert_eq!(l.tick(t0 + 4 * S).unwrap().reason, Reason::RenewalOverdue);
}
