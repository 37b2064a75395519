//! The fleet at scale in the VM (`.ci/fleet-tests -- fleet_vm_scale`): a
//! 10,000-service configuration published to the three-director lab
//! (`fleet_lab`), every kernel equal to it; then one service changed and
//! timed from the publish command's start to the last director's kernel,
//! in guest time. Under `-icount` (`IPVSNL_VM_ICOUNT=1`, the script's
//! default, which its runner passes on) guest time is exact whatever the
//! build machine's load; plain TCG's is not.
//!
//! Asserted: each change is written as one delete and one put (3
//! transactions), reaches every kernel, and leaves every table equal to
//! the configuration, whole. The times are printed (`FLEET-SCALE`), from
//! the command's start and from the end of its check of the file (the
//! time it reports), not asserted. The figures under icount (each change
//! on the last kernel within 0.5 s of the command's start) and where the
//! time goes (the file's parse, then each director's reload of 10,000
//! services, three directors on the VM's one CPU) are in benches/AGENT.md.

use std::net::IpAddr;
use std::time::{Duration, Instant};

use ipvsnl::sync::Table;
use ipvsnl::{Client, Destination, Forward, Scheduler, Service};

use super::fleet_lab::{wait_for, Lab, SERVERS};
use super::fleet_scale_services::{scale_text, service_key, CHANGED, SERVICES};

/// How long the first configuration may take to reach every kernel.
const FIRST_PATIENCE: Duration = Duration::from_secs(300);

fn servers() -> Vec<IpAddr> {
    SERVERS.iter().map(|a| IpAddr::V4(*a)).collect()
}

/// The table [`scale_text`] asks for, written with the library's types
/// (no `scheduler` in the file: the agent's default, wlc).
fn wanted(weight: u32) -> Table {
    let mut t = Table::new();
    for i in 0..SERVICES {
        t.insert(
            Service::new(service_key(i)).with_scheduler(Scheduler::WeightedLeastConnection),
            servers().into_iter().enumerate().map(|(j, a)| {
                let w = if i == CHANGED && j == 0 { weight } else { 1 };
                Destination::new(a, 80)
                    .with_weight(w)
                    .with_forward(Forward::Route)
            }),
        );
    }
    t
}

/// The weight of service `i`'s server `server` in a director's kernel
/// (one destination dump of one service: cheap enough to poll).
fn weight(c: &mut Client, i: usize, server: IpAddr) -> Option<u32> {
    c.destinations(&service_key(i))
        .ok()?
        .into_iter()
        .find(|d| d.destination.addr == server)
        .map(|d| d.destination.weight)
}

/// The time `ipvs-agent publish` says it took to read and check the file
/// (`... (the file read and checked in N ms; ...)`).
fn checked_in(said: &str) -> Duration {
    let ms = said
        .rsplit_once("checked in ")
        .and_then(|(_, t)| t.split_once(" ms").map(|(n, _)| n))
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no check time in {said:?}"));
    Duration::from_millis(ms)
}

/// Panics unless every director's whole table equals `want`.
fn all_equal(clients: &mut [Client], want: &Table) {
    for (i, c) in clients.iter_mut().enumerate() {
        let got = Table::from_entries(c.table().expect("list the table"));
        assert!(
            got.same_settings(want),
            "director {}: its kernel's {} services differ from the {} wanted",
            i + 1,
            got.len(),
            want.len()
        );
    }
}

#[test]
#[ignore = "VM test (root, namespaces, etcd): .ci/fleet-tests -- fleet_vm_scale"]
fn fleet_vm_scale_one_service_changed_in_10000_reaches_every_kernel() {
    let icount = std::env::var("IPVSNL_VM_ICOUNT").as_deref() == Ok("1");
    let mut lab = Lab::new();
    let server = servers()[0];
    let t = Instant::now();
    let first = lab.publish(&scale_text(SERVICES, &servers(), 1));
    let first_took = t.elapsed();
    for i in 0..3 {
        lab.start_director(i);
    }
    let mut clients: Vec<Client> = (0..3).map(|i| lab.client(i)).collect();
    // Every director's first sync done (its `ready`), then every table
    // compared whole.
    let t = Instant::now();
    wait_for(FIRST_PATIENCE, || {
        (0..3)
            .all(|i| lab.metric(i, "ipvs_agent_ready") == Some(1.0))
            .then_some(())
    })
    .expect("every director's first sync done");
    let first_synced = t.elapsed();
    all_equal(&mut clients, &wanted(1));

    let mut rounds = Vec::new();
    for round in 2..=4u32 {
        let text = scale_text(SERVICES, &servers(), round);
        let t0 = Instant::now();
        let said = lab.publish(&text);
        let command = t0.elapsed();
        // Only the change is written: one entry deleted, one put; and
        // only its service parsed (the others known from the publisher's
        // cache of the publish before, kept under $HOME/.cache).
        assert!(
            said.contains("(1 entries put, 1 deleted), 3 transactions"),
            "{said}"
        );
        assert!(
            said.contains(&format!("; 1 of {SERVICES} services parsed")),
            "{said}"
        );
        let mut at = [None; 3];
        let until = t0 + FIRST_PATIENCE;
        while at.iter().any(Option::is_none) {
            for (i, c) in clients.iter_mut().enumerate() {
                if at[i].is_none() && weight(c, CHANGED, server) == Some(round) {
                    at[i] = Some(t0.elapsed());
                }
            }
            assert!(
                Instant::now() < until,
                "the change did not reach every kernel: {at:?}"
            );
            std::thread::sleep(Duration::from_millis(2));
        }
        let at: Vec<Duration> = at.into_iter().flatten().collect();
        let last = at.iter().max().copied().unwrap();
        let checked = checked_in(&said);
        println!(
            "FLEET-SCALE one service changed in {SERVICES} (round {round}): command {:.3} s \
             (the file checked in {:.3} s), kernels at {} s, last {:.3} s, {:.3} s after the check{}; \
             publish said {said:?}",
            command.as_secs_f64(),
            checked.as_secs_f64(),
            at.iter()
                .map(|d| format!("{:.3}", d.as_secs_f64()))
                .collect::<Vec<_>>()
                .join(", "),
            last.as_secs_f64(),
            (last - checked).as_secs_f64(),
            if icount { " (icount)" } else { " (plain TCG)" }
        );
        // Nothing else moved: every table equal, whole.
        all_equal(&mut clients, &wanted(round));
        rounds.push(last - checked);
    }
    println!(
        "FLEET-SCALE first publish of {SERVICES}: command {:.3} s ({first:?}); every director \
         ready (its first sync done) {:.3} s after they started",
        first_took.as_secs_f64(),
        first_synced.as_secs_f64()
    );
    println!(
        "FLEET-SCALE from the file's check to the last kernel, each round: {}",
        rounds
            .iter()
            .map(|d| format!("{:.3} s", d.as_secs_f64()))
            .collect::<Vec<_>>()
            .join(", ")
    );
}
