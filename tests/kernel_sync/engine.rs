//! Kernel tests of the bulk-sync engine (`ipvsnl::sync`): planning against
//! a real table, pipelined apply, outcome reporting, the cached view, the
//! ENOBUFS path and graceful drain.

use crate::common;

use std::net::IpAddr;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use common::*;
use ipvsnl::sync::{Drain, Fate, PlanOptions, Scope, Syncer, Table};
use ipvsnl::{
    AddressFamily, ApplyOptions, Client, ClientOptions, Destination, Forward, Request, Scheduler,
    Service, ServiceKey, Tunnel, TunnelKind,
};
use ipvsnl_test_support::keys::Numbered;
use ipvsnl_test_support::oracle::{assert_converged, kernel_table};

/// Services 10.0.x.y, real servers 172.16.x.y, eight apart.
const NUMBERS: Numbered = Numbered::new(0, 8);

fn key(i: u32) -> ServiceKey {
    NUMBERS.key(i)
}

fn dest(i: u32) -> Destination {
    NUMBERS.dest(i)
}

fn desired(n: u32, d: u32) -> Table {
    NUMBERS.desired(n, d, Scheduler::RoundRobin)
}

#[test]
#[ignore = "needs IPVS: runs in the VM via .ci/kernel-tests"]
fn sync_from_empty_then_nothing_to_do() {
    fresh_netns();
    let mut c = Client::new().unwrap();
    let want = desired(300, 4);
    let mut s = Syncer::new(PlanOptions::default());
    let dry = s.plan(&mut c, &want).unwrap();
    assert_eq!(dry.len(), 300 + 1200);
    assert!(dry.to_rules().starts_with("-A -t 10.0.0.1:80 -s rr\n"));
    assert!(
        c.services().unwrap().is_empty(),
        "a dry run applies nothing"
    );
    let r = s.sync(&mut c, &want).unwrap();
    assert!(r.is_complete(), "{r}");
    assert_eq!(r.done(), 1500);
    assert!(r.listed());
    assert_converged(&mut c, &want);
    // ipvsadm sees the same.
    let saved = ipvsadm_ok(&["-S", "-n"]);
    assert_eq!(saved.lines().filter(|l| l.starts_with("-A")).count(), 300);
    assert_eq!(saved.lines().filter(|l| l.starts_with("-a")).count(), 1200);
    // Again: nothing to send, whether listed or from the cached view.
    let r = s.sync(&mut c, &want).unwrap();
    assert!(r.requests().is_empty(), "{r}");
    let r = s.sync_cached(&mut c, &want).unwrap();
    assert!(r.requests().is_empty() && !r.listed(), "{r}");
}

#[test]
#[ignore = "needs IPVS: runs in the VM via .ci/kernel-tests"]
fn sync_from_a_different_table_edits_in_place() {
    fresh_netns();
    let mut c = Client::new().unwrap();
    let mut s = Syncer::new(PlanOptions::default());
    let old = desired(50, 3);
    assert!(s.sync(&mut c, &old).unwrap().is_complete());
    // New: services 1-10 gone, 11-20 switch to wlc + persistence, a weight
    // changes on 21-30, a destination leaves 31-40, one joins 41-50, and
    // 51-60 are new.
    let mut want = Table::new();
    for t in old.iter() {
        let n = match t.service.key {
            ServiceKey::Inet {
                addr: IpAddr::V4(a),
                ..
            } => u32::from(a.octets()[3]),
            _ => unreachable!(),
        };
        let mut svc = t.service.clone();
        let mut dests: Vec<Destination> = t.destinations.iter().map(|d| d.destination).collect();
        match n {
            1..=10 => continue,
            11..=20 => {
                svc = svc
                    .with_scheduler(Scheduler::WeightedLeastConnection)
                    .with_persistence(60)
            }
            21..=30 => dests[0] = dests[0].with_weight(9),
            31..=40 => {
                dests.pop();
            }
            _ => dests.push(dest(n * 8 + 7)),
        }
        want.insert(svc, dests);
    }
    for n in 51..=60 {
        want.insert(Service::new(key(n)), [dest(n * 8)]);
    }
    let cur = kernel_table(&mut c);
    assert_eq!(cur.len(), 50);
    let p = ipvsnl::sync::plan(
        &cur,
        &want,
        &PlanOptions::default(),
        &Default::default(),
        Instant::now(),
    );
    let count = |f: fn(&Request) -> bool| p.requests().iter().filter(|r| f(r)).count();
    let rules = p.to_rules();
    assert_eq!(
        count(|r| matches!(r, Request::DeleteService(_))),
        10,
        "{rules}"
    );
    assert_eq!(count(|r| matches!(r, Request::EditService(_))), 10);
    assert_eq!(count(|r| matches!(r, Request::AddService(_))), 10);
    assert_eq!(count(|r| matches!(r, Request::EditDestination(..))), 10);
    assert_eq!(count(|r| matches!(r, Request::DeleteDestination(..))), 10);
    assert_eq!(count(|r| matches!(r, Request::AddDestination(..))), 20);
    let r = s.sync(&mut c, &want).unwrap();
    assert!(r.is_complete(), "{r}");
    assert!(r.requests().len() >= 70, "{r}");
    assert_converged(&mut c, &want);
    assert!(s.cached().unwrap().same_settings(&want));
}

#[test]
#[ignore = "needs IPVS: runs in the VM via .ci/kernel-tests"]
fn set_dest_changes_forwarding_and_tunnel_in_place() {
    // What the planner relies on: SET_DEST edits forwarding method and
    // tunnel parameters without a delete and re-add.
    fresh_netns();
    let mut c = Client::new().unwrap();
    let k = key(1);
    let d = dest(1);
    let mut s = Syncer::new(PlanOptions::default());
    let mut want = Table::new();
    want.insert(Service::new(k), [d]);
    assert!(s.sync(&mut c, &want).unwrap().is_complete());
    for fwd in [
        Forward::Tunnel(Tunnel::gue(6080)),
        Forward::Tunnel(Tunnel::gre()),
        Forward::Route,
        Forward::Masquerade,
    ] {
        let mut want = Table::new();
        want.insert(Service::new(k), [d.with_forward(fwd).with_weight(3)]);
        let r = s.sync(&mut c, &want).unwrap();
        assert!(r.is_complete(), "{fwd:?}: {r}");
        assert_eq!(r.requests().len(), 1, "{fwd:?}: edited in place");
        assert!(matches!(r.requests()[0], Request::EditDestination(..)));
        let got = c.destinations(&k).unwrap();
        assert_eq!(got[0].destination.forward, fwd);
        if let Forward::Tunnel(t) = fwd {
            if t.kind == TunnelKind::Gue {
                assert!(ipvsadm_ok(&["-S", "-n"]).contains("--tun-port 6080"));
            }
        }
    }
}

#[test]
#[ignore = "needs IPVS: runs in the VM via .ci/kernel-tests"]
fn a_co_tenant_service_is_left_alone() {
    fresh_netns();
    ipvsadm_ok(&["-A", "-u", "192.0.2.1:53", "-s", "wlc"]);
    ipvsadm_ok(&[
        "-a",
        "-u",
        "192.0.2.1:53",
        "-r",
        "192.0.2.9:53",
        "-m",
        "-w",
        "5",
    ]);
    let before = ipvsadm_ok(&["-S", "-n"]);
    let mut c = Client::new().unwrap();
    let scope = Scope::predicate(
        |k: &ServiceKey| matches!(k, ServiceKey::Inet { addr: IpAddr::V4(a), .. } if a.octets()[0] == 10),
    );
    let mut s = Syncer::new(PlanOptions::new(scope));
    let want = desired(20, 2);
    let r = s.sync(&mut c, &want).unwrap();
    assert!(r.is_complete(), "{r}");
    // Shrink ours to nothing: the co-tenant stays exactly as it was.
    let r = s.sync(&mut c, &Table::new()).unwrap();
    assert!(r.is_complete(), "{r}");
    assert_eq!(r.requests().len(), 20);
    assert_eq!(ipvsadm_ok(&["-S", "-n"]), before);
    // Wanting a service outside the scope is refused, not done.
    let mut foreign = Table::new();
    foreign.insert(
        Service::new(ServiceKey::udp("192.0.2.1".parse().unwrap(), 53)),
        [],
    );
    let r = s.sync(&mut c, &foreign).unwrap();
    assert_eq!(r.conflicts().len(), 1);
    assert!(!r.is_complete());
    assert_eq!(ipvsadm_ok(&["-S", "-n"]), before);
}

#[test]
#[ignore = "needs IPVS: runs in the VM via .ci/kernel-tests"]
fn a_failing_request_mid_batch_is_reported_and_the_rest_applied() {
    fresh_netns();
    let mut c = Client::new().unwrap();
    let mut want = desired(100, 3);
    // Service 200 asks for a scheduler the kernel does not have: its adding
    // fails (ENOENT) and its destinations are skipped.
    let bad_svc = key(200);
    let mut svc = Service::new(bad_svc);
    svc.scheduler = Scheduler::new("nosuchsched").unwrap();
    want.insert(svc, [dest(1600), dest(1601)]);
    // An IPv6 service gets a link-local destination, which the kernel
    // refuses (EINVAL) although it looks like an address; its other
    // destination is added.
    let v6 = ServiceKey::tcp("2001:db8::1".parse().unwrap(), 80);
    want.insert(
        Service::new(v6),
        [
            Destination::new("2001:db8::5".parse().unwrap(), 80),
            Destination::new("fe80::1".parse().unwrap(), 80),
        ],
    );
    let mut s = Syncer::new(PlanOptions::default());
    let r = s.sync(&mut c, &want).unwrap();
    assert_eq!(r.failed(), 2, "{r}");
    assert_eq!(r.skipped(), 2, "{r}");
    assert_eq!(r.done(), 101 + 301);
    let failures: Vec<String> = r.failures().map(|(_, e)| e.to_string()).collect();
    assert!(
        failures
            .iter()
            .any(|e| e.contains("add service") && e.contains("ENOENT")),
        "{failures:?}"
    );
    assert!(
        failures
            .iter()
            .any(|e| e.contains("fe80::1") && e.contains("EINVAL")),
        "{failures:?}"
    );
    for (req, o) in r.operations() {
        if let Fate::Skipped { cause } = o {
            assert!(matches!(req, Request::AddDestination(k, _) if *k == bad_svc));
            assert!(matches!(&r.requests()[*cause], Request::AddService(x) if x.key == bad_svc));
        }
    }
    // Everything else is in the kernel, and the view knows what is not.
    let got = kernel_table(&mut c);
    assert_eq!(got.len(), 101);
    assert_eq!(got.destination_count(), 301);
    assert!(s.cached().unwrap().same_settings(&got));
}

#[test]
#[ignore = "needs IPVS: runs in the VM via .ci/kernel-tests"]
fn a_concurrent_writer_does_not_stop_the_next_sync_converging() {
    fresh_netns();
    let mut c = Client::new().unwrap();
    let want = desired(200, 3);
    let mut s = Syncer::new(PlanOptions::default());
    assert!(s.sync(&mut c, &want).unwrap().is_complete());
    // Another writer, in this namespace (the child inherits the thread's).
    let script = "while :; do \
        ipvsadm -E -t 10.0.0.5:80 -s wlc; \
        ipvsadm -d -t 10.0.0.6:80 -r 172.16.0.48:80; \
        ipvsadm -D -t 10.0.0.7:80; \
        ipvsadm -A -t 10.0.0.250:80 -s rr; \
        ipvsadm -e -t 10.0.0.8:80 -r 172.16.0.64:80 -m -w 7; \
        done >/dev/null 2>&1";
    let mut writer = {
        use std::os::unix::process::CommandExt;
        Command::new("sh")
            .args(["-c", script])
            .stdin(Stdio::null())
            .process_group(0)
            .spawn()
            .expect("start the writer")
    };
    let mut reports = Vec::new();
    let until = Instant::now() + Duration::from_secs(3);
    while Instant::now() < until {
        // Failures are allowed here (the writer races us); errors of the
        // listing itself too, but nothing may hang or panic.
        if let Ok(r) = s.sync(&mut c, &want) {
            reports.push((r.done(), r.failed()));
        }
    }
    // Stop the loop and the ipvsadm it may be running (its process group).
    let pgid = writer.id() as libc::pid_t;
    // SAFETY: kill takes a process group id we created and a signal number.
    assert_eq!(unsafe { libc::kill(-pgid, libc::SIGKILL) }, 0);
    writer.wait().expect("reap the writer");
    std::thread::sleep(Duration::from_millis(200));
    assert!(!reports.is_empty());
    let r = s.sync(&mut c, &want).unwrap();
    assert!(r.is_complete(), "{r}");
    assert_converged(&mut c, &want);
    // And once more: nothing left to do.
    assert!(s.sync(&mut c, &want).unwrap().requests().is_empty());
}

#[test]
#[ignore = "needs IPVS: runs in the VM via .ci/kernel-tests"]
fn lost_replies_are_accounted_for() {
    fresh_netns();
    // 600 services, then a stale view: the first 300 are deleted behind
    // the syncer's back. Every edit of those fails (ESRCH); with a tiny
    // socket buffer and a big batch, error replies overflow it (ENOBUFS).
    let mut big = Client::new().unwrap();
    let mut s = Syncer::new(PlanOptions::default())
        .with_apply_options(ApplyOptions::default().with_max_batch_requests(1000));
    let old = desired(600, 1);
    assert!(s.sync(&mut big, &old).unwrap().is_complete());
    let rules: String = (1..=300)
        .map(|i| format!("-D -t {}\n", key_addr(i)))
        .collect();
    assert_ok("ipvsadm -R", ipvsadm_stdin(&["-R"], &rules));
    let mut tiny = Client::with_options(ClientOptions::default().with_socket_buffer(4096)).unwrap();
    let mut want = Table::new();
    for t in old.iter() {
        want.insert(
            t.service
                .clone()
                .with_scheduler(Scheduler::WeightedLeastConnection),
            t.destinations.iter().map(|d| d.destination),
        );
    }
    let r = s.sync_cached(&mut tiny, &want).unwrap();
    assert!(!r.listed());
    assert!(r.requests().len() >= 600);
    // Nothing guessed: a failure is a refusal the kernel gave (ESRCH); a
    // dropped reply is unknown, and reading its service back settled it
    // (applied, or planned again and applied in this same sync).
    for (_, e) in r.failures() {
        assert!(e.is_refused() && e.errno() == Some(libc::ESRCH), "{e}");
    }
    assert!(
        !r.unknown().is_empty(),
        "the ENOBUFS path was not taken: {r}"
    );
    assert!(r.verified() <= r.unknown().len());
    assert!(r
        .unknown()
        .iter()
        .all(|u| u.found != ipvsnl::sync::Found::Unread));
    assert_eq!(r.done() + r.failed(), r.requests().len(), "{r}");
    // The client still works, and the next sync converges.
    let r = s.sync(&mut tiny, &want).unwrap();
    assert!(r.is_complete(), "{r}");
    assert_converged(&mut tiny, &want);
    // The pipeline on its own: every request gets an outcome.
    let dup: Vec<Request> = want
        .iter()
        .map(|t| Request::add_service(t.service.clone()))
        .collect();
    let out = tiny.apply_with(&dup, &ApplyOptions::default().with_max_batch_requests(1000));
    assert_eq!(out.len(), 600);
    assert_refused_or_lost(&out);
    assert_eq!(tiny.services().unwrap().len(), 600);
}

/// Every outcome is `EEXIST` (refused) or unknown (reply dropped,
/// `ENOBUFS`), and the `ENOBUFS` path was taken at least once.
fn assert_refused_or_lost(out: &[Result<(), ipvsnl::Error>]) {
    let refused = |e: &ipvsnl::Error| e.is_refused() && e.errno() == Some(libc::EEXIST);
    // A lost reply is an unknown outcome, never a refusal with ENOBUFS.
    let lost = |e: &ipvsnl::Error| e.is_unknown_outcome() && e.errno() == Some(libc::ENOBUFS);
    assert!(out
        .iter()
        .all(|o| o.as_ref().is_err_and(|e| refused(e) || lost(e))));
    assert!(out.iter().any(|o| o.as_ref().is_err_and(lost)));
}

#[test]
#[ignore = "needs IPVS: runs in the VM via .ci/kernel-tests"]
fn small_batches_give_every_request_its_own_outcome() {
    fresh_netns();
    // 3,000 requests over many small batches: 400 services with 5
    // destinations each, where every 50th service is a duplicate (EEXIST),
    // every 97th destination goes to a service that does not exist
    // (ESRCH), and every 301st request is a fwmark 0 service (refused
    // locally, never sent).
    let mut reqs = Vec::new();
    let mut expect = Vec::new();
    for s in 1..=400u32 {
        reqs.push(Request::add_service(
            Service::new(key(s)).with_scheduler(Scheduler::RoundRobin),
        ));
        expect.push(None);
        if s % 50 == 0 {
            reqs.push(Request::add_service(Service::new(key(s))));
            expect.push(Some(libc::EEXIST));
        }
    }
    for s in 1..=400u32 {
        for j in 0..5 {
            let n = reqs.len();
            if n % 97 == 0 {
                reqs.push(Request::AddDestination(key(1000 + s), dest(s * 8 + j)));
                expect.push(Some(libc::ESRCH));
            } else if n % 301 == 0 {
                reqs.push(Request::add_service(Service::new(ServiceKey::fwmark(
                    0,
                    AddressFamily::Inet,
                ))));
                expect.push(Some(0));
            } else {
                reqs.push(Request::AddDestination(key(s), dest(s * 8 + j)));
                expect.push(None);
            }
        }
    }
    assert!(reqs.len() > 2000);
    let outcome = |o: &Result<(), ipvsnl::Error>| match o {
        Ok(()) => None,
        Err(e) if e.is_invalid_input() => Some(0),
        Err(e) => Some(e.errno().unwrap_or(-1)),
    };
    let mut c = Client::new().unwrap();
    let mut tables = Vec::new();
    for batch in [64, 7] {
        let opts = ApplyOptions::default().with_max_batch_requests(batch);
        let out = c.apply_with(&reqs, &opts);
        let got: Vec<Option<i32>> = out.iter().map(outcome).collect();
        assert_eq!(got, expect, "batches of {batch}");
        tables.push(kernel_table(&mut c));
        c.flush().unwrap();
    }
    assert_eq!(tables[0].len(), 400);
    assert!(tables[0].same_settings(&tables[1]));
    // Lost replies: a tiny socket buffer and batches of refusals; every
    // outcome is still accounted for.
    let mut tiny = Client::with_options(ClientOptions::default().with_socket_buffer(4096)).unwrap();
    let services: Vec<Request> = (1..=2500u32)
        .map(|s| Request::add_service(Service::new(key(s))))
        .collect();
    let opts = ApplyOptions::default().with_max_batch_requests(1000);
    assert!(tiny.apply_with(&services, &opts).iter().all(Result::is_ok));
    let again = tiny.apply_with(&services, &opts);
    assert_refused_or_lost(&again);
    assert_eq!(tiny.services().unwrap().len(), 2500);
}

fn key_addr(i: u32) -> String {
    match key(i) {
        ServiceKey::Inet { addr, port, .. } => format!("{addr}:{port}"),
        _ => unreachable!(),
    }
}

/// Sets up two local addresses on `lo` and a listener on each, so that a
/// connection from this namespace to the virtual service is scheduled by
/// IPVS to a "Local" destination and counts as one of its connections.
#[test]
#[ignore = "needs IPVS: runs in the VM via .ci/kernel-tests"]
fn graceful_drain_waits_for_live_connections() {
    use std::io::{Read, Write};
    use std::net::{TcpListener, TcpStream};
    fresh_netns();
    for a in ["10.99.0.1/32", "10.99.0.2/32", "10.99.0.10/32"] {
        assert_ok("ip addr add", run("ip", &["addr", "add", a, "dev", "lo"]));
    }
    let vip: IpAddr = "10.99.0.10".parse().unwrap();
    let r1: IpAddr = "10.99.0.1".parse().unwrap();
    let r2: IpAddr = "10.99.0.2".parse().unwrap();
    let listener = TcpListener::bind("0.0.0.0:80").unwrap();
    let k = ServiceKey::tcp(vip, 80);
    let svc = Service::new(k).with_scheduler(Scheduler::RoundRobin);
    let mut c = Client::new().unwrap();
    let mut s = Syncer::new(
        PlanOptions::new(Scope::keys([k])).with_drain(Drain::new(Duration::from_secs(60))),
    );
    let mut want = Table::new();
    want.insert(svc.clone(), [Destination::new(r1, 80)]);
    assert!(s.sync(&mut c, &want).unwrap().is_complete());
    // A live connection, scheduled to r1 (the only destination).
    let mut client = TcpStream::connect((vip, 80)).unwrap();
    let (mut server, _) = listener.accept().unwrap();
    client.write_all(b"ping").unwrap();
    let mut buf = [0u8; 4];
    server.read_exact(&mut buf).unwrap();
    let conns = |c: &mut Client| {
        c.destinations(&k)
            .unwrap()
            .iter()
            .find(|d| d.destination.addr == r1)
            .map(|d| d.active_conns + d.inactive_conns)
    };
    assert_eq!(conns(&mut c), Some(1), "the connection went through IPVS");
    // r1 leaves, r2 joins: r1 drains (weight 0), it is not deleted. From
    // the cached view, whose connection count (0, listed before the
    // connection) is stale: the syncer reads the live one back.
    let mut want = Table::new();
    want.insert(svc.clone(), [Destination::new(r2, 80)]);
    let r = s.sync_cached(&mut c, &want).unwrap();
    assert!(!r.listed());
    assert!(r.is_complete(), "{r}");
    assert!(
        r.requests()
            .iter()
            .any(|q| matches!(q, Request::EditDestination(_, d) if d.addr == r1 && d.weight == 0)),
        "{:?}",
        r.requests()
    );
    assert!(!r
        .requests()
        .iter()
        .any(|q| matches!(q, Request::DeleteDestination(..))));
    assert!(s.draining().is_draining(&(k, r1, 80)));
    // Still busy on the next syncs (listed or cached): kept.
    assert!(s.sync(&mut c, &want).unwrap().requests().is_empty());
    assert!(s.sync_cached(&mut c, &want).unwrap().requests().is_empty());
    assert_eq!(conns(&mut c), Some(1));
    // The connection ends (reset: its IPVS entry expires in seconds).
    ipvsnl_test_support::client::reset_on_close(&client);
    drop(client);
    drop(server);
    let deadline = Instant::now() + Duration::from_secs(40);
    loop {
        let r = s.sync_cached(&mut c, &want).unwrap();
        if r.requests()
            .iter()
            .any(|q| matches!(q, Request::DeleteDestination(_, a, _) if *a == r1))
        {
            assert!(r.is_complete(), "{r}");
            break;
        }
        assert!(
            Instant::now() < deadline,
            "r1 never drained: {:?}",
            conns(&mut c)
        );
        std::thread::sleep(Duration::from_millis(500));
    }
    assert!(s.draining().is_empty());
    assert_converged(&mut c, &want);
}
