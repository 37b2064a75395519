//! Leader election through etcd's election API, on a lease: the driver of
//! [`Leadership`]. One task per agent grants a lease, keeps it alive every
//! TTL/3, campaigns, and publishes the agent's [`Status`] on a watch
//! channel; the state machine decides the role (see
//! [`state_machine`](crate::fleet::leader::state_machine): a leader steps down when no
//! keepalive succeeded within TTL - margin, before etcd can let its lease
//! expire).
//!
//! ```no_run
//! # async fn f() -> Result<(), ipvs_agent::fleet::FleetError> {
//! use ipvs_agent::fleet::store::etcd::Etcd;
//! use ipvs_agent::fleet::leader::election::{Election, ElectionOptions};
//! use ipvs_agent::fleet::leader::state_machine::Role;
//!
//! let etcd = Etcd::connect(&["http://127.0.0.1:2379".to_string()]).await?;
//! let election = Election::start(&etcd, ElectionOptions::new("/ipvs-agent/leader", "director-1"));
//! let mut status = election.status();
//! while status.borrow_and_update().role != Role::Leader {
//!     status.changed().await.ok();
//! }
//! election.stop().await;
//! # Ok(()) }
//! ```

use std::time::Duration;

use etcd_client::{Client, LeaderKey, ResignOptions};
use tokio::sync::{mpsc, oneshot, watch};
use tokio::task::JoinHandle;
use tokio::time::{sleep, sleep_until, timeout, Instant};

use crate::fleet::leader::keepalive::{keep_alive, Renewal, Seen, Watching};
use crate::fleet::leader::peer_link::PeerLink;
use crate::fleet::leader::state_machine::{
    Backing, Change, Event, Leadership, Reason, Role, Timing,
};
use crate::fleet::peers::reports::{PeerTiming, Peers};
use crate::fleet::store::etcd::Etcd;

/// How long a campaign that failed (etcd unreachable) waits to try again.
const RETRY: Duration = Duration::from_millis(500);
/// How long resigning and revoking may take when the agent stops.
const STOP_WITHIN: Duration = Duration::from_secs(1);

/// An election to take part in.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct ElectionOptions {
    /// The election's name: the etcd key prefix candidates campaign on.
    pub name: String,
    /// This agent's value in the election (its name, for logs and
    /// `etcdctl elect -l`).
    pub value: String,
    /// The lease's TTL and the step-down margin.
    pub timing: Timing,
}

impl ElectionOptions {
    /// The election `name`, this agent as `value`, the default timing.
    pub fn new(name: impl Into<String>, value: impl Into<String>) -> ElectionOptions {
        ElectionOptions {
            name: name.into(),
            value: value.into(),
            timing: Timing::default(),
        }
    }

    /// The same with `timing`.
    pub fn with_timing(mut self, timing: Timing) -> ElectionOptions {
        self.timing = timing;
        self
    }
}

/// The agent's place in the fleet, as the election's task last saw it.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct Status {
    /// Leader (holds the VIPs) or follower.
    pub role: Role,
    /// When the role last changed (or the task started).
    pub since: Instant,
    /// Why it last changed.
    pub reason: Option<Reason>,
    /// Whether the election says this agent leads.
    pub elected: bool,
    /// When the last answered keepalive was sent.
    pub last_renewal: Option<Instant>,
    /// The lease the agent campaigns on.
    pub lease: Option<i64>,
    /// What lets it hold the VIPs (its lease, or its peers while etcd is
    /// out of reach); `None` for a follower.
    pub backing: Option<Backing>,
}

impl Status {
    /// A status of `role` since `since`, nothing else known (for code
    /// that drives [`lead`](crate::fleet::leader::actions::lead) without an election).
    pub fn new(role: Role, since: Instant) -> Status {
        Status {
            role,
            since,
            reason: None,
            elected: role == Role::Leader,
            last_renewal: None,
            lease: None,
            backing: None,
        }
    }
}

enum Command {
    Resign,
    Stop(oneshot::Sender<()>),
}

/// A running candidate: its status, and the means to resign or stop.
#[derive(Debug)]
pub struct Election {
    status: watch::Receiver<Status>,
    commands: mpsc::Sender<Command>,
    task: JoinHandle<()>,
}

impl Election {
    /// Starts campaigning (a task on the current tokio runtime).
    pub fn start(etcd: &Etcd, options: ElectionOptions) -> Election {
        Election::spawn(etcd, options, None)
    }

    /// Starts campaigning with the peer link's second opinion (its task
    /// too): a leader cut off from etcd keeps its VIPs while every peer
    /// reports etcd out of reach ([`reports`](crate::fleet::peers::reports)).
    pub fn start_with_peers(
        etcd: &Etcd,
        options: ElectionOptions,
        link: PeerLink,
    ) -> std::io::Result<Election> {
        let timing = PeerTiming::for_ttl(options.timing.ttl);
        let machine = Leadership::with_peers(options.timing, Peers::new(link.peer_count(), timing));
        let (state_tx, state) = watch::channel(machine);
        let (events_tx, events) = mpsc::channel(64);
        let link_task = link.spawn(timing, state, events_tx)?;
        Ok(Election::spawn(
            etcd,
            options,
            Some(LinkParts {
                state: state_tx,
                events,
                task: link_task,
            }),
        ))
    }

    fn spawn(etcd: &Etcd, options: ElectionOptions, link: Option<LinkParts>) -> Election {
        let (status_tx, status) = watch::channel(Status::new(Role::Follower, Instant::now()));
        let (commands, command_rx) = mpsc::channel(4);
        let machine = match &link {
            Some(l) => l.state.borrow().clone(),
            None => Leadership::new(options.timing),
        };
        let driver = Driver {
            client: etcd.client(),
            machine,
            options,
            status: status_tx,
            link,
        };
        let task = tokio::spawn(driver.run(command_rx));
        Election {
            status,
            commands,
            task,
        }
    }

    /// The status, updated on every change.
    pub fn status(&self) -> watch::Receiver<Status> {
        self.status.clone()
    }

    /// Gives up leadership (if held) and campaigns again, behind the
    /// candidates already waiting.
    pub async fn resign(&self) {
        let _ = self.commands.send(Command::Resign).await;
    }

    /// Resigns, revokes the lease (each within 1 s) and ends the task.
    pub async fn stop(mut self) {
        let (tx, rx) = oneshot::channel();
        if self.commands.send(Command::Stop(tx)).await.is_ok() {
            let _ = rx.await;
        }
        let _ = (&mut self.task).await;
    }
}

impl Drop for Election {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// What the session's tasks report.
enum Input {
    /// A keepalive sent at the instant was answered with the TTL; then
    /// the election's leader, if it was asked and answered.
    Renewed(Instant, Duration, Option<Seen>),
    KeepaliveFailed,
    LeaseGone,
    Won(LeaderKey),
}

/// One lease's tasks, aborted when dropped.
struct Session {
    lease: i64,
    inputs: mpsc::Receiver<Input>,
    sender: mpsc::Sender<Input>,
    our_key: watch::Sender<Option<Vec<u8>>>,
    leader_key: Option<LeaderKey>,
    keepalive: JoinHandle<()>,
    campaign: Option<JoinHandle<()>>,
}

impl From<Renewal> for Input {
    fn from(renewal: Renewal) -> Input {
        match renewal {
            Renewal::Renewed(sent, ttl, seen) => Input::Renewed(sent, ttl, seen),
            Renewal::Failed => Input::KeepaliveFailed,
            Renewal::LeaseGone => Input::LeaseGone,
        }
    }
}

impl Drop for Session {
    fn drop(&mut self) {
        self.keepalive.abort();
        if let Some(c) = &self.campaign {
            c.abort();
        }
    }
}

/// The peer link's side of the driver: the machine published for its
/// reports, its events, its task (aborted with the driver).
struct LinkParts {
    state: watch::Sender<Leadership>,
    events: mpsc::Receiver<Event>,
    task: JoinHandle<()>,
}

impl Drop for LinkParts {
    fn drop(&mut self) {
        self.task.abort();
    }
}

struct Driver {
    client: Client,
    machine: Leadership,
    options: ElectionOptions,
    status: watch::Sender<Status>,
    link: Option<LinkParts>,
}

/// The peer link's next event; never, without a link.
async fn link_event(link: &mut Option<LinkParts>) -> Option<Event> {
    match link {
        Some(l) => l.events.recv().await,
        None => std::future::pending().await,
    }
}

impl Driver {
    async fn run(mut self, mut commands: mpsc::Receiver<Command>) {
        loop {
            let Some(mut session) = self.grant(&mut commands).await else {
                return;
            };
            loop {
                let deadline = self.machine.deadline();
                tokio::select! {
                    input = session.inputs.recv() => {
                        let Some(input) = input else { break };
                        if !self.input(&mut session, input) {
                            break;
                        }
                    }
                    _ = sleep_until(deadline.unwrap_or_else(Instant::now)), if deadline.is_some() => {
                        let change = self.machine.tick(Instant::now());
                        self.publish(change, Some(session.lease));
                    }
                    Some(event) = link_event(&mut self.link) => {
                        let change = self.machine.handle(event, Instant::now());
                        self.publish(change, Some(session.lease));
                    }
                    command = commands.recv() => match command {
                        Some(Command::Resign) => self.resign(&mut session).await,
                        Some(Command::Stop(done)) => {
                            self.resign(&mut session).await;
                            let mut lease = self.client.lease_client();
                            let _ = timeout(STOP_WITHIN, lease.revoke(session.lease)).await;
                            let _ = done.send(());
                            return;
                        }
                        None => return,
                    },
                }
            }
        }
    }

    /// A new lease and its tasks; `None` when told to stop meanwhile.
    async fn grant(&mut self, commands: &mut mpsc::Receiver<Command>) -> Option<Session> {
        let ttl = self.options.timing.ttl.as_secs() as i64;
        loop {
            let mut lease = self.client.lease_client();
            // The lease lives TTL from its grant, after this instant.
            let sent = Instant::now();
            let grant = timeout(
                self.options.timing.keepalive_interval(),
                lease.grant(ttl, None),
            );
            tokio::pin!(grant);
            let granted = loop {
                tokio::select! {
                    r = &mut grant => break r,
                    command = commands.recv() => match command {
                        Some(Command::Resign) => {}
                        Some(Command::Stop(done)) => { let _ = done.send(()); return None; }
                        None => return None,
                    },
                    // The peers' reports go on meanwhile.
                    Some(event) = link_event(&mut self.link) => {
                        let change = self.machine.handle(event, Instant::now());
                        self.publish(change, None);
                    }
                }
            };
            match granted {
                Ok(Ok(g)) => {
                    let events = [
                        Event::LeaseGranted { lease: g.id() },
                        Event::KeepaliveOk {
                            sent,
                            ttl: Duration::from_secs(g.ttl().max(0) as u64),
                        },
                    ];
                    self.apply(&events, Some(g.id()));
                    tracing::info!(lease = g.id(), ttl = g.ttl(), "election: lease granted");
                    return Some(self.session(g.id()));
                }
                Ok(Err(e)) => tracing::warn!(error = %e, "election: cannot grant a lease"),
                Err(_) => tracing::warn!("election: cannot grant a lease: no answer"),
            }
            sleep(RETRY).await;
        }
    }

    fn session(&self, lease: i64) -> Session {
        let (sender, inputs) = mpsc::channel(16);
        let (our_key, watched) = watch::channel(None);
        let keepalive = tokio::spawn(keep_alive(
            self.client.clone(),
            lease,
            self.options.name.clone(),
            self.options.timing,
            Watching {
                our_key: watched,
                always: self.link.is_some(),
            },
            sender.clone(),
        ));
        let mut session = Session {
            lease,
            inputs,
            sender,
            our_key,
            leader_key: None,
            keepalive,
            campaign: None,
        };
        self.campaign(&mut session);
        session
    }

    fn campaign(&self, session: &mut Session) {
        if let Some(c) = session.campaign.take() {
            c.abort();
        }
        session.campaign = Some(tokio::spawn(campaign(
            self.client.clone(),
            self.options.clone(),
            session.lease,
            session.sender.clone(),
        )));
    }

    /// Applies one input; `false` when the session is over (lease gone).
    /// A renewal and the leader etcd named after it are applied together
    /// and published once: the peer link never reports this agent
    /// reaching etcd without the leader it sees there.
    fn input(&mut self, session: &mut Session, input: Input) -> bool {
        let mut events = Vec::with_capacity(3);
        match input {
            Input::Renewed(sent, ttl, seen) => {
                if let Some(seen) = seen {
                    events.push(Event::LeaderSeen {
                        lease: seen.as_ref().map(|(_, lease)| *lease),
                    });
                    let ours = session.leader_key.as_ref().map(|k| k.key().to_vec());
                    let key = seen.map(|(key, _)| key);
                    if ours.is_some() && key != ours {
                        session.leader_key = None;
                        let _ = session.our_key.send(None);
                        self.campaign(session);
                        events.push(Event::LeaderLost);
                    }
                }
                events.push(Event::KeepaliveOk { sent, ttl });
            }
            Input::KeepaliveFailed => events.push(Event::KeepaliveFailed),
            Input::LeaseGone => events.push(Event::LeaseLost),
            Input::Won(key) => {
                let _ = session.our_key.send(Some(key.key().to_vec()));
                session.leader_key = Some(key);
                events.push(Event::CampaignWon);
            }
        }
        self.apply(&events, Some(session.lease));
        !events.contains(&Event::LeaseLost)
    }

    /// Applies `events` at one instant and publishes the outcome once.
    fn apply(&mut self, events: &[Event], lease: Option<i64>) {
        let now = Instant::now();
        let mut changes = Vec::new();
        for event in events {
            changes.extend(self.machine.handle(*event, now));
        }
        // Each change logged; the status ends with the last.
        if let Some((last, earlier)) = changes.split_last() {
            for c in earlier {
                tracing::info!(from = %c.from, to = %c.to, reason = %c.reason, "election: role changed");
            }
            self.publish(Some(*last), lease);
        } else {
            self.publish(None, lease);
        }
    }

    /// Steps down first (the status says follower: the VIPs go), then
    /// deletes the leader key, which lets the next candidate win.
    async fn resign(&mut self, session: &mut Session) {
        let change = self.machine.handle(Event::Resigned, Instant::now());
        self.publish(change, Some(session.lease));
        if let Some(key) = session.leader_key.take() {
            let _ = session.our_key.send(None);
            let mut election = self.client.election_client();
            let options = ResignOptions::new().with_leader(key);
            if let Ok(Err(e)) = timeout(STOP_WITHIN, election.resign(Some(options))).await {
                tracing::warn!(error = %e, "election: resign failed");
            }
        }
        self.campaign(session);
    }

    fn publish(&self, change: Option<Change>, lease: Option<i64>) {
        let machine = &self.machine;
        self.status.send_if_modified(|s| {
            let before = s.clone();
            if let Some(c) = change {
                tracing::info!(from = %c.from, to = %c.to, reason = %c.reason, "election: role changed");
                s.role = c.to;
                s.since = Instant::now();
                s.reason = Some(c.reason);
            }
            if s.backing != machine.backing() && s.role == Role::Leader && change.is_none() {
                tracing::info!(backing = ?machine.backing(), "election: the VIPs now held on another backing");
            }
            s.elected = machine.elected();
            s.last_renewal = machine.last_renewal();
            s.lease = lease;
            s.backing = machine.backing();
            *s != before
        });
        if let Some(l) = &self.link {
            l.state.send_replace(machine.clone());
        }
    }
}

/// Campaigns until won (etcd's campaign call blocks until then), trying
/// again while etcd is unreachable.
async fn campaign(client: Client, options: ElectionOptions, lease: i64, out: mpsc::Sender<Input>) {
    let mut election = client.election_client();
    loop {
        match election
            .campaign(options.name.as_str(), options.value.as_str(), lease)
            .await
        {
            Ok(mut r) => {
                if let Some(key) = r.take_leader() {
                    let _ = out.send(Input::Won(key)).await;
                    return;
                }
            }
            Err(e) if e.to_string().contains("lease not found") => {
                let _ = out.send(Input::LeaseGone).await;
                return;
            }
            Err(e) => tracing::debug!(error = %e, "election: campaign failed"),
        }
        sleep(RETRY).await;
    }
}
