//! The fleet by NAT in the VM (root, namespaces, Debian's etcd 3.4:
//! `.ci/fleet-tests -- fleet_nat`): the lab of `fleet_lab` (three etcd
//! members, three directors, the client on 10.0.0.0/24), with two more real
//! servers that the directors reach by masquerading.
//!
//! The NAT real servers `fl-n1`, `fl-n2` sit on the same bridge as
//! everything else but in another subnet, 10.0.1.0/24 (10.0.1.11-12), with
//! their default route via a gateway address, 10.0.1.254, that nobody holds
//! but the leader: each director runs with a second `--vip 10.0.1.254/32`
//! on its `eth0`. Their replies to the client (10.0.0.200, not in their
//! subnet) so go to the leader, which translates them back to the VIP. The
//! directors also have an address of their own in that subnet (10.0.1.1-3,
//! for their health checks, which the servers answer directly), forward
//! IPv4 (a NAT reply is forwarded, not delivered) and send no ICMP
//! redirects (a reply comes in and goes out on the same `eth0`).
//!
//! On a failover the new leader adds both addresses and announces each with
//! gratuitous ARP: the client's cache moves the VIP, the servers' caches
//! move the gateway, and the connection the sync daemon replicated goes on
//! through the new leader.

use std::net::{IpAddr, Ipv4Addr};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use ipvsnl::sync::Table;
use ipvsnl::{Client, Destination, Forward, Scheduler, Service, ServiceKey, Stats};

use super::fleet_lab::{sh, wait_for, Lab, CLIENT, PATIENCE, PORT, TTL, VIP};
use super::fleet_traffic::{reach, serve, Stream};
use super::fleet_vip::ip;
use super::fleet_vm::converged;

/// The real servers' gateway: the leader's second VIP.
const GATEWAY: Ipv4Addr = Ipv4Addr::new(10, 0, 1, 254);
/// The real servers behind the VIP by NAT.
const SERVERS: [Ipv4Addr; 2] = [Ipv4Addr::new(10, 0, 1, 11), Ipv4Addr::new(10, 0, 1, 12)];
const NAMESPACES: [&str; 2] = ["fl-n1", "fl-n2"];

/// The configuration published: one TCP service on the VIP, round robin,
/// the two servers masqueraded, checked by TCP every second.
fn config() -> String {
    let mut text = format!(
        "[agent]\nresync = \"10m\"\n\n[[service]]\nname = \"nat\"\nprotocol = \"tcp\"\n\
         address = \"{VIP}\"\nport = {PORT}\nscheduler = \"rr\"\n\
         check = {{ kind = \"tcp\", interval = \"1s\", timeout = \"1s\", fall = 2, rise = 2 }}\n"
    );
    for s in SERVERS {
        text.push_str(&format!(
            "\n[[service.server]]\naddress = \"{s}\"\nport = {PORT}\nweight = 1\nforward = \"masquerade\"\n"
        ));
    }
    text
}

/// The table [`config`] asks for, written with the library's types.
fn wanted() -> Table {
    let mut t = Table::new();
    t.insert(
        Service::new(ServiceKey::tcp(IpAddr::V4(VIP), PORT)).with_scheduler(Scheduler::RoundRobin),
        SERVERS.iter().map(|a| {
            Destination::new(IpAddr::V4(*a), PORT)
                .with_weight(1)
                .with_forward(Forward::Masquerade)
        }),
    );
    t
}

/// The NAT side of the lab: the two servers (namespaces, links, routes,
/// listeners) and the directors' part (an address in the servers' subnet,
/// forwarding on, redirects off). Made after the [`Lab`], dropped before it.
struct NatSide {
    stop: Arc<AtomicBool>,
}

impl NatSide {
    fn new() -> NatSide {
        cleanup();
        let mut s = String::new();
        for (i, (n, a)) in NAMESPACES.iter().zip(SERVERS).enumerate() {
            s.push_str(&format!(
                "ip netns add {n}; ip -n {n} link set lo up\n\
                 ip -n {n} link add eth0 type veth peer name p-n{k} netns fl-sw\n\
                 ip -n fl-sw link set p-n{k} master br0 up\n\
                 ip -n {n} addr add {a}/24 dev eth0; ip -n {n} link set eth0 up\n\
                 ip -n {n} route add default via {GATEWAY}\n",
                k = i + 1
            ));
        }
        for d in 1..=3 {
            s.push_str(&format!(
                "ip -n fl-d{d} addr add 10.0.1.{d}/24 dev eth0\n\
                 ip netns exec fl-d{d} sh -c 'echo 1 >/proc/sys/net/ipv4/ip_forward; \
                 for c in all eth0; do echo 0 >/proc/sys/net/ipv4/conf/$c/send_redirects; done'\n"
            ));
        }
        sh(&s);
        let side = NatSide {
            stop: Arc::new(AtomicBool::new(false)),
        };
        for (n, a) in NAMESPACES.iter().zip(SERVERS) {
            serve(n.to_string(), a, side.stop.clone());
        }
        side
    }
}

impl Drop for NatSide {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        cleanup();
    }
}

fn cleanup() {
    for n in NAMESPACES {
        let _ = std::process::Command::new("ip")
            .args(["netns", "del", n])
            .output();
    }
}

/// Which of the two addresses director `i` (0-based) holds on its `eth0`
/// now: (the VIP, the gateway).
fn held(i: usize) -> (bool, bool) {
    let out = ip(&[
        "-n",
        &format!("fl-d{}", i + 1),
        "-o",
        "addr",
        "show",
        "dev",
        "eth0",
    ]);
    (
        out.contains(&format!("inet {VIP}/32")),
        out.contains(&format!("inet {GATEWAY}/32")),
    )
}

/// The service's counters in director `i`'s kernel once `ok` holds for
/// them (they lag the traffic by up to an estimator tick, 2 s); panics
/// with the last ones after [`PATIENCE`].
fn stats_when(clients: &mut [Client], i: usize, ok: impl Fn(&Stats) -> bool) -> Stats {
    let key = ServiceKey::tcp(IpAddr::V4(VIP), PORT);
    let mut last = Stats::default();
    wait_for(PATIENCE, || {
        last = clients[i]
            .table()
            .expect("list the table")
            .into_iter()
            .find(|e| e.service.key == key)
            .map(|e| e.stats)
            .unwrap_or_else(|| panic!("director {} has no service {key}", i + 1));
        ok(&last).then_some(())
    })
    .unwrap_or_else(|| panic!("director {}'s counters: {last:?}", i + 1));
    last
}

#[test]
#[ignore = "VM test (root, namespaces, etcd): .ci/fleet-tests -- fleet_nat"]
fn fleet_nat_replies_come_through_the_leader_and_a_connection_survives_its_death() {
    let mut lab = Lab::new();
    let _nat = NatSide::new();
    lab.agent_args(&["--vip", &format!("{GATEWAY}/32")]);
    lab.publish(&config());
    for i in 0..3 {
        lab.start_director(i);
    }
    let mut clients: Vec<Client> = (0..3).map(|i| lab.client(i)).collect();
    converged(&mut clients, &wanted(), Instant::now());
    // One director holds both addresses, the others neither.
    let leader = wait_for(PATIENCE, || {
        let h: Vec<(bool, bool)> = (0..3).map(held).collect();
        match h.iter().filter(|x| **x != (false, false)).count() {
            1 => h.iter().position(|x| *x == (true, true)),
            _ => None,
        }
    })
    .unwrap_or_else(|| {
        panic!(
            "no one director holds both addresses: {:?}",
            (0..3).map(held).collect::<Vec<_>>()
        )
    });
    let followers: Vec<usize> = (0..3).filter(|i| *i != leader).collect();

    // New connections through the VIP reach both servers, and their
    // replies come back through the leader: it translated them (a service's
    // outgoing packets count only the replies a director masqueraded back;
    // by direct routing they stay 0).
    let mut reached = Vec::new();
    for _ in 0..4 {
        reached.push(reach().expect("the client reaches a server through the VIP"));
    }
    reached.sort();
    reached.dedup();
    assert_eq!(reached, SERVERS, "round robin reaches both servers");
    let through = stats_when(&mut clients, leader, |s| s.conns >= 4 && s.out_packets > 0);

    // A connection streams through the leader and is replicated.
    let stream = Stream::start();
    wait_for(PATIENCE, || (stream.seen().echoed >= 10).then_some(()))
        .unwrap_or_else(|| panic!("the stream did not start: {:?}", stream.seen()));
    let seen = stream.seen();
    for f in &followers {
        wait_for(PATIENCE, || {
            lab.connections(*f).into_iter().find(|c| {
                c.client_addr == IpAddr::V4(CLIENT)
                    && c.client_port == seen.port
                    && Some(c.dest_addr) == seen.server.map(IpAddr::V4)
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
    let before: Vec<Stats> = followers
        .iter()
        .map(|f| stats_when(&mut clients, *f, |_| true))
        .collect();

    // The leader's machine dies: its agent SIGKILLed, its link down.
    let t = Instant::now();
    lab.kill_director(leader);
    assert_eq!(
        held(leader),
        (true, true),
        "the SIGKILLed agent's addresses stay"
    );
    lab.segment_link(leader, false);
    // One line at a time: at most one more comes back through the dead
    // machine, the second more came through the new leader.
    let at_down = stream.seen().echoed;
    let (mut vip_at, mut gateway_at) = (None, None);
    let new = wait_for(TTL + PATIENCE, || {
        let mut both = Vec::new();
        for f in &followers {
            let (v, g) = held(*f);
            if v && vip_at.is_none() {
                vip_at = Some(t.elapsed());
            }
            if g && gateway_at.is_none() {
                gateway_at = Some(t.elapsed());
            }
            if v && g {
                both.push(*f);
            }
        }
        (!both.is_empty()).then_some(both)
    })
    .expect("a follower takes both addresses");
    let took = t.elapsed();
    assert_eq!(new.len(), 1, "one new leader: {new:?}");
    let other = followers.iter().find(|f| **f != new[0]).unwrap();
    assert_eq!(
        held(*other),
        (false, false),
        "the other follower holds nothing"
    );

    // The stream goes on, through the new leader: its counters grow.
    let echoed = stream.seen().echoed;
    let resumed = wait_for(PATIENCE, || {
        (stream.seen().echoed >= at_down + 2).then(|| t.elapsed())
    })
    .unwrap_or_else(|| panic!("the connection stopped: {:?}", stream.seen()));
    wait_for(PATIENCE, || {
        (stream.seen().echoed >= echoed + 20).then_some(())
    })
    .unwrap_or_else(|| panic!("the connection stopped: {:?}", stream.seen()));
    let end = stream.stop();
    let k = followers.iter().position(|f| *f == new[0]).unwrap();
    let was = before[k];
    let after = stats_when(&mut clients, new[0], |s| {
        s.in_packets > was.in_packets && s.out_packets > was.out_packets
    });
    println!(
        "FLEET NAT leader SIGKILLed: director {} holds the VIP after {:.3} s, the gateway after \
         {:.3} s, both after {:.3} s; the connection went on (lines flowing again \
         {:.3} s after the kill, {} lines echoed in all, {} packets \
         translated back by the new leader); before, the leader had translated {} packets back \
         of {} connections",
        new[0] + 1,
        vip_at.unwrap().as_secs_f64(),
        gateway_at.unwrap().as_secs_f64(),
        took.as_secs_f64(),
        resumed.as_secs_f64(),
        end.echoed,
        after.out_packets - was.out_packets,
        through.out_packets,
        through.conns
    );
    assert_eq!(end.error, None, "the connection kept working");
    assert!(
        took <= TTL + Duration::from_secs(1),
        "a follower held both addresses {took:?} after the kill, more than the TTL + 1 s"
    );
}
