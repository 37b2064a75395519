//! The ownership record: a service removed while its owner was down is
//! deleted (drained first) at the next start, a foreign service never is;
//! a crash between the kernel change and the record's write leaks
//! nothing; a record cut short, changed, another owner's or held by
//! another owner is refused, naming its file.

use std::collections::BTreeSet;
use std::net::IpAddr;
use std::path::PathBuf;
use std::time::Duration;

use crate::block_on::block_on;
use crate::emulator::{Connections, Kernel};
use crate::sync::emulated::connect;
use crate::sync::ownership_file::encode;
use crate::sync::report::Report;
use crate::sync::{Drain, Ownership, OwnershipError, PlanOptions, Scope, Syncer, Table};
use crate::{Destination, Error, Service, ServiceKey, Stats};

/// `syncer.sync` on a client of `kernel` (the emulator's own port: the
/// crate's tests build without the `emulator` feature).
fn sync(syncer: &mut Syncer, kernel: &Kernel, want: &Table) -> Result<Report, Error> {
    block_on(syncer.sync_in(&mut connect(kernel, true), want))
}

fn ip(s: &str) -> IpAddr {
    s.parse().unwrap()
}

fn key(port: u16) -> ServiceKey {
    ServiceKey::tcp(ip("192.0.2.1"), port)
}

const FOREIGN: u16 = 9999;

/// A directory of the test's own.
fn dir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("ipvsnl-own-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// The services of `ports`, one destination each (10.0.0.1:8080).
fn table(ports: &[u16]) -> Table {
    let mut t = Table::new();
    for p in ports {
        t.insert(
            Service::new(key(*p)),
            [Destination::new(ip("10.0.0.1"), 8080)],
        );
    }
    t
}

/// The kernel's services, by port.
fn held(kernel: &Kernel) -> Vec<u16> {
    let mut ports: Vec<u16> = kernel
        .init_netns()
        .table()
        .iter()
        .filter_map(|s| match s.service.key {
            ServiceKey::Inet { port, .. } => Some(port),
            _ => None,
        })
        .collect();
    ports.sort_unstable();
    ports
}

/// One run of an owner: claim, sync in the record's scope, observe.
fn run(kernel: &Kernel, owned: &mut Ownership, want: &Table, drain: bool) -> Syncer {
    owned.claim(want.keys()).unwrap();
    let mut options = PlanOptions::new(owned.scope(want.keys()));
    if drain {
        options = options.with_drain(Drain::new(Duration::from_secs(60)));
    }
    let mut syncer = Syncer::new(options);
    let report = sync(&mut syncer, kernel, want).unwrap();
    assert!(report.is_complete(), "{report}");
    owned.after_sync(&syncer).unwrap();
    syncer
}

/// A foreign service, on port 9999.
fn foreign(kernel: &Kernel) {
    let mut t = table(&[80, FOREIGN]);
    t.remove(&key(80));
    let mut s = Syncer::new(PlanOptions::new(Scope::keys([key(FOREIGN)])));
    assert!(sync(&mut s, kernel, &t).unwrap().is_complete());
}

#[test]
fn keys_alone_leak_a_service_removed_while_the_owner_was_down() {
    // What the record fixes: a scope of what is wanted now.
    let kernel = Kernel::new();
    let mut s = Syncer::new(PlanOptions::new(Scope::keys([key(80), key(81)])));
    let r = sync(&mut s, &kernel, &table(&[80, 81]));
    assert!(r.unwrap().is_complete());
    let mut s = Syncer::new(PlanOptions::new(Scope::keys([key(80)])));
    let r = sync(&mut s, &kernel, &table(&[80]));
    assert!(r.unwrap().is_complete());
    assert_eq!(held(&kernel), [80, 81]);
}

#[test]
fn a_service_removed_while_the_owner_was_down_is_drained_then_deleted() {
    let d = dir("removed");
    let path = d.join("owned");
    let kernel = Kernel::new();
    foreign(&kernel);
    {
        let mut owned = Ownership::open(&path, "t").unwrap();
        run(&kernel, &mut owned, &table(&[80, 81]), true);
        assert_eq!(held(&kernel), [80, 81, FOREIGN]);
    }
    // 81 has a client: its destination drains before it goes.
    let conns = Connections::default().with_active(1);
    kernel.init_netns().set_destination_state(
        &key(81),
        ip("10.0.0.1"),
        8080,
        conns,
        Stats::default(),
    );
    // Restarted, wanting 80 only. The service 81 is left with no
    // destinations wanted: its destination drains (weight 0).
    let mut owned = Ownership::open(&path, "t").unwrap();
    assert_eq!(owned.keys().len(), 2);
    let mut draining = table(&[80]);
    draining.insert(Service::new(key(81)), []);
    let syncer = run(&kernel, &mut owned, &draining, true);
    let d81 = kernel.init_netns().service(&key(81)).unwrap();
    assert_eq!(d81.destinations[0].destination.weight, 0);
    assert!(!syncer.draining().is_empty());
    // Drained: the next sync deletes it.
    kernel.init_netns().set_destination_state(
        &key(81),
        ip("10.0.0.1"),
        8080,
        Connections::default(),
        Stats::default(),
    );
    run(&kernel, &mut owned, &table(&[80]), true);
    assert_eq!(held(&kernel), [80, FOREIGN]);
    let keys: Vec<_> = owned.keys().iter().copied().collect();
    assert_eq!(keys, [key(80)]);
    // And the record on disk says so.
    drop(owned);
    let again = Ownership::open(&path, "t").unwrap();
    assert_eq!(again.keys().iter().copied().collect::<Vec<_>>(), [key(80)]);
}

#[test]
fn a_crash_between_the_kernel_change_and_the_record_write_leaks_nothing() {
    let d = dir("crash");
    let path = d.join("owned");
    let kernel = Kernel::new();
    foreign(&kernel);
    // A run that claims 80 and 81, creates them and crashes before it
    // observes: the record was written before the kernel changed.
    {
        let mut owned = Ownership::open(&path, "t").unwrap();
        let want = table(&[80, 81]);
        owned.claim(want.keys()).unwrap();
        let mut syncer = Syncer::new(PlanOptions::new(owned.scope(want.keys())));
        let r = sync(&mut syncer, &kernel, &want);
        assert!(r.unwrap().is_complete());
    }
    // A run that deletes 81 and crashes before it observes: 81 stays
    // recorded, the kernel lacks it.
    {
        let mut owned = Ownership::open(&path, "t").unwrap();
        let want = table(&[80]);
        owned.claim(want.keys()).unwrap();
        let mut syncer = Syncer::new(PlanOptions::new(owned.scope(want.keys())));
        let r = sync(&mut syncer, &kernel, &want);
        assert!(r.unwrap().is_complete());
        assert_eq!(held(&kernel), [80, FOREIGN]);
    }
    // The next start converges: 80 removed too, the foreign one kept, the
    // record emptied of what the kernel no longer holds.
    let mut owned = Ownership::open(&path, "t").unwrap();
    assert_eq!(owned.keys().len(), 2);
    run(&kernel, &mut owned, &Table::new(), false);
    assert_eq!(held(&kernel), [FOREIGN]);
    assert!(owned.keys().is_empty());
}

#[test]
fn no_view_leaves_the_record_as_it_is() {
    let d = dir("noview");
    let mut owned = Ownership::open(d.join("owned"), "t").unwrap();
    owned.claim([key(80)]).unwrap();
    let syncer = Syncer::new(PlanOptions::new(Scope::All));
    assert!(!owned.after_sync(&syncer).unwrap());
    assert_eq!(owned.keys().len(), 1);
}

#[test]
fn a_record_cut_short_or_changed_is_refused_naming_its_line() {
    let d = dir("corrupt");
    let path = d.join("owned");
    let keys: BTreeSet<_> = [key(80), key(81)].into_iter().collect();
    let whole = encode("t", &keys);
    std::fs::write(&path, &whole).unwrap();
    assert_eq!(Ownership::open(&path, "t").unwrap().keys(), &keys);
    for cut in 1..whole.len() {
        std::fs::write(&path, &whole[..cut]).unwrap();
        let e = Ownership::open(&path, "t").unwrap_err();
        assert!(
            matches!(e, OwnershipError::Corrupt { .. }),
            "cut at {cut}: {e}"
        );
        assert!(e.to_string().contains("owned:"), "{e}");
    }
    // One port changed: the checksum tells.
    std::fs::write(&path, whole.replace(":81", ":82")).unwrap();
    let e = Ownership::open(&path, "t").unwrap_err().to_string();
    assert!(e.contains("checksum"), "{e}");
    // The recovery: an empty record, written whole at the first change.
    let mut owned = Ownership::empty(&path, "t").unwrap();
    assert!(owned.keys().is_empty());
    owned.claim([key(80)]).unwrap();
    drop(owned);
    assert_eq!(Ownership::open(&path, "t").unwrap().keys().len(), 1);
}

#[test]
fn another_owners_record_is_refused() {
    let d = dir("other");
    let path = d.join("owned");
    let mut owned = Ownership::open(&path, "host a").unwrap();
    owned.claim([key(80)]).unwrap();
    drop(owned);
    let e = Ownership::open(&path, "host b").unwrap_err();
    assert!(
        matches!(&e, OwnershipError::OtherOwner { found, .. } if found == "host a"),
        "{e}"
    );
    assert!(Ownership::open(&path, "bad\nname").is_err());
}

#[test]
fn two_owners_of_one_record_are_refused() {
    let d = dir("locked");
    let path = d.join("owned");
    let first = Ownership::open(&path, "t").unwrap();
    let e = Ownership::open(&path, "t").unwrap_err();
    assert!(matches!(e, OwnershipError::Locked { .. }), "{e}");
    assert!(matches!(
        Ownership::empty(&path, "t"),
        Err(OwnershipError::Locked { .. })
    ));
    drop(first);
    Ownership::open(&path, "t").unwrap();
}

#[test]
fn a_failed_write_leaves_the_record_as_it_was() {
    let d = dir("failed");
    let path = d.join("owned");
    let mut owned = Ownership::open(&path, "t").unwrap();
    owned.claim([key(80)]).unwrap();
    // The temporary file's name taken by a directory: the write fails.
    std::fs::create_dir(d.join("owned.tmp")).unwrap();
    let e = owned.claim([key(81)]).unwrap_err();
    assert!(matches!(e, OwnershipError::Io { .. }), "{e}");
    assert!(e.to_string().contains("owned.tmp"), "{e}");
    assert_eq!(owned.keys().len(), 1);
    std::fs::remove_dir(d.join("owned.tmp")).unwrap();
    drop(owned);
    assert_eq!(Ownership::open(&path, "t").unwrap().keys().len(), 1);
}
