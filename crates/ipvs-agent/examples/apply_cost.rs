//! What one change costs a director, for a profiler: an agent ([`Agent`])
//! of SERVICES TCP services (2 servers each by direct routing, no check:
//! the fleet's VM proof's configuration) on an emulated kernel (no root, no
//! module), to which CHANGES changes of one service's weight are made one
//! after the other, each as a fleet's watcher makes it (the new
//! configuration assembled from the values it holds parsed and the one
//! value put, [`parse_keys`]) and hands it to the agent ([`Handle::apply`]),
//! until the emulated kernel has the new weight; then FLAPS health
//! transitions of the one server that is checked (service 0's first, its
//! prober told down, then up) until the kernel has its weight 0, then back.
//!
//! Each change runs in [`one_change`], each flap in [`one_flap`] (never
//! inlined), so that callgrind counts them apart:
//!
//! ```sh
//! cargo build --release -p ipvs-agent --features fleet --example apply_cost
//! valgrind --tool=callgrind --callgrind-out-file=apply.out \
//!     target/release/examples/apply_cost 10000 10 10
//! callgrind_annotate --inclusive=yes apply.out | grep -E 'one_change|one_flap|parse_keys|Looping::apply|desired|sync_cached'
//! ```
//!
//! The inclusive cost of `one_change` over CHANGES is a change's cost from
//! the watch event to the kernel request (the request itself to the
//! emulated kernel included); `one_flap`'s over 2 x FLAPS a transition's.

use std::collections::HashSet;
use std::fmt::Write as _;
use std::net::{IpAddr, SocketAddr};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use ipvs_agent::check::{Failure, Outcome};
use ipvs_agent::config::{parse_str, Config, HealthCheck};
use ipvs_agent::daemon::{Agent, AgentOptions, Connector, Handle};
use ipvs_agent::fleet::store::layout::entries;
use ipvs_agent::fleet::store::values::{parse_keys, parse_values, ParseCache};
use ipvs_agent::probe::{ProbeFuture, Prober};
use ipvsnl::emulator::Kernel;
use ipvsnl::{AsyncClient, ServiceKey};

/// The base of the entries' keys (what the watcher's errors name).
const BASE: &str = "/cost/entries/";

/// A prober that answers from a set of servers down.
#[derive(Default)]
struct Switch {
    down: Mutex<HashSet<SocketAddr>>,
}

impl Prober for Switch {
    fn probe(&self, server: SocketAddr, _check: Arc<HealthCheck>) -> ProbeFuture {
        let down = self.down.lock().unwrap().contains(&server);
        Box::pin(async move {
            if down {
                Outcome::Fail(Failure::Refused)
            } else {
                Outcome::Pass
            }
        })
    }
}

fn service_addr(i: usize) -> IpAddr {
    IpAddr::from([
        10,
        200 + (i / 65536) as u8,
        (i / 256 % 256) as u8,
        (i % 256) as u8,
    ])
}

/// The configuration: service `changed`'s first server of weight `weight`.
fn text(n: usize, changed: usize, weight: u32) -> String {
    let mut t = String::from("[agent]\nresync = \"10m\"\n");
    for i in 0..n {
        let _ = write!(
            t,
            "[[service]]\nprotocol = \"tcp\"\naddress = \"{}\"\nport = 80\n",
            service_addr(i)
        );
        if i == 0 {
            t.push_str(
                "check = { kind = \"tcp\", interval = \"100ms\", timeout = \"50ms\", rise = 1, fall = 1 }\n",
            );
        }
        for s in ["10.0.0.11", "10.0.0.12"] {
            let w = if i == changed && s == "10.0.0.11" {
                weight
            } else {
                1
            };
            let _ = write!(
                t,
                "[[service.server]]\naddress = \"{s}\"\nport = 80\nweight = {w}\nforward = \"route\"\n"
            );
        }
    }
    t
}

fn weight(kernel: &Kernel, key: &ServiceKey, server: IpAddr) -> Option<u32> {
    let s = kernel.init_netns().service(key)?;
    s.destinations
        .iter()
        .find(|d| d.destination.addr == server)
        .map(|d| d.destination.weight)
}

/// Waits until the kernel's `server` of `key` has weight `want`.
async fn until(kernel: &Kernel, key: &ServiceKey, server: IpAddr, want: u32) {
    while weight(kernel, key, server) != Some(want) {
        tokio::time::sleep(Duration::from_micros(200)).await;
    }
}

/// One change: the watcher's assembly, the agent's apply, its sync.
#[inline(never)]
fn one_change(
    runtime: &tokio::runtime::Runtime,
    handle: &Handle,
    kernel: &Kernel,
    cache: &mut ParseCache,
    keys: &[(String, Option<Vec<u8>>)],
    key: &ServiceKey,
    want: u32,
) {
    let config = parse_keys(
        BASE,
        keys.iter().map(|(k, v)| (k.as_str(), v.as_deref())),
        cache,
    )
    .unwrap_or_else(|e| panic!("{e}"));
    runtime.block_on(async {
        assert!(handle.apply(config).await);
        until(kernel, key, "10.0.0.11".parse().unwrap(), want).await;
    });
}

/// One health transition of service 0's first server, to `down` or back.
#[inline(never)]
fn one_flap(runtime: &tokio::runtime::Runtime, switch: &Switch, kernel: &Kernel, down: bool) {
    let server: SocketAddr = "10.0.0.11:80".parse().unwrap();
    if down {
        switch.down.lock().unwrap().insert(server);
    } else {
        switch.down.lock().unwrap().remove(&server);
    }
    let key = ServiceKey::tcp(service_addr(0), 80);
    runtime.block_on(until(kernel, &key, server.ip(), if down { 0 } else { 1 }));
}

fn main() {
    let args: Vec<usize> = std::env::args()
        .skip(1)
        .filter_map(|a| a.parse().ok())
        .collect();
    let [services, changes, flaps] = args[..] else {
        eprintln!("usage: apply_cost SERVICES CHANGES FLAPS");
        std::process::exit(2);
    };
    let changed = services / 2;
    let key = ServiceKey::tcp(service_addr(changed), 80);
    let parse = |w: u32| {
        parse_str("apply-cost.toml", &text(services, changed, w)).unwrap_or_else(|e| panic!("{e}"))
    };
    let first: Config = parse(1);
    // What the watcher holds: the values parsed, by key; and each change's
    // keys, with the one value it put (the publisher's work, done here
    // before anything is counted).
    let mut cache = ParseCache::new();
    parse_values(BASE, &entries(&first), &mut cache).unwrap_or_else(|e| panic!("{e}"));
    let rounds: Vec<Vec<(String, Option<Vec<u8>>)>> = (0..changes)
        .map(|round| {
            let old = entries(&first);
            let new = entries(&parse(2 + round as u32));
            new.into_iter()
                .zip(old)
                .map(|((k, v), (o, _))| if k == o { (k, None) } else { (k, Some(v)) })
                .collect()
        })
        .collect();
    let kernel = Kernel::new();
    let emulated = kernel.clone();
    let connector = Connector::new("an emulated kernel", move || {
        let kernel = emulated.clone();
        Box::pin(async move { Ok(AsyncClient::emulated(&kernel)) })
    });
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a runtime");
    let switch = Arc::new(Switch::default());
    let agent = Agent::new(
        first,
        connector,
        Arc::clone(&switch) as Arc<dyn Prober>,
        AgentOptions::default(),
    );
    let handle = agent.handle();
    let task = runtime.spawn(agent.run());
    let last = ServiceKey::tcp(service_addr(services - 1), 80);
    runtime.block_on(until(&kernel, &last, "10.0.0.12".parse().unwrap(), 1));
    for (round, keys) in rounds.iter().enumerate() {
        one_change(
            &runtime,
            &handle,
            &kernel,
            &mut cache,
            keys,
            &key,
            2 + round as u32,
        );
    }
    for _ in 0..flaps {
        one_flap(&runtime, &switch, &kernel, true);
        one_flap(&runtime, &switch, &kernel, false);
    }
    handle.stop();
    let _ = runtime.block_on(task);
    println!("changes {changes} flaps {flaps}");
}
