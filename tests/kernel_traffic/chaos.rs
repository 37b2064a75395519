//! Chaos, in boots of their own (tests named `exclusive_` run alone, one at
//! a time, in a second boot of each kernel: see .ci/kernel-tests; `scripts/measure/chaos`
//! runs only these): `ip_vs` unloaded and loaded between the syncs of one
//! long-lived client and syncer; the syncing process killed (SIGKILL) in the
//! middle of a large apply, then a fresh client's sync converging the
//! half-applied table with the fewest requests; the client's network
//! namespace deleted while the client lives; a co-tenant flushing the whole
//! table in the middle of a sync.
//!
//! The oracle is the kernel's own `/proc/net/ip_vs` text (parsed in
//! the test-support crate's `oracle.rs`, not by the library) and field-by-field comparisons.

use crate::common;

use std::collections::BTreeSet;
use std::net::IpAddr;
use std::os::unix::process::ExitStatusExt;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use common::named_netns::{in_netns, NamedNetns};
use common::reload::{load_ip_vs, loaded_ip_vs_modules, module_refs, unload_ip_vs, NoAutoload};
use common::*;
use ipvsnl::sync::{Fate, Found, Plan, PlanOptions, Scope, Syncer, Table};
use ipvsnl::{Client, ClientOptions, Destination, Request, Scheduler, Service, ServiceKey};
use ipvsnl_test_support::oracle::{kernel_table, needed, parse_proc_ip_vs, Needed, RawTable};
use ipvsnl_test_support::table_diff::{assert_tables_equal, scoped};

fn key(i: u32) -> ServiceKey {
    ServiceKey::tcp(IpAddr::from([10, 2, (i >> 8) as u8, i as u8]), 80)
}

/// Our services: 10.2.0.0/16. A co-tenant's live elsewhere.
fn ours(k: &ServiceKey) -> bool {
    matches!(k, ServiceKey::Inet { addr: IpAddr::V4(a), .. } if a.octets()[..2] == [10, 2])
}

fn scope() -> PlanOptions {
    PlanOptions::new(Scope::predicate(ours))
}

fn dest(s: u32, j: u32) -> Destination {
    Destination::new(
        IpAddr::from([172, 18, (s >> 8) as u8, s as u8]),
        8000 + j as u16,
    )
}

/// Services 1..=n with `d` destinations each, version 0: all `rr`, weight 1.
/// Version 1 is the next desired table: every 100th service on `wlc`, the
/// first destination of every 50th at weight 3, every 500th service gone.
fn table(n: u32, d: u32, version: u32) -> Table {
    let mut t = Table::new();
    for s in (1..=n).filter(|s| version == 0 || s % 500 != 0) {
        let sched = if version == 1 && s % 100 == 0 {
            Scheduler::WeightedLeastConnection
        } else {
            Scheduler::RoundRobin
        };
        let dests = (0..d).map(|j| {
            let w = if version == 1 && s % 50 == 0 && j == 0 {
                3
            } else {
                1
            };
            dest(s, j).with_weight(w)
        });
        t.insert(Service::new(key(s)).with_scheduler(sched), dests);
    }
    t
}

/// `/proc/net/ip_vs` of the calling thread's namespace, or of `path`'s.
fn raw(path: Option<&Path>) -> RawTable {
    match path {
        None => parse_proc_ip_vs(&read_proc_net("ip_vs")),
        Some(p) => in_netns(p, || parse_proc_ip_vs(&read_proc_net("ip_vs"))),
    }
}

/// Checks a plan's requests kind by kind against the oracle's count.
fn assert_plan_is(what: &str, requests: &[Request], need: &Needed) {
    let mut got = Needed::default();
    for r in requests {
        match r {
            Request::AddService(_) => got.missing_services += 1,
            Request::AddDestination(..) => got.missing_destinations += 1,
            Request::EditService(_) | Request::EditDestination(..) => got.wrong_settings += 1,
            Request::DeleteService(_) | Request::DeleteDestination(..) => got.surplus += 1,
            other => panic!("{what}: a sync planned {other}"),
        }
    }
    assert_eq!(&got, need, "{what}: planned {got}, the fewest are {need}");
}

/// The service a request is about.
fn service_of(r: &Request) -> ServiceKey {
    match r {
        Request::AddService(s) | Request::EditService(s) => s.key,
        Request::DeleteService(k)
        | Request::AddDestination(k, _)
        | Request::EditDestination(k, _)
        | Request::DeleteDestination(k, _, _) => *k,
        other => panic!("not a sync's request: {other}"),
    }
}

#[test]
#[ignore = "needs IPVS: runs in the VM via .ci/kernel-tests"]
fn exclusive_chaos_reload_between_syncs() {
    fresh_netns();
    // One client and one syncer for the whole test.
    let mut c = Client::new().unwrap();
    let mut s = Syncer::new(scope());
    let first = table(200, 3, 0);
    assert!(s.sync(&mut c, &first).unwrap().is_complete());
    for cycle in 1..=3u32 {
        let id_before = c.family_id().unwrap();
        // A service holds its scheduler's module: the table goes first
        // (a co-tenant's ipvsadm), then every IPVS module.
        ipvsadm_ok(&["-C"]);
        let modules = unload_ip_vs();
        let want = table(200 + 50 * cycle, 3, cycle % 2);
        let r = if cycle == 1 {
            // Asked for the family, the kernel loads ip_vs by itself (its
            // alias net-pf-16-proto-16-family-IPVS), and a scheduler's
            // module when a service names it: the sync just works.
            let r = s.sync(&mut c, &want);
            let now = loaded_ip_vs_modules();
            assert!(now.iter().any(|m| m == "ip_vs") && now.iter().any(|m| m == "ip_vs_rr"));
            load_ip_vs(&modules);
            r
        } else {
            // With autoloading off, a sync is an error that says so.
            let off = NoAutoload::new();
            let e = s.sync(&mut c, &want).unwrap_err();
            assert!(e.is_unavailable(), "cycle {cycle}: {e:?}");
            assert_eq!(e.errno(), Some(libc::ENOENT), "{e}");
            assert!(e.to_string().contains("ip_vs module not loaded"), "{e}");
            let e = c.services().unwrap_err();
            assert!(e.is_unavailable(), "cycle {cycle}: {e:?}");
            assert!(loaded_ip_vs_modules().is_empty());
            drop(off);
            load_ip_vs(&modules);
            s.sync(&mut c, &want)
        };
        let r = r.unwrap_or_else(|e| panic!("cycle {cycle}: the sync after the reload: {e}"));
        assert!(r.listed() && r.is_complete(), "cycle {cycle}: {r}");
        // The reloaded table is empty: a cold create, nothing else.
        assert_eq!(
            r.requests().len(),
            want.len() + want.destination_count(),
            "cycle {cycle}: {r}"
        );
        assert_eq!((r.failed(), r.skipped(), r.unknown().len()), (0, 0, 0));
        assert_tables_equal(&format!("cycle {cycle}"), &kernel_table(&mut c), &want);
        assert_eq!(needed(&raw(None), &want, ours).total(), 0);
        let again = s.sync(&mut c, &want).unwrap();
        assert!(again.requests().is_empty(), "cycle {cycle}: {again}");
        eprintln!(
            "cycle {cycle}: {} modules reloaded, family id {id_before:#x} -> {:#x}, {} requests",
            modules.len(),
            c.family_id().unwrap(),
            r.requests().len()
        );
    }
}

/// After a reload the kernel's table is empty, so the syncer's cached view
/// is wrong; what a user needs is that `sync_cached` still leaves the
/// kernel equal to the desired table (the syncer noticing the family was
/// registered anew, and listing).
#[test]
#[ignore = "needs IPVS: runs in the VM via .ci/kernel-tests"]
fn exclusive_chaos_reload_between_syncs_then_sync_cached() {
    fresh_netns();
    let mut c = Client::new().unwrap();
    let mut s = Syncer::new(scope());
    assert!(s.sync(&mut c, &table(200, 3, 0)).unwrap().is_complete());
    for (round, want) in [table(200, 3, 0), table(200, 3, 1)].iter().enumerate() {
        ipvsadm_ok(&["-C"]);
        let modules = unload_ip_vs();
        load_ip_vs(&modules);
        let r = s.sync_cached(&mut c, want).unwrap();
        eprintln!(
            "round {round}: sync_cached after a reload: listed {}, {r}",
            r.listed()
        );
        assert_tables_equal(
            &format!("round {round}: after a reload, sync_cached"),
            &kernel_table(&mut c),
            want,
        );
        assert!(r.is_complete(), "{r}");
    }
}

/// Set in the child process of `exclusive_chaos_sigkill_mid_apply`: the
/// namespace it syncs into.
const CHILD_NETNS: &str = "IPVSNL_CHAOS_CHILD_NETNS";
const KILL_SERVICES: u32 = 3000;
const KILL_DESTS: u32 = 10;

#[test]
#[ignore = "needs IPVS: runs in the VM via .ci/kernel-tests"]
fn exclusive_chaos_sigkill_mid_apply() {
    if let Some(path) = std::env::var_os(CHILD_NETNS) {
        // The child's part: sync version 0 into the namespace, until killed.
        let mut c = Client::in_namespace(&path).unwrap();
        let r = Syncer::new(scope())
            .sync(&mut c, &table(KILL_SERVICES, KILL_DESTS, 0))
            .unwrap();
        eprintln!("child: the sync ended before the kill: {r}");
        return;
    }
    require_root();
    let ns = NamedNetns::add(&format!("ipvsnl-chaos-kill-{}", std::process::id()));
    let mut child = Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            &test_name(module_path!(), "exclusive_chaos_sigkill_mid_apply"),
        ])
        .args(["--ignored", "--nocapture", "--test-threads=1"])
        .env(CHILD_NETNS, ns.path())
        .stdout(Stdio::null())
        .spawn()
        .unwrap();
    // Kill once the destinations of the first third of the services are
    // in (services are added first, then destinations in service order).
    let mut watch = Client::in_namespace(ns.path()).unwrap();
    let mark = key(KILL_SERVICES / 3);
    let started = Instant::now();
    loop {
        if let Some(st) = child.try_wait().unwrap() {
            panic!("the child ended ({st}) before it could be killed");
        }
        if watch
            .destinations(&mark)
            .is_ok_and(|d| d.len() == KILL_DESTS as usize)
        {
            break;
        }
        assert!(started.elapsed() < Duration::from_secs(120), "no progress");
        std::thread::sleep(Duration::from_millis(1));
    }
    child.kill().unwrap();
    let status = child.wait().unwrap();
    assert_eq!(status.signal(), Some(libc::SIGKILL), "{status}");
    drop(watch);

    let at_kill = raw(Some(ns.path()));
    let dests: usize = at_kill.values().map(|s| s.destinations.len()).sum();
    let short = at_kill
        .values()
        .filter(|s| s.destinations.len() < KILL_DESTS as usize)
        .count();
    eprintln!(
        "killed after {:?}: {} services, {dests} destinations of {}; {short} services short of destinations",
        started.elapsed(),
        at_kill.len(),
        KILL_SERVICES * KILL_DESTS
    );
    assert!(
        !at_kill.is_empty() && short > 0 && dests < (KILL_SERVICES * KILL_DESTS) as usize,
        "the kill did not land in the middle of the apply"
    );

    // A fresh client and syncer, and the next version of the table.
    let want = table(KILL_SERVICES, KILL_DESTS, 1);
    let need = needed(&at_kill, &want, ours);
    let mut c = Client::in_namespace(ns.path()).unwrap();
    let mut s = Syncer::new(scope());
    let plan: Plan = s.plan(&mut c, &want).unwrap();
    assert_plan_is("the plan", plan.requests(), &need);
    let t = Instant::now();
    let r = s.sync(&mut c, &want).unwrap();
    let took = t.elapsed();
    assert!(r.listed() && r.is_complete(), "{r}");
    assert_plan_is("the sync", r.requests(), &need);
    eprintln!(
        "fewest requests needed: {need}; the fresh sync sent {} in {took:?}",
        r.requests().len()
    );
    assert_tables_equal("after the fresh sync", &kernel_table(&mut c), &want);
    assert_eq!(
        needed(&raw(Some(ns.path())), &want, ours),
        Needed::default()
    );
    assert!(s.plan(&mut c, &want).unwrap().is_empty());
    c.flush().unwrap();
}

#[test]
#[ignore = "needs IPVS: runs in the VM via .ci/kernel-tests"]
fn exclusive_chaos_netns_deleted_under_a_live_client() {
    require_root();
    // Services on `sed`, which nothing else here uses: the module's
    // reference count tells how many services exist in every namespace.
    ipvsnl_test_support::netns::load_module("ip_vs_sed");
    let base = module_refs("ip_vs_sed");
    let mut ns = NamedNetns::add(&format!("ipvsnl-chaos-del-{}", std::process::id()));
    let path = ns.path().to_owned();
    let mut c = Client::in_namespace(&path).unwrap();
    let batch = |range: std::ops::RangeInclusive<u32>| -> Vec<Request> {
        range
            .flat_map(|s| {
                let svc = Service::new(key(s)).with_scheduler(Scheduler::ShortestExpectedDelay);
                std::iter::once(Request::add_service(svc))
                    .chain((0..2).map(move |j| Request::AddDestination(key(s), dest(s, j))))
            })
            .collect()
    };
    for o in c.apply(&batch(1..=20)) {
        o.unwrap();
    }
    assert_eq!(module_refs("ip_vs_sed"), base + 20);

    // `ip netns del`: the bind mount and the file go.
    ns.delete();
    assert!(!path.exists(), "{} still there", path.display());
    // The client's socket (and its handle on the namespace) hold the
    // namespace: it lives on, and everything works as before.
    assert_eq!(c.services().unwrap().len(), 20);
    for o in c.apply(&batch(21..=30)) {
        o.unwrap();
    }
    let t = Table::from_entries(c.table().unwrap());
    assert_eq!((t.len(), t.destination_count()), (30, 60));
    assert_eq!(module_refs("ip_vs_sed"), base + 30);
    let totals = c.totals().unwrap();
    eprintln!("the namespace's totals, read through the client's handle: {totals:?}");
    // The kernel's refusals there keep their errno and their words.
    let e = c
        .add_service(&Service::new(key(1)).with_scheduler(Scheduler::ShortestExpectedDelay))
        .unwrap_err();
    assert!(e.is_already_exists(), "{e:?}");
    assert!(
        e.to_string().ends_with("service already exists (EEXIST)"),
        "{e}"
    );
    let e = c.delete_service(&key(999)).unwrap_err();
    assert_eq!(e.errno(), Some(libc::ESRCH), "{e}");
    assert!(e.to_string().contains(&key(999).to_string()), "{e}");
    // No new client by the path: the error names it.
    let e = Client::in_namespace(&path).unwrap_err();
    assert!(e.is_io() && e.errno() == Some(libc::ENOENT), "{e:?}");
    assert!(e.to_string().contains(&path.display().to_string()), "{e}");

    // Dropping the client lets the namespace go, and its services with it
    // (the kernel's namespace cleanup runs in the background).
    drop(c);
    let t = Instant::now();
    while module_refs("ip_vs_sed") != base {
        assert!(
            t.elapsed() < Duration::from_secs(30),
            "the namespace's 30 services still hold ip_vs_sed ({} references, {base} before)",
            module_refs("ip_vs_sed")
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    eprintln!(
        "the namespace's services were gone {:?} after the client was dropped",
        t.elapsed()
    );
}

#[test]
#[ignore = "needs IPVS: runs in the VM via .ci/kernel-tests"]
fn exclusive_chaos_cotenant_flush_mid_sync() {
    // With the default socket buffer and with one page. (One page was
    // meant to overflow with the refusals that follow the flush, ENOBUFS,
    // and make outcomes unknown; on 6.1 and 6.12 no reply was lost.)
    cotenant_flush_mid_sync(ClientOptions::default(), "default buffer");
    cotenant_flush_mid_sync(
        ClientOptions::default().with_socket_buffer(4096),
        "4 KiB buffer",
    );
}

fn cotenant_flush_mid_sync(options: ClientOptions, round: &str) {
    // A namespace of its own each round (a flushed table's destinations
    // linger in the kernel's trash list and slow adds down).
    fresh_netns();
    // A co-tenant's services (10.3.0.0/24, outside our scope), from
    // Debian's ipvsadm.
    let rules: String = (1..=20)
        .map(|i| format!("-A -t 10.3.0.{i}:80 -s rr\n-a -t 10.3.0.{i}:80 -r 172.19.0.{i}:80 -m\n"))
        .collect();
    assert_ok("ipvsadm -R", ipvsadm_stdin(&["-R"], &rules));
    let want = table(KILL_SERVICES, KILL_DESTS, 0);
    let syncing = {
        let want = want.clone();
        // A thread made after fresh_netns lives in the same namespace.
        std::thread::spawn(move || {
            let mut c = Client::with_options(options).unwrap();
            let mut s = Syncer::new(scope());
            let r = s.sync(&mut c, &want);
            (c, s, r)
        })
    };
    // The co-tenant flushes once the first tenth of our services have
    // their destinations.
    let mut watch = Client::new().unwrap();
    let mark = key(KILL_SERVICES / 10);
    let t = Instant::now();
    while !watch
        .destinations(&mark)
        .is_ok_and(|d| d.len() == KILL_DESTS as usize)
    {
        assert!(!syncing.is_finished(), "the sync ended before the flush");
        assert!(t.elapsed() < Duration::from_secs(120), "no progress");
        std::thread::sleep(Duration::from_millis(1));
    }
    ipvsadm_ok(&["-C"]);
    let flushed_at = t.elapsed();
    let (mut c, mut s, r) = syncing.join().unwrap();
    let r = r.expect("the sync listed before the flush: it returns a report");

    // Every outcome accounted for, once.
    let (mut done, mut superseded, mut failed, mut skipped) = (0, 0, 0, 0);
    let mut unknown_failures = BTreeSet::new();
    let mut failed_keys = BTreeSet::new();
    let (mut dests_done, mut dests_refused) = (0, 0);
    for (i, (req, o)) in r.operations().enumerate() {
        let is_dest = matches!(req, Request::AddDestination(..));
        match o {
            Fate::Done => {
                done += 1;
                dests_done += usize::from(is_dest);
            }
            Fate::Superseded => superseded += 1,
            Fate::Skipped { cause } => {
                skipped += 1;
                assert!(*cause < i && service_of(&r.requests()[*cause]) == service_of(req));
            }
            Fate::Failed(e) => {
                failed += 1;
                failed_keys.insert(service_of(req));
                let target = e.target().unwrap_or_else(|| panic!("{e} names no request"));
                assert_eq!(
                    (target.kind, &target.object),
                    (req.kind(), &req.target().object)
                );
                if e.is_unknown_outcome() {
                    // Sent, reply never seen: not a refusal.
                    assert!(!e.is_refused() && e.errno() != Some(libc::ESRCH), "{e}");
                    unknown_failures.insert(i);
                } else {
                    // Refused because the service was flushed under it.
                    assert!(e.is_refused() && e.errno() == Some(libc::ESRCH), "{e:?}");
                    let words = e.to_string();
                    assert!(words.ends_with("no such service (ESRCH)"), "{words}");
                    assert!(words.contains(&service_of(req).to_string()), "{words}");
                    dests_refused += usize::from(is_dest);
                }
            }
            other => panic!("unexpected outcome {other:?}"),
        }
    }
    assert_eq!(done + superseded, r.done(), "{r}");
    assert_eq!((failed, skipped), (r.failed(), r.skipped()), "{r}");
    assert_eq!(done + superseded + failed + skipped, r.requests().len());
    // The flush landed in the middle of the apply: destinations were
    // added before it, and refused (or their replies lost) after it.
    assert!(
        dests_done > 0 && dests_refused + r.unknown().len() > 0,
        "{r}"
    );
    for u in r.unknown() {
        let o = r.fate(u.index).unwrap();
        match u.found {
            Found::Applied => assert!(matches!(o, Fate::Done), "{o:?}"),
            Found::Replanned => assert!(matches!(o, Fate::Superseded), "{o:?}"),
            _ => assert!(unknown_failures.contains(&u.index), "{o:?}"),
        }
    }
    // The services whose requests failed were read back: the syncer's
    // view of them is the kernel's.
    let kernel = kernel_table(&mut c);
    if let Some(view) = s.cached() {
        let of = |t: &Table| scoped(t, |k| failed_keys.contains(k));
        assert_tables_equal("the view of the failed services", &of(&kernel), &of(view));
    }
    eprintln!(
        "{round}: flushed {flushed_at:?} in: {} requests, {done} done, {superseded} superseded, {failed} failed \
         ({dests_refused} destination adds refused ESRCH), {skipped} skipped; {} unknown: \
         {} found applied, {} found not applied and planned again, {} unread",
        r.requests().len(),
        r.unknown().len(),
        r.unknown().iter().filter(|u| u.found == Found::Applied).count(),
        r.unknown().iter().filter(|u| u.found == Found::Replanned).count(),
        r.unknown().iter().filter(|u| u.found == Found::Unread).count(),
    );

    // The next sync converges, with the fewest requests.
    let need = needed(&raw(None), &want, ours);
    let r = s.sync(&mut c, &want).unwrap();
    assert!(r.listed() && r.is_complete(), "{r}");
    assert_plan_is("the sync after the flush", r.requests(), &need);
    eprintln!(
        "{round}: the next sync: {need}, sent {}",
        r.requests().len()
    );
    let after = kernel_table(&mut c);
    assert_tables_equal("after the next sync", &scoped(&after, ours), &want);
    // The co-tenant's services went with its flush; ours did not bring them back.
    assert_eq!(after.len(), want.len(), "services outside our scope");
    assert!(s.plan(&mut c, &want).unwrap().is_empty());
    c.flush().unwrap();
}
