//! The scale run (`--scale`): the same table shape at growing sizes
//! (1000, 10000, 50000 and 100000 services x 10 destinations by default),
//! ours beside the plain client, the figures per destination.
//!
//! Per size, in this order:
//!
//! * memory: the desired state and the plan from empty are built with the
//!   counting allocator on (they are the workload's own, used below): the
//!   live heap after the desired state, and the peak with the plan;
//! * cold create: `Syncer::sync` and the plain client alternate over the
//!   rounds (`--rounds`, `--big-rounds` above 10000 services), each in a
//!   fresh namespace (who starts alternates over the sizes and rounds);
//!   the end state is listed and compared in the first round of each
//!   (and in every round up to 10000 services);
//! * listings, in turns over the same rounds in the namespace the last
//!   create filled: the full listing (counters included: the plain netlink
//!   listing, `Client::table`) and the settings listing (the plain
//!   socket-option listing, `Client::table_settings`);
//! * resyncs, in that namespace: a no-op listed (`Syncer::sync`, once),
//!   then from its cached view a no-op (each round), 10 changed
//!   destinations (a new weight on one destination of 10 services spread
//!   over the table, each round a new weight) beside the plain client
//!   sending the same 10 edits pre-encoded (the kernel's floor for them),
//!   1 % churn from the cached view, back (untimed), and 1 % churn listed
//!   by a fresh `Syncer`.

use ipvsnl::{Destination, Request, ServiceKey};

use ipvsnl_bench::plain::sockopt;

use super::contest::{plain_create, plain_listing};
use super::*;

/// The sizes of `--scale`.
pub(crate) const SIZES: [(u32, u32); 4] = [(1_000, 10), (10_000, 10), (50_000, 10), (100_000, 10)];

/// Up to this many services, every cold create's end state is listed and
/// compared (above it, the first round's of each contestant), and the
/// cold creates and listings run `--rounds` rounds (above it
/// `--big-rounds`: a create of 100000 x 10 is about 1.7 x 10^10 guest
/// instructions, and with its checks some minutes of the host's time
/// under icount).
pub(crate) const SMALL: u32 = 10_000;

/// The longest wait for the machine to become quiet before a timed run
/// (the teardown of a namespace that held 100000 x 10 outlasts the pause).
const SETTLE_MAX: Duration = Duration::from_secs(60);

/// The listings timed at each size, in the order of [`list_once`]'s
/// `which`: the plain netlink listing and `Client::table` (counters
/// included), the plain socket-option listing (`GET_SERVICES`, then
/// `GET_DESTS` a service: the older interface's floor, IPv4 services only,
/// which these tables are) and `Client::table_settings` (settings only: the
/// listing of `Syncer::sync`, `ipvsadm -S`).
const LISTINGS: [&str; 4] = [
    "plain netlink",
    "ours, Client::table",
    "plain socket options",
    "ours, Client::table_settings",
];

/// One listing of [`LISTINGS`] (sockets opened and family ids resolved
/// before the clock): the services and destinations it found, its time.
fn list_once(which: usize, family: u16) -> ((usize, usize), Times) {
    match which {
        0 => {
            let (t, took) = plain_listing(family);
            ((t.services.len(), t.dests.len()), took)
        }
        2 => {
            let fd = sockopt::open().expect("socket-option socket");
            let (t, took) = timed(|| sockopt::list(&fd).expect("socket-option listing"));
            ((t.services.len(), t.dests.len()), took)
        }
        _ => {
            let mut c = ready_client();
            let (t, took) = if which == 1 {
                timed(|| c.table().expect("Client::table"))
            } else {
                timed(|| c.table_settings().expect("Client::table_settings"))
            };
            let d = t.iter().map(|e| e.destinations.len()).sum();
            ((t.len(), d), took)
        }
    }
}

/// What one size measured.
#[derive(Default, Clone)]
pub(crate) struct Scaled {
    pub(crate) services: u32,
    pub(crate) dests: u32,
    pub(crate) create_ours: Runs,
    pub(crate) create_plain: Runs,
    pub(crate) list_ours: Runs,
    pub(crate) list_plain: Runs,
    /// The settings listing: the plain socket-option client's, ours.
    pub(crate) settings_plain: Runs,
    pub(crate) settings_ours: Runs,
    pub(crate) noop_listed: Runs,
    pub(crate) noop_cached: Runs,
    pub(crate) ten_cached: Runs,
    pub(crate) ten_plain: Runs,
    pub(crate) churn_listed: Runs,
    pub(crate) churn_cached: Runs,
    /// Requests of the 1 % churn (listed, cached).
    pub(crate) churn_requests: (usize, usize),
    /// Live heap bytes of the desired state; peak with the plan from empty.
    pub(crate) desired_bytes: usize,
    pub(crate) peak_bytes: usize,
    pub(crate) plan_requests: usize,
    /// The kernel's MemAvailable (KiB) once the table was created.
    pub(crate) mem_available_kib: Option<u64>,
}

impl Scaled {
    /// Destinations of the table.
    pub(crate) fn destinations(&self) -> f64 {
        f64::from(self.services) * f64::from(self.dests)
    }

    /// Median wall of `runs` in ns per destination of the table.
    pub(crate) fn per_dest(&self, runs: &Runs) -> f64 {
        runs.median().wall * 1e9 / self.destinations().max(1.0)
    }
}

/// A `MemAvailable`-like figure of the machine, KiB.
pub(crate) fn mem_available_kib() -> Option<u64> {
    let info = std::fs::read_to_string("/proc/meminfo").ok()?;
    info.lines()
        .find_map(|l| l.strip_prefix("MemAvailable:"))
        .and_then(|v| v.split_whitespace().next()?.parse().ok())
}

/// This process's peak resident set (`VmHWM`), KiB.
pub(crate) fn peak_rss_kib() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.split_whitespace().next()?.parse().ok())
}

/// Changes 10 destinations of `t` in place (as a controller keeping its
/// desired table would, so the table's journal knows what changed): one
/// of each of 10 services spread evenly over the table (service 1,
/// 1 + s/10, ...), the k-th service's (k mod d)-th destination, given
/// `weight`. Returns the edits that set them so.
pub(crate) fn ten_changed(t: &mut Table, weight: u32) -> Vec<Request> {
    let keys: Vec<ServiceKey> = t.keys().copied().collect();
    let mut edits = Vec::new();
    let n = keys.len().min(10);
    for k in 0..n {
        let key = keys[k * keys.len() / n];
        let Some(entry) = t.get(&key) else { continue };
        let svc = entry.service.clone();
        let mut list: Vec<Destination> = entry.destinations.iter().map(|d| d.destination).collect();
        if list.is_empty() {
            continue;
        }
        let at = k % list.len();
        list[at] = list[at].with_weight(weight);
        edits.push(Request::EditDestination(key, list[at]));
        t.insert(svc, list);
    }
    edits
}

/// `from` changed in place into `to`: a table that holds `to` and descends
/// from `from` (its journal lists the services that differ), as a
/// controller that edits its desired table would have it.
pub(crate) fn descendant(from: &Table, to: &Table) -> Table {
    let mut t = from.clone();
    for key in from.keys() {
        if to.get(key).is_none() {
            t.remove(key);
        }
    }
    for entry in to.iter() {
        if from.get(&entry.service.key) != Some(entry) {
            t.insert(
                entry.service.clone(),
                entry.destinations.iter().map(|d| d.destination),
            );
        }
    }
    t
}

/// Turns the counting allocator on from zero; [`counted`] reads it.
fn count_from_zero() {
    memory::LIVE.store(0, Ordering::Relaxed);
    memory::PEAK.store(0, Ordering::Relaxed);
    memory::COUNTING.store(true, Ordering::Relaxed);
}

/// (live, peak) bytes so far.
fn counted() -> (usize, usize) {
    let live = memory::LIVE.load(Ordering::Relaxed).max(0) as usize;
    let peak = memory::PEAK.load(Ordering::Relaxed).max(0) as usize;
    (live, peak)
}

impl Bench {
    /// The memory figures of one size only (`--scale --memory-only`, runs
    /// anywhere: no kernel needed).
    pub(crate) fn scale_memory(&mut self, services: u32, dests: u32) -> Scaled {
        count_from_zero();
        let want = desired(Layout::Spread, services, dests);
        let (after_desired, _) = counted();
        let p = plan_from_empty(&want);
        let (_, peak) = counted();
        memory::COUNTING.store(false, Ordering::Relaxed);
        Scaled {
            services,
            dests,
            desired_bytes: after_desired,
            peak_bytes: peak,
            plan_requests: p.len(),
            ..Scaled::default()
        }
    }

    /// Every measurement of one size.
    /// `first` is the contestant that starts round 1 (0 ours, 1 the
    /// plain client): alternated over the sizes.
    pub(crate) fn scale_workload(&mut self, services: u32, dests: u32, first: usize) -> Scaled {
        let rounds = if self.opts.resyncs_only {
            0
        } else if services <= SMALL {
            self.opts.rounds
        } else {
            self.opts.big_rounds
        };
        let name = format!("{services} x {dests}");
        progress(format_args!("{name}: preparing (memory counted)"));
        count_from_zero();
        let want = desired(Layout::Spread, services, dests);
        let (after_desired, _) = counted();
        let from_empty = plan_from_empty(&want);
        let (_, peak) = counted();
        memory::COUNTING.store(false, Ordering::Relaxed);
        let mut m = Scaled {
            services,
            dests,
            desired_bytes: after_desired,
            peak_bytes: peak,
            plan_requests: from_empty.len(),
            ..Scaled::default()
        };
        let family = ready_client().family_id().expect("family");
        let batches = Batches::encode(from_empty.requests(), family);
        drop(from_empty);

        // Cold create: ours and the plain client alternate.
        const WHO: [&str; 2] = ["ours, Syncer::sync", "plain client"];
        let mut ok = [true; 2];
        let mut refused = 0;
        let mut keep: Option<Client> = None;
        for r in 0..rounds {
            for k in 0..2 {
                let which = (first + r + k) % 2;
                self.next_namespace();
                self.settle(SETTLE_MAX);
                let mut c = ready_client();
                let (done, t) = if which == 0 {
                    let mut syncer = Syncer::new(PlanOptions::default());
                    let (rep, t) = timed(|| syncer.sync(&mut c, &want).expect("sync"));
                    (rep.is_complete(), t)
                } else {
                    let (n, t) = plain_create(&batches);
                    refused += n;
                    (n == 0, t)
                };
                if which == 0 {
                    m.create_ours.0.push(t);
                } else {
                    m.create_plain.0.push(t);
                }
                ok[which] &= done;
                if r == 0 || services <= SMALL {
                    ok[which] &= listed(&mut c).same_settings(&want);
                }
                progress(format_args!(
                    "{name}: round {} cold create {}: {:.3} s",
                    r + 1,
                    WHO[which],
                    t.wall
                ));
                if r + 1 == rounds && k == 1 {
                    keep = Some(c);
                } else {
                    self.leave(c);
                }
            }
        }
        let keep = keep.unwrap_or_else(|| {
            // --resyncs-only: the table created once, untimed.
            self.next_namespace();
            let c = ready_client();
            let (n, t) = plain_create(&batches);
            refused += n;
            progress(format_args!("{name}: created (untimed) in {:.3} s", t.wall));
            c
        });
        m.mem_available_kib = mem_available_kib();
        for (who, good) in WHO.iter().zip(ok).take(if rounds == 0 { 0 } else { 2 }) {
            self.check(
                format!("{name}: cold create, {who}: complete in each of {rounds} rounds, end state the desired table (compared {})",
                    if services <= SMALL { "every round" } else { "in the first round" }),
                good,
            );
        }
        if refused > 0 {
            self.check(
                format!("{name}: the plain client had {refused} requests refused"),
                false,
            );
        }
        drop(batches);

        // The listings, in turns, in the namespace the last create filled.
        let mut client = keep;
        let mut counts_ok = true;
        std::thread::sleep(self.opts.pause);
        self.settle(SETTLE_MAX);
        for r in 0..rounds {
            for k in 0..LISTINGS.len() {
                let which = (first + r + k) % LISTINGS.len();
                let (found, took) = list_once(which, family);
                counts_ok &= found == (want.len(), want.destination_count());
                match which {
                    0 => m.list_plain.0.push(took),
                    1 => m.list_ours.0.push(took),
                    2 => m.settings_plain.0.push(took),
                    _ => m.settings_ours.0.push(took),
                }
                progress(format_args!(
                    "{name}: round {} listing {}: {:.3} s",
                    r + 1,
                    LISTINGS[which],
                    took.wall
                ));
            }
        }
        if rounds > 0 {
            self.check(
                format!(
                    "{name}: each listing ({}) found {} services / {} destinations in every round",
                    LISTINGS.join("; "),
                    want.len(),
                    want.destination_count()
                ),
                counts_ok,
            );
        }

        self.scale_resyncs(&name, &mut client, &want, &mut m, family);
        self.leave(client);
        m
    }

    /// The resyncs of one size, in `client`'s namespace holding `want`.
    fn scale_resyncs(
        &mut self,
        name: &str,
        client: &mut Client,
        want: &Table,
        m: &mut Scaled,
        family: u16,
    ) {
        let rounds = self.opts.rounds;
        let (services, dests) = (m.services, m.dests);
        progress(format_args!("{name}: resyncs"));
        let mut syncer = Syncer::new(PlanOptions::default());
        let (r, t) = timed(|| syncer.sync(client, want).expect("sync"));
        m.noop_listed.0.push(t);
        let mut noop_ok = r.requests().is_empty();
        for _ in 0..rounds {
            let (r, t) = timed(|| syncer.sync_cached(client, want).expect("sync"));
            noop_ok &= r.requests().is_empty();
            m.noop_cached.0.push(t);
        }
        self.check(
            format!("{name}: no-op resyncs (listed, cached) send nothing"),
            noop_ok,
        );

        // 10 changed destinations: ours from the cached view, then the
        // plain client's 10 edits of the same destinations back to the
        // desired settings (the kernel's floor for 10 edits); each round
        // ours gives them a new weight. The plain client's writes leave the
        // syncer's view behind on those 10, and ours overwrite them next.
        let mut ten_ok = true;
        let mut now = want.clone();
        let undo = ten_changed(&mut want.clone(), 1);
        let undo = Batches::encode(&undo, family);
        for r in 0..rounds {
            let weight = 2 + r as u32;
            let edits = ten_changed(&mut now, weight);
            let (rep, t) = timed(|| syncer.sync_cached(client, &now).expect("sync"));
            ten_ok &= rep.is_complete() && rep.requests().len() == edits.len() && edits.len() == 10;
            m.ten_cached.0.push(t);
            let (n, t) = plain_create(&undo);
            ten_ok &= n == 0;
            m.ten_plain.0.push(t);
            progress(format_args!(
                "{name}: round {} 10 changed destinations: ours cached {:.6} s, plain {:.6} s",
                r + 1,
                m.ten_cached.0[r].wall,
                t.wall
            ));
        }
        // The kernel holds `want` again; the view, the last weights: 10
        // edits bring it back (the kernel's side changes nothing).
        ten_changed(&mut now, 1);
        let back = syncer.sync_cached(client, &now).expect("sync");
        ten_ok &= back.is_complete() && back.requests().len() == 10;
        ten_ok &= now.same_settings(want) && listed(client).same_settings(want);
        self.check(
            format!("{name}: 10 changed destinations: 10 requests each round from the cached view, complete; the plain client's 10 edits accepted; the table the desired one after"),
            ten_ok,
        );

        // 1 % churn: from the cached view (timed), back (untimed), then
        // listed by a fresh syncer (timed). The cached syncs are given
        // the desired table changed in place (it descends from the one
        // synced).
        let churn = churned(Layout::Spread, services, dests, 1);
        let to_churn = descendant(&now, &churn);
        let (r, t) = timed(|| syncer.sync_cached(client, &to_churn).expect("sync"));
        m.churn_cached.0.push(t);
        m.churn_requests.1 = r.requests().len();
        let mut churn_ok = r.is_complete() && listed(client).same_settings(&churn);
        let back = descendant(&to_churn, want);
        churn_ok &= syncer
            .sync_cached(client, &back)
            .expect("sync")
            .is_complete();
        let mut fresh = Syncer::new(PlanOptions::default());
        let (r, t) = timed(|| fresh.sync(client, &churn).expect("sync"));
        m.churn_listed.0.push(t);
        m.churn_requests.0 = r.requests().len();
        churn_ok &= r.is_complete() && listed(client).same_settings(&churn);
        self.check(
            format!(
                "{name}: 1 % churn: {} requests from the cached view, {} listed, each leaving the churned table",
                m.churn_requests.1, m.churn_requests.0
            ),
            churn_ok && m.churn_requests.0 == m.churn_requests.1,
        );
    }
}
