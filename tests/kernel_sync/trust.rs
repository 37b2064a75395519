//! Kernel tests of when a syncer trusts the view it remembers
//! (`Syncer::sync_cached`): only for the namespace it converged and the
//! `ip_vs` module it listed from. A client of another namespace, a
//! namespace made later under a freed one's inode number, and a module
//! reloaded between a sync's listing and its apply each make the next
//! cached sync list; the same namespace reached by another path does not.

use crate::common;

use std::fs::File;
use std::os::fd::AsRawFd;
use std::os::unix::fs::MetadataExt;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use common::named_netns::{in_netns, NamedNetns};
use common::reload::{load_ip_vs, unload_ip_vs};
use common::*;
use ipvsnl::sync::{PlanOptions, Scope, Syncer, Table};
use ipvsnl::{Client, Scheduler, ServiceKey};
use ipvsnl_test_support::keys::Numbered;
use ipvsnl_test_support::netns::gettid;
use ipvsnl_test_support::oracle::{assert_converged, kernel_table};

/// Services 10.3.x.y, real servers 172.19.x.y, four apart.
const NUMBERS: Numbered = Numbered::new(3, 4);

fn key(i: u32) -> ServiceKey {
    NUMBERS.key(i)
}

/// Services 1..=n with `d` destinations each.
fn desired(n: u32, d: u32) -> Table {
    NUMBERS.desired(n, d, Scheduler::RoundRobin)
}

/// The inode number of the calling thread's namespace file.
fn netns_ino() -> u64 {
    std::fs::metadata("/proc/thread-self/ns/net")
        .expect("stat the namespace file")
        .ino()
}

#[test]
#[ignore = "needs IPVS: runs in the VM via .ci/kernel-tests"]
fn a_cached_sync_through_a_client_of_another_namespace_lists_its_table() {
    fresh_netns();
    let other = NamedNetns::add("ipvsnl-trust-other");
    let mut a = Client::new().unwrap();
    let mut b = Client::in_namespace(other.path()).unwrap();
    let mut s = Syncer::new(PlanOptions::default());
    let want = desired(20, 2);
    let r = s.sync(&mut a, &want).unwrap();
    assert!(r.is_complete() && r.done() == 60, "{r}");
    // The same family id, another namespace: B's table is empty, and the
    // syncer must not take A's view for it.
    let r = s.sync_cached(&mut b, &want).unwrap();
    assert!(r.listed(), "{r}");
    assert!(r.is_complete() && r.done() == 60, "{r}");
    assert_converged(&mut b, &want);
    // Back to A: the view is B's now, so A is listed (nothing to do).
    let r = s.sync_cached(&mut a, &want).unwrap();
    assert!(r.listed() && r.requests().is_empty(), "{r}");
    // A again: trusted.
    let r = s.sync_cached(&mut a, &want).unwrap();
    assert!(!r.listed() && r.requests().is_empty(), "{r}");
    assert_converged(&mut a, &want);
}

#[test]
#[ignore = "needs IPVS: runs in the VM via .ci/kernel-tests"]
fn the_same_namespace_reached_by_another_path_is_trusted() {
    fresh_netns();
    let want = desired(5, 1);
    // A client made in the caller's namespace, then one opened by the
    // thread's /proc path: one namespace.
    let mut mine = Client::new().unwrap();
    let mut s = Syncer::new(PlanOptions::default());
    assert!(s.sync(&mut mine, &want).unwrap().is_complete());
    let path = format!("/proc/{}/task/{}/ns/net", std::process::id(), gettid());
    let mut by_path = Client::in_namespace(&path).unwrap();
    let r = s.sync_cached(&mut by_path, &want).unwrap();
    assert!(!r.listed() && r.requests().is_empty(), "{r}");
    // A named namespace: its bind mount under /run/netns, and a client
    // made by a thread that entered it (its /proc/thread-self file).
    let named = NamedNetns::add("ipvsnl-trust-named");
    let mut by_mount = Client::in_namespace(named.path()).unwrap();
    let r = s.sync(&mut by_mount, &want).unwrap();
    assert!(r.listed() && r.is_complete() && r.done() == 10, "{r}");
    let mut inside = in_netns(named.path(), || Client::new().unwrap());
    let r = s.sync_cached(&mut inside, &want).unwrap();
    assert!(!r.listed() && r.requests().is_empty(), "{r}");
    assert_converged(&mut inside, &want);
}

/// The kernel numbers namespace files from one pool, lowest free first: a
/// namespace made after another was freed can get its inode number. The
/// syncer must still tell them apart. Alone in its boot, so that no other
/// test's namespace takes the number first.
#[test]
#[ignore = "needs IPVS: runs in the VM via .ci/kernel-tests"]
fn exclusive_sync_a_namespace_under_a_freed_ones_inode_number_is_another() {
    require_root();
    let want = desired(10, 1);
    // Namespace 1, on a thread of its own: synced, then freed with the
    // thread and the client.
    let (freed_ino, mut s) = std::thread::spawn(move || {
        fresh_netns();
        let mut c = Client::new().unwrap();
        let mut s = Syncer::new(PlanOptions::default());
        assert!(s.sync(&mut c, &want).unwrap().is_complete());
        (netns_ino(), s)
    })
    .join()
    .unwrap();
    // New namespaces until one gets that number. Namespace inode numbers
    // come from the one allocator the proc entries use too, lowest free
    // number first, and the freed namespace's teardown runs in the
    // background. Making network namespaces while it runs lost the number
    // to a `/proc/net` entry of a namespace being made (CI: 403 made in
    // 30 s, none got it). So a UTS namespace, which takes one number and
    // nothing else, probes first: one under the freed number is held (a
    // lower hole filled), one above it means the number is not free yet;
    // the freed number itself is given back by leaving that namespace, and
    // the network namespace is made at once, in the same thread, to take it.
    let initial_uts = File::open("/proc/self/ns/uts").expect("open the initial UTS namespace");
    let want = desired(10, 1);
    let mut held: Vec<File> = Vec::new();
    let deadline = Instant::now() + Duration::from_secs(60);
    let mut tries = 0;
    loop {
        tries += 1;
        let got = std::thread::scope(|scope| {
            scope
                .spawn(|| {
                    // SAFETY: unshare only takes flags; it moves this thread
                    // alone into a new UTS namespace.
                    assert_eq!(
                        unsafe { libc::unshare(libc::CLONE_NEWUTS) },
                        0,
                        "unshare UTS"
                    );
                    let uts = std::fs::metadata("/proc/thread-self/ns/uts").unwrap().ino();
                    if uts != freed_ino {
                        let file = File::open("/proc/thread-self/ns/uts").unwrap();
                        return Err((uts, file));
                    }
                    // SAFETY: setns with an open namespace file of the type
                    // named; it moves this thread alone.
                    let rc = unsafe { libc::setns(initial_uts.as_raw_fd(), libc::CLONE_NEWUTS) };
                    assert_eq!(rc, 0, "back to the initial UTS namespace");
                    fresh_netns();
                    let ino = netns_ino();
                    if ino != freed_ino {
                        return Ok((ino, None));
                    }
                    let mut c = Client::new().unwrap();
                    let r = s.sync_cached(&mut c, &want).unwrap();
                    let table = kernel_table(&mut c);
                    Ok((ino, Some((r.listed(), r.to_string(), table))))
                })
                .join()
                .unwrap()
        });
        match got {
            Ok((ino, Some((listed, report, table)))) => {
                eprintln!(
                    "namespace inode {ino} given again after {tries} tries, {} holes held",
                    held.len()
                );
                assert!(
                    listed,
                    "the view of the freed namespace was trusted: {report}"
                );
                assert!(table.same_settings(&want), "{report}");
                break;
            }
            // Below the freed number: a hole, held so it is not given again.
            Err((uts, file)) if uts < freed_ino => held.push(file),
            // Not free yet; or the number went elsewhere between the probe
            // and the network namespace (that namespace is let go: its
            // numbers come back with its teardown).
            Err(_) | Ok((_, None)) => {
                assert!(
                    Instant::now() < deadline,
                    "no new namespace got the freed inode number {freed_ino} \
                     ({tries} tries, {} holes held)",
                    held.len()
                );
                std::thread::sleep(Duration::from_millis(50));
            }
        }
    }
}

/// `ip_vs` unloaded and loaded by the scope's predicate, when the planner
/// asks it about the one wanted service the kernel does not hold: after
/// the listing, before the apply. The new service, planned for the table
/// that is gone, is not sent to the new, empty one (its destinations
/// skipped with it: the module reload's one classification); the view
/// (listed before) is not kept, and the next cached sync lists and
/// converges.
#[test]
#[ignore = "needs IPVS: runs in the VM via .ci/kernel-tests"]
fn exclusive_sync_a_reload_between_the_listing_and_the_apply_is_not_trusted() {
    fresh_netns();
    let mut c = Client::new().unwrap();
    let before = desired(20, 2);
    assert!(Syncer::new(PlanOptions::default())
        .sync(&mut c, &before)
        .unwrap()
        .is_complete());
    let new = key(21);
    let armed = Arc::new(AtomicBool::new(true));
    let trigger = armed.clone();
    let scope = Scope::predicate(move |k: &ServiceKey| {
        if *k == new && trigger.swap(false, Ordering::SeqCst) {
            // A service holds its scheduler's module: the table goes first.
            Client::new().unwrap().flush().unwrap();
            let modules = unload_ip_vs();
            load_ip_vs(&modules);
        }
        true
    });
    let mut s = Syncer::new(PlanOptions::new(scope));
    let want = desired(21, 2);
    let id_before = c.family_id().unwrap();
    let r = s.sync(&mut c, &want).unwrap();
    assert!(!armed.load(Ordering::SeqCst), "the reload did not happen");
    assert_eq!((r.done(), r.failed(), r.skipped()), (0, 1, 2), "{r}");
    assert!(r.failures().all(|(_, e)| e.is_family_changed()), "{r}");
    assert_ne!(c.family_id().unwrap(), id_before, "a new family id");
    assert!(kernel_table(&mut c).is_empty(), "the reloaded table");
    let r = s.sync_cached(&mut c, &want).unwrap();
    assert!(r.listed(), "{r}");
    assert!(r.is_complete() && r.done() == 63, "{r}");
    assert_converged(&mut c, &want);
    c.flush().unwrap();
}
