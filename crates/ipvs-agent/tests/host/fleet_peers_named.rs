//! etcd's return with peers (`fleet::peers::reports`: a follower that reaches etcd
//! again names the leader it sees there while that leader holds on its
//! peers' word): the decisions as tables, then the machine through the
//! return in either order of the renewals, the cut-off leader that is
//! never named, and the settle a naming follower waits if it wins.

use std::time::Duration;

use ipvs_agent::fleet::leader::state_machine::{Backing, Event, Leadership, Reason, Role, Timing};
use ipvs_agent::fleet::peers::reports::{PeerTiming, Peers, Report};
use tokio::time::Instant;

const S: Duration = Duration::from_secs(1);
const MS: Duration = Duration::from_millis(1);
/// The leader's lease, a follower's, and another director's.
const L: i64 = 0x70;
const F: i64 = 0x71;
const OTHER: i64 = 0x72;

fn timing() -> Timing {
    Timing::for_ttl(5 * S).unwrap()
}

fn peer_timing() -> PeerTiming {
    PeerTiming::for_ttl(5 * S)
}

fn renewed(sent: Instant) -> Event {
    Event::KeepaliveOk { sent, ttl: 5 * S }
}

fn peer(peer: usize, report: Report) -> Event {
    Event::PeerReport { peer, report }
}

/// `Report::supports_lease` (what a leader counts) and
/// `Report::supports` (what its sender counts for its settle), every
/// combination of the flags that matter.
#[test]
fn what_a_report_supports_as_a_table() {
    // blind, elected, names, then: supports L's hold, supports someone.
    let table = [
        (false, false, None, false, false),
        (true, false, None, true, true),
        (false, false, Some(L), true, true),
        (true, false, Some(L), true, true),
        (false, false, Some(OTHER), false, true),
        (true, false, Some(OTHER), true, true),
        (false, true, None, false, false),
        (true, true, None, false, false),
        (false, true, Some(L), false, false),
        (true, true, Some(L), false, false),
    ];
    for (blind, elected, names, for_l, any) in table {
        let r = Report::new(blind, elected, false, None).naming(names);
        let row = format!("blind {blind}, elected {elected}, names {names:?}");
        assert_eq!(r.supports_lease(Some(L)), for_l, "{row}: supports L");
        assert_eq!(r.supports(), any, "{row}: supports someone");
        // A director without a lease is supported only by the blind.
        assert_eq!(r.supports_lease(None), blind && !elected, "{row}: no lease");
    }
}

/// `Peers::leader_named`: a follower names the lease etcd showed it
/// leading only while a peer of that lease, heard within the support
/// window (1 s), says it holds on its peers' word.
#[test]
fn whom_a_follower_names_as_a_table() {
    let t0 = Instant::now();
    let on_lease = Report::new(true, true, true, None).with_lease(Some(L));
    let on_peers = on_lease.held_on_peers();
    // seen, elected, the peer's report (heard at t0), now: the name.
    let table = [
        (Some(L), false, Some(on_peers), t0, Some(L)),
        (Some(L), false, Some(on_peers), t0 + 999 * MS, Some(L)),
        (Some(L), false, Some(on_peers), t0 + S, None),
        (Some(L), false, Some(on_lease), t0, None),
        (Some(L), false, None, t0, None),
        (Some(L), true, Some(on_peers), t0, None),
        (Some(OTHER), false, Some(on_peers), t0, None),
        (None, false, Some(on_peers), t0, None),
        (Some(F), false, Some(on_peers.with_lease(Some(F))), t0, None),
    ];
    for (i, (seen, elected, heard, now, name)) in table.into_iter().enumerate() {
        let mut p = Peers::new(2, peer_timing());
        if let Some(r) = heard {
            p.received(1, r, t0);
        }
        assert_eq!(p.leader_named(seen, Some(F), elected, now), name, "row {i}");
    }
}

/// A leader with two peers, elected on its lease at t0, then etcd down
/// for everyone: at 4 s it holds on its peers' word (both blind).
fn held_on_peers(t0: Instant) -> Leadership {
    let mut l = Leadership::with_peers(timing(), Peers::new(2, peer_timing()));
    l.handle(Event::LeaseGranted { lease: L }, t0);
    l.handle(renewed(t0), t0);
    l.handle(Event::CampaignWon, t0);
    l.handle(Event::ReportSent { supports: false }, t0 + MS);
    assert_eq!(l.role(), Role::Leader);
    l.handle(Event::KeepaliveFailed, t0 + 2 * S);
    let blind = Report::new(true, false, false, None);
    for p in 0..2 {
        l.handle(peer(p, blind.with_echo(t0 + 3900 * MS)), t0 + 3950 * MS);
    }
    assert_eq!(l.tick(t0 + 4 * S), None);
    assert_eq!(l.backing(), Some(Backing::Peers));
    let r = l.report(t0 + 4 * S);
    assert!(r.on_peers && r.holding && r.lease == Some(L));
    l
}

trait WithEcho {
    fn with_echo(self, at: Instant) -> Report;
}

impl WithEcho for Report {
    fn with_echo(mut self, at: Instant) -> Report {
        self.echo = Some(at);
        self
    }
}

/// etcd back, a follower's renewal first: it names the leader, which
/// keeps the VIPs (no gap) until its own renewal puts it on its lease.
#[test]
fn etcd_back_a_follower_first_the_leader_holds_throughout() {
    let t0 = Instant::now();
    let mut l = held_on_peers(t0);
    let back = t0 + 10 * S;
    let mut at = t0 + 4 * S;
    while at < back {
        for p in 0..2 {
            let r = Report::new(true, false, false, None).with_echo(at - 100 * MS);
            assert_eq!(l.handle(peer(p, r), at), None);
        }
        at += 250 * MS;
    }
    // Peer 0 reaches etcd: not blind, naming L. Without the name this
    // report alone ended the hold (a_peer_that_reaches_etcd_ends_the_hold_at_once).
    let named = Report::new(false, false, false, None)
        .naming(Some(L))
        .with_echo(back - 100 * MS);
    assert_eq!(l.handle(peer(0, named), back), None);
    assert_eq!(
        (l.role(), l.backing()),
        (Role::Leader, Some(Backing::Peers))
    );
    // Both name it for 2 s: the hold goes on at every step.
    while at < back + 2 * S {
        for p in 0..2 {
            let r = named.with_echo(at - 100 * MS);
            assert_eq!(l.handle(peer(p, r), at), None, "at {:?}", at - t0);
            assert_eq!(l.tick(at), None);
        }
        at += 250 * MS;
    }
    // Its own renewal: on its lease, no change of role, no longer asking.
    assert_eq!(l.handle(renewed(at), at), None);
    assert_eq!(
        (l.role(), l.backing()),
        (Role::Leader, Some(Backing::Lease))
    );
    assert!(!l.report(at).on_peers);
    // Without the name, the same report ends the hold (the gap before).
    let mut l = held_on_peers(t0);
    let plain = Report::new(false, false, false, None).with_echo(t0 + 4100 * MS);
    let c = l.handle(peer(0, plain), t0 + 4200 * MS).unwrap();
    assert_eq!((c.to, c.reason), (Role::Follower, Reason::PeerSupportEnded));
    // Naming another lease is no support of this leader either.
    let mut l = held_on_peers(t0);
    let c = l
        .handle(peer(0, plain.naming(Some(OTHER))), t0 + 4200 * MS)
        .unwrap();
    assert_eq!(c.to, Role::Follower);
}

/// The follower's side of the return: blind, it hears the leader
/// holding on its peers' word; its renewal and etcd's answer (the
/// leader's lease) come together, and its report then names the leader
/// and still counts as a support for its own settle. Once the leader is
/// on its lease again, the follower names nobody.
#[test]
fn etcd_back_the_follower_names_the_leader_it_sees() {
    let t0 = Instant::now();
    let mut f = Leadership::with_peers(timing(), Peers::new(2, peer_timing()));
    f.handle(Event::LeaseGranted { lease: F }, t0);
    f.handle(renewed(t0), t0);
    f.handle(Event::LeaderSeen { lease: Some(L) }, t0);
    let leader = Report::new(true, true, true, None).with_lease(Some(L));
    // etcd up: the leader on its lease is named by nobody.
    f.handle(peer(1, leader), t0 + S);
    let r = f.report(t0 + S);
    assert_eq!((r.blind, r.names, r.supports()), (false, None, false));
    // etcd down: blind, and the leader holds on its peers' word.
    f.handle(Event::KeepaliveFailed, t0 + 2 * S);
    f.handle(peer(1, leader.held_on_peers()), t0 + 5 * S);
    assert!(f.report(t0 + 5 * S).supports());
    // etcd back: the renewal and the leader seen, one batch.
    let back = t0 + 5100 * MS;
    f.handle(Event::LeaderSeen { lease: Some(L) }, back);
    f.handle(renewed(back), back);
    let r = f.report(back);
    assert_eq!((r.blind, r.names, r.supports()), (false, Some(L), true));
    assert!(r.supports_lease(Some(L)));
    // The leader heard more than 1 s ago: named no more.
    assert_eq!(f.report(t0 + 6 * S).names, None);
    // The leader back on its lease: named no more.
    f.handle(peer(1, leader), back + 200 * MS);
    assert_eq!(f.report(back + 200 * MS).names, None);
    // etcd shows another leader: not named even while one asks.
    f.handle(peer(1, leader.held_on_peers()), back + 300 * MS);
    f.handle(Event::LeaderSeen { lease: Some(OTHER) }, back + 300 * MS);
    assert_eq!(f.report(back + 300 * MS).names, None);
}

/// Only the leader cut off from etcd: it never holds on its peers' word
/// (they reach etcd and are not blind), so nobody names it and it steps
/// down at its lease's deadline, as before.
#[test]
fn the_leader_alone_cut_off_is_not_named_and_steps_down_at_its_deadline() {
    let t0 = Instant::now();
    let mut l = Leadership::with_peers(timing(), Peers::new(2, peer_timing()));
    l.handle(Event::LeaseGranted { lease: L }, t0);
    l.handle(renewed(t0), t0);
    l.handle(Event::CampaignWon, t0);
    l.handle(Event::ReportSent { supports: false }, t0 + MS);
    l.handle(Event::KeepaliveFailed, t0 + 2 * S);
    let r = l.report(t0 + 3 * S);
    assert!(
        r.blind && r.holding && !r.on_peers,
        "on its lease: not asking"
    );
    // A follower that reaches etcd and sees L leading.
    let mut f = Leadership::with_peers(timing(), Peers::new(2, peer_timing()));
    f.handle(Event::LeaseGranted { lease: F }, t0);
    f.handle(Event::LeaderSeen { lease: Some(L) }, t0 + 3 * S);
    f.handle(renewed(t0 + 3 * S), t0 + 3 * S);
    f.handle(peer(0, r), t0 + 3 * S);
    let fr = f.report(t0 + 3 * S);
    assert_eq!((fr.names, fr.supports()), (None, false));
    for p in 0..2 {
        l.handle(peer(p, fr.with_echo(t0 + 3 * S)), t0 + 3 * S);
    }
    let c = l.tick(t0 + 4 * S).unwrap();
    assert_eq!((c.to, c.reason), (Role::Follower, Reason::RenewalOverdue));
}

/// A follower that named the leader and then wins the election (the
/// leader's lease expired) adds the VIPs only the settle (1.25 s) after
/// its last naming report: the leader's support from it has ended by
/// then, so the two never hold at once.
#[test]
fn a_follower_that_named_the_leader_waits_the_settle_if_it_wins() {
    let t0 = Instant::now();
    let mut f = Leadership::with_peers(timing(), Peers::new(2, peer_timing()));
    f.handle(Event::LeaseGranted { lease: F }, t0);
    f.handle(Event::LeaderSeen { lease: Some(L) }, t0);
    f.handle(renewed(t0), t0);
    let leader = Report::new(true, true, true, None)
        .with_lease(Some(L))
        .held_on_peers();
    f.handle(peer(1, leader), t0 + 100 * MS);
    let r = f.report(t0 + 200 * MS);
    assert!(r.supports());
    f.handle(
        Event::ReportSent {
            supports: r.supports(),
        },
        t0 + 200 * MS,
    );
    f.handle(Event::LeaderSeen { lease: Some(F) }, t0 + 300 * MS);
    assert_eq!(f.handle(Event::CampaignWon, t0 + 300 * MS), None);
    assert!(!f.report(t0 + 300 * MS).supports(), "elected: names nobody");
    assert_eq!(
        f.handle(Event::ReportSent { supports: false }, t0 + 310 * MS),
        None
    );
    assert_eq!(f.deadline(), Some(t0 + 1450 * MS));
    assert_eq!(f.tick(t0 + 1449 * MS), None);
    let c = f.tick(t0 + 1450 * MS).unwrap();
    assert_eq!((c.to, c.reason), (Role::Leader, Reason::Elected));
}

/// The datagram carries the three new words and reads a first-version
/// one (without them) as naming nobody; a word it does not know is
/// skipped, a known one with a bad value refused.
#[test]
fn the_datagram_carries_the_lease_the_name_and_on_peers() {
    use ipvs_agent::fleet::peers::datagram::Datagram;
    let key = b"fleet";
    let mut d = Datagram::new("10.0.0.1:7946".parse().unwrap(), 5, 1250);
    d.holding = true;
    d.on_peers = true;
    d.lease = Some(L);
    d.names = Some(OTHER);
    let bytes = d.encode(key);
    let text = String::from_utf8(bytes.clone()).unwrap();
    assert!(
        text.contains("\nstate blind=0 elected=0 holding=1 on-peers=1 lease=112 names=114\n"),
        "{text}"
    );
    assert_eq!(Datagram::decode(&bytes, key).unwrap(), d);
    let first = Datagram::new("10.0.0.1:7946".parse().unwrap(), 5, 1250);
    let bytes = first.encode(key);
    assert!(String::from_utf8_lossy(&bytes).contains("holding=0\n"));
    let read = Datagram::decode(&bytes, key).unwrap();
    assert_eq!((read.on_peers, read.lease, read.names), (false, None, None));
    // Re-signed texts: an unknown word skipped, a bad value refused.
    let sign = |body: &str| {
        let mut d = Datagram::new("10.0.0.1:7946".parse().unwrap(), 5, 1250);
        d.lease = Some(1);
        let text = String::from_utf8(d.encode(key)).unwrap();
        let body = text.replace(" lease=1", body);
        let at = body.rfind("mac ").unwrap();
        // Signed again as the sender would.
        let signed = {
            use hmac::{Hmac, Mac};
            let mut m = <Hmac<sha2::Sha256> as Mac>::new_from_slice(key).unwrap();
            m.update(&body.as_bytes()[..at]);
            let tag: String = m
                .finalize()
                .into_bytes()
                .iter()
                .map(|b| format!("{b:02x}"))
                .collect();
            format!("{}mac {tag}\n", &body[..at])
        };
        Datagram::decode(signed.as_bytes(), key)
    };
    assert_eq!(sign(" lease=9 colour=blue").unwrap().lease, Some(9));
    assert_eq!(
        sign(" lease=nine").unwrap_err(),
        "peer datagram: `state blind=0 elected=0 holding=0 lease=nine`: `lease=nine` is not a valid lease"
    );
    assert!(sign(" on-peers=2")
        .unwrap_err()
        .contains("`on-peers=2` is not a valid on-peers"));
}
