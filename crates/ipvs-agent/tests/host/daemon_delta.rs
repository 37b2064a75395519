//! A reload that changes a few services of many (what a fleet's generation
//! usually is) is applied for those services only: the others' servers
//! keep their health and schedule and get no request; a changed service's
//! kept servers keep their health; a removed service leaves the kernel, an
//! added one enters it; a retuned check takes effect; a server's
//! transition in a big table sends its service's request alone, planned
//! from the syncer's view (no listing).

use std::fmt::Write as _;

use ipvs_agent::check::Health;
use ipvs_agent::config::Config;
use ipvs_agent::daemon::AgentOptions;
use ipvsnl::emulator::{Connections, Kernel};
use ipvsnl::Stats;
use ipvsnl::{Destination, Request, ServiceKey};

use crate::daemon_support::*;

/// How many services.
const N: usize = 300;

/// Service `i`'s key: `VIP`, port 1000 + `i`.
fn service(i: usize) -> ServiceKey {
    key(1000 + i as u16)
}

/// Service `i`'s first (`j` 1) or second (`j` 2) server.
fn server(i: usize, j: u8) -> String {
    format!("10.{j}.{}.{}", i / 250, i % 250 + 1)
}

/// How one service differs from the base configuration.
#[derive(Clone, Copy)]
enum Edit {
    /// Absent.
    Gone,
    /// Its second server's weight, and a third server (10.3.0.1).
    Reweighted(u32),
    /// Its check falls at the first failure.
    Retuned,
    /// A failing server is removed once drained.
    Drains,
}

/// `n` services, each with two servers of weight 1 checked by TCP every
/// 2 s (rise 2, fall 3), `edits` applied; resync 1 h.
fn big(n: usize, edits: &[(usize, Edit)]) -> Config {
    let mut t = String::from("[agent]\nresync = \"1h\"\n");
    for i in 0..n {
        let edit = edits.iter().find(|(e, _)| *e == i).map(|(_, e)| *e);
        if matches!(edit, Some(Edit::Gone)) {
            continue;
        }
        let fall = if matches!(edit, Some(Edit::Retuned)) {
            1
        } else {
            3
        };
        if matches!(edit, Some(Edit::Drains)) {
            t.push_str("[[service]]\nremove_after_drain = true\n");
        } else {
            t.push_str("[[service]]\n");
        }
        let _ = write!(
            t,
            "name = \"s{i}\"\nprotocol = \"tcp\"\naddress = \"{VIP}\"\nport = {}\n\
             check = {{ kind = \"tcp\", interval = \"2s\", timeout = \"1s\", rise = 2, fall = {fall} }}\n\
             [[service.server]]\naddress = \"{}\"\nport = 80\n",
            1000 + i,
            server(i, 1)
        );
        let w = match edit {
            Some(Edit::Reweighted(w)) => w,
            _ => 1,
        };
        let _ = write!(
            t,
            "[[service.server]]\naddress = \"{}\"\nport = 80\nweight = {w}\n",
            server(i, 2)
        );
        if matches!(edit, Some(Edit::Reweighted(_))) {
            t.push_str("[[service.server]]\naddress = \"10.3.0.1\"\nport = 80\n");
        }
    }
    config(&t)
}

/// The service keys the kernel's changes name, in order, without repeats.
fn touched(kernel: &Kernel) -> Vec<ServiceKey> {
    let mut keys: Vec<ServiceKey> = changes(kernel)
        .iter()
        .map(|r| match r {
            Request::AddService(s) | Request::EditService(s) => s.key,
            Request::DeleteService(k)
            | Request::AddDestination(k, _)
            | Request::EditDestination(k, _)
            | Request::DeleteDestination(k, _, _) => *k,
            other => panic!("not a change of a service: {other:?}"),
        })
        .collect();
    keys.dedup();
    keys
}

#[tokio::test(start_paused = true)]
async fn one_service_changed_in_many_is_applied_alone_and_keeps_its_servers_health() {
    let kernel = Kernel::new();
    let prober = Scripted::default();
    let agent = start(&kernel, big(N, &[]), &prober, AgentOptions::default());
    advance(MS).await;
    // Service 7's first server fails (3 checks), service 8's too.
    prober.fail(&server(7, 1));
    prober.fail(&server(8, 1));
    advance(7 * S).await;
    assert_eq!(weight(&kernel, &service(7), &server(7, 1)), "0");
    assert_eq!(weight(&kernel, &service(8), &server(8, 1)), "0");
    kernel.clear_requests();

    // Service 7: its second server reweighted, a third added.
    assert!(
        agent
            .handle
            .apply(big(N, &[(7, Edit::Reweighted(5))]))
            .await
    );
    advance(MS).await;
    let second = Destination::new(ip(&server(7, 2)), 80).with_weight(5);
    let third = Destination::new(ip("10.3.0.1"), 80);
    assert_eq!(
        changes(&kernel),
        [
            Request::EditDestination(service(7), second),
            Request::AddDestination(service(7), third),
        ]
    );
    let state = agent.handle.state().await.unwrap();
    assert!(!state.last_sync.unwrap().listed, "planned from the view");
    // The changed service's kept server is still down, in the kernel too;
    // the unchanged service's as well.
    assert_eq!(
        state.server(addr(&server(7, 1))).unwrap().health,
        Health::Down
    );
    assert_eq!(weight(&kernel, &service(7), &server(7, 1)), "0");
    assert_eq!(
        state.server(addr(&server(8, 1))).unwrap().health,
        Health::Down
    );
    // Back up after rise (2) passes, in its schedule.
    prober.pass(&server(7, 1));
    advance(4 * S).await;
    assert_eq!(weight(&kernel, &service(7), &server(7, 1)), "1");
    assert_eq!(weight(&kernel, &service(8), &server(8, 1)), "0");
    agent.stop(false).await;
}

#[tokio::test(start_paused = true)]
async fn a_removed_service_leaves_the_kernel_and_an_added_one_enters_it() {
    let kernel = Kernel::new();
    let prober = Scripted::default();
    // Service N - 1 is not there at first.
    let agent = start(
        &kernel,
        big(N, &[(N - 1, Edit::Gone)]),
        &prober,
        AgentOptions::default(),
    );
    advance(MS).await;
    assert_eq!(
        weight(&kernel, &service(N - 1), &server(N - 1, 1)),
        "no service"
    );
    assert_eq!(weight(&kernel, &service(3), &server(3, 1)), "1");
    kernel.clear_requests();

    // Service 3 removed, service N - 1 added.
    assert!(agent.handle.apply(big(N, &[(3, Edit::Gone)])).await);
    advance(MS).await;
    assert_eq!(weight(&kernel, &service(3), &server(3, 1)), "no service");
    assert_eq!(weight(&kernel, &service(N - 1), &server(N - 1, 1)), "1");
    assert_eq!(weight(&kernel, &service(N - 1), &server(N - 1, 2)), "1");
    let mut both = touched(&kernel);
    both.sort();
    assert_eq!(both, [service(3), service(N - 1)]);
    let state = agent.handle.state().await.unwrap();
    assert!(
        !state.last_sync.unwrap().listed,
        "the view kept across the scope's change"
    );
    // The added service's servers are checked, the removed one's no more.
    let before = (
        prober.probes(&server(N - 1, 1)),
        prober.probes(&server(3, 1)),
    );
    advance(4 * S).await;
    assert!(prober.probes(&server(N - 1, 1)) >= before.0 + 2);
    assert_eq!(prober.probes(&server(3, 1)), before.1);
    let state = agent.handle.state().await.unwrap();
    assert_eq!(state.servers.len(), 2 * (N - 1));
    assert!(state.server(addr(&server(3, 1))).is_none());
    // The metrics follow: the removed service's servers are gone.
    let metrics = agent.handle.metrics_text();
    assert!(!metrics.contains(&format!("server=\"{}:80\"", server(3, 1))));
    assert!(metrics.contains(&format!("server=\"{}:80\"", server(N - 1, 1))));

    // And back: removed once the scope has narrowed, it is added again.
    kernel.clear_requests();
    assert!(agent.handle.apply(big(N, &[])).await);
    advance(MS).await;
    assert_eq!(weight(&kernel, &service(3), &server(3, 1)), "1");
    assert_eq!(touched(&kernel), [service(3)]);
    agent.stop(false).await;
}

#[tokio::test(start_paused = true)]
async fn a_retuned_check_takes_effect_and_keeps_the_servers_health() {
    let kernel = Kernel::new();
    let prober = Scripted::default();
    let agent = start(&kernel, big(N, &[]), &prober, AgentOptions::default());
    advance(MS).await;
    kernel.clear_requests();
    // Service 9's check now falls at the first failure; 10's does not.
    assert!(agent.handle.apply(big(N, &[(9, Edit::Retuned)])).await);
    advance(MS).await;
    assert!(
        changes(&kernel).is_empty(),
        "nothing to change in the kernel"
    );
    let state = agent.handle.state().await.unwrap();
    assert_eq!(
        state.server(addr(&server(9, 1))).unwrap().health,
        Health::Up
    );
    prober.fail(&server(9, 1));
    prober.fail(&server(10, 1));
    // One failed check is enough for 9, not for 10 (fall 3).
    advance(3 * S).await;
    assert_eq!(weight(&kernel, &service(9), &server(9, 1)), "0");
    assert_eq!(weight(&kernel, &service(10), &server(10, 1)), "1");
    agent.stop(false).await;
}

#[tokio::test(start_paused = true)]
async fn a_transition_in_a_big_table_sends_its_service_alone_without_a_listing() {
    let kernel = Kernel::new();
    let prober = Scripted::default();
    let agent = start(&kernel, big(N, &[]), &prober, AgentOptions::default());
    advance(MS).await;
    let syncs = agent.handle.state().await.unwrap().syncs;
    kernel.clear_requests();
    prober.fail(&server(42, 2));
    advance(7 * S).await;
    let down = Destination::new(ip(&server(42, 2)), 80).with_weight(0);
    assert_eq!(
        changes(&kernel),
        [Request::EditDestination(service(42), down)]
    );
    let state = agent.handle.state().await.unwrap();
    assert_eq!(state.syncs, syncs + 1);
    assert!(!state.last_sync.unwrap().listed);
    // Back up: its weight back, nothing else.
    kernel.clear_requests();
    prober.pass(&server(42, 2));
    advance(4 * S).await;
    let up = Destination::new(ip(&server(42, 2)), 80).with_weight(1);
    assert_eq!(
        changes(&kernel),
        [Request::EditDestination(service(42), up)]
    );
    agent.stop(false).await;
}

#[tokio::test(start_paused = true)]
async fn the_periodic_resync_still_repairs_what_changed_behind_the_agent() {
    let kernel = Kernel::new();
    let prober = Scripted::default();
    let agent = start(&kernel, big(20, &[]), &prober, AgentOptions::default());
    advance(MS).await;
    assert!(
        agent
            .handle
            .apply(big(20, &[(4, Edit::Reweighted(3))]))
            .await
    );
    advance(MS).await;
    // Someone deletes a service the agent keeps.
    let errors = kernel
        .init_netns()
        .apply(&[Request::DeleteService(service(4))]);
    assert_eq!(errors, [0]);
    assert_eq!(weight(&kernel, &service(4), &server(4, 2)), "no service");
    advance(3600 * S).await;
    assert_eq!(weight(&kernel, &service(4), &server(4, 2)), "3");
    assert_eq!(weight(&kernel, &service(4), "10.3.0.1"), "1");
    agent.stop(false).await;
}

#[tokio::test(start_paused = true)]
async fn a_drain_in_a_big_table_reads_back_its_service_alone() {
    let kernel = Kernel::new();
    let prober = Scripted::default();
    let agent = start(
        &kernel,
        big(N, &[(11, Edit::Drains)]),
        &prober,
        AgentOptions::default(),
    );
    advance(MS).await;
    let connections = |active| {
        let ns = kernel.init_netns();
        let c = Connections::default().with_active(active);
        let ip = ip(&server(11, 1));
        assert!(ns.set_destination_state(&service(11), ip, 80, c, Stats::default()));
    };
    connections(3);
    prober.fail(&server(11, 1));
    // Out at the third failure (6 s): weight 0, draining.
    advance(6 * S + MS).await;
    assert_eq!(weight(&kernel, &service(11), &server(11, 1)), "0");
    let syncs = agent.handle.state().await.unwrap().syncs;
    // Its connections gone: deleted at the next look at the drain (within
    // 5 s), which reads its service back and lists nothing.
    connections(0);
    advance(5 * S).await;
    assert_eq!(weight(&kernel, &service(11), &server(11, 1)), "-");
    let state = agent.handle.state().await.unwrap();
    assert_eq!(state.syncs, syncs + 1, "one look at the drain");
    assert!(!state.last_sync.unwrap().listed);
    agent.stop(false).await;
}
