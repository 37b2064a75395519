//! Whether this agent may hold the fleet's VIPs: a state machine of times
//! and events, no I/O (the driver is [`election`](crate::fleet::leader::election)).
//!
//! An agent leads when etcd's election says so (its campaign won, its
//! leader key still there) **and** its lease was renewed recently enough
//! that etcd cannot have let it expire: a keepalive sent at `t` and
//! answered keeps the lease at etcd until at least `t + ttl` (etcd renews
//! it on receipt, after `t`), so the agent holds the VIPs until
//! `t + ttl - margin` and no longer. If no keepalive succeeds by then it
//! steps down (drops its VIPs, sync daemon as backup) before the lease can
//! expire and another agent win the election: no two directors answering
//! for a VIP. A keepalive that succeeds after a step-down proves the lease
//! never expired (nobody else can have won), so the agent leads again.
//!
//! With peers ([`Leadership::with_peers`], the directors' own link:
//! [`reports`](crate::fleet::peers::reports)) a leader whose renewal is overdue keeps its
//! VIPs while every peer reports itself etcd-blind and not elected, and a
//! director that becomes leader waits until its own supporting reports
//! have expired and no peer says it holds the VIPs. A peer that reaches
//! etcd again while such a leader's key still leads there goes on
//! supporting it, naming its lease ([`Peers::leader_named`]): the
//! machine learns its own lease ([`Event::LeaseGranted`]) and the leader
//! etcd last named ([`Event::LeaderSeen`]).
//!
//! ```
//! use std::time::Duration;
//! use tokio::time::Instant;
//! use ipvs_agent::fleet::leader::state_machine::{Event, Leadership, Role, Timing};
//!
//! let timing = Timing::new(Duration::from_secs(5), Duration::from_secs(1)).unwrap();
//! let mut l = Leadership::new(timing);
//! let t0 = Instant::now();
//! l.handle(Event::KeepaliveOk { sent: t0, ttl: Duration::from_secs(5) }, t0);
//! let change = l.handle(Event::CampaignWon, t0).unwrap();
//! assert_eq!(change.to, Role::Leader);
//! // No keepalive since t0: it steps down at t0 + 5 s - 1 s exactly.
//! assert_eq!(l.deadline(), Some(t0 + Duration::from_secs(4)));
//! assert!(l.tick(t0 + Duration::from_millis(3999)).is_none());
//! assert_eq!(l.tick(t0 + Duration::from_secs(4)).unwrap().to, Role::Follower);
//! ```

use std::fmt;
use std::time::Duration;

use tokio::time::Instant;

use crate::fleet::peers::reports::{Peers, Report};

/// The lease's TTL by default.
pub const DEFAULT_TTL: Duration = Duration::from_secs(5);
/// How long before the lease could expire the leader steps down, by default.
pub const DEFAULT_MARGIN: Duration = Duration::from_secs(1);
/// etcd's smallest lease TTL (3.4 with its default heartbeat and
/// election timeout raises shorter ones to 2 s).
pub const MIN_TTL: Duration = Duration::from_secs(2);
/// The longest lease TTL `--lease-ttl` takes.
pub const MAX_TTL: Duration = Duration::from_secs(300);

/// The lease's TTL and the leader's safety margin.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct Timing {
    /// The lease's time to live at etcd.
    pub ttl: Duration,
    /// How long before the lease could expire the leader steps down.
    pub margin: Duration,
}

impl Default for Timing {
    fn default() -> Timing {
        Timing {
            ttl: DEFAULT_TTL,
            margin: DEFAULT_MARGIN,
        }
    }
}

impl Timing {
    /// A TTL of at least [`MIN_TTL`] in whole seconds (etcd's unit), and a
    /// margin above zero and below half the TTL (so that a leader survives
    /// one lost keepalive: they are sent every TTL/3).
    pub fn new(ttl: Duration, margin: Duration) -> Result<Timing, String> {
        if ttl < MIN_TTL || ttl.subsec_nanos() != 0 {
            return Err(format!(
                "lease TTL {ttl:?}: etcd takes whole seconds, at least {}",
                MIN_TTL.as_secs()
            ));
        }
        if margin.is_zero() || margin >= ttl / 2 {
            return Err(format!(
                "step-down margin {margin:?}: must be above 0 and below half the TTL ({:?})",
                ttl / 2
            ));
        }
        Ok(Timing { ttl, margin })
    }

    /// How often the lease is renewed: a third of its TTL.
    pub fn keepalive_interval(&self) -> Duration {
        self.ttl / 3
    }

    /// The timing of a lease of `ttl` (`--lease-ttl`): whole seconds from
    /// [`MIN_TTL`] to [`MAX_TTL`], the margin a fifth of it (1 s for the
    /// default 5 s), the keepalive a third.
    ///
    /// ```
    /// use std::time::Duration;
    /// use ipvs_agent::fleet::leader::state_machine::Timing;
    /// let t = Timing::for_ttl(Duration::from_secs(10)).unwrap();
    /// assert_eq!(t.margin, Duration::from_secs(2));
    /// assert_eq!(t.keepalive_interval().as_millis(), 3333);
    /// assert_eq!(
    ///     Timing::for_ttl(Duration::from_secs(1)).unwrap_err(),
    ///     "lease TTL 1s: whole seconds from 2 to 300"
    /// );
    /// ```
    pub fn for_ttl(ttl: Duration) -> Result<Timing, String> {
        if ttl < MIN_TTL || ttl > MAX_TTL || ttl.subsec_nanos() != 0 {
            return Err(format!(
                "lease TTL {ttl:?}: whole seconds from {} to {}",
                MIN_TTL.as_secs(),
                MAX_TTL.as_secs()
            ));
        }
        Timing::new(ttl, ttl / 5)
    }
}

/// What this agent is in the fleet.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Role {
    /// Holds no VIP; the sync daemon runs as backup.
    Follower,
    /// Holds the VIPs; the sync daemon runs as master.
    Leader,
}

impl Role {
    /// What to do to take this role, in order (see [`Change::actions`]).
    pub fn actions(self) -> &'static [Action] {
        match self {
            Role::Leader => &[Action::HoldVips, Action::SyncMaster],
            Role::Follower => &[Action::DropVips, Action::SyncBackup],
        }
    }
}

impl fmt::Display for Role {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Role::Follower => "follower",
            Role::Leader => "leader",
        })
    }
}

/// What happened, as the driver saw it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Event {
    /// A keepalive sent at `sent` was answered: the lease lives, its TTL
    /// `ttl` from etcd's answer.
    KeepaliveOk {
        /// When the request was sent (not when the answer came).
        sent: Instant,
        /// The TTL etcd reports.
        ttl: Duration,
    },
    /// A keepalive failed or was not answered in time.
    KeepaliveFailed,
    /// etcd says the lease is gone (expired or revoked).
    LeaseLost,
    /// This agent's campaign won the election.
    CampaignWon,
    /// This agent's leader key is gone or another agent's leads.
    LeaderLost,
    /// This agent resigned.
    Resigned,
    /// Peer `peer` (an index into the configured peers) reported.
    PeerReport {
        /// Which peer.
        peer: usize,
        /// What it said.
        report: Report,
    },
    /// This agent sent its report to the peers; `supports` as
    /// [`Report::supports`] says of it.
    ReportSent {
        /// Whether it could support another's hold.
        supports: bool,
    },
    /// etcd granted this agent the lease it campaigns on.
    LeaseGranted {
        /// The lease's id (its key in the election is named after it).
        lease: i64,
    },
    /// etcd answered who leads the election (asked after a renewal).
    LeaderSeen {
        /// The leader key's lease; `None`: no leader.
        lease: Option<i64>,
    },
}

/// What lets a leader hold the VIPs now.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Backing {
    /// Its lease, renewed less than TTL - margin ago.
    Lease,
    /// Its peers: every one etcd-blind and not elected.
    Peers,
}

/// Why the role changed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Reason {
    /// The campaign won, with the lease renewed recently.
    Elected,
    /// A keepalive succeeded after a step-down: the lease never expired.
    Renewed,
    /// No keepalive succeeded within TTL - margin.
    RenewalOverdue,
    /// etcd says the lease is gone.
    LeaseLost,
    /// The leader key is gone or another agent leads.
    LeaderLost,
    /// This agent resigned.
    Resigned,
    /// The renewal overdue, every peer reports etcd-blind: the VIPs are
    /// taken back on the peers' word.
    PeersBlind,
    /// The peers' support (which kept the VIPs without a renewal) ended.
    PeerSupportEnded,
}

impl fmt::Display for Reason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Reason::Elected => "elected",
            Reason::Renewed => "lease renewed",
            Reason::RenewalOverdue => "no lease renewal within TTL - margin",
            Reason::LeaseLost => "lease lost",
            Reason::LeaderLost => "another agent leads",
            Reason::Resigned => "resigned",
            Reason::PeersBlind => "every peer etcd-blind",
            Reason::PeerSupportEnded => "the peers' support ended",
        })
    }
}

/// One thing to do on a change of role, in the order given.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Action {
    /// Add the VIPs (with gratuitous ARP).
    HoldVips,
    /// Remove the VIPs.
    DropVips,
    /// Run the kernel's sync daemon as master.
    SyncMaster,
    /// Run the kernel's sync daemon as backup.
    SyncBackup,
}

/// A change of role.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct Change {
    /// The role before.
    pub from: Role,
    /// The role now.
    pub to: Role,
    /// Why.
    pub reason: Reason,
}

impl Change {
    /// What to do, in order: a new leader takes the VIPs first (the
    /// address answers at once) then makes its sync daemon master; a
    /// leader stepping down drops its VIPs first.
    pub fn actions(&self) -> &'static [Action] {
        self.to.actions()
    }
}

/// The state machine: feed it [`Event`]s and the time; it says when the
/// role changes.
#[derive(Clone, Debug)]
pub struct Leadership {
    timing: Timing,
    role: Role,
    elected: bool,
    /// The last instant the VIPs may be held on the lease's renewals.
    hold_until: Option<Instant>,
    /// When the last answered keepalive was sent.
    last_renewal: Option<Instant>,
    /// Whether a keepalive failed since the last answered one.
    keepalive_failed: bool,
    /// When the campaign was last won.
    elected_at: Option<Instant>,
    /// The peer link's reports, if peers are configured.
    peers: Option<Peers>,
    /// The lease this agent campaigns on.
    lease: Option<i64>,
    /// The election's leader key's lease, in etcd's last answer.
    seen: Option<i64>,
    /// What lets the leader hold now.
    backing: Option<Backing>,
    /// When to [`tick`](Leadership::tick) next.
    wake: Option<Instant>,
}

impl Leadership {
    /// A follower, not elected, its lease not yet renewed.
    pub fn new(timing: Timing) -> Leadership {
        Leadership {
            timing,
            role: Role::Follower,
            elected: false,
            hold_until: None,
            last_renewal: None,
            keepalive_failed: false,
            elected_at: None,
            peers: None,
            lease: None,
            seen: None,
            backing: None,
            wake: None,
        }
    }

    /// The same with the peer link's second opinion.
    pub fn with_peers(timing: Timing, peers: Peers) -> Leadership {
        Leadership {
            peers: Some(peers),
            ..Leadership::new(timing)
        }
    }

    /// What lets the leader hold now (`None` for a follower).
    pub fn backing(&self) -> Option<Backing> {
        self.backing
    }

    /// The peers' reports, if peers are configured.
    pub fn peers(&self) -> Option<&Peers> {
        self.peers.as_ref()
    }

    /// Whether this agent cannot reach etcd at `now`: its last keepalive
    /// failed, or its last answered one was sent TTL - margin ago or more.
    pub fn blind(&self, now: Instant) -> bool {
        self.keepalive_failed || self.hold_until.map_or(true, |u| now >= u)
    }

    /// The report this agent sends its peers at `now` (its echo is the
    /// link's business): with its lease, whether it holds on its peers'
    /// word, and the leader it names ([`Peers::leader_named`]).
    pub fn report(&self, now: Instant) -> Report {
        let names = self
            .peers
            .as_ref()
            .and_then(|p| p.leader_named(self.seen, self.lease, self.elected, now));
        let report = Report::new(
            self.blind(now),
            self.elected,
            self.role == Role::Leader,
            None,
        )
        .with_lease(self.lease)
        .naming(names);
        if self.role == Role::Leader && self.backing == Some(Backing::Peers) {
            report.held_on_peers()
        } else {
            report
        }
    }

    /// The lease this agent campaigns on, as etcd granted it.
    pub fn lease(&self) -> Option<i64> {
        self.lease
    }

    /// The lease of the election's leader key in etcd's last answer.
    pub fn leader_seen(&self) -> Option<i64> {
        self.seen
    }

    /// The role now.
    pub fn role(&self) -> Role {
        self.role
    }

    /// Whether etcd's election says this agent leads (it may still hold no
    /// VIP, its lease's renewal overdue).
    pub fn elected(&self) -> bool {
        self.elected
    }

    /// When the last answered keepalive was sent.
    pub fn last_renewal(&self) -> Option<Instant> {
        self.last_renewal
    }

    /// When the role may change with no event (the driver calls
    /// [`tick`](Leadership::tick) then): a leader's end of lease or of its
    /// peers' support, an elected follower's end of wait for its peers;
    /// `None` when only an event can change it.
    pub fn deadline(&self) -> Option<Instant> {
        self.wake
    }

    /// The time is `now`: a leader whose deadline has come steps down.
    pub fn tick(&mut self, now: Instant) -> Option<Change> {
        self.settle(now, None)
    }

    /// `event` happened at `now`.
    pub fn handle(&mut self, event: Event, now: Instant) -> Option<Change> {
        let reason = match event {
            Event::KeepaliveOk { sent, ttl } => {
                // The latest renewal sets the lease's end (etcd counts the
                // TTL from its receipt); an answer to an older request
                // changes nothing. The TTL as etcd reports it, never more
                // than the one asked.
                if self.last_renewal.map_or(true, |last| sent >= last) {
                    let ttl = ttl.min(self.timing.ttl);
                    self.hold_until = Some(sent + ttl.saturating_sub(self.timing.margin));
                    self.last_renewal = Some(sent);
                    self.keepalive_failed = false;
                }
                Some(Reason::Renewed)
            }
            Event::KeepaliveFailed => {
                self.keepalive_failed = true;
                None
            }
            Event::LeaseLost => {
                self.elected = false;
                self.hold_until = None;
                self.last_renewal = None;
                self.lease = None;
                Some(Reason::LeaseLost)
            }
            Event::LeaseGranted { lease } => {
                self.lease = Some(lease);
                None
            }
            Event::LeaderSeen { lease } => {
                self.seen = lease;
                None
            }
            Event::CampaignWon => {
                self.elected = true;
                self.elected_at = Some(now);
                Some(Reason::Elected)
            }
            Event::LeaderLost => {
                self.elected = false;
                Some(Reason::LeaderLost)
            }
            Event::Resigned => {
                self.elected = false;
                Some(Reason::Resigned)
            }
            Event::PeerReport { peer, report } => {
                if let Some(p) = &mut self.peers {
                    p.received(peer, report, now);
                }
                None
            }
            Event::ReportSent { supports } => {
                if let Some(p) = &mut self.peers {
                    p.sent(supports, now);
                }
                None
            }
        };
        self.settle(now, reason)
    }

    /// The role the state says at `now`; a change if it differs. `reason`
    /// is the event's, `None` for the time passing or a peer's news (the
    /// reason is then found from what changed).
    fn settle(&mut self, now: Instant, reason: Option<Reason>) -> Option<Change> {
        let lease = self
            .hold_until
            .filter(|u| self.elected && now < *u)
            .map(|u| (u, Backing::Lease));
        let peers = self
            .peers
            .as_ref()
            .filter(|_| self.elected)
            .and_then(|p| p.support_until(now, self.lease))
            .map(|u| (u, Backing::Peers));
        // The backing that lasts longer (the lease on a tie).
        let backed = match (lease, peers) {
            (Some(l), Some(p)) if p.0 > l.0 => Some(p),
            (Some(l), _) => Some(l),
            (None, p) => p,
        };
        let before = self.backing;
        let (to, wake) = match backed {
            None => (Role::Follower, None),
            Some((until, _)) if self.role == Role::Leader => (Role::Leader, Some(until)),
            // With peers, a report sent since the election (it says
            // "elected", supporting nobody) first: one the link was sending
            // meanwhile may have been a supporting one; its own event
            // settles the machine again.
            Some(_)
                if self.peers.as_ref().is_some_and(|p| {
                    p.last_sent().is_none() || p.last_sent() <= self.elected_at
                }) =>
            {
                (Role::Follower, None)
            }
            Some((until, _)) => {
                let wait = self
                    .peers
                    .as_ref()
                    .and_then(Peers::takeover_at)
                    .filter(|at| *at > now);
                match wait {
                    None => (Role::Leader, Some(until)),
                    Some(at) => (Role::Follower, Some(at.min(until))),
                }
            }
        };
        self.wake = wake;
        self.backing = match to {
            Role::Leader => backed.map(|(_, b)| b),
            Role::Follower => None,
        };
        if to == self.role {
            return None;
        }
        let from = std::mem::replace(&mut self.role, to);
        let reason = match (to, self.backing, reason) {
            (Role::Leader, Some(Backing::Peers), _) => Reason::PeersBlind,
            (Role::Leader, _, Some(Reason::Renewed)) => Reason::Renewed,
            (Role::Leader, _, _) => Reason::Elected,
            (Role::Follower, _, Some(r)) if r != Reason::Renewed => r,
            (Role::Follower, _, _) if before == Some(Backing::Peers) => Reason::PeerSupportEnded,
            (Role::Follower, _, _) => Reason::RenewalOverdue,
        };
        Some(Change { from, to, reason })
    }
}
