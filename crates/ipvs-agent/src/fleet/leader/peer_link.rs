//! The peer link: this director's report sent over UDP to every
//! configured peer every [`PeerTiming::heartbeat`] and at once when it
//! changes, and the peers' reports received, checked and handed to the
//! election's state machine ([`Leadership`]). The rule they feed is
//! [`reports`](crate::fleet::peers::reports)'; the datagram is
//! [`datagram`](crate::fleet::peers::datagram)'s.
//!
//! ```no_run
//! use ipvs_agent::fleet::leader::peer_link::{PeerLink, PeerLinkOptions};
//! let options = PeerLinkOptions::new(
//!     "10.0.0.1:7946".parse().unwrap(),
//!     vec!["10.0.0.2:7946".parse().unwrap(), "10.0.0.3:7946".parse().unwrap()],
//!     b"the fleet's secret".to_vec(),
//! );
//! let link = PeerLink::bind(options).expect("bind the peer link's address");
//! ```

use std::collections::HashMap;
use std::io;
use std::net::{SocketAddr, UdpSocket as StdSocket};
use std::time::{SystemTime, UNIX_EPOCH};

use tokio::net::UdpSocket;
use tokio::sync::{mpsc, watch};
use tokio::time::{interval, Instant, MissedTickBehavior};

use crate::fleet::leader::state_machine::{Event, Leadership};
use crate::fleet::peers::datagram::{Datagram, MAX_LEN};
use crate::fleet::peers::reports::{PeerTiming, Report};

/// Where the link listens, its peers, its key.
#[derive(Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct PeerLinkOptions {
    /// `--peer-listen`: this director's address on the link, and its id
    /// (its peers list it in their `--peers`).
    pub listen: SocketAddr,
    /// `--peers`: every other director's `--peer-listen` address.
    pub peers: Vec<SocketAddr>,
    /// The HMAC key (`--peer-key FILE`'s content, else the etcd prefix).
    pub key: Vec<u8>,
}

impl std::fmt::Debug for PeerLinkOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PeerLinkOptions")
            .field("listen", &self.listen)
            .field("peers", &self.peers)
            .field("key", &"(hidden)")
            .finish()
    }
}

impl PeerLinkOptions {
    /// This director on `listen`, its `peers`, the `key`.
    pub fn new(listen: SocketAddr, peers: Vec<SocketAddr>, key: Vec<u8>) -> PeerLinkOptions {
        PeerLinkOptions { listen, peers, key }
    }
}

/// A bound peer link, ready to run with an election.
#[derive(Debug)]
pub struct PeerLink {
    options: PeerLinkOptions,
    socket: StdSocket,
}

impl PeerLink {
    /// Binds the listening address (an error names it).
    pub fn bind(options: PeerLinkOptions) -> io::Result<PeerLink> {
        let socket = StdSocket::bind(options.listen).map_err(|e| {
            io::Error::new(e.kind(), format!("peer link: bind {}: {e}", options.listen))
        })?;
        socket.set_nonblocking(true)?;
        Ok(PeerLink { options, socket })
    }

    /// How many peers are configured.
    pub fn peer_count(&self) -> usize {
        self.options.peers.len()
    }

    /// Runs the link (a task on the current runtime) until `out` closes:
    /// reports sent from the machine `state` publishes, each send and each
    /// peer's report given to `out` as the machine's [`Event`]s.
    pub fn spawn(
        self,
        timing: PeerTiming,
        state: watch::Receiver<Leadership>,
        out: mpsc::Sender<Event>,
    ) -> io::Result<tokio::task::JoinHandle<()>> {
        let socket = UdpSocket::from_std(self.socket)?;
        let boot = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos() as u64);
        let task = Task {
            options: self.options,
            socket,
            epoch: Instant::now(),
            boot,
            heard: HashMap::new(),
            last_sent: None,
        };
        Ok(tokio::spawn(task.run(timing, state, out)))
    }
}

struct Task {
    options: PeerLinkOptions,
    socket: UdpSocket,
    /// The instant stamp 0 stands for.
    epoch: Instant,
    boot: u64,
    /// Each peer's last boot and stamp accepted.
    heard: HashMap<SocketAddr, (u64, u64)>,
    /// The last report sent (without its echo).
    last_sent: Option<Report>,
}

impl Task {
    async fn run(
        mut self,
        timing: PeerTiming,
        mut state: watch::Receiver<Leadership>,
        out: mpsc::Sender<Event>,
    ) {
        let mut beat = interval(timing.heartbeat);
        beat.set_missed_tick_behavior(MissedTickBehavior::Delay);
        let mut buffer = vec![0u8; MAX_LEN];
        loop {
            tokio::select! {
                _ = beat.tick() => {
                    let report = state.borrow().report(Instant::now());
                    if !self.send(report, &out).await {
                        return;
                    }
                }
                changed = state.changed() => {
                    if changed.is_err() {
                        return;
                    }
                    let report = state.borrow_and_update().report(Instant::now());
                    if Some(report) != self.last_sent && !self.send(report, &out).await {
                        return;
                    }
                }
                received = self.socket.recv_from(&mut buffer) => {
                    let Ok((len, source)) = received else { continue };
                    // A report the election has no room for now is
                    // dropped: the next one says as much.
                    if let Some(event) = self.receive(&buffer[..len], source) {
                        if let Err(mpsc::error::TrySendError::Closed(_)) = out.try_send(event) {
                            return;
                        }
                    }
                }
            }
        }
    }

    /// Sends `report` to every peer; `false` once the election is gone.
    async fn send(&mut self, report: Report, out: &mpsc::Sender<Event>) -> bool {
        let stamp = self.epoch.elapsed().as_millis() as u64;
        let datagram = Datagram {
            from: self.options.listen,
            boot: self.boot,
            stamp,
            blind: report.blind,
            elected: report.elected,
            holding: report.holding,
            on_peers: report.on_peers,
            lease: report.lease,
            names: report.names,
            echo: self
                .heard
                .iter()
                .map(|(peer, (boot, stamp))| (*peer, *boot, *stamp))
                .collect(),
        };
        let named_before = self.last_sent.and_then(|r| r.names);
        if report.names != named_before {
            match report.names {
                Some(lease) => tracing::info!(
                    lease,
                    "peer link: naming the leader etcd shows (it holds on its peers' word)"
                ),
                None => tracing::info!("peer link: naming no leader"),
            }
        }
        let bytes = datagram.encode(&self.options.key);
        for peer in &self.options.peers {
            if let Err(e) = self.socket.send_to(&bytes, peer).await {
                tracing::debug!(%peer, error = %e, "peer link: send failed");
            }
        }
        self.last_sent = Some(report);
        // Told after the sends: the machine's "last supporting report"
        // is never earlier than the real one.
        out.send(Event::ReportSent {
            supports: report.supports(),
        })
        .await
        .is_ok()
    }

    /// A datagram from `source`: the event it makes, or `None` if it is
    /// not a configured peer's, not authentic, or older than one taken.
    fn receive(&mut self, bytes: &[u8], source: SocketAddr) -> Option<Event> {
        let d = match Datagram::decode(bytes, &self.options.key) {
            Ok(d) => d,
            Err(e) => {
                tracing::debug!(%source, error = %e, "peer link: datagram refused");
                return None;
            }
        };
        let peer = self.options.peers.iter().position(|p| *p == d.from)?;
        if let Some(&(boot, stamp)) = self.heard.get(&d.from) {
            if (d.boot, d.stamp) <= (boot, stamp) {
                return None;
            }
        }
        self.heard.insert(d.from, (d.boot, d.stamp));
        let echo = d
            .echo
            .iter()
            .find(|(me, boot, _)| *me == self.options.listen && *boot == self.boot)
            .map(|(_, _, stamp)| self.epoch + std::time::Duration::from_millis(*stamp))
            .filter(|at| *at <= Instant::now());
        let mut report = Report::new(d.blind, d.elected, d.holding, echo)
            .with_lease(d.lease)
            .naming(d.names);
        if d.on_peers {
            report = report.held_on_peers();
        }
        Some(Event::PeerReport { peer, report })
    }
}
