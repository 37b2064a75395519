//! The fleet in the VM (root, namespaces, Debian's etcd 3.4:
//! `.ci/fleet-tests`): three etcd members, three directors each running
//! `ipvs-agent run --etcd ... --vip ... --sync-interface ...`, real servers
//! behind the VIP by direct routing and a client, on one L2 segment
//! (`fleet_lab`). What benches/AGENT.md's fleet table reports is measured here
//! (printed with `--nocapture`); what must hold is asserted.

use std::time::{Duration, Instant};

use ipvsnl::sync::Table;
use ipvsnl::Client;

use super::fleet_lab::{config, wait_for, wanted, Lab, CLIENT, PATIENCE, TTL};
use super::fleet_traffic::{reach, Stream};

/// Polls every director's kernel until each equals `want` (the library's
/// listing, every setting of every service and server); the time from
/// `since` to each one's first equal listing. Panics with the tables of
/// the first that did not get there within [`PATIENCE`].
pub(crate) fn converged(clients: &mut [Client], want: &Table, since: Instant) -> Vec<Duration> {
    let mut at: Vec<Option<Duration>> = vec![None; clients.len()];
    let until = Instant::now() + PATIENCE;
    loop {
        for (i, c) in clients.iter_mut().enumerate() {
            if at[i].is_none() {
                let got = Table::from_entries(c.table().expect("list the table"));
                if got.same_settings(want) {
                    at[i] = Some(since.elapsed());
                }
            }
        }
        if at.iter().all(Option::is_some) {
            return at.into_iter().flatten().collect();
        }
        if Instant::now() > until {
            let i = at.iter().position(Option::is_none).unwrap();
            let got = Table::from_entries(clients[i].table().expect("list the table"));
            panic!(
                "director {} did not converge within {PATIENCE:?}:\nkernel {got:#?}\nwanted {want:#?}",
                i + 1
            );
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// A lab with the configuration of weights 1, 1 published and three
/// directors converged on it, one of them holding the VIP: the lab, the
/// clients of the directors' kernels and the leader.
fn fleet_up() -> (Lab, Vec<Client>, usize) {
    let mut lab = Lab::new();
    lab.publish(&config([1, 1]));
    for i in 0..3 {
        lab.start_director(i);
    }
    let mut clients: Vec<Client> = (0..3).map(|i| lab.client(i)).collect();
    converged(&mut clients, &wanted([1, 1]), Instant::now());
    let leader = wait_for(PATIENCE, || match lab.holders()[..] {
        [one] => Some(one),
        _ => None,
    })
    .expect("one director holds the VIP");
    (lab, clients, leader)
}

fn secs(d: &[Duration]) -> String {
    let v: Vec<String> = d
        .iter()
        .map(|d| format!("{:.3}", d.as_secs_f64()))
        .collect();
    v.join(", ")
}

#[test]
#[ignore = "VM test (root, namespaces, etcd): .ci/fleet-tests"]
fn fleet_vm_a_published_configuration_reaches_every_kernel() {
    let mut lab = Lab::new();
    for i in 0..3 {
        lab.start_director(i);
    }
    let mut clients: Vec<Client> = (0..3).map(|i| lab.client(i)).collect();
    // The first generation, the directors already waiting for one.
    let t0 = Instant::now();
    let report = lab.publish(&config([1, 1]));
    let published = t0.elapsed();
    let first = converged(&mut clients, &wanted([1, 1]), t0);
    // One server's weight changed: each agent's watch brings it.
    let t1 = Instant::now();
    let report_change = lab.publish(&config([1, 3]));
    let published_change = t1.elapsed();
    let change = converged(&mut clients, &wanted([1, 3]), t1);
    println!(
        "FLEET first publish: command {:.3} s, kernels equal after {} s; \
         one weight changed: command {:.3} s, kernels equal after {} s",
        published.as_secs_f64(),
        secs(&first),
        published_change.as_secs_f64(),
        secs(&change)
    );
    println!("FLEET publish said: {report:?}, then {report_change:?}");
    // Nothing else changed it: still equal, every director.
    converged(&mut clients, &wanted([1, 3]), Instant::now());
}

#[test]
#[ignore = "VM test (root, namespaces, etcd): .ci/fleet-tests"]
fn fleet_vm_bc_one_leader_serves_and_a_connection_survives_its_death() {
    let (mut lab, _clients, leader) = fleet_up();
    // b. Exactly one holds the VIP, and it stays one.
    for _ in 0..10 {
        assert_eq!(lab.holders(), [leader]);
        std::thread::sleep(Duration::from_millis(100));
    }
    let mut reached = Vec::new();
    for _ in 0..4 {
        reached.push(reach().expect("the client reaches a real server through the VIP"));
    }
    reached.sort();
    reached.dedup();
    assert_eq!(
        reached.len(),
        2,
        "round robin reaches both servers: {reached:?}"
    );

    // c. A connection streaming through the leader...
    let stream = Stream::start();
    wait_for(PATIENCE, || (stream.seen().echoed >= 10).then_some(()))
        .unwrap_or_else(|| panic!("the stream did not start: {:?}", stream.seen()));
    let seen = stream.seen();
    let followers: Vec<usize> = (0..3).filter(|i| *i != leader).collect();
    // ... is in every follower's connection table before the failover
    // (the sync daemon, master on the leader, backup on the followers).
    for f in &followers {
        wait_for(PATIENCE, || {
            lab.connections(*f).into_iter().find(|c| {
                c.client_addr == std::net::IpAddr::V4(CLIENT)
                    && c.client_port == seen.port
                    && Some(c.dest_addr) == seen.server.map(std::net::IpAddr::V4)
            })
        })
        .unwrap_or_else(|| {
            panic!(
                "director {} (backup) never got the connection: {:?}",
                f + 1,
                lab.connections(*f)
            )
        });
    }
    let last_before = stream.seen().last.unwrap();
    // The leader's machine dies: its agent SIGKILLed and its link to the
    // segment down.
    let t = Instant::now();
    lab.kill_director(leader);
    // A dead agent leaves its VIP on the interface (until it is started
    // again: the agent's README), so the machine's link goes too.
    assert!(lab.holds(leader), "the SIGKILLed agent's VIP stays");
    lab.segment_link(leader, false);
    let new = wait_for(TTL + PATIENCE, || {
        let h: Vec<usize> = lab.holders().into_iter().filter(|h| *h != leader).collect();
        (!h.is_empty()).then_some(h)
    })
    .expect("a follower takes the VIP");
    let took = t.elapsed();
    assert_eq!(new.len(), 1, "one new leader: {new:?}");
    let echoed = stream.seen().echoed;
    wait_for(PATIENCE, || {
        (stream.seen().echoed >= echoed + 20).then_some(())
    })
    .unwrap_or_else(|| panic!("the connection stopped: {:?}", stream.seen()));
    let end = stream.stop();
    println!(
        "FLEET leader SIGKILLed: director {} holds the VIP after {:.3} s; \
         the connection went on ({} lines, the last before the kill {:.3} s before it)",
        new[0] + 1,
        took.as_secs_f64(),
        end.echoed,
        t.duration_since(last_before).as_secs_f64()
    );
    assert_eq!(end.error, None, "the connection kept working");
    assert!(
        took <= TTL + Duration::from_secs(1),
        "a follower held the VIP {took:?} after the kill, more than the TTL + 1 s"
    );
}

#[test]
#[ignore = "VM test (root, namespaces, etcd): .ci/fleet-tests"]
fn fleet_vm_d_a_leader_cut_off_from_etcd_drops_the_vip_before_another_adds_it() {
    let (lab, _clients, leader) = fleet_up();
    let followers: Vec<usize> = (0..3).filter(|i| *i != leader).collect();
    // Only its link to etcd goes down; it still sees the segment.
    let t = Instant::now();
    lab.etcd_link(leader, false);
    // Each round looks at the followers first, then at the leader: a round
    // that finds a follower holding and then the leader holding saw both at
    // once; a follower check that finds none after the leader was seen
    // without its VIP saw a moment with no holder.
    let (mut gone, mut empty_after_gone, mut both) = (None, false, Vec::new());
    let taken = wait_for(TTL + PATIENCE, || {
        let new: Vec<usize> = followers
            .iter()
            .copied()
            .filter(|f| lab.holds(*f))
            .collect();
        if new.is_empty() && gone.is_some() {
            empty_after_gone = true;
        }
        let old = lab.holds(leader);
        if !new.is_empty() && old {
            both.push((t.elapsed(), new.clone()));
        }
        if !old && gone.is_none() {
            gone = Some(t.elapsed());
        }
        (!new.is_empty()).then(|| (new, t.elapsed()))
    });
    let (new, added) = taken.expect("another director takes the VIP");
    let gone = gone.expect("the cut-off leader drops its VIP");
    assert_eq!(new.len(), 1, "one new leader: {new:?}");
    assert!(
        both.is_empty(),
        "two directors held the VIP at once: {both:?}"
    );
    assert!(
        empty_after_gone,
        "no moment without a holder seen between the old leader's drop ({gone:?}) and the new one's add ({added:?})"
    );
    // The agents' own times (guest clock): the old leader's drop done
    // before the new one was elected (its add comes after that).
    let dropped = lab
        .logged_at(leader, &["role=follower", "action=DropVips"])
        .expect("the old leader logged its drop");
    let elected = lab
        .logged_at(new[0], &["to=leader"])
        .expect("the new leader logged its election");
    // Logged once its announcement went out too: it may come after `ip`
    // lists the address.
    let held = wait_for(PATIENCE, || {
        lab.logged_at(new[0], &["role=leader", "action=HoldVips"])
    })
    .expect("the new leader logged its VIPs");
    println!(
        "FLEET leader cut off from etcd: its VIP gone after {:.3} s (seen), director {} holds it \
         after {:.3} s (seen); logs: old dropped at {dropped:.3}, new elected at {elected:.3} \
         (+{:.3} s), VIP added by {held:.3} (+{:.3} s)",
        gone.as_secs_f64(),
        new[0] + 1,
        added.as_secs_f64(),
        elected - dropped,
        held - dropped
    );
    assert!(
        dropped < elected,
        "the old leader dropped its VIP at {dropped}, after the new one was elected at {elected}"
    );
    reach().expect("the client reaches the servers through the new leader");
    // Its link back: it stays a follower, one holder.
    lab.etcd_link(leader, true);
    std::thread::sleep(TTL);
    assert_eq!(lab.holders(), new, "the new leader keeps the VIP");
}

#[test]
#[ignore = "VM test (root, namespaces, etcd): .ci/fleet-tests"]
fn fleet_vm_e_etcd_members_die_and_return_and_a_director_restarts() {
    let (mut lab, mut clients, leader) = fleet_up();
    // One member killed (the first endpoint of every agent): nothing changes.
    lab.kill_etcd(0);
    let until = Instant::now() + 2 * TTL;
    while Instant::now() < until {
        assert_eq!(lab.holders(), [leader], "one etcd member down");
        std::thread::sleep(Duration::from_millis(200));
    }
    converged(&mut clients, &wanted([1, 1]), Instant::now());
    reach().expect("served with one etcd member down");

    // All killed: as the agent's README says, the leader steps down TTL - margin
    // after its last answered renewal; every director keeps its table.
    lab.kill_etcd(1);
    lab.kill_etcd(2);
    let t = Instant::now();
    let off = wait_for(TTL + PATIENCE, || {
        lab.holders().is_empty().then(|| t.elapsed())
    })
    .expect("the leader steps down without etcd");
    converged(&mut clients, &wanted([1, 1]), Instant::now());
    assert!(reach().is_err(), "nobody answers for the VIP without etcd");

    // Back: one leader again, the tables as they were.
    let t = Instant::now();
    for i in 0..3 {
        lab.start_etcd(i);
    }
    let back = wait_for(PATIENCE, || match lab.holders()[..] {
        [_] => Some(t.elapsed()),
        _ => None,
    })
    .expect("one director holds the VIP once etcd is back");
    converged(&mut clients, &wanted([1, 1]), Instant::now());
    reach().expect("served again");

    // A director restarted across a change catches up with one request.
    let f = (0..3).find(|i| !lab.holders().contains(i)).unwrap();
    lab.stop_director(f);
    lab.publish(&config([2, 1]));
    let mut others: Vec<Client> = (0..3).filter(|i| *i != f).map(|i| lab.client(i)).collect();
    converged(&mut others, &wanted([2, 1]), Instant::now());
    let t = Instant::now();
    lab.start_director(f);
    let caught = converged(&mut [lab.client(f)], &wanted([2, 1]), t);
    wait_for(PATIENCE, || {
        (lab.metric(f, "ipvs_agent_ready") == Some(1.0)).then_some(())
    })
    .expect("the restarted director is ready");
    let sent = lab.metric(f, "ipvs_agent_sync_requests_total{outcome=\"done\"}");
    println!(
        "FLEET etcd: one member down, nothing changed for {:?}; all down: VIP off after {:.3} s; \
         all back: one leader after {:.3} s; a director restarted over a changed weight: \
         converged {:.3} s after its start with {sent:?} requests",
        2 * TTL,
        off.as_secs_f64(),
        back.as_secs_f64(),
        caught[0].as_secs_f64()
    );
    assert!(
        off < TTL,
        "the leader stepped down {off:?} after etcd died, not within the TTL"
    );
    assert_eq!(sent, Some(1.0), "only the changed weight is sent");
}
