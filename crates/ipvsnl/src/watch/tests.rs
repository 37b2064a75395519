//! The diff on fixtures, and the watcher on a scripted lister in paused
//! time (each tick exactly where the interval puts it).

use std::collections::VecDeque;
use std::net::{IpAddr, Ipv4Addr};
use std::pin::pin;
use std::time::Duration;

use futures_core::Stream;
use tokio::time::Instant;

use super::{diff, Change, Changes, Lister, Watcher};
use crate::{
    Destination, DestinationEntry, Error, Forward, Netmask, Scheduler, Service, ServiceEntry,
    ServiceFlags, ServiceKey, Stats, Tunnel, TunnelFlags,
};

fn key(n: u8) -> ServiceKey {
    ServiceKey::tcp(IpAddr::V4(Ipv4Addr::new(10, 0, 0, n)), 80)
}

fn dest(n: u8) -> Destination {
    Destination::new(IpAddr::V4(Ipv4Addr::new(10, 1, 0, n)), 80)
}

/// Service `n` with destinations `dests`, all at the defaults.
fn svc(n: u8, dests: &[u8]) -> ServiceEntry {
    entry(Service::new(key(n)), dests.iter().map(|&d| dest(d)))
}

fn entry(service: Service, dests: impl IntoIterator<Item = Destination>) -> ServiceEntry {
    ServiceEntry::new(service).with_destinations(dests.into_iter().map(DestinationEntry::new))
}

fn added(e: &ServiceEntry) -> Change {
    Change::ServiceAdded(e.clone())
}

/// Destination `d` (at the defaults) added to service `s`.
fn dest_added(s: u8, d: u8) -> Change {
    Change::DestinationAdded {
        service: key(s),
        destination: DestinationEntry::new(dest(d)),
    }
}

/// Destination `d` (at the defaults) removed from service `s`.
fn dest_removed(s: u8, d: u8) -> Change {
    Change::DestinationRemoved {
        service: key(s),
        destination: DestinationEntry::new(dest(d)),
    }
}

// ---- diff ----

#[test]
fn diff_reports_every_kind_in_its_documented_order() {
    let kept = svc(1, &[5, 2, 3, 9]);
    let changed_service = Service::new(key(1)).with_scheduler(Scheduler::RoundRobin);
    let kept_now = entry(
        changed_service.clone(),
        [dest(7), dest(3).with_weight(4), dest(9), dest(6)],
    );
    let old = [svc(9, &[1]), kept.clone(), svc(2, &[1]), svc(3, &[])];
    let new = [svc(8, &[1]), kept_now, svc(2, &[1]), svc(4, &[])];
    let want = vec![
        // Removals in old's order (9 before 3: not sorted).
        Change::ServiceRemoved(svc(9, &[1])),
        Change::ServiceRemoved(svc(3, &[])),
        // Then new's order: 8 before 1 before 4.
        added(&svc(8, &[1])),
        Change::ServiceChanged {
            old: Service::new(key(1)),
            new: changed_service,
        },
        // Destinations gone, in old's order (5 before 2).
        dest_removed(1, 5),
        dest_removed(1, 2),
        // Then added or changed, in new's order (7, 3, 6).
        dest_added(1, 7),
        Change::DestinationChanged {
            service: key(1),
            old: dest(3),
            new: dest(3).with_weight(4),
        },
        dest_added(1, 6),
        added(&svc(4, &[])),
    ];
    assert_eq!(diff(&old, &new), want);
}

#[test]
fn every_service_setting_is_a_change() {
    let base = Service::new(key(1));
    let v6 = Service::new(ServiceKey::udp("2001:db8::1".parse().unwrap(), 53));
    let edits = [
        (base.clone(), base.clone().with_scheduler(Scheduler::Maglev)),
        (
            base.clone(),
            base.clone().with_flags(ServiceFlags::ONE_PACKET),
        ),
        (base.clone(), {
            let mut s = base.clone();
            s.timeout = 30;
            s
        }),
        (
            base.clone(),
            base.clone()
                .with_netmask(Netmask::V4(Ipv4Addr::new(255, 255, 255, 0))),
        ),
        (v6.clone(), v6.clone().with_netmask(Netmask::V6(64))),
        (base.clone(), base.clone().with_persistence_engine("sip")),
    ];
    for (old, new) in edits {
        let got = diff(
            &[entry(old.clone(), [dest(1)])],
            &[entry(new.clone(), [dest(1)])],
        );
        assert_eq!(got, vec![Change::ServiceChanged { old, new }]);
    }
}

#[test]
fn every_destination_setting_is_a_change() {
    let d = dest(1);
    let gue = Forward::Tunnel(Tunnel::gue(6080));
    let edits = [
        (d, d.with_forward(Forward::Route)),
        (
            d.with_forward(gue),
            d.with_forward(Forward::Tunnel(Tunnel::gue(6081))),
        ),
        (
            d.with_forward(gue),
            d.with_forward(Forward::Tunnel(
                Tunnel::gue(6080).with_flags(TunnelFlags::CSUM),
            )),
        ),
        (d, d.with_weight(0)),
        (d, d.with_thresholds(100, 0)),
        (d.with_thresholds(100, 0), d.with_thresholds(100, 50)),
    ];
    for (old, new) in edits {
        let got = diff(
            &[entry(Service::new(key(1)), [old])],
            &[entry(Service::new(key(1)), [new])],
        );
        assert_eq!(
            got,
            vec![Change::DestinationChanged {
                service: key(1),
                old,
                new
            }]
        );
    }
}

#[test]
fn counters_and_connection_counts_are_not_changes() {
    let old = [svc(1, &[1, 2]), svc(2, &[])];
    let busy = Stats::new().with_conns(1000).with_packets(70, 60);
    let new = [
        ServiceEntry::new(Service::new(key(1)))
            .with_stats(busy)
            .with_destinations([
                DestinationEntry::new(dest(1))
                    .with_active_conns(9)
                    .with_inactive_conns(3)
                    .with_persistent_conns(2)
                    .with_stats(busy),
                DestinationEntry::new(dest(2)).with_active_conns(1),
            ]),
        svc(2, &[]).with_stats(busy),
    ];
    assert!(diff(&old, &new).is_empty());
    assert!(diff(&new, &old).is_empty());
}

#[test]
fn a_destination_moving_between_services_is_removed_then_added() {
    let old = [svc(1, &[1, 2]), svc(2, &[3])];
    let new = [svc(1, &[2]), svc(2, &[3, 1])];
    assert_eq!(diff(&old, &new), vec![dest_removed(1, 1), dest_added(2, 1)]);
}

#[test]
fn empty_to_table_to_empty() {
    let table = [svc(3, &[1, 2]), svc(1, &[]), svc(2, &[4])];
    assert!(diff(&[], &[]).is_empty());
    // Destinations ride in their service's entry: no change of their own.
    assert_eq!(
        diff(&[], &table),
        table.iter().map(added).collect::<Vec<_>>()
    );
    assert!(diff(&table, &table).is_empty());
    let removed: Vec<Change> = table.iter().cloned().map(Change::ServiceRemoved).collect();
    assert_eq!(diff(&table, &[]), removed);
}

#[test]
fn a_key_listed_twice_counts_once_the_first() {
    let old = [svc(1, &[1, 1]), svc(1, &[7])];
    let new = [svc(1, &[1]), svc(2, &[]), svc(2, &[5])];
    assert_eq!(diff(&old, &new), vec![added(&svc(2, &[]))]);
    assert_eq!(diff(&new, &old), vec![Change::ServiceRemoved(svc(2, &[]))]);
}

#[test]
fn changes_print_short_and_name_their_service() {
    let e = svc(1, &[1, 2]);
    let one = svc(2, &[3]);
    let v6 = Destination::new("2001:db8::2".parse().unwrap(), 8080)
        .with_forward(Forward::Tunnel(Tunnel::gue(6080)))
        .with_weight(3);
    let persistent = Service::new(key(1))
        .with_persistence(300)
        .with_persistence_engine("sip");
    let cases = [
        (added(&e), "+ TCP 10.0.0.1:80 (wlc, 2 destinations)"),
        (added(&one), "+ TCP 10.0.0.2:80 (wlc, 1 destination)"),
        (Change::ServiceRemoved(e.clone()), "- TCP 10.0.0.1:80"),
        (
            Change::ServiceChanged {
                old: Service::new(key(1)),
                new: persistent,
            },
            "~ TCP 10.0.0.1:80: flags none -> persistent, timeout 0 -> 300, \
             persistence engine none -> sip",
        ),
        (
            Change::ServiceChanged {
                old: Service::new(key(1)),
                new: Service::new(key(1)),
            },
            "~ TCP 10.0.0.1:80: no setting differs",
        ),
        (
            Change::DestinationAdded {
                service: key(1),
                destination: DestinationEntry::new(v6),
            },
            "+ TCP 10.0.0.1:80 -> [2001:db8::2]:8080 (Tunnel gue port 6080 nocsum, weight 3)",
        ),
        (dest_removed(1, 2), "- TCP 10.0.0.1:80 -> 10.1.0.2:80"),
        (
            Change::DestinationChanged {
                service: key(1),
                old: dest(2),
                new: dest(2).with_forward(Forward::Route).with_thresholds(10, 5),
            },
            "~ TCP 10.0.0.1:80 -> 10.1.0.2:80: forward Masq -> Route, \
             upper threshold 0 -> 10, lower threshold 0 -> 5",
        ),
    ];
    let services: Vec<ServiceKey> = cases.iter().map(|(c, _)| *c.service()).collect();
    assert_eq!(services, [1, 2, 1, 1, 1, 1, 1, 1].map(key));
    for (change, text) in cases {
        assert_eq!(change.to_string(), text);
    }
}

// ---- the watcher ----

/// What the scripted lister does at one call.
enum Step {
    /// Lists this table.
    Table(Vec<ServiceEntry>),
    /// Fails.
    Fail,
    /// Takes this long, then lists this table.
    Slow(Duration, Vec<ServiceEntry>),
}

/// A lister that plays its steps in turn, then lists its last table again
/// and again; it notes when each call began.
struct Script {
    steps: VecDeque<Step>,
    last: Vec<ServiceEntry>,
    calls: Vec<Instant>,
}

impl Script {
    fn new(steps: impl IntoIterator<Item = Step>) -> Self {
        Script {
            steps: steps.into_iter().collect(),
            last: Vec::new(),
            calls: Vec::new(),
        }
    }
}

impl Lister for Script {
    async fn list(&mut self) -> Result<Vec<ServiceEntry>, Error> {
        self.calls.push(Instant::now());
        let table = match self.steps.pop_front() {
            None => self.last.clone(),
            Some(Step::Fail) => return Err(Error::invalid("listing", "scripted failure")),
            Some(Step::Table(t)) => t,
            Some(Step::Slow(d, t)) => {
                tokio::time::sleep(d).await;
                t
            }
        };
        self.last = table.clone();
        Ok(table)
    }
}

const PERIOD: Duration = Duration::from_secs(1);

fn secs(s: f64) -> Duration {
    Duration::from_secs_f64(s)
}

/// When each call of the watcher's lister began, since `start`.
fn call_times(w: &Watcher<Script>, start: Instant) -> Vec<Duration> {
    w.lister().calls.iter().map(|t| *t - start).collect()
}

fn t1() -> Vec<ServiceEntry> {
    vec![svc(1, &[1, 2]), svc(2, &[])]
}

fn t2() -> Vec<ServiceEntry> {
    vec![svc(1, &[2]), svc(2, &[])]
}

/// What t1 -> t2 is.
fn t1_to_t2() -> Vec<Change> {
    vec![dest_removed(1, 1)]
}

/// [`Watcher::next`], but a test that waits a (paused) minute for a
/// change fails instead of hanging.
async fn next(w: &mut Watcher<Script>) -> Result<Changes, Error> {
    let bounded = tokio::time::timeout(Duration::from_secs(60), w.next()).await;
    bounded.expect("a tick found a change or failed within a minute")
}

#[test]
fn a_watcher_is_made_outside_a_runtime_and_a_zero_period_is_a_millisecond() {
    let w = Watcher::new(Script::new([]), Duration::ZERO);
    assert_eq!(w.period(), Duration::from_millis(1));
    assert!(w.snapshot().is_none());
    assert!(w.lister().calls.is_empty(), "nothing listed before next()");
}

#[tokio::test(start_paused = true)]
async fn the_first_listing_yields_every_service_as_added_at_once() {
    let start = Instant::now();
    let mut w = Watcher::new(Script::new([Step::Table(t1())]), PERIOD);
    let got = next(&mut w).await.unwrap();
    assert!(got.first);
    assert_eq!(got.changes, t1().iter().map(added).collect::<Vec<_>>());
    assert_eq!(w.snapshot(), Some(&t1()[..]));
    assert_eq!(call_times(&w, start), [secs(0.0)]);
}

#[tokio::test(start_paused = true)]
async fn the_first_listing_of_an_empty_table_is_yielded_empty() {
    let mut w = Watcher::new(Script::new([Step::Table(vec![])]), PERIOD);
    let got = next(&mut w).await.unwrap();
    assert!(got.first);
    assert!(got.changes.is_empty());
    assert_eq!(w.snapshot(), Some(&[][..]));
}

#[tokio::test(start_paused = true)]
async fn ticks_without_a_change_are_not_yielded() {
    let start = Instant::now();
    let steps = [t1(), t1(), t1(), t2()].map(Step::Table);
    let mut w = Watcher::new(Script::new(steps), PERIOD);
    assert!(next(&mut w).await.unwrap().first);
    let got = next(&mut w).await.unwrap();
    assert!(!got.first);
    assert_eq!(got.changes, t1_to_t2());
    assert_eq!(Instant::now() - start, secs(3.0));
    assert_eq!(call_times(&w, start), [0.0, 1.0, 2.0, 3.0].map(secs));
    assert_eq!(w.snapshot(), Some(&t2()[..]));
}

#[tokio::test(start_paused = true)]
async fn exactly_one_listing_a_tick() {
    let start = Instant::now();
    let mut w = Watcher::new(Script::new([Step::Table(t1())]), PERIOD);
    next(&mut w).await.unwrap();
    // Nothing changes: next() keeps waiting, one listing at each tick.
    let waited = tokio::time::timeout(secs(10.5), w.next()).await;
    assert!(waited.is_err(), "no change, nothing yielded: {waited:?}");
    let want: Vec<Duration> = (0..=10).map(|s| secs(f64::from(s))).collect();
    assert_eq!(call_times(&w, start), want);
}

#[tokio::test(start_paused = true)]
async fn a_slow_listing_delays_the_next_tick_without_a_burst() {
    let start = Instant::now();
    let t3 = vec![svc(1, &[2])];
    let t4 = vec![svc(1, &[2, 3])];
    let steps = [
        Step::Table(t1()),
        Step::Slow(secs(3.5), t2()),
        Step::Table(t3),
        Step::Table(t4),
    ];
    let mut w = Watcher::new(Script::new(steps), PERIOD);
    for _ in 0..4 {
        next(&mut w).await.unwrap();
    }
    // The tick due at 2 s comes at once when the slow listing ends at
    // 4.5 s, and the next one a period later: no catching up.
    assert_eq!(call_times(&w, start), [0.0, 1.0, 4.5, 5.5].map(secs));
}

#[tokio::test(start_paused = true)]
async fn a_failed_listing_yields_its_error_and_keeps_the_last_listing() {
    let start = Instant::now();
    let steps = [
        Step::Table(t1()),
        Step::Fail,
        Step::Table(t1()),
        Step::Table(t2()),
    ];
    let mut w = Watcher::new(Script::new(steps), PERIOD);
    next(&mut w).await.unwrap();
    let e = next(&mut w).await.unwrap_err();
    assert!(
        e.is_invalid_input() && e.to_string().contains("scripted failure"),
        "{e}"
    );
    assert_eq!(w.snapshot(), Some(&t1()[..]));
    assert_eq!(Instant::now() - start, secs(1.0));
    // Carries on: the unchanged tick is passed over, t1 -> t2 is found.
    let got = next(&mut w).await.unwrap();
    assert_eq!((got.first, got.changes), (false, t1_to_t2()));
    assert_eq!(call_times(&w, start), [0.0, 1.0, 2.0, 3.0].map(secs));
}

#[tokio::test(start_paused = true)]
async fn after_a_failed_first_listing_the_next_success_is_first() {
    let mut w = Watcher::new(Script::new([Step::Fail, Step::Table(t1())]), PERIOD);
    assert!(next(&mut w).await.is_err());
    assert!(w.snapshot().is_none());
    let got = next(&mut w).await.unwrap();
    assert!(got.first);
    assert_eq!(got.changes, t1().iter().map(added).collect::<Vec<_>>());
}

/// The steps the stream test plays to both watchers.
fn mixed_script() -> Script {
    let t3 = vec![svc(2, &[4])];
    Script::new([
        Step::Table(t1()),
        Step::Table(t1()),
        Step::Fail,
        Step::Slow(secs(2.5), t2()),
        Step::Table(t2()),
        Step::Fail,
        Step::Table(t3),
        Step::Table(vec![]),
    ])
}

/// An item as compared across the two ways (errors by their text), with
/// when it came.
type Seen = (Result<Changes, String>, Duration);

#[tokio::test(start_paused = true)]
async fn the_stream_yields_what_next_returns() {
    const ITEMS: usize = 6;
    let start = Instant::now();
    let mut w = Watcher::new(mixed_script(), PERIOD);
    let mut by_next: Vec<Seen> = Vec::new();
    for _ in 0..ITEMS {
        let item = next(&mut w).await.map_err(|e| e.to_string());
        by_next.push((item, Instant::now() - start));
    }

    let start = Instant::now();
    let mut stream = pin!(Watcher::new(mixed_script(), PERIOD).into_stream());
    let mut by_stream: Vec<Seen> = Vec::new();
    for _ in 0..ITEMS {
        let item = std::future::poll_fn(|cx| stream.as_mut().poll_next(cx)).await;
        let item = item.expect("the stream never ends");
        by_stream.push((item.map_err(|e| e.to_string()), Instant::now() - start));
    }
    assert_eq!(by_stream, by_next);
    // The script's shape, so that the comparison compares something: the
    // first listing, an error, t1 -> t2, an error, two more changes.
    let kinds: Vec<(bool, bool)> = by_next
        .iter()
        .map(|(r, _)| (r.is_ok(), r.as_ref().is_ok_and(|c| c.first)))
        .collect();
    let ok = (true, false);
    let err = (false, false);
    assert_eq!(kinds, [(true, true), err, ok, err, ok, ok]);
}
