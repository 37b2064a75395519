//! The `ip_vs` module reloaded under a client (its family id changed, its
//! tables emptied): every change it strikes, whatever the change and
//! wherever in a batch it strikes, ends the same way, not applied and
//! never called a refusal, in one text; the next sync lists again and
//! converges.

use std::net::IpAddr;

use ipvsnl::emulator::{Fault, Kernel, When};
use ipvsnl::sync::{PlanOptions, Scope, Syncer, Table};
use ipvsnl::{ApplyOptions, Client, Destination, Error, Request, Service, ServiceKey};

fn key() -> ServiceKey {
    ServiceKey::tcp(IpAddr::from([10, 0, 0, 1]), 80)
}

fn dest(i: u8) -> Destination {
    Destination::new(IpAddr::from([10, 9, 0, i]), 80)
}

/// Seven changes: a service and its six destinations.
fn changes() -> Vec<Request> {
    let mut r = vec![Request::add_service(Service::new(key()))];
    r.extend((1..=6).map(|i| Request::AddDestination(key(), dest(i))));
    r
}

fn want() -> Table {
    let mut t = Table::new();
    t.insert(Service::new(key()), (1..=6).map(dest));
    t
}

/// The text of `e` after the name of its request.
fn reason(e: &Error) -> String {
    let target = e.target().expect("a request's error").to_string();
    let text = e.to_string();
    assert!(text.starts_with(&target), "{text}");
    text[target.len()..].to_string()
}

/// Checks that `results` are done before `at` (0-based) and stale from
/// it on, each in the same words; returns those words.
fn stale_from(at: usize, results: &[Result<(), Error>]) -> String {
    let mut words = Vec::new();
    for (i, r) in results.iter().enumerate() {
        match r {
            Ok(()) => assert!(i < at, "change {} done after the reload", i + 1),
            Err(e) => {
                assert!(i >= at, "change {} failed before the reload: {e}", i + 1);
                assert!(e.is_family_changed(), "change {}: {e}", i + 1);
                assert!(e.is_not_sent(), "{e}");
                assert!(!e.is_refused() && !e.is_not_found(), "{e}");
                assert!(!e.is_unknown_outcome(), "{e}");
                assert_eq!(e.errno(), None, "no IPVS errno to misread: {e}");
                words.push(reason(e));
            }
        }
    }
    assert_eq!(words.len(), results.len() - at);
    words.dedup();
    assert_eq!(words.len(), 1, "one text: {words:?}");
    words.remove(0)
}

#[test]
fn a_reload_at_any_change_of_a_batch_ends_the_rest_alike() {
    let mut texts = Vec::new();
    for batch in [64, 3] {
        for n in 1..=7 {
            let k = Kernel::new();
            let mut c = Client::emulated(&k);
            k.inject(When::nth_change(n), Fault::Reload);
            let results = c.apply_with(
                &changes(),
                &ApplyOptions::default().with_max_batch_requests(batch),
            );
            texts.push(stale_from(n - 1, &results));
            // The client uses the new family id from then on.
            assert!(k.init_netns().table().is_empty());
            c.add_service(&Service::new(key())).unwrap();
        }
    }
    texts.dedup();
    assert_eq!(texts.len(), 1, "{texts:?}");
    assert!(
        texts[0].contains("ip_vs module was reloaded"),
        "{}",
        texts[0]
    );
}

#[test]
fn a_reload_between_two_calls_ends_the_next_changes_alike() {
    let k = Kernel::new();
    let mut c = Client::emulated(&k);
    c.add_service(&Service::new(key())).unwrap();
    k.reload_module();
    // The six destinations, under the id the client looked up before.
    let results = c.apply(&changes()[1..]);
    stale_from(0, &results);
    // A single change the same.
    k.reload_module();
    let e = c.add_service(&Service::new(key())).unwrap_err();
    assert!(e.is_family_changed() && !e.is_refused(), "{e}");
}

#[test]
fn a_sync_struck_by_a_reload_anywhere_converges_at_the_next() {
    for n in 1..=7 {
        let k = Kernel::new();
        let mut c = Client::emulated(&k);
        let mut s = Syncer::new(PlanOptions::new(Scope::All));
        k.inject(When::nth_change(n), Fault::Reload);
        let r = s.sync(&mut c, &want()).unwrap();
        // At the service add, its destinations are skipped with it.
        assert_eq!(r.done(), n - 1, "reload at change {n}: {r}");
        assert_eq!(r.failed() + r.skipped(), 8 - n, "reload at change {n}: {r}");
        assert!(
            r.failures().all(|(_, e)| e.is_family_changed()),
            "reload at change {n}: {r}"
        );
        let r = s.sync(&mut c, &want()).unwrap();
        assert!(r.is_complete(), "reload at change {n}: {r}");
        let table = k.init_netns().table();
        assert_eq!(table.len(), 1);
        assert_eq!(table[0].destinations.len(), 6);
    }
}
