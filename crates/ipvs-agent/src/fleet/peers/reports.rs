//! What the other directors said on the peer link, and what it allows: a
//! state machine of reports and times, no I/O (the datagrams are
//! [`peer_link`](crate::fleet::leader::peer_link)'s; the rule is applied by
//! [`Leadership`](crate::fleet::leader::state_machine::Leadership)).
//!
//! Two things follow from the peers' reports:
//!
//! - [`support_until`](Peers::support_until): a leader whose lease renewal
//!   is overdue may keep its VIPs while **every** configured peer supports
//!   it ([`Report::supports_lease`]: etcd-blind and not elected, or not
//!   elected and naming the leader's lease), in a report that echoes one
//!   of the leader's own stamps less than [`PeerTiming::support`] old. The
//!   echoed stamp was sent before the report, so the support ends (the
//!   stamp's instant + `support`) before the supporter's send + `support`.
//! - [`leader_named`](Peers::leader_named): a director that reaches etcd again while
//!   the leader it sees there (the election's leader key, by its lease)
//!   holds the VIPs on its peers' word names that lease in its reports,
//!   which goes on supporting it: etcd's return does not end the hold of
//!   a leader whose own renewal comes back after a follower's.
//! - [`takeover_at`](Peers::takeover_at): a director that becomes leader
//!   adds its VIPs no earlier than [`PeerTiming::settle`] after the last
//!   report it sent that could support another's hold, and not while a
//!   peer heard less than `support` ago says it holds them. (The
//!   [`Leadership`](crate::fleet::leader::state_machine::Leadership) also waits for a report
//!   sent after its election: one the link was sending meanwhile may have
//!   been a supporting one.)
//!
//! ```
//! use std::time::Duration;
//! use tokio::time::Instant;
//! use ipvs_agent::fleet::peers::reports::{PeerTiming, Peers, Report};
//!
//! let timing = PeerTiming::for_ttl(Duration::from_secs(5));
//! let mut peers = Peers::new(1, timing);
//! let t0 = Instant::now();
//! assert_eq!(peers.support_until(t0, Some(7)), None);
//! // The peer is etcd-blind and echoes our stamp of t0.
//! let blind = Report::new(true, false, false, Some(t0));
//! peers.received(0, blind, t0 + Duration::from_millis(10));
//! assert_eq!(peers.support_until(t0, Some(7)), Some(t0 + timing.support));
//! assert_eq!(peers.support_until(t0 + timing.support, Some(7)), None);
//! // It reaches etcd again and names our lease (7): still a support.
//! let naming = Report::new(false, false, false, Some(t0)).naming(Some(7));
//! peers.received(0, naming, t0 + Duration::from_millis(20));
//! assert_eq!(peers.support_until(t0, Some(7)), Some(t0 + timing.support));
//! assert_eq!(peers.support_until(t0, Some(8)), None, "another's lease");
//! ```

use std::time::Duration;

use tokio::time::Instant;

/// The peer link's periods, from the lease's TTL.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct PeerTiming {
    /// How often a director sends its report (it also sends one at once
    /// when its state changes).
    pub heartbeat: Duration,
    /// How long a support counts after the stamp it echoes, and how long
    /// a peer's "holding" counts after its receipt.
    pub support: Duration,
    /// How long after its last supporting report a director waits before
    /// it adds the VIPs: `support` and a quarter of it for the clocks'
    /// rates.
    pub settle: Duration,
}

impl PeerTiming {
    /// Heartbeat TTL/20, support TTL/5, settle 5/4 of the support (250 ms,
    /// 1 s and 1.25 s for the default TTL of 5 s).
    pub fn for_ttl(ttl: Duration) -> PeerTiming {
        let support = ttl / 5;
        PeerTiming {
            heartbeat: ttl / 20,
            support,
            settle: support + support / 4,
        }
    }
}

/// One peer's report, as this director's state machine takes it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct Report {
    /// The peer cannot reach etcd (its last keepalive failed or its
    /// renewal is overdue).
    pub blind: bool,
    /// The peer believes it was elected.
    pub elected: bool,
    /// The peer holds the VIPs.
    pub holding: bool,
    /// The peer holds the VIPs on its peers' word (its renewal overdue),
    /// not on its lease.
    pub on_peers: bool,
    /// The peer's lease (its key in the election), if it has one.
    pub lease: Option<i64>,
    /// The lease of the leader the peer sees in etcd, named while that
    /// leader holds on its peers' word ([`Peers::leader_named`]): a support of
    /// that leader alone.
    pub names: Option<i64>,
    /// The last stamp of ours the peer had received, as our instant of
    /// sending it; `None` if it had none (or one of our previous run).
    pub echo: Option<Instant>,
}

impl Report {
    /// A report of these flags and echo.
    pub fn new(blind: bool, elected: bool, holding: bool, echo: Option<Instant>) -> Report {
        Report {
            blind,
            elected,
            holding,
            on_peers: false,
            lease: None,
            names: None,
            echo,
        }
    }

    /// The same, from the director of lease `lease`.
    pub fn with_lease(mut self, lease: Option<i64>) -> Report {
        self.lease = lease;
        self
    }

    /// The same, holding the VIPs on its peers' word (`holding` too).
    pub fn held_on_peers(mut self) -> Report {
        self.holding = true;
        self.on_peers = true;
        self
    }

    /// The same, naming the leader of lease `names`.
    pub fn naming(mut self, names: Option<i64>) -> Report {
        self.names = names;
        self
    }

    /// Whether a report like this one can make some other director keep
    /// its VIPs on the peers' word: not elected, and etcd-blind or naming
    /// a leader. (What its sender counts for its settle.)
    pub fn supports(&self) -> bool {
        !self.elected && (self.blind || self.names.is_some())
    }

    /// Whether it supports the hold of the director whose lease is
    /// `lease`: not elected, and etcd-blind or naming that lease.
    ///
    /// ```
    /// use ipvs_agent::fleet::peers::reports::Report;
    /// let reaches_etcd = Report::new(false, false, false, None);
    /// assert!(!reaches_etcd.supports_lease(Some(7)));
    /// assert!(reaches_etcd.naming(Some(7)).supports_lease(Some(7)));
    /// assert!(!reaches_etcd.naming(Some(7)).supports_lease(Some(8)));
    /// assert!(!reaches_etcd.naming(Some(7)).supports_lease(None));
    /// let blind = Report::new(true, false, false, None);
    /// assert!(blind.supports_lease(None));
    /// let elected = Report::new(true, true, false, None).naming(Some(7));
    /// assert!(!elected.supports_lease(Some(7)));
    /// ```
    pub fn supports_lease(&self, lease: Option<i64>) -> bool {
        !self.elected && (self.blind || (self.names.is_some() && self.names == lease))
    }
}

/// The configured peers' latest reports.
#[derive(Clone, Debug)]
pub struct Peers {
    timing: PeerTiming,
    /// Each configured peer's latest report and when it came.
    reports: Vec<Option<(Report, Instant)>>,
    /// When this director last sent a report that could support another's
    /// hold.
    last_support_sent: Option<Instant>,
    /// When this director last sent a report.
    last_sent: Option<Instant>,
}

impl Peers {
    /// `count` configured peers (this director not counted), none heard.
    pub fn new(count: usize, timing: PeerTiming) -> Peers {
        Peers {
            timing,
            reports: vec![None; count],
            last_support_sent: None,
            last_sent: None,
        }
    }

    /// The periods.
    pub fn timing(&self) -> PeerTiming {
        self.timing
    }

    /// How many peers are configured.
    pub fn count(&self) -> usize {
        self.reports.len()
    }

    /// Peer `peer`'s (an index into the configured list) report came at
    /// `now`; it replaces the one before. An index out of range is ignored.
    pub fn received(&mut self, peer: usize, report: Report, now: Instant) {
        if let Some(slot) = self.reports.get_mut(peer) {
            *slot = Some((report, now));
        }
    }

    /// This director sent a report at `now`; `supports` as
    /// [`Report::supports`] says of it.
    pub fn sent(&mut self, supports: bool, now: Instant) {
        if supports {
            self.last_support_sent = Some(now);
        }
        self.last_sent = Some(now);
    }

    /// When this director last sent a report.
    pub fn last_sent(&self) -> Option<Instant> {
        self.last_sent
    }

    /// Peer `peer`'s latest report and when it came.
    pub fn report(&self, peer: usize) -> Option<(Report, Instant)> {
        self.reports.get(peer).copied().flatten()
    }

    /// Until when every configured peer supports the hold of this
    /// director, of lease `lease` ([`Report::supports_lease`]), counted
    /// from the stamps they echo; `None` if one does not now (or there is
    /// no peer: a director alone has no second opinion).
    pub fn support_until(&self, now: Instant, lease: Option<i64>) -> Option<Instant> {
        if self.reports.is_empty() {
            return None;
        }
        let mut until: Option<Instant> = None;
        for slot in &self.reports {
            let (report, _) = (*slot)?;
            if !report.supports_lease(lease) {
                return None;
            }
            let end = report.echo? + self.timing.support;
            if end <= now {
                return None;
            }
            until = Some(until.map_or(end, |u| u.min(end)));
        }
        until
    }

    /// The lease this director names in its report at `now` (see
    /// [`Report::names`]): `seen`, the lease of the election's leader key
    /// in etcd's last answer to this director, when this director is not
    /// elected, `seen` is not its own lease `own`, and a peer heard less
    /// than `support` ago reports that lease and holding the VIPs on its
    /// peers' word; `None` otherwise. A leader on its lease needs no
    /// naming, so a director that reaches etcd names nobody while etcd
    /// is up (its takeovers wait no settle), and a leader cut off alone
    /// from etcd is not named (it steps down at its lease's deadline).
    ///
    /// ```
    /// use std::time::Duration;
    /// use tokio::time::Instant;
    /// use ipvs_agent::fleet::peers::reports::{PeerTiming, Peers, Report};
    ///
    /// let mut peers = Peers::new(2, PeerTiming::for_ttl(Duration::from_secs(5)));
    /// let t0 = Instant::now();
    /// let leader = Report::new(true, true, true, None).with_lease(Some(7));
    /// peers.received(1, leader, t0);
    /// assert_eq!(peers.leader_named(Some(7), Some(9), false, t0), None, "on its lease");
    /// peers.received(1, leader.held_on_peers(), t0);
    /// assert_eq!(peers.leader_named(Some(7), Some(9), false, t0), Some(7));
    /// assert_eq!(peers.leader_named(Some(7), Some(9), true, t0), None, "elected");
    /// assert_eq!(peers.leader_named(Some(8), Some(9), false, t0), None, "another key");
    /// assert_eq!(peers.leader_named(Some(7), Some(9), false, t0 + Duration::from_secs(1)), None, "heard 1 s ago");
    /// ```
    pub fn leader_named(
        &self,
        seen: Option<i64>,
        own: Option<i64>,
        elected: bool,
        now: Instant,
    ) -> Option<i64> {
        let seen = seen.filter(|s| !elected && Some(*s) != own)?;
        let asking =
            self.reports.iter().flatten().any(|(r, at)| {
                r.lease == Some(seen) && r.on_peers && now < *at + self.timing.support
            });
        asking.then_some(seen)
    }

    /// The earliest instant this director may add the VIPs on becoming
    /// leader: `settle` after its last supporting report, and `support`
    /// after the last report of a peer that said it holds them.
    pub fn takeover_at(&self) -> Option<Instant> {
        let own = self.last_support_sent.map(|t| t + self.timing.settle);
        let holders = self
            .reports
            .iter()
            .flatten()
            .filter(|(r, _)| r.holding)
            .map(|(_, at)| *at + self.timing.support)
            .max();
        own.max(holders)
    }
}
