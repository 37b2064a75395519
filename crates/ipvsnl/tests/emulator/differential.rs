//! The emulator against the real kernel (a kernel test: root and IPVS, in
//! the VM): random sequences of requests (a property test with a fixed
//! seed, shrunk on failure), sent one by one through the same client code
//! to the kernel (in a fresh network namespace) and to an emulated kernel,
//! must get the same outcome each (done, refused with the same errno,
//! refused before sending), and leave the same table (compared sorted: the
//! kernel's service order hashes a kernel pointer; destinations newest
//! first, compared as listed) and the same timeouts.
//!
//! `.ci/kernel-tests` runs it on both kernels (the workspace's tests build
//! this binary with its features); `IPVSNL_KERNELS=6.12 .ci/kernel-tests
//! -- differential` runs it alone, `PROPTEST_CASES=N` for more sequences.
//!
//! Not covered here: the sync daemons (their defaults depend on the
//! interface) and the client's own refusals of the bad-input table
//! (tests/bad_input.rs: never sent, so no kernel to compare with).

use std::cell::RefCell;
use std::net::IpAddr;
use std::process::Command;

use ipvsnl::emulator::Kernel;
use proptest::prelude::*;
use proptest::strategy::ValueTree;
use proptest::test_runner::{RngAlgorithm, TestRng, TestRunner};

use ipvsnl::{
    AddressFamily, Client, Destination, Error, Forward, Request, Scheduler, Service, ServiceEntry,
    ServiceKey, Timeouts, Tunnel,
};

use crate::ip;

/// Moves the calling thread into a new network namespace with `lo` up.
pub(crate) fn fresh_netns() {
    // SAFETY: unshare takes a flag; it moves only the calling thread (the
    // test's own), whose later sockets and children are the namespace's.
    let rc = unsafe { libc::unshare(libc::CLONE_NEWNET) };
    assert_eq!(rc, 0, "unshare: {}", std::io::Error::last_os_error());
    let ok = Command::new("ip")
        .args(["link", "set", "lo", "up"])
        .status()
        .map(|s| s.success())
        .unwrap_or(false);
    assert!(ok, "ip link set lo up");
}

/// An outcome as both sides must agree on it.
#[derive(Debug, PartialEq, Eq)]
enum Outcome {
    Done,
    Refused(i32),
    NotSent,
    Other(String),
}

fn outcome(r: &Result<(), Error>) -> Outcome {
    match r {
        Ok(()) => Outcome::Done,
        Err(e) if e.is_invalid_input() => Outcome::NotSent,
        Err(e) => match e.errno() {
            Some(errno) => Outcome::Refused(errno),
            None => Outcome::Other(e.to_string()),
        },
    }
}

/// A table in an order both sides share.
fn sorted(mut t: Vec<ServiceEntry>) -> Vec<ServiceEntry> {
    t.sort_by_key(|e| *e.key());
    t
}

/// The pieces a request is made of: a few keys and servers, valid and
/// not, so that random sequences reach the kernel's refusals.
fn keys() -> [ServiceKey; 4] {
    [
        ServiceKey::tcp(IpAddr::from([10, 0, 0, 1]), 80),
        ServiceKey::udp(IpAddr::from([10, 0, 0, 1]), 53),
        ServiceKey::tcp("2001:db8::1".parse().unwrap(), 443),
        ServiceKey::fwmark(5, AddressFamily::Inet),
    ]
}

const SERVERS: [&str; 5] = [
    "10.1.0.1",
    "10.1.0.2",
    "0.0.0.0",
    "224.0.0.1",
    "2001:db8::10",
];

/// A request over those pieces, valid or not, as indices (so that a
/// failing sequence shrinks to a short one of simple requests).
fn request() -> impl Strategy<Value = Request> {
    (
        (0..9usize, 0..4usize, 0..5usize, 0..4usize),
        (0..4usize, 0..2usize, 0..3usize, 0..3usize),
        (0..2usize, 0..2usize),
    )
        .prop_map(
            |((verb, key, server, forward), (weight, lower, upper, sched), (t1, t2))| {
                let key = keys()[key];
                let forward = [
                    Forward::Masquerade,
                    Forward::Route,
                    Forward::Tunnel(Tunnel::ipip()),
                    Forward::Tunnel(Tunnel::gue(0)),
                ][forward];
                let scheduler = [
                    Scheduler::RoundRobin,
                    Scheduler::Maglev,
                    Scheduler::new("nosuch").unwrap(),
                ][sched]
                    .clone();
                let dest = Destination::new(ip(SERVERS[server]), 80)
                    .with_forward(forward)
                    .with_weight([0, 1, 5, u32::MAX][weight])
                    .with_thresholds([0, 10][lower], [0, 5, 20][upper]);
                let service = Service::new(key).with_scheduler(scheduler);
                match verb {
                    0 | 1 => Request::add_service(service),
                    2 => Request::edit_service(service),
                    3 => Request::DeleteService(key),
                    4 | 5 => Request::AddDestination(key, dest),
                    6 => Request::EditDestination(key, dest),
                    7 => Request::DeleteDestination(key, dest.addr, dest.port),
                    _ => Request::SetTimeouts(Timeouts::new([0, 60][t1], 0, [0, 9_000_000][t2])),
                }
            },
        )
}

/// Sequences of up to 60 requests.
fn sequence() -> impl Strategy<Value = Vec<Request>> {
    proptest::collection::vec(request(), 1..60)
}

/// A runner with a fixed seed: the same sequences on every run (CI never
/// meets a new one by chance), shrunk on failure; no regression file (the
/// VM has no source tree). `PROPTEST_CASES` overrides the count.
fn runner(cases: u32) -> TestRunner {
    let cases = std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(cases);
    let config = ProptestConfig {
        cases,
        failure_persistence: None,
        ..ProptestConfig::default()
    };
    let seed = [0x49u8; 32];
    TestRunner::new_with_rng(config, TestRng::from_seed(RngAlgorithm::ChaCha, &seed))
}

#[test]
fn the_sequences_cover_successes_and_many_refusals() {
    // On the host, on the emulator alone: the differential test below is
    // worth something only if its sequences reach the kernel's refusals.
    let mut errnos = std::collections::BTreeSet::new();
    let (mut done, mut not_sent) = (0, 0);
    let mut runner = runner(32);
    for _ in 0..32 {
        let requests = sequence().new_tree(&mut runner).unwrap().current();
        let kernel = Kernel::new();
        let mut c = Client::emulated(&kernel);
        for r in &requests {
            match outcome(&c.apply(std::slice::from_ref(r)).remove(0)) {
                Outcome::Done => done += 1,
                Outcome::Refused(e) => {
                    errnos.insert(e);
                }
                Outcome::NotSent => not_sent += 1,
                Outcome::Other(_) => {}
            }
        }
    }
    assert!(done >= 100, "{done} done");
    // A negative weight and a lower threshold above the upper one are the
    // client's refusals (never sent): the kernel's ERANGE for them is
    // tested raw, in kernel.rs.
    assert!(not_sent >= 10, "{not_sent} not sent");
    for errno in [libc::EEXIST, libc::ESRCH, libc::ENOENT, libc::EINVAL] {
        assert!(
            errnos.contains(&errno),
            "errno {errno} never reached: {errnos:?}"
        );
    }
}

#[test]
#[ignore = "needs IPVS: runs in the VM via .ci/kernel-tests"]
fn random_requests_get_the_kernels_outcomes_and_leave_its_table() {
    fresh_netns();
    // The runner takes a `Fn`: the one client of the kernel is borrowed
    // per sequence.
    let real = RefCell::new(Client::new().expect("a client of the kernel"));
    let defaults = Client::emulated(&Kernel::new()).timeouts().unwrap();
    let result = runner(32).run(&sequence(), |requests| {
        // Each sequence from the same start on both sides: an empty table
        // and the default timeouts.
        let mut real = real.borrow_mut();
        real.flush().expect("flush");
        real.set_timeouts(&defaults).expect("timeouts");
        let kernel = Kernel::new();
        let mut emulated = Client::emulated(&kernel);
        for (step, r) in requests.iter().enumerate() {
            let want = outcome(&real.apply(std::slice::from_ref(r)).remove(0));
            let got = outcome(&emulated.apply(std::slice::from_ref(r)).remove(0));
            prop_assert_eq!(got, want, "step {}: {:?}", step, r);
        }
        prop_assert_eq!(
            sorted(emulated.table().unwrap()),
            sorted(real.table().unwrap()),
            "the tables"
        );
        prop_assert_eq!(emulated.timeouts().unwrap(), real.timeouts().unwrap());
        Ok(())
    });
    if let Err(e) = result {
        panic!("{e}");
    }
}
