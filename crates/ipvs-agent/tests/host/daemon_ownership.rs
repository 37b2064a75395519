//! The agent's ownership record on an emulated kernel and a paused clock:
//! a service removed from the file while the agent was down is drained,
//! then removed, at the next start; another tool's service never is; an
//! agent killed mid-run, or a crash between the kernel's change and the
//! record's write (the record as the write-ahead leaves it), converges at
//! the next start without leaking a service or touching a foreign one.
//! Without a record the agent owns its file's services only (the leak).
//! A record that cannot be written holds the syncs back until it can.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use ipvs_agent::daemon::{Agent, AgentOptions};
use ipvsnl::emulator::{Connections, Kernel};
use ipvsnl::sync::{Ownership, PlanOptions, Scope, Syncer, Table};
use ipvsnl::{Client, Destination, Service, Stats};

use crate::daemon_support::*;

/// The usual file, with a second service on port 81 (A on port 81,
/// weight 5, unchecked) if `with_81`.
fn file(with_81: bool) -> String {
    let extra = if with_81 {
        format!(
            "[[service]]\nprotocol = \"tcp\"\naddress = \"{VIP}\"\nport = 81\n\
             [[service.server]]\naddress = \"{A}\"\nweight = 5\n"
        )
    } else {
        String::new()
    };
    text("1h", 20, &extra)
}

const A81: &str = "10.0.0.1:81";
const FOREIGN: u16 = 9999;

/// A state directory of the test's own, empty.
fn state_dir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("ipvs-agent-own-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn record(dir: &Path) -> Ownership {
    Ownership::open(dir.join("services"), "test").unwrap()
}

/// Starts an agent of `text` keeping its record in `dir`.
fn start_owned(kernel: &Kernel, text: &str, prober: &Scripted, dir: &Path) -> Running {
    let agent = Agent::new(
        config(text),
        connector(kernel),
        Arc::new(prober.clone()),
        AgentOptions::default(),
    )
    .with_ownership(record(dir));
    let handle = agent.handle();
    let task = tokio::spawn(agent.run());
    Running { handle, task }
}

/// Another tool's service, `VIP:9999` with 10.0.0.9:9999 at weight 7.
fn add_foreign(kernel: &Kernel) {
    let mut t = Table::new();
    t.insert(
        Service::new(key(FOREIGN)),
        [Destination::new(ip("10.0.0.9"), FOREIGN).with_weight(7)],
    );
    let mut s = Syncer::new(PlanOptions::new(Scope::keys([key(FOREIGN)])));
    let report = s.sync(&mut Client::emulated(kernel), &t).unwrap();
    assert!(report.is_complete());
}

fn foreign_intact(kernel: &Kernel) {
    assert_eq!(weight(kernel, &key(FOREIGN), "10.0.0.9:9999"), "7");
}

/// `clients` active connections on A in service 81.
fn clients_81(kernel: &Kernel, clients: u32) {
    kernel.init_netns().set_destination_state(
        &key(81),
        ip(A),
        81,
        Connections::default().with_active(clients),
        Stats::default(),
    );
}

/// The keys the record in `dir` holds, by port.
fn recorded(dir: &Path) -> Vec<u16> {
    record(dir)
        .keys()
        .iter()
        .filter_map(|k| match k {
            ipvsnl::ServiceKey::Inet { port, .. } => Some(*port),
            _ => None,
        })
        .collect()
}

#[tokio::test(start_paused = true)]
async fn a_service_removed_from_the_file_while_the_agent_was_down_is_drained_then_removed() {
    let dir = state_dir("removed");
    let kernel = Kernel::new();
    let prober = Scripted::default();
    add_foreign(&kernel);
    let first = start_owned(&kernel, &file(true), &prober, &dir);
    advance(MS).await;
    assert_eq!(weight(&kernel, &key(81), A81), "5");
    first.stop(false).await;
    assert_eq!(recorded(&dir), [80, 81]);

    // Down, 81 leaves the file; a client still uses it.
    clients_81(&kernel, 1);
    let second = start_owned(&kernel, &file(false), &prober, &dir);
    advance(MS).await;
    assert_eq!(weight(&kernel, &key(81), A81), "0", "drained first");
    assert_eq!(weight(&kernel, &key(80), A), "10");
    // Its client gone: deleted within a drain poll (5 s), then the service.
    clients_81(&kernel, 0);
    advance(6 * S).await;
    assert_eq!(weight(&kernel, &key(81), A81), "no service");
    assert_eq!(weight(&kernel, &key(80), A), "10");
    foreign_intact(&kernel);
    let state = second.handle.state().await.unwrap();
    assert!(state.ready && state.last_sync.unwrap().complete);
    second.stop(false).await;
    assert_eq!(recorded(&dir), [80]);
}

#[tokio::test(start_paused = true)]
async fn without_a_record_a_service_removed_while_the_agent_was_down_stays() {
    // What the record fixes (and what an agent built without one does).
    let kernel = Kernel::new();
    let prober = Scripted::default();
    let first = start(
        &kernel,
        config(&file(true)),
        &prober,
        AgentOptions::default(),
    );
    advance(MS).await;
    first.stop(false).await;
    let second = start(
        &kernel,
        config(&file(false)),
        &prober,
        AgentOptions::default(),
    );
    advance(10 * S).await;
    assert_eq!(weight(&kernel, &key(81), A81), "5");
    second.stop(false).await;
}

#[tokio::test(start_paused = true)]
async fn another_tools_services_are_never_touched() {
    let dir = state_dir("foreign");
    let kernel = Kernel::new();
    let prober = Scripted::default();
    add_foreign(&kernel);
    let first = start_owned(&kernel, &file(true), &prober, &dir);
    advance(MS).await;
    first.stop(false).await;
    // Another tool adds a service while the agent is down, and one on
    // the key of a service the file names.
    let mut t = Table::new();
    t.insert(
        Service::new(key(82)),
        [Destination::new(ip("10.0.0.8"), 82)],
    );
    let mut s = Syncer::new(PlanOptions::new(Scope::keys([key(82)])));
    assert!(s
        .sync(&mut Client::emulated(&kernel), &t)
        .unwrap()
        .is_complete());
    let second = start_owned(&kernel, &file(true), &prober, &dir);
    advance(10 * S).await;
    // At exit with --remove-on-exit: the agent's own only.
    second.stop(true).await;
    foreign_intact(&kernel);
    assert_eq!(weight(&kernel, &key(82), "10.0.0.8:82"), "1");
    assert_eq!(weight(&kernel, &key(80), A), "no service");
    assert_eq!(weight(&kernel, &key(81), A81), "no service");
    assert_eq!(recorded(&dir), Vec::<u16>::new());
}

#[tokio::test(start_paused = true)]
async fn an_agent_killed_mid_run_leaks_nothing_at_the_next_start() {
    let dir = state_dir("killed");
    let kernel = Kernel::new();
    let prober = Scripted::default();
    add_foreign(&kernel);
    let first = start_owned(&kernel, &file(true), &prober, &dir);
    advance(MS).await;
    // Killed: no stop, nothing after the last sync.
    first.task.abort();
    let _ = first.task.await;
    assert_eq!(weight(&kernel, &key(81), A81), "5");
    let second = start_owned(&kernel, &file(false), &prober, &dir);
    advance(MS).await;
    assert_eq!(weight(&kernel, &key(81), A81), "no service");
    foreign_intact(&kernel);
    second.stop(false).await;
    assert_eq!(recorded(&dir), [80]);
}

#[tokio::test(start_paused = true)]
async fn a_crash_between_the_kernel_change_and_the_record_write_converges() {
    let dir = state_dir("crash");
    let kernel = Kernel::new();
    let prober = Scripted::default();
    add_foreign(&kernel);
    // A run that claimed 80, 81 and 82 (the record is written before the
    // kernel changes), created 80 and 81, and crashed before 82 and
    // before it saw what the kernel held.
    {
        let mut r = record(&dir);
        r.claim([key(80), key(81), key(82)]).unwrap();
        let mut want = Table::new();
        want.insert(Service::new(key(80)), [Destination::new(ip(A), 80)]);
        want.insert(Service::new(key(81)), [Destination::new(ip(A), 81)]);
        let mut s = Syncer::new(PlanOptions::new(r.scope(want.keys())));
        let report = s.sync(&mut Client::emulated(&kernel), &want).unwrap();
        assert!(report.is_complete());
    }
    // The next start, with 81 and 82 gone from the file: 81 removed, 82
    // (never created) forgotten, the foreign service kept.
    let agent = start_owned(&kernel, &file(false), &prober, &dir);
    advance(MS).await;
    assert_eq!(weight(&kernel, &key(81), A81), "no service");
    assert_eq!(weight(&kernel, &key(80), A), "10");
    assert_eq!(weight(&kernel, &key(80), B), "20");
    foreign_intact(&kernel);
    agent.stop(false).await;
    assert_eq!(recorded(&dir), [80]);
}

#[tokio::test(start_paused = true)]
async fn a_record_that_cannot_be_written_holds_back_the_syncs_until_it_can() {
    let dir = state_dir("unwritable");
    // The record's temporary file cannot be made: a directory has its name.
    let blocker = dir.join("services.tmp");
    std::fs::create_dir(&blocker).unwrap();
    let kernel = Kernel::new();
    let prober = Scripted::default();
    let agent = start_owned(&kernel, &file(true), &prober, &dir);
    advance(3 * S).await;
    // Nothing created that the record could not hold.
    assert_eq!(weight(&kernel, &key(80), A), "no service");
    assert!(!agent.handle.ready());
    // Writable again: in at the next try (the backoff doubles from 1 s).
    std::fs::remove_dir(&blocker).unwrap();
    advance(10 * S).await;
    assert_eq!(weight(&kernel, &key(80), A), "10");
    assert_eq!(weight(&kernel, &key(81), A81), "5");
    assert!(agent.handle.ready());
    agent.stop(false).await;
    assert_eq!(recorded(&dir), [80, 81]);
}
