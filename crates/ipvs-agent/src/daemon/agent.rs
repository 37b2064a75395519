//! The daemon loop: checks due run through the [`Prober`], their results
//! move each server's health, the desired table follows, syncs carry it to
//! the kernel (coalesced, retried, a periodic resync repairing what
//! changed behind the agent's back); reloads and stop come through the
//! [`Handle`]. At start the kernel's table is adopted (`daemon/startup.rs`)
//! and the services the ownership record holds that the file no longer
//! has are retired (`daemon/owned.rs`, `daemon/retiring.rs`).

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use ipvsnl::sync::{DestinationId, Ownership, Table};
use ipvsnl::ServiceKey;
use tokio::sync::mpsc;
use tokio::time::{sleep_until, Instant};

use crate::check::{Health, HealthBook, Outcome};
use crate::config::Config;
use crate::daemon::changes::{positions, Positions};
use crate::daemon::checks::{CheckResult, Checks};
use crate::daemon::connect::Connector;
use crate::daemon::control::{AgentState, Command, Handle, ServerState, Shared, SyncSummary};
use crate::daemon::limits::checks_in_flight_cap;
use crate::daemon::notify::Notifier;
use crate::daemon::options::AgentOptions;
use crate::daemon::owned::Owned;
use crate::daemon::reloading::Reloading;
use crate::daemon::retiring::Retiring;
use crate::daemon::startup::Startup;
use crate::daemon::syncing::{Done, Syncing};
use crate::desired::{desired, desired_service, plan_options};
use crate::probe::Prober;

mod reload;

/// The longest the loop waits, at exit, for a sync in flight.
const STOP_WAIT: Duration = Duration::from_secs(10);

/// A director daemon: its configuration, the kernel it keeps, the prober
/// that checks its servers. [`Agent::run`] runs it until it is stopped
/// through its [`Handle`].
#[derive(Debug)]
pub struct Agent {
    config: Arc<Config>,
    connector: Connector,
    prober: Arc<dyn Prober>,
    options: AgentOptions,
    commands: mpsc::UnboundedReceiver<Command>,
    handle: Handle,
    /// The record of the services it created (`daemon/agent_owns.rs`).
    pub(super) ownership: Option<Ownership>,
}

impl std::fmt::Debug for dyn Prober {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Prober")
    }
}

/// The loop's state.
struct Looping {
    config: Arc<Config>,
    /// Where each service of `config` is.
    positions: Positions,
    /// The table the kernel should hold, kept between syncs: a reload or
    /// a server's transition changes the entries of its services only, so
    /// that a sync from the syncer's view plans those only.
    table: Table,
    generation: u64,
    book: HealthBook,
    checks: Checks,
    syncing: Syncing,
    changed: HashMap<DestinationId, Instant>,
    /// The services waiting for their servers' first results (`None`: none).
    startup: Option<Startup>,
    /// The services recorded as the agent's that the file no longer has.
    retiring: Retiring,
    resync_at: Instant,
    ready: bool,
    /// The sync in flight started with every service settled: it readies.
    readying: bool,
    syncs: u64,
    last_sync: Option<SyncSummary>,
    shared: Arc<Shared>,
    /// The reload under way, if any.
    reloading: Option<Reloading>,
}

impl Agent {
    /// An agent of `config` on the kernel `connector` reaches, its servers
    /// checked by `prober`.
    pub fn new(
        config: Config,
        connector: Connector,
        prober: Arc<dyn Prober>,
        options: AgentOptions,
    ) -> Self {
        let (tx, rx) = mpsc::unbounded_channel();
        Agent {
            config: Arc::new(config),
            connector,
            prober,
            options,
            commands: rx,
            handle: Handle {
                commands: tx,
                shared: Arc::new(Shared::default()),
            },
            ownership: None,
        }
    }

    /// Its handle.
    pub fn handle(&self) -> Handle {
        self.handle.clone()
    }

    /// Runs until stopped. The kernel's table is adopted (listed before
    /// the first check, `daemon/startup.rs`); a sync sends only the
    /// differences. `Err` when the first client cannot be opened or the
    /// kernel's table cannot be listed.
    pub async fn run(mut self) -> Result<(), ipvsnl::Error> {
        let client = self.connector.connect().await?;
        let config = Arc::clone(&self.config);
        let owned = Owned::new(self.ownership.take());
        let mut syncing =
            Syncing::new(self.connector.clone(), plan_options(&config), client, owned);
        let found = syncing.list().await?;
        let retiring = Retiring::new(&config, &found, &syncing.recorded());
        let now = Instant::now();
        let mut book = HealthBook::new();
        book.reconcile(&config);
        let startup = Startup::new(&config, found, &mut book, now, config.agent.start_wait);
        let cap = self
            .options
            .max_checks_in_flight
            .unwrap_or_else(|| checks_in_flight_cap(ipvsnl_exporter::open_files_limit()));
        let mut checks = Checks::new(cap);
        checks.reconcile(&config, now);
        let shared = Arc::clone(&self.handle.shared);
        shared.metrics().reconcile(&config, |id| book.health(id));
        tracing::info!(
            services = config.services.len(),
            servers = book.len(),
            max_checks_in_flight = cap,
            kernel = %self.connector,
            "agent started"
        );
        let mut table = desired(&config, |key, rs| {
            book.health(&(*key, rs.destination.addr, rs.destination.port))
        })
        .table;
        startup.hold_all(&mut table);
        retiring.hold_all(&mut table);
        let mut l = Looping {
            retiring,
            syncing,
            resync_at: now + config.agent.resync,
            positions: positions(&config),
            table,
            config,
            generation: 0,
            book,
            checks,
            changed: HashMap::new(),
            // Over at once when no server waits for a first result (a
            // file without checks): nothing would end it otherwise, and
            // no sync would count for readiness.
            startup: Some(startup).filter(|s| !s.is_over()),
            ready: false,
            readying: false,
            syncs: 0,
            last_sync: None,
            shared,
            reloading: None,
        };
        loop {
            let now = Instant::now();
            l.maybe_sync(now);
            let wake = [
                l.checks.next_due(),
                l.checks.next_deadline(),
                l.syncing.wake(),
                Some(l.resync_at),
                l.startup.as_ref().and_then(Startup::deadline),
            ]
            .into_iter()
            .flatten()
            .min()
            .unwrap_or(l.resync_at);
            tokio::select! {
                biased;
                command = self.commands.recv() => match command {
                    Some(Command::Stop(remove)) => {
                        let remove = remove.unwrap_or(self.options.remove_on_exit);
                        l.stop(remove, self.options.notifier.as_ref()).await;
                        return Ok(());
                    }
                    Some(Command::Reload(answer)) => l.reload(&self.options, answer),
                    Some(Command::Apply(config, answer)) => {
                        l.apply_given(*config, &self.options);
                        let _ = answer.send(());
                    }
                    Some(Command::State(answer)) => {
                        let _ = answer.send(l.state());
                    }
                    // The agent holds a sender itself: not reached.
                    None => return Ok(()),
                },
                (loaded, reloading) = Reloading::done(&mut l.reloading) => {
                    l.reloaded(loaded, reloading, &self.options);
                }
                done = l.syncing.wait() => {
                    l.synced(done, self.options.notifier.as_ref());
                }
                result = l.checks.next_result() => {
                    if let Some((r, kind)) = result {
                        l.checked(r, kind);
                    }
                    // Every check that has ended too, in this turn: one
                    // turn of the loop (its wake-up computed, its sleep
                    // armed) for a burst of results, not one each.
                    while let Some(result) = l.checks.ended() {
                        if let Some((r, kind)) = result {
                            l.checked(r, kind);
                        }
                    }
                }
                () = sleep_until(wake) => {
                    let now = Instant::now();
                    l.checks.expire(now);
                    l.wait_over(now);
                    l.checks.start_due(now, &self.prober);
                    let (overlapping, deferred) = l.checks.take_not_started();
                    if overlapping + deferred > 0 {
                        l.shared.metrics().not_started(overlapping, deferred);
                    }
                    if now >= l.resync_at {
                        l.resync_at = now + l.config.agent.resync;
                        l.rebuild();
                        l.syncing.request(true);
                    }
                }
            }
        }
    }
}

impl Looping {
    /// Starts a sync if one is due (none while every service waits).
    fn maybe_sync(&mut self, now: Instant) {
        if self.startup.as_ref().is_some_and(|s| !s.may_sync()) {
            return;
        }
        if !self.syncing.due(now) {
            return;
        }
        self.readying = self.startup.is_none();
        // A copy that shares the entries (and the journal of the changes
        // since the last sync): what the syncer plans from.
        self.syncing.start(self.table.clone(), self.generation);
    }

    /// The desired table computed again, whole: at each periodic resync,
    /// which lists and plans the whole table anyway (the kept one is
    /// exact by construction; this bounds the life of any drift).
    fn rebuild(&mut self) {
        let book = &self.book;
        self.table = desired(&self.config, |key, rs| {
            book.health(&(*key, rs.destination.addr, rs.destination.port))
        })
        .table;
        if let Some(s) = &self.startup {
            s.hold_all(&mut self.table);
        }
        self.retiring.hold_all(&mut self.table);
    }

    /// At start, the service `key` is settled: its entry is decided.
    fn settled(&mut self, key: ServiceKey) {
        if let Some(&at) = self.positions.get(&key) {
            self.redecide(at);
        }
        self.syncing.request(false);
        if self.startup.as_ref().is_some_and(Startup::is_over) {
            self.startup = None;
            tracing::info!("every service settled");
        }
    }

    /// At start, settles the services still waiting once `start_wait` has
    /// passed.
    fn wait_over(&mut self, now: Instant) {
        let keys = self.startup.as_mut().map(|s| s.expire(now));
        for key in keys.into_iter().flatten() {
            self.settled(key);
        }
    }

    /// The desired table's entry of the service at `at` in the
    /// configuration, computed again (its configuration or a server's
    /// health changed).
    fn redecide(&mut self, at: usize) {
        let vs = &self.config.services[at];
        let key = vs.service.key;
        if self
            .startup
            .as_ref()
            .is_some_and(|s| s.hold(&key, &mut self.table))
        {
            return;
        }
        let book = &self.book;
        let (_, destinations) = desired_service(vs, |rs| {
            book.health(&(key, rs.destination.addr, rs.destination.port))
        });
        match destinations {
            Some(d) => self.table.insert(vs.service.clone(), d),
            None => {
                self.table.remove(&key);
            }
        }
    }

    /// A check ended.
    fn checked(&mut self, r: CheckResult, kind: &'static str) {
        let failure = match &r.outcome {
            Outcome::Fail(f) => Some(f),
            Outcome::Inconclusive(why) => {
                self.short(&r, kind, why);
                return;
            }
            _ => None,
        };
        self.shared.metrics().check(&r.id, kind, r.took, failure);
        let transition = self.book.record(&r.id, &r.outcome);
        if self.startup.as_mut().is_some_and(|s| s.answered(&r.id)) {
            self.settled(r.id.0);
        }
        let Some(t) = transition else {
            return;
        };
        let (key, addr, port) = r.id;
        let server = std::net::SocketAddr::new(addr, port);
        let at = self.positions.get(&key).copied();
        let name = at
            .and_then(|i| self.config.services[i].name.clone())
            .unwrap_or_default();
        match t.to {
            Health::Up => tracing::info!(
                service = %key, name, server = %server, check = kind, reason = %t.reason,
                "server up"
            ),
            _ => tracing::warn!(
                service = %key, name, server = %server, check = kind, reason = %t.reason,
                "server down"
            ),
        }
        self.shared.metrics().transition(&r.id, t.to);
        self.changed.insert(r.id, Instant::now());
        if let Some(at) = at {
            self.redecide(at);
        }
        self.syncing.request(false);
    }

    /// A check the director could not run, short of descriptors,
    /// buffers, memory or ports: counted and logged, the server's health
    /// left as it is (at start, its service waits on, up to `start_wait`).
    fn short(&mut self, r: &CheckResult, kind: &'static str, why: &str) {
        let server = std::net::SocketAddr::new(r.id.1, r.id.2);
        tracing::warn!(
            service = %r.id.0, server = %server, check = kind, error = why,
            "check not run: the director is short of resources"
        );
        self.shared.metrics().inconclusive(kind);
    }

    /// A sync ended.
    fn synced(&mut self, done: Done, notifier: Option<&Notifier>) {
        let now = Instant::now();
        let (took, listed) = (done.took, done.listed);
        let summary = match &done.result {
            Ok(report) => {
                let failed = report.failed();
                let complete = report.is_complete();
                if complete {
                    tracing::info!(
                        requests = report.requests().len(),
                        listed,
                        took_ms = took.as_millis() as u64,
                        "sync"
                    );
                } else {
                    for (request, error) in report.failures() {
                        tracing::error!(request = %request, error = %error, "sync request failed");
                    }
                    tracing::error!(
                        requests = report.requests().len(),
                        failed,
                        conflicts = report.conflicts().len(),
                        unknown = report.unknown().len(),
                        listed,
                        "sync incomplete, retrying"
                    );
                }
                let result = if complete { "complete" } else { "incomplete" };
                self.shared
                    .metrics()
                    .sync(result, took, report.done(), failed);
                SyncSummary {
                    finished: now,
                    requests: report.requests().len(),
                    complete,
                    listed,
                }
            }
            Err(e) => {
                tracing::error!(error = %e, listed, "sync failed, retrying");
                self.shared.metrics().sync("error", took, 0, 0);
                SyncSummary {
                    finished: now,
                    requests: 0,
                    complete: false,
                    listed,
                }
            }
        };
        self.syncs += 1;
        self.last_sync = Some(summary);
        if done.result.is_ok() && !self.ready && self.readying {
            self.ready = true;
            self.shared.metrics().set_ready();
            tracing::info!("ready: every service is synced");
            if let Some(n) = notifier {
                n.tell("READY=1\nSTATUS=every service is synced");
            }
        }
        self.syncing.finish(done, now, self.config.agent.resync);
        if self.retiring.update(self.syncing.view(), &mut self.table) {
            self.syncing.request(false);
        }
    }

    /// Stops: the sync in flight ends (or is dropped after a while), then,
    /// with `remove`, the agent's services are removed.
    async fn stop(&mut self, remove: bool, notifier: Option<&Notifier>) {
        if let Some(n) = notifier {
            n.tell("STOPPING=1");
        }
        let resync = self.config.agent.resync;
        if self.syncing.busy() {
            self.syncing.settle(STOP_WAIT, resync).await;
        }
        if !remove {
            tracing::info!("stopped, the table left as it is");
            return;
        }
        match self.syncing.remove_all().await {
            Ok(report) if report.is_complete() => tracing::info!(
                requests = report.requests().len(),
                "stopped, the agent's services removed"
            ),
            Ok(report) => tracing::error!(
                requests = report.requests().len(),
                failed = report.failed(),
                "stopped, the agent's services not all removed"
            ),
            Err(e) => tracing::error!(error = %e, "stopped, the agent's services not removed"),
        }
    }

    /// A snapshot for the handle.
    fn state(&self) -> AgentState {
        let servers = self
            .config
            .services
            .iter()
            .flat_map(|vs| {
                vs.servers
                    .iter()
                    .map(move |rs| (vs.service.key, rs.destination.addr, rs.destination.port))
            })
            .map(|id| ServerState {
                id,
                health: self.book.health(&id),
                changed: self.changed.get(&id).copied(),
            })
            .collect();
        AgentState {
            config: Arc::clone(&self.config),
            servers,
            ready: self.ready,
            syncs: self.syncs,
            last_sync: self.last_sync,
            reload_errors: self.shared.metrics().reload_errors(),
        }
    }
}
