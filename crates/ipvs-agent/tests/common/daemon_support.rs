//! What the daemon's tests share: a scripted prober (each server's
//! answers set by the test), an agent on an emulated kernel, the kernel's
//! weights and the changes it took. Support, no test: a module of the
//! `host` and `figures` test binaries (`#[path]`).

use std::collections::{HashMap, HashSet, VecDeque};
use std::net::{IpAddr, SocketAddr};
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use ipvs_agent::check::{Failure, Outcome};
use ipvs_agent::config::{parse_str, Config, HealthCheck};
use ipvs_agent::daemon::{Agent, AgentOptions, Connector, Handle};
use ipvs_agent::probe::{ProbeFuture, Prober};
use ipvsnl::emulator::Kernel;
use ipvsnl::{AsyncClient, Request, ServiceKey};
use tokio::task::JoinHandle;

/// Answers set per server: a queue of outcomes taken one per check, then
/// the standing answer (a pass unless set); or no answer ever, a check the
/// daemon must time itself ([`Scripted::hang`]).
#[derive(Debug, Default, Clone)]
pub(crate) struct Scripted {
    inner: Arc<Mutex<Script>>,
}

#[derive(Debug, Default)]
struct Script {
    standing: HashMap<SocketAddr, Outcome>,
    queued: HashMap<SocketAddr, VecDeque<Outcome>>,
    probes: HashMap<SocketAddr, usize>,
    hanging: HashSet<SocketAddr>,
    /// Checks under way now, and the most at once so far.
    in_flight: usize,
    max_in_flight: usize,
}

/// Counts a check under way until it is dropped (ended or timed out).
struct InFlight(Arc<Mutex<Script>>);

impl InFlight {
    fn new(script: &Arc<Mutex<Script>>, s: &mut Script) -> Self {
        s.in_flight += 1;
        s.max_in_flight = s.max_in_flight.max(s.in_flight);
        InFlight(Arc::clone(script))
    }
}

impl Drop for InFlight {
    fn drop(&mut self) {
        self.0.lock().unwrap().in_flight -= 1;
    }
}

impl Scripted {
    /// From now on, `server` answers `outcome`.
    pub(crate) fn set(&self, server: &str, outcome: Outcome) {
        let mut s = self.inner.lock().unwrap();
        s.standing.insert(addr(server), outcome);
    }

    /// `server` fails from now on (refused).
    pub(crate) fn fail(&self, server: &str) {
        self.set(server, Outcome::Fail(Failure::Refused));
    }

    /// `server` passes from now on.
    pub(crate) fn pass(&self, server: &str) {
        self.set(server, Outcome::Pass);
    }

    /// From now on, the checks of `server` never end: each is handed to
    /// the daemon unbounded (`probe_untimed`), for it to time.
    pub(crate) fn hang(&self, server: &str) {
        let mut s = self.inner.lock().unwrap();
        s.hanging.insert(addr(server));
    }

    /// The next checks of `server` answer these, in order.
    pub(crate) fn queue(&self, server: &str, outcomes: impl IntoIterator<Item = Outcome>) {
        let mut s = self.inner.lock().unwrap();
        s.queued.entry(addr(server)).or_default().extend(outcomes);
    }

    /// The most checks under way at once so far.
    pub(crate) fn max_in_flight(&self) -> usize {
        self.inner.lock().unwrap().max_in_flight
    }

    /// How many checks `server` had.
    pub(crate) fn probes(&self, server: &str) -> usize {
        let s = self.inner.lock().unwrap();
        s.probes.get(&addr(server)).copied().unwrap_or(0)
    }
}

impl Prober for Scripted {
    fn probe_untimed(&self, server: SocketAddr, _check: &Arc<HealthCheck>) -> Option<ProbeFuture> {
        let mut s = self.inner.lock().unwrap();
        if !s.hanging.contains(&server) {
            return None;
        }
        *s.probes.entry(server).or_default() += 1;
        let guard = InFlight::new(&self.inner, &mut s);
        Some(Box::pin(async move {
            let _guard = guard;
            std::future::pending().await
        }))
    }

    fn probe(&self, server: SocketAddr, _check: Arc<HealthCheck>) -> ProbeFuture {
        let mut s = self.inner.lock().unwrap();
        *s.probes.entry(server).or_default() += 1;
        let queued = s.queued.get_mut(&server).and_then(VecDeque::pop_front);
        let outcome = queued
            .or_else(|| s.standing.get(&server).cloned())
            .unwrap_or(Outcome::Pass);
        let guard = InFlight::new(&self.inner, &mut s);
        Box::pin(async move {
            // Ends at its first poll, not at its start.
            tokio::task::yield_now().await;
            drop(guard);
            outcome
        })
    }
}

/// `"10.0.0.1"` (port 80) or `"10.0.0.1:8080"` as a socket address.
pub(crate) fn addr(server: &str) -> SocketAddr {
    if let Ok(a) = server.parse() {
        return a;
    }
    SocketAddr::new(server.parse().unwrap(), 80)
}

/// A millisecond and a second of the paused clock.
pub(crate) const MS: Duration = Duration::from_millis(1);
pub(crate) const S: Duration = Duration::from_secs(1);

pub(crate) const A: &str = "10.0.0.1";
pub(crate) const B: &str = "10.0.0.2";
pub(crate) const VIP: &str = "192.0.2.1";

/// The service `VIP:port` over TCP.
pub(crate) fn key(port: u16) -> ServiceKey {
    ServiceKey::tcp(VIP.parse().unwrap(), port)
}

/// A configuration: `[agent]` with `resync`, one TCP service on `VIP:80`
/// with A (weight 10) and B (weight 20), each checked over TCP every 2 s
/// (timeout 1 s, rise 2, fall 3); `extra` is appended.
pub(crate) fn text(resync: &str, b_weight: u32, extra: &str) -> String {
    format!(
        "[agent]\nresync = \"{resync}\"\n\
         [[service]]\nname = \"web\"\nprotocol = \"tcp\"\naddress = \"{VIP}\"\nport = 80\n\
         check = {{ kind = \"tcp\", interval = \"2s\", timeout = \"1s\", rise = 2, fall = 3 }}\n\
         [[service.server]]\naddress = \"{A}\"\nweight = 10\n\
         [[service.server]]\naddress = \"{B}\"\nweight = {b_weight}\n{extra}"
    )
}

pub(crate) fn config(text: &str) -> Config {
    parse_str("t.toml", text).unwrap_or_else(|e| panic!("{e}"))
}

/// A connector to the emulated kernel's initial namespace.
pub(crate) fn connector(kernel: &Kernel) -> Connector {
    let kernel = kernel.clone();
    Connector::new("an emulated kernel", move || {
        let kernel = kernel.clone();
        Box::pin(async move { Ok(AsyncClient::emulated(&kernel)) })
    })
}

/// A running agent.
pub(crate) struct Running {
    pub(crate) handle: Handle,
    pub(crate) task: JoinHandle<Result<(), ipvsnl::Error>>,
}

/// Starts an agent of `config` on `kernel`, checked by `prober`.
pub(crate) fn start(
    kernel: &Kernel,
    config: Config,
    prober: &Scripted,
    options: AgentOptions,
) -> Running {
    let agent = Agent::new(config, connector(kernel), Arc::new(prober.clone()), options);
    let handle = agent.handle();
    let task = tokio::spawn(agent.run());
    Running { handle, task }
}

/// Starts an agent of the usual test file (`text("1h", 20, "")`) with the
/// default options.
pub(crate) fn start_default(kernel: &Kernel, prober: &Scripted) -> Running {
    start(
        kernel,
        config(&text("1h", 20, "")),
        prober,
        AgentOptions::default(),
    )
}

impl Running {
    /// Stops it and waits for its end.
    pub(crate) async fn stop(self, remove: bool) {
        self.handle.stop_removing(remove);
        self.task.await.unwrap().unwrap();
    }
}

/// The weight of `server` in service `key` ("-": absent; "no service").
pub(crate) fn weight(kernel: &Kernel, key: &ServiceKey, server: &str) -> String {
    let a = addr(server);
    let Some(s) = kernel.init_netns().service(key) else {
        return "no service".to_string();
    };
    s.destinations
        .iter()
        .find(|d| d.destination.addr == a.ip() && d.destination.port == a.port())
        .map_or("-".to_string(), |d| d.destination.weight.to_string())
}

/// The changes the kernel took so far.
pub(crate) fn changes(kernel: &Kernel) -> Vec<Request> {
    kernel
        .requests()
        .into_iter()
        .filter(|t| t.is_change())
        .filter_map(|t| t.request)
        .collect()
}

/// Lets the paused clock run `d` (every task runs at each instant first).
pub(crate) async fn advance(d: Duration) {
    tokio::time::sleep(d).await;
}

/// A file of the test's own, with `text`.
pub(crate) fn write_file(name: &str, text: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("ipvs-agent-tests-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    path
}

/// An address as the kernel holds it.
pub(crate) fn ip(s: &str) -> IpAddr {
    s.parse().unwrap()
}
