//! Side-by-side comparison of the bulk-sync engine with a plain netlink
//! client and with Debian's ipvsadm, in one boot on one kernel (run it in
//! the VM with `.ci/bench`).
//!
//! Workloads (services x destinations): services 10.0.0.1, 10.0.0.2, ...
//! port 80, rr, each with distinct masquerading real servers 172.16.0.1,
//! ...; then the kernel's worst case, every service in one hash bucket
//! (10.A.B.1:80).
//!
//! The floors every client is measured against, both written the way a
//! straightforward hand-written C client (such as ipvsadm's library) works:
//!
//! * cold create: the plain client, every request encoded before the clock
//!   starts, then 64 KiB of requests per `sendmsg` with one ACK asked for
//!   per batch and nothing else;
//! * full listing: the plain listing, a raw netlink socket read with a
//!   4 KiB buffer: one service dump keeping each service's key, then one
//!   destination dump per service, each destination parsed into a plain
//!   struct pushed onto one `Vec`.
//!
//! Method. Run once each, after a different predecessor's namespace, the
//! contestants' times varied by 20-50 % from run to run, which made their
//! ratios noise. Measured since: the teardown of a left namespace is over
//! within 0.35 s (10000 x 5, flushed first or not), but the VM's speed
//! itself varies (a fixed loop takes up to 2-3x longer at times: qemu runs
//! on a host whose cores are shared). So:
//!
//! * Cold create runs in `--rounds N` rounds (default 5: with 3, one slow
//!   spell of the host could move a median by 10 %). In each round the
//!   fast contestants (ours `Syncer::sync`, ours `Client::apply` of the
//!   planned requests, the plain client) each create the table in a fresh
//!   namespace, in a rotated order (round r starts at contestant r mod 3).
//!   A row is the median run by wall time (with that run's user and sys);
//!   the range column gives min-max wall over the rounds. The targets also
//!   give the ratio round by round (contestants of one round ran next to
//!   each other, so a slow spell of the host affects both).
//! * Full listing: in one namespace holding the table (listing is
//!   read-only), the plain listing and `Client::table` alternate over the
//!   same number of rounds, each with a socket opened before the clock.
//! * `ipvsadm -R`, `ipvsadm -S -n`, the 16/32 KiB buffer listings and the
//!   resyncs run once each (ipvsadm is 5-20x slower than the others).
//! * Equal starting conditions: a namespace holding a table is flushed
//!   (`Client::flush`, untimed: 0.03-0.07 s for 10000 x 5) before it is
//!   left, so its background teardown has nothing of IPVS's left to delete,
//!   and each contestant starts after a pause in its fresh namespace
//!   (`--pause-ms`, default 1 s). During the pause the machine's busy time
//!   (`/proc/stat`, every 50 ms) is watched: the report says how soon after
//!   leaving a namespace the machine was quiet again (measured: 0.2-0.35 s
//!   for 10000 x 5, flushed first or not) and whether it ever was not by
//!   the end of the pause.
//! * A fixed user-space loop runs just before each timed run of the rounds;
//!   the spread of its times says how steady the VM's speed was.
//! * The family id is resolved and sockets are opened before the clock.
//!   Ours and the plain clients are timed with `getrusage` of this process
//!   (every thread), ipvsadm as a child.
//!
//! Prints a Markdown report: the table, the targets of the issue (met or
//! not), and the checks (every contestant's end state is the desired
//! table; the listings found every service and destination).
//!
//! Usage: `bulk-compare [--quick] [--memory-only] [--rounds N]
//! [--sizes 10000x5,5000x4] [--no-bucket] [--pause-ms MS] [--no-flush]`
//! (`--pause-ms` and `--no-flush` exist to measure the teardown).

use std::alloc::{GlobalAlloc, Layout as AllocLayout, System};
use std::hint::black_box;
use std::io::{self, Write};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, AtomicIsize, Ordering};
use std::time::{Duration, Instant};

use ipvsnl::sync::{plan, DrainLedger, PlanOptions, Syncer, Table};
use ipvsnl::wire::netlink_packet_core::{
    NetlinkMessage, NLMSG_DONE, NLMSG_ERROR, NLM_F_ACK, NLM_F_DUMP, NLM_F_REQUEST,
};
use ipvsnl::wire::netlink_packet_generic::GenlMessage;
use ipvsnl::wire::{
    IpvsCommand, IPVS_CMD_ATTR_DEST, IPVS_CMD_ATTR_SERVICE, IPVS_DEST_ATTR_ACTIVE_CONNS,
    IPVS_DEST_ATTR_ADDR, IPVS_DEST_ATTR_ADDR_FAMILY, IPVS_DEST_ATTR_FWD_METHOD,
    IPVS_DEST_ATTR_INACT_CONNS, IPVS_DEST_ATTR_L_THRESH, IPVS_DEST_ATTR_PERSIST_CONNS,
    IPVS_DEST_ATTR_PORT, IPVS_DEST_ATTR_STATS64, IPVS_DEST_ATTR_U_THRESH, IPVS_DEST_ATTR_WEIGHT,
    IPVS_GENL_VERSION, IPVS_STATS_ATTR_CONNS, IPVS_STATS_ATTR_OUTBPS, IPVS_SVC_ATTR_ADDR,
    IPVS_SVC_ATTR_AF, IPVS_SVC_ATTR_FWMARK, IPVS_SVC_ATTR_PORT, IPVS_SVC_ATTR_PROTOCOL,
};
use ipvsnl::{Client, ClientOptions, Request};

#[path = "../benches/support/netns.rs"]
mod netns;
#[path = "../benches/support/workload.rs"]
mod workload;
use workload::{churned, desired, Layout};

/// Counts live heap bytes and their peak while [`COUNTING`] is on (only
/// for the memory figure, so the timed runs pay nothing for it).
struct Counting;

static COUNTING: AtomicBool = AtomicBool::new(false);
static LIVE: AtomicIsize = AtomicIsize::new(0);
static PEAK: AtomicIsize = AtomicIsize::new(0);

// SAFETY: defers to the system allocator; only adds bookkeeping.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: AllocLayout) -> *mut u8 {
        // SAFETY: same contract as the caller's.
        let p = unsafe { System.alloc(layout) };
        if !p.is_null() && COUNTING.load(Ordering::Relaxed) {
            let size = layout.size() as isize;
            let now = LIVE.fetch_add(size, Ordering::Relaxed) + size;
            PEAK.fetch_max(now, Ordering::Relaxed);
        }
        p
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: AllocLayout) {
        // SAFETY: same contract as the caller's.
        unsafe { System.dealloc(ptr, layout) };
        if COUNTING.load(Ordering::Relaxed) {
            LIVE.fetch_sub(layout.size() as isize, Ordering::Relaxed);
        }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

#[derive(Debug, Clone, Copy, Default)]
struct Times {
    wall: f64,
    user: f64,
    sys: f64,
}

fn rusage(who: i32) -> (f64, f64) {
    // SAFETY: rusage is plain data; getrusage fills it.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: valid `who` and a pointer to a live rusage.
    unsafe { libc::getrusage(who, &mut ru) };
    let secs = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
    (secs(ru.ru_utime), secs(ru.ru_stime))
}

/// Times `f` in this process.
fn timed<T>(f: impl FnOnce() -> T) -> (T, Times) {
    let (u0, s0) = rusage(libc::RUSAGE_SELF);
    let t = Instant::now();
    let out = f();
    let wall = t.elapsed().as_secs_f64();
    let (u1, s1) = rusage(libc::RUSAGE_SELF);
    (
        out,
        Times {
            wall,
            user: u1 - u0,
            sys: s1 - s0,
        },
    )
}

/// Runs ipvsadm with `args` (and `stdin`), timing it as a child.
fn ipvsadm(args: &[&str], stdin: Option<&str>) -> (String, Times) {
    let (u0, s0) = rusage(libc::RUSAGE_CHILDREN);
    let t = Instant::now();
    let mut child = Command::new("ipvsadm")
        .args(args)
        .stdin(if stdin.is_some() {
            Stdio::piped()
        } else {
            Stdio::null()
        })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run ipvsadm");
    if let (Some(text), Some(mut pipe)) = (stdin, child.stdin.take()) {
        pipe.write_all(text.as_bytes()).expect("feed ipvsadm");
    }
    let out = child.wait_with_output().expect("wait for ipvsadm");
    let wall = t.elapsed().as_secs_f64();
    let (u1, s1) = rusage(libc::RUSAGE_CHILDREN);
    if !out.status.success() {
        panic!(
            "ipvsadm {args:?} failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    (
        String::from_utf8_lossy(&out.stdout).into_owned(),
        Times {
            wall,
            user: u1 - u0,
            sys: s1 - s0,
        },
    )
}

/// The timed runs of one contestant, in round order.
#[derive(Debug, Clone, Default)]
struct Runs(Vec<Times>);

impl Runs {
    fn one(t: Times) -> Self {
        Runs(vec![t])
    }

    /// The run with the median wall time (the lower middle one of an even
    /// number), so user and sys come from a real run.
    fn median(&self) -> Times {
        let mut v = self.0.clone();
        v.sort_by(|a, b| a.wall.total_cmp(&b.wall));
        v.get(v.len().saturating_sub(1) / 2)
            .copied()
            .unwrap_or_default()
    }

    fn range(&self) -> (f64, f64) {
        let walls = self.0.iter().map(|t| t.wall);
        let min = walls.clone().fold(f64::INFINITY, f64::min);
        (min, walls.fold(0.0, f64::max))
    }

    /// User time over user + sys, summed over every run.
    fn user_share(&self) -> f64 {
        let user: f64 = self.0.iter().map(|t| t.user).sum();
        let sys: f64 = self.0.iter().map(|t| t.sys).sum();
        user / (user + sys).max(1e-9)
    }

    /// This contestant's wall over `other`'s round by round (the two ran
    /// next to each other in each round): (min, median, max).
    fn paired_ratios(&self, other: &Runs) -> (f64, f64, f64) {
        let mut r: Vec<f64> = self
            .0
            .iter()
            .zip(&other.0)
            .map(|(a, b)| a.wall / b.wall.max(1e-9))
            .collect();
        r.sort_by(f64::total_cmp);
        match r.len() {
            0 => (0.0, 0.0, 0.0),
            n => (r[0], r[(n - 1) / 2], r[n - 1]),
        }
    }
}

/// One line of the table.
struct Row {
    op: &'static str,
    who: String,
    runs: Runs,
    /// The row this one's median wall is divided by: (its short name, its runs).
    base: Option<(&'static str, Runs)>,
}

fn row(op: &'static str, who: impl Into<String>, runs: &Runs) -> Row {
    Row {
        op,
        who: who.into(),
        runs: runs.clone(),
        base: None,
    }
}

impl Row {
    fn vs(mut self, name: &'static str, base: &Runs) -> Self {
        self.base = Some((name, base.clone()));
        self
    }
}

/// What one workload measured, for the targets.
#[derive(Default)]
struct Measured {
    layout: Option<Layout>,
    services: u32,
    dests: u32,
    create_sync: Runs,
    create_apply: Runs,
    create_plain: Runs,
    list_ours: Runs,
    list_plain: Runs,
    /// 1 % churn: (full listed resync, from the cached view).
    churn: Option<(Times, Times)>,
}

/// What the pauses saw after leaving namespaces.
#[derive(Default)]
struct TeardownLog {
    /// Per leave: how long after leaving the machine became quiet (the
    /// start of the first [`QUIET_SAMPLES`] quiet samples in a row).
    settled: Vec<f64>,
    /// Leaves after which the machine had not become quiet by the end of
    /// the pause.
    late: usize,
    /// The speed probe's time before each timed run of the rounds.
    probes: Vec<f64>,
    /// The slowest synchronous flush before leaving, and how many flushes.
    max_flush: f64,
    flushes: usize,
}

struct Options {
    rounds: usize,
    sizes: Vec<(u32, u32)>,
    bucket: Option<(u32, u32)>,
    pause: Duration,
    flush: bool,
}

struct Bench {
    opts: Options,
    checks: Vec<String>,
    measured: Vec<Measured>,
    teardown: TeardownLog,
    memory_peak: Option<f64>,
}

/// The pause after entering a fresh namespace. Measured on 6.1 under TCG
/// with 10000 x 5 tables: after leaving one, flushed first or not, the
/// machine is busy for 0.2-0.35 s (freeing the table), then quiet; 1 s
/// leaves a margin, and the report says if it ever was not enough.
const DEFAULT_PAUSE: Duration = Duration::from_millis(1000);
/// How often the pause samples the machine's busy time.
const SAMPLE: Duration = Duration::from_millis(50);
/// Busy ticks (USER_HZ, all CPUs) in one sample that still count as quiet.
const QUIET_TICKS: u64 = 1;
/// Quiet samples in a row that make the machine quiet (isolated blips of
/// a tick or two come and go all the time in the VM).
const QUIET_SAMPLES: usize = 4;

/// A fixed user-space loop: its time just before a timed run says how fast
/// the VM was running then (qemu shares the host's cores with whatever
/// else runs there).
fn speed_probe() -> f64 {
    let t = Instant::now();
    let mut x = 0x9e37_79b9_7f4a_7c15u64;
    for _ in 0..(1 << 23) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x = black_box(x);
    }
    black_box(x);
    t.elapsed().as_secs_f64()
}

/// Busy time of the whole machine so far, in USER_HZ ticks (every CPU's
/// user, nice, system, irq, softirq and steal from `/proc/stat`).
fn busy_ticks() -> u64 {
    let stat = std::fs::read_to_string("/proc/stat").unwrap_or_default();
    let line = stat.lines().next().unwrap_or("");
    line.split_whitespace()
        .skip(1)
        .take(8)
        .enumerate()
        .filter(|(i, _)| *i != 3 && *i != 4) // idle, iowait
        .filter_map(|(_, v)| v.parse::<u64>().ok())
        .sum()
}

/// Prints a progress line on the console; `.ci/bench` keeps it out of the
/// report.
fn progress(what: std::fmt::Arguments<'_>) {
    println!("BULK-COMPARE-PROGRESS {what}");
}

fn listed(c: &mut Client) -> Table {
    Table::from_entries(c.list_table().expect("list"))
}

/// A client with its family id resolved (so no contestant pays for it).
fn ready_client() -> Client {
    let mut c = Client::new().expect("client");
    c.family_id().expect("family");
    c
}

/// The three fast cold-create contestants, in their rotation order.
const CREATE: [&str; 3] = [
    "ours, Syncer::sync",
    "ours, Client::apply of the planned requests",
    "plain client (pre-encoded, 64 KiB per sendmsg, 1 ACK per batch)",
];

impl Bench {
    /// Flushes the namespace `c` belongs to (untimed), then closes `c`:
    /// leaving the namespace afterwards leaves its teardown little to do.
    fn leave(&mut self, mut c: Client) {
        if self.opts.flush {
            let t = Instant::now();
            c.flush().expect("flush");
            let took = t.elapsed().as_secs_f64();
            progress(format_args!("flushed in {took:.3} s"));
            self.teardown.max_flush = self.teardown.max_flush.max(took);
            self.teardown.flushes += 1;
        }
        drop(c);
    }

    /// A fresh namespace for the next contestant (the old one, left with
    /// no socket in it, is torn down in the background), then the pause,
    /// watching the machine's busy time.
    fn next_namespace(&mut self) {
        netns::fresh().expect("new network namespace");
        let start = Instant::now();
        let mut before = busy_ticks();
        let mut settled = None;
        let mut quiet_since = 0.0;
        let mut quiet_run = 0;
        let mut trace = String::new();
        while start.elapsed() < self.opts.pause {
            std::thread::sleep(SAMPLE);
            let now = busy_ticks();
            let ticks = now.saturating_sub(before);
            let at = start.elapsed().as_secs_f64();
            if ticks > QUIET_TICKS {
                quiet_run = 0;
            } else {
                if quiet_run == 0 {
                    quiet_since = at - SAMPLE.as_secs_f64();
                }
                quiet_run += 1;
                if quiet_run == QUIET_SAMPLES && settled.is_none() {
                    settled = Some(quiet_since.max(0.0));
                }
            }
            trace.push_str(&format!(" {ticks}"));
            before = now;
        }
        progress(format_args!(
            "namespace left: quiet after {settled:.2?} s; busy ticks per {} ms:{trace}",
            SAMPLE.as_millis()
        ));
        match settled {
            Some(t) => self.teardown.settled.push(t),
            None => {
                self.teardown.settled.push(self.opts.pause.as_secs_f64());
                self.teardown.late += 1;
            }
        }
    }

    fn check(&mut self, what: String, ok: bool) {
        let line = format!("- {} {what}", if ok { "ok:" } else { "MISMATCH:" });
        self.checks.push(line);
    }

    fn note(&mut self, what: String, ok: bool) {
        let line = format!("- {} {what}", if ok { "ok:" } else { "WARNING:" });
        self.checks.push(line);
    }

    fn workload(&mut self, layout: Layout, services: u32, dests: u32, full: bool) {
        let rounds = self.opts.rounds;
        let name = format!(
            "{services} x {dests}{}",
            if layout == Layout::OneBucket {
                " one bucket"
            } else {
                ""
            }
        );
        progress(format_args!("{name}: preparing"));
        let want = desired(layout, services, dests);
        let from_empty = plan_from_empty(&want);
        let rules = from_empty.to_rules();
        // Generic netlink family ids are global: resolved once.
        let family = ready_client().family_id().expect("family");
        let batches = PlainBatches::encode(from_empty.requests(), family);
        let mut m = Measured {
            layout: Some(layout),
            services,
            dests,
            ..Measured::default()
        };
        let mut rows = Vec::new();

        // Cold create: rounds of the three fast contestants, rotated, each
        // in a fresh namespace. The last one's namespace stays for the
        // listings.
        let mut runs: [Runs; 3] = Default::default();
        let mut ok = [true; 3];
        let mut refused = 0;
        let mut keep = None;
        for r in 0..rounds {
            for k in 0..3 {
                let which = (r + k) % 3;
                self.next_namespace();
                let mut c = ready_client();
                let probe = speed_probe();
                self.teardown.probes.push(probe);
                let (done, t) = match which {
                    0 => {
                        let mut syncer = Syncer::new(PlanOptions::default());
                        let (rep, t) = timed(|| syncer.sync(&mut c, &want).expect("sync"));
                        (rep.is_complete(), t)
                    }
                    1 => {
                        let (outcomes, t) = timed(|| c.apply(from_empty.requests()));
                        (outcomes.iter().all(Result::is_ok), t)
                    }
                    _ => {
                        let (n, t) = batches.run();
                        refused += n;
                        (n == 0, t)
                    }
                };
                runs[which].0.push(t);
                ok[which] &= done && listed(&mut c).same_settings(&want);
                progress(format_args!(
                    "{name}: round {} cold create {}: {:.3} s (speed probe {:.1} ms)",
                    r + 1,
                    CREATE[which],
                    t.wall,
                    probe * 1e3
                ));
                if r + 1 == rounds && k == 2 {
                    keep = Some(c);
                } else {
                    self.leave(c);
                }
            }
        }
        let [sync, apply, plain] = runs;
        for (who, good) in CREATE.iter().zip(ok) {
            self.check(
                format!("{name}: {who} created the table in each of {rounds} rounds"),
                good,
            );
        }
        if refused > 0 {
            self.check(
                format!("{name}: the plain client had {refused} requests refused"),
                false,
            );
        }
        rows.push(row("cold create", CREATE[2], &plain));
        rows.push(row("cold create", CREATE[0], &sync).vs("plain", &plain));
        rows.push(row("cold create", CREATE[1], &apply).vs("plain", &plain));

        // Full listing, in the namespace the last contestant filled:
        // the plain listing and ours alternate.
        let client = keep.expect("a namespace holding the table");
        let mut list_ours = Runs::default();
        let mut list_plain = Runs::default();
        let mut counts_ok = true;
        std::thread::sleep(self.opts.pause);
        for r in 0..rounds {
            for k in 0..2 {
                let took = if (r + k) % 2 == 0 {
                    self.teardown.probes.push(speed_probe());
                    let (t, took) = plain_listing(family);
                    counts_ok &=
                        t.services.len() == want.len() && t.dests.len() == want.destination_count();
                    list_plain.0.push(took);
                    took
                } else {
                    let mut c = ready_client();
                    self.teardown.probes.push(speed_probe());
                    let (t, took) = timed(|| c.table().expect("list"));
                    let d: usize = t.iter().map(|e| e.destinations.len()).sum();
                    counts_ok &= t.len() == want.len() && d == want.destination_count();
                    list_ours.0.push(took);
                    took
                };
                progress(format_args!(
                    "{name}: round {} listing {}: {:.3} s",
                    r + 1,
                    if (r + k) % 2 == 0 { "plain" } else { "ours" },
                    took.wall
                ));
            }
        }
        self.check(
            format!(
                "{name}: the plain listing and Client::table each found {} services / {} destinations in every round",
                want.len(),
                want.destination_count()
            ),
            counts_ok,
        );
        rows.push(row(
            "full listing",
            "plain listing (raw socket, 4 KiB buffer)",
            &list_plain,
        ));
        rows.push(row("full listing", "ours, Client::table", &list_ours).vs("plain", &list_plain));
        if full {
            for size in [16 << 10, 32 << 10] {
                let mut c = Client::with_options(ClientOptions::default().with_recv_buffer(size))
                    .expect("client");
                c.family_id().expect("family");
                let (_, t) = timed(|| c.table().expect("list"));
                rows.push(
                    row(
                        "full listing",
                        format!("ours, {} KiB buffer", size >> 10),
                        &Runs::one(t),
                    )
                    .vs("ours", &list_ours),
                );
            }
        }
        let (saved, t_save) = ipvsadm(&["-S", "-n"], None);
        rows.push(row("full listing", "ipvsadm -S -n", &Runs::one(t_save)).vs("ours", &list_ours));
        let adds = saved.lines().filter(|l| l.starts_with("-A")).count();
        let dadds = saved.lines().filter(|l| l.starts_with("-a")).count();
        self.check(
            format!("{name}: ipvsadm -S lists {adds} / {dadds}"),
            adds == want.len() && dadds == want.destination_count(),
        );

        // Resyncs (one run each).
        let mut client = client;
        if full {
            progress(format_args!("{name}: resyncs"));
            let mut syncer = Syncer::new(PlanOptions::default());
            let (r, t) = timed(|| syncer.sync(&mut client, &want).expect("sync"));
            rows.push(row("no-op resync", "ours, listed", &Runs::one(t)));
            self.check(
                format!("{name}: no-op resync sends nothing"),
                r.requests().is_empty(),
            );
            let (r, t) = timed(|| syncer.sync_cached(&mut client, &want).expect("sync"));
            rows.push(row("no-op resync", "ours, cached view", &Runs::one(t)));
            self.check(
                format!("{name}: cached no-op sends nothing"),
                r.requests().is_empty(),
            );
            let churn = churned(layout, services, dests, 1);
            let (r, t_full) = timed(|| syncer.sync(&mut client, &churn).expect("sync"));
            let listed_runs = Runs::one(t_full);
            rows.push(row("1 % churn resync", "ours, listed", &listed_runs));
            self.check(
                format!("{name}: 1 % churn, listed: {} requests", r.requests().len()),
                r.is_complete(),
            );
            let after_full = listed(&mut client);
            self.leave(client);
            // From the cached view, in a namespace of its own holding the
            // same table.
            self.next_namespace();
            let mut client = ready_client();
            let mut syncer = Syncer::new(PlanOptions::default());
            assert!(syncer.sync(&mut client, &want).expect("sync").is_complete());
            let (r, t_inc) = timed(|| syncer.sync_cached(&mut client, &churn).expect("sync"));
            rows.push(
                row("1 % churn resync", "ours, cached view", &Runs::one(t_inc))
                    .vs("listed", &listed_runs),
            );
            let after_inc = listed(&mut client);
            self.check(
                format!(
                    "{name}: 1 % churn, cached: {} requests, same end state",
                    r.requests().len()
                ),
                r.is_complete()
                    && after_inc.same_settings(&after_full)
                    && after_inc.same_settings(&churn),
            );
            m.churn = Some((t_full, t_inc));
            self.leave(client);
        } else {
            self.leave(client);
        }

        // Cold create: ipvsadm -R with the same rules, once.
        progress(format_args!("{name}: ipvsadm -R"));
        self.next_namespace();
        let (_, t_r) = ipvsadm(&["-R"], Some(&rules));
        rows.insert(
            3,
            row("cold create", "ipvsadm -R", &Runs::one(t_r)).vs("ours", &sync),
        );
        let mut c = ready_client();
        let theirs = listed(&mut c);
        self.check(
            format!("{name}: ipvsadm -R created the same table"),
            theirs.same_settings(&want),
        );
        self.leave(c);

        for r in &rows {
            let t = r.runs.median();
            let (lo, hi) = r.runs.range();
            let range = if r.runs.0.len() > 1 {
                format!("{lo:.3}-{hi:.3} ({} runs)", r.runs.0.len())
            } else {
                "(1 run)".to_string()
            };
            let ratio = r.base.as_ref().map_or(String::new(), |(n, b)| {
                format!("{:.2}x {n}", t.wall / b.median().wall.max(1e-9))
            });
            println!(
                "| {name} | {} | {} | {:.3} | {:.3} | {:.3} | {range} | {ratio} |",
                r.op, r.who, t.wall, t.user, t.sys
            );
        }
        m.create_sync = sync;
        m.create_apply = apply;
        m.create_plain = plain;
        m.list_ours = list_ours;
        m.list_plain = list_plain;
        self.measured.push(m);
    }

    fn find(&self, layout: Layout, services: u32, dests: u32) -> Option<&Measured> {
        self.measured
            .iter()
            .find(|m| m.layout == Some(layout) && m.services == services && m.dests == dests)
    }

    /// One line per target of the issue, met or not.
    fn targets(&self) {
        const RATIO: f64 = 1.15;
        const USER_SHARE: f64 = 0.10;
        const CHURN_SPEEDUP: f64 = 20.0;
        const MEMORY_MIB: f64 = 32.0;
        let verdict = |met: bool| if met { "met" } else { "NOT met" };
        let sizes = [
            (Layout::Spread, 5_000, 4, "5000 x 4"),
            (Layout::Spread, 10_000, 5, "10000 x 5"),
            (Layout::OneBucket, 10_000, 5, "10000 x 5 one bucket"),
        ];
        let ratio_line = |what: &str, a: &Runs, b: &Runs| {
            let r = a.median().wall / b.median().wall.max(1e-9);
            let (lo, mid, hi) = a.paired_ratios(b);
            println!(
                "- {what}: {r:.2}x (round by round: median {mid:.2}x, {lo:.2}-{hi:.2}x; target <= {RATIO:.2}x): {}",
                verdict(r <= RATIO)
            );
        };
        println!(
            "Targets (ratios of median wall times over {} rounds):",
            self.opts.rounds
        );
        for (layout, s, d, label) in sizes {
            match self.find(layout, s, d) {
                Some(m) => {
                    ratio_line(
                        &format!("cold create {label}, Syncer::sync / plain client"),
                        &m.create_sync,
                        &m.create_plain,
                    );
                    ratio_line(
                        &format!("cold create {label}, Client::apply / plain client"),
                        &m.create_apply,
                        &m.create_plain,
                    );
                }
                None => println!("- cold create {label}: not measured (size not run)"),
            }
        }
        for (layout, s, d, label) in &sizes[..2] {
            match self.find(*layout, *s, *d) {
                Some(m) => ratio_line(
                    &format!("full listing {label}, Client::table / plain listing"),
                    &m.list_ours,
                    &m.list_plain,
                ),
                None => println!("- full listing {label}: not measured (size not run)"),
            }
        }
        for (layout, s, d, label) in &sizes[..2] {
            let Some(m) = self.find(*layout, *s, *d) else {
                println!("- user share {label}: not measured (size not run)");
                continue;
            };
            for (what, ours, plain) in [
                ("cold create, Syncer::sync", &m.create_sync, &m.create_plain),
                ("full listing, Client::table", &m.list_ours, &m.list_plain),
            ] {
                let share = ours.user_share();
                println!(
                    "- user share {label}, {what}: {:.1} % of user + sys over all rounds (the plain one: {:.1} %; target <= {:.0} %): {}",
                    share * 100.0,
                    plain.user_share() * 100.0,
                    USER_SHARE * 100.0,
                    verdict(share <= USER_SHARE)
                );
            }
        }
        for (layout, s, d, label) in &sizes[..2] {
            match self.find(*layout, *s, *d).and_then(|m| m.churn) {
                Some((full, cached)) => {
                    let speedup = full.wall / cached.wall.max(1e-9);
                    println!(
                        "- 1 % churn {label}: the cached view {speedup:.0}x faster than the full resync ({:.3} s vs {:.3} s, one run; target >= {CHURN_SPEEDUP:.0}x): {}",
                        cached.wall,
                        full.wall,
                        verdict(speedup >= CHURN_SPEEDUP)
                    );
                }
                None => println!("- 1 % churn {label}: not measured (size not run)"),
            }
        }
        if let Some(peak) = self.memory_peak {
            println!(
                "- memory, 10000 x 5 desired state + plan from empty: peak {peak:.1} MiB (target < {MEMORY_MIB:.0} MiB): {}",
                verdict(peak < MEMORY_MIB)
            );
        }
    }

    fn memory(&mut self) {
        LIVE.store(0, Ordering::Relaxed);
        PEAK.store(0, Ordering::Relaxed);
        COUNTING.store(true, Ordering::Relaxed);
        let want = desired(Layout::Spread, 10_000, 5);
        let after_desired = LIVE.load(Ordering::Relaxed);
        let p = plan_from_empty(&want);
        let peak = PEAK.load(Ordering::Relaxed);
        let requests = p.len();
        drop(p);
        drop(want);
        COUNTING.store(false, Ordering::Relaxed);
        let mib = |b: isize| b as f64 / (1 << 20) as f64;
        self.memory_peak = Some(mib(peak));
        self.checks.push(format!(
            "- memory, 10000 x 5: desired state {:.1} MiB, desired + plan from empty ({requests} requests) peak {:.1} MiB (target: under 32 MiB)",
            mib(after_desired),
            mib(peak)
        ));
    }

    fn teardown_line(&mut self) {
        let t = &self.teardown;
        if t.settled.is_empty() {
            return;
        }
        let mut s = t.settled.clone();
        s.sort_by(f64::total_cmp);
        let flush = if self.opts.flush {
            format!(
                "each flushed first ({} flushes, the slowest {:.3} s)",
                t.flushes, t.max_flush
            )
        } else {
            "not flushed (--no-flush)".to_string()
        };
        let line = format!(
            "{} namespaces left, {flush}; the machine was quiet again (< {} % of a CPU for {} ms) {:.2} s (median) / {:.2} s (max) after leaving one; pause {:.2} s; not quiet by the end of the pause: {} times",
            s.len(),
            (QUIET_TICKS + 1) * 100 / (SAMPLE.as_millis() as u64 / 10),
            QUIET_SAMPLES as u128 * SAMPLE.as_millis(),
            s[(s.len() - 1) / 2],
            s[s.len() - 1],
            self.opts.pause.as_secs_f64(),
            t.late
        );
        let ok = t.late == 0;
        let probes = t.probes.clone();
        self.note(format!("teardown: {line}"), ok);
        if !probes.is_empty() {
            let mut p = probes;
            p.sort_by(f64::total_cmp);
            let (lo, mid, hi) = (p[0], p[(p.len() - 1) / 2], p[p.len() - 1]);
            let spread = hi / lo.max(1e-9);
            let line = format!(
                "VM speed: a fixed user-space loop run just before each of the {} timed runs of the rounds took {:.1} ms (median), {:.1}-{:.1} ms (min-max, {spread:.2}x): {}",
                p.len(),
                mid * 1e3,
                lo * 1e3,
                hi * 1e3,
                if spread <= 1.2 {
                    "steady"
                } else {
                    "the host was busy at times (its cores are shared): compare within rounds"
                }
            );
            self.note(line, spread <= 1.2);
        }
    }
}

/// The plain client's requests, encoded once: (bytes, seq of the last
/// message) per batch of up to 64 KiB, the last message asking for an ACK.
struct PlainBatches(Vec<(Vec<u8>, u32)>);

impl PlainBatches {
    fn encode(requests: &[Request], family: u16) -> Self {
        const BATCH: usize = 64 << 10;
        let mut batches: Vec<(Vec<u8>, u32)> = Vec::new();
        let mut current = Vec::with_capacity(BATCH);
        let mut last_start = 0;
        let mut seq = 0u32;
        let mut close = |current: &mut Vec<u8>, last_start: usize, seq: u32| {
            // Ask for an ACK on the batch's last message (flags at bytes 6..8).
            let flags = NLM_F_REQUEST | NLM_F_ACK;
            current[last_start + 6..last_start + 8].copy_from_slice(&flags.to_ne_bytes());
            batches.push((std::mem::take(current), seq));
        };
        for r in requests {
            let mut genl = GenlMessage::from_payload(r.to_message());
            genl.set_resolved_family_id(family);
            let mut msg = NetlinkMessage::from(genl);
            msg.header.flags = NLM_F_REQUEST;
            msg.header.sequence_number = seq + 1;
            msg.finalize();
            let len = msg.buffer_len();
            if !current.is_empty() && current.len() + len > BATCH {
                close(&mut current, last_start, seq);
            }
            seq += 1;
            last_start = current.len();
            current.resize(last_start + len, 0);
            msg.serialize(&mut current[last_start..]);
        }
        if !current.is_empty() {
            close(&mut current, last_start, seq);
        }
        PlainBatches(batches)
    }

    /// Sends every batch on a new socket in the caller's namespace (opened
    /// before the clock) and reads until each batch's ACK, counting
    /// refusals on the way.
    fn run(&self) -> (usize, Times) {
        let sock = plain_socket();
        timed(|| {
            let mut refused = 0;
            let mut buf = vec![0u8; 8192];
            for (bytes, last) in &self.0 {
                sock.send(bytes, 0).expect("send");
                'batch: loop {
                    let n = sock.recv(&mut &mut buf[..], 0).expect("recv");
                    let mut at = 0;
                    while at + 20 <= n {
                        let len = u32::from_ne_bytes(buf[at..at + 4].try_into().unwrap()) as usize;
                        let kind = u16::from_ne_bytes([buf[at + 4], buf[at + 5]]);
                        let seq = u32::from_ne_bytes(buf[at + 8..at + 12].try_into().unwrap());
                        let code = i32::from_ne_bytes(buf[at + 16..at + 20].try_into().unwrap());
                        if kind == NLMSG_ERROR {
                            if code != 0 {
                                refused += 1;
                            }
                            if seq == *last {
                                break 'batch;
                            }
                        }
                        at += (len.max(16) + 3) & !3;
                    }
                }
            }
            refused
        })
    }
}

fn plain_socket() -> netlink_sys::Socket {
    let mut sock =
        netlink_sys::Socket::new(netlink_sys::protocols::NETLINK_GENERIC).expect("socket");
    sock.bind_auto().expect("bind");
    sock.connect(&netlink_sys::SocketAddr::new(0, 0))
        .expect("connect");
    sock
}

// The plain listing: what a hand-written C client does.

const NLMSG_HDRLEN: usize = 16;
const GENL_HDRLEN: usize = 4;
/// `NLA_TYPE_MASK`: the attribute type without the nested and byte-order flags.
const NLA_TYPE_MASK: u16 = 0x3fff;

/// A service's key, as the kernel sent it.
#[derive(Debug, Clone, Copy, Default)]
struct PlainService {
    af: u16,
    protocol: u16,
    addr: [u8; 16],
    /// Network order, as on the wire.
    port: [u8; 2],
    /// 0: keyed by protocol, address and port.
    fwmark: u32,
    /// Its destinations in [`PlainTable::dests`].
    first_dest: u32,
    dest_count: u32,
}

/// One destination, as a plain C client keeps it.
#[derive(Debug, Clone, Copy, Default)]
#[allow(dead_code)] // read by black_box only
struct PlainDest {
    af: u16,
    addr: [u8; 16],
    port: u16,
    fwd_method: u32,
    weight: u32,
    u_thresh: u32,
    l_thresh: u32,
    active_conns: u32,
    inact_conns: u32,
    persist_conns: u32,
    /// `IPVS_STATS_ATTR_CONNS` .. `IPVS_STATS_ATTR_OUTBPS` of the STATS64 nest.
    stats: [u64; 10],
}

struct PlainTable {
    services: Vec<PlainService>,
    dests: Vec<PlainDest>,
}

/// Calls `f(type, payload)` for each attribute in `buf`.
#[inline]
fn each_attr(mut buf: &[u8], mut f: impl FnMut(u16, &[u8])) {
    while buf.len() >= 4 {
        let len = usize::from(u16::from_ne_bytes([buf[0], buf[1]]));
        if len < 4 || len > buf.len() {
            return;
        }
        f(
            u16::from_ne_bytes([buf[2], buf[3]]) & NLA_TYPE_MASK,
            &buf[4..len],
        );
        buf = &buf[((len + 3) & !3).min(buf.len())..];
    }
}

#[inline]
fn get_u16(p: &[u8]) -> u16 {
    p.get(..2).map_or(0, |b| u16::from_ne_bytes([b[0], b[1]]))
}

#[inline]
fn get_u32(p: &[u8]) -> u32 {
    p.get(..4)
        .map_or(0, |b| u32::from_ne_bytes(b.try_into().unwrap()))
}

#[inline]
fn get_u64(p: &[u8]) -> u64 {
    p.get(..8)
        .map_or(0, |b| u64::from_ne_bytes(b.try_into().unwrap()))
}

/// Copies up to 16 bytes of an address attribute.
#[inline]
fn get_addr(p: &[u8]) -> [u8; 16] {
    let mut a = [0u8; 16];
    let n = p.len().min(16);
    a[..n].copy_from_slice(&p[..n]);
    a
}

fn put_attr(out: &mut Vec<u8>, kind: u16, payload: &[u8]) {
    out.extend_from_slice(&((4 + payload.len()) as u16).to_ne_bytes());
    out.extend_from_slice(&kind.to_ne_bytes());
    out.extend_from_slice(payload);
    out.resize((out.len() + 3) & !3, 0);
}

fn parse_service_key(nest: &[u8]) -> PlainService {
    let mut s = PlainService::default();
    each_attr(nest, |t, p| match t {
        IPVS_SVC_ATTR_AF => s.af = get_u16(p),
        IPVS_SVC_ATTR_PROTOCOL => s.protocol = get_u16(p),
        IPVS_SVC_ATTR_ADDR => s.addr = get_addr(p),
        IPVS_SVC_ATTR_PORT => {
            if let Some(b) = p.get(..2) {
                s.port = [b[0], b[1]];
            }
        }
        IPVS_SVC_ATTR_FWMARK => s.fwmark = get_u32(p),
        _ => {}
    });
    s
}

fn parse_dest(nest: &[u8]) -> PlainDest {
    let mut d = PlainDest::default();
    each_attr(nest, |t, p| match t {
        IPVS_DEST_ATTR_ADDR => d.addr = get_addr(p),
        IPVS_DEST_ATTR_PORT => d.port = p.get(..2).map_or(0, |b| u16::from_be_bytes([b[0], b[1]])),
        IPVS_DEST_ATTR_FWD_METHOD => d.fwd_method = get_u32(p),
        IPVS_DEST_ATTR_WEIGHT => d.weight = get_u32(p),
        IPVS_DEST_ATTR_U_THRESH => d.u_thresh = get_u32(p),
        IPVS_DEST_ATTR_L_THRESH => d.l_thresh = get_u32(p),
        IPVS_DEST_ATTR_ACTIVE_CONNS => d.active_conns = get_u32(p),
        IPVS_DEST_ATTR_INACT_CONNS => d.inact_conns = get_u32(p),
        IPVS_DEST_ATTR_PERSIST_CONNS => d.persist_conns = get_u32(p),
        IPVS_DEST_ATTR_ADDR_FAMILY => d.af = get_u16(p),
        IPVS_DEST_ATTR_STATS64 => each_attr(p, |t, p| {
            if (IPVS_STATS_ATTR_CONNS..=IPVS_STATS_ATTR_OUTBPS).contains(&t) {
                d.stats[usize::from(t - IPVS_STATS_ATTR_CONNS)] = get_u64(p);
            }
        }),
        _ => {}
    });
    d
}

/// A raw generic-netlink socket with a 4 KiB receive buffer.
struct PlainDumper {
    sock: netlink_sys::Socket,
    family: u16,
    seq: u32,
    req: Vec<u8>,
    buf: Vec<u8>,
}

impl PlainDumper {
    fn new(family: u16) -> Self {
        PlainDumper {
            sock: plain_socket(),
            family,
            seq: 0,
            req: Vec::with_capacity(128),
            buf: vec![0; 4096],
        }
    }

    /// Sends a dump request of `command` (with the key nest of `key`) and
    /// hands the attributes of every reply to `each`, until `NLMSG_DONE`.
    fn dump(
        &mut self,
        command: IpvsCommand,
        key: Option<&PlainService>,
        mut each: impl FnMut(&[u8]),
    ) -> io::Result<()> {
        self.seq += 1;
        let seq = self.seq;
        let req = &mut self.req;
        req.clear();
        req.extend_from_slice(&0u32.to_ne_bytes());
        req.extend_from_slice(&self.family.to_ne_bytes());
        req.extend_from_slice(&(NLM_F_REQUEST | NLM_F_DUMP).to_ne_bytes());
        req.extend_from_slice(&seq.to_ne_bytes());
        req.extend_from_slice(&0u32.to_ne_bytes());
        req.extend_from_slice(&[command.into(), IPVS_GENL_VERSION, 0, 0]);
        if let Some(k) = key {
            let nest = req.len();
            put_attr(req, IPVS_CMD_ATTR_SERVICE, &[]);
            put_attr(req, IPVS_SVC_ATTR_AF, &k.af.to_ne_bytes());
            if k.fwmark != 0 {
                put_attr(req, IPVS_SVC_ATTR_FWMARK, &k.fwmark.to_ne_bytes());
            } else {
                put_attr(req, IPVS_SVC_ATTR_PROTOCOL, &k.protocol.to_ne_bytes());
                put_attr(req, IPVS_SVC_ATTR_ADDR, &k.addr);
                put_attr(req, IPVS_SVC_ATTR_PORT, &k.port);
            }
            let len = (req.len() - nest) as u16;
            req[nest..nest + 2].copy_from_slice(&len.to_ne_bytes());
        }
        let len = req.len() as u32;
        req[..4].copy_from_slice(&len.to_ne_bytes());
        self.sock.send(req, 0)?;
        loop {
            let n = self.sock.recv(&mut &mut self.buf[..], 0)?;
            let buf = &self.buf[..n.min(self.buf.len())];
            let mut at = 0;
            while at + NLMSG_HDRLEN <= buf.len() {
                let len = get_u32(&buf[at..]) as usize;
                if len < NLMSG_HDRLEN || at + len > buf.len() {
                    return Err(io::Error::new(
                        io::ErrorKind::InvalidData,
                        "truncated message",
                    ));
                }
                let msg = &buf[at..at + len];
                at += (len + 3) & !3;
                if get_u32(&msg[8..]) != seq {
                    continue;
                }
                let kind = get_u16(&msg[4..]);
                let code = get_u32(&msg[NLMSG_HDRLEN..]) as i32;
                if kind == NLMSG_DONE {
                    return if code < 0 {
                        Err(io::Error::from_raw_os_error(-code))
                    } else {
                        Ok(())
                    };
                } else if kind == NLMSG_ERROR {
                    if code < 0 {
                        return Err(io::Error::from_raw_os_error(-code));
                    }
                } else if kind == self.family && len >= NLMSG_HDRLEN + GENL_HDRLEN {
                    each(&msg[NLMSG_HDRLEN + GENL_HDRLEN..]);
                }
            }
        }
    }
}

/// The plain listing in the caller's namespace: one service dump, then one
/// destination dump per service (socket opened before the clock).
fn plain_listing(family: u16) -> (PlainTable, Times) {
    let mut d = PlainDumper::new(family);
    timed(|| {
        let mut services = Vec::new();
        d.dump(IpvsCommand::GetService, None, |attrs| {
            each_attr(attrs, |t, p| {
                if t == IPVS_CMD_ATTR_SERVICE {
                    services.push(parse_service_key(p));
                }
            })
        })
        .expect("service dump");
        let mut dests = Vec::new();
        for s in &mut services {
            s.first_dest = dests.len() as u32;
            d.dump(IpvsCommand::GetDest, Some(s), |attrs| {
                each_attr(attrs, |t, p| {
                    if t == IPVS_CMD_ATTR_DEST {
                        dests.push(parse_dest(p));
                    }
                })
            })
            .expect("destination dump");
            s.dest_count = dests.len() as u32 - s.first_dest;
        }
        black_box(PlainTable { services, dests })
    })
}

fn usage() -> ! {
    eprintln!(
        "usage: bulk-compare [--quick] [--memory-only] [--rounds N] [--sizes SxD,...] [--no-bucket] [--pause-ms MS] [--no-flush]"
    );
    std::process::exit(2)
}

fn parse_sizes(text: &str) -> Vec<(u32, u32)> {
    text.split(',')
        .map(|one| {
            let (s, d) = one.split_once('x').unwrap_or_else(|| usage());
            match (s.trim().parse(), d.trim().parse()) {
                (Ok(s), Ok(d)) if s > 0 => (s, d),
                _ => usage(),
            }
        })
        .collect()
}

fn main() {
    let mut args = std::env::args().skip(1);
    let mut quick = false;
    let mut memory_only = false;
    let mut rounds = 5;
    let mut sizes = None;
    let mut bucket = true;
    let mut pause = DEFAULT_PAUSE;
    let mut flush = true;
    while let Some(a) = args.next() {
        match a.as_str() {
            "--quick" => quick = true,
            "--memory-only" => memory_only = true,
            "--rounds" => {
                rounds = args
                    .next()
                    .and_then(|n| n.parse().ok())
                    .filter(|&n| n > 0)
                    .unwrap_or_else(|| usage())
            }
            "--sizes" => sizes = Some(parse_sizes(&args.next().unwrap_or_else(|| usage()))),
            "--no-bucket" => bucket = false,
            "--pause-ms" => {
                pause = Duration::from_millis(
                    args.next()
                        .and_then(|n| n.parse().ok())
                        .unwrap_or_else(|| usage()),
                )
            }
            "--no-flush" => flush = false,
            _ => usage(),
        }
    }
    let sizes = sizes.unwrap_or_else(|| {
        if quick {
            vec![(200, 4)]
        } else {
            vec![(1_000, 4), (5_000, 4), (10_000, 5)]
        }
    });
    let bucket = bucket.then_some(if quick { (200, 4) } else { (10_000, 5) });
    let mut bench = Bench {
        opts: Options {
            rounds,
            sizes,
            bucket,
            pause,
            flush,
        },
        checks: Vec::new(),
        measured: Vec::new(),
        teardown: TeardownLog::default(),
        memory_peak: None,
    };
    let kernel = std::fs::read_to_string("/proc/sys/kernel/osrelease")
        .unwrap_or_default()
        .trim()
        .to_string();
    println!("BULK-COMPARE-BEGIN");
    println!("# Bulk sync: ipvsnl vs a plain netlink client vs ipvsadm\n");
    println!("Kernel {kernel}, one boot. Method (see examples/bulk-compare.rs):\n");
    // How the VM keeps time, as .ci/bench says (instruction counting or not).
    if let Some(clock) = std::env::var("IPVSNL_BENCH_CLOCK")
        .ok()
        .filter(|c| !c.is_empty())
    {
        println!("- Clock: {clock}.");
    }
    println!(
        "- Cold create: {rounds} rounds; in each, `Syncer::sync`, `Client::apply` of the planned requests and the plain client each create the table in a fresh network namespace, in a rotated order (round r starts at contestant r mod 3)."
    );
    println!(
        "- Full listing: the plain listing (raw socket, 4 KiB buffer, one service dump then one destination dump per service, parsed into plain structs) and `Client::table` alternate over {rounds} rounds in one namespace holding the table."
    );
    println!(
        "- A row with several runs shows the run with the median wall time (its user and sys) and the wall range over the runs. `ipvsadm -R`, `ipvsadm -S -n`, the 16/32 KiB buffer listings and the resyncs run once (ipvsadm is 5-20x slower than the rest)."
    );
    println!(
        "- A namespace holding a table is {} before it is left; each contestant starts {:.2} s after entering its fresh namespace. Family ids are resolved and sockets opened before the clock.",
        if flush { "flushed (untimed)" } else { "NOT flushed" },
        pause.as_secs_f64()
    );
    println!(
        "- Wall, user and sys in seconds (getrusage of this process; of the children for ipvsadm). Ratio: this row's median wall over the named row's (plain: the plain client or listing; ours: `Syncer::sync` or `Client::table`)."
    );
    bench.memory();
    if memory_only {
        println!();
        for c in &bench.checks {
            println!("{c}");
        }
        println!("BULK-COMPARE-END");
        return;
    }
    if !netns::ipvs_available() {
        println!("IPVS not available (needs root and ip_vs): only the memory figure.");
        println!("BULK-COMPARE-END");
        return;
    }
    println!();
    println!(
        "| workload | operation | contestant | wall s | user s | sys s | wall range s | ratio |"
    );
    println!("|---|---|---|---|---|---|---|---|");
    for (s, d) in bench.opts.sizes.clone() {
        bench.workload(Layout::Spread, s, d, true);
    }
    if let Some((s, d)) = bench.opts.bucket {
        bench.workload(Layout::OneBucket, s, d, false);
    }
    bench.teardown_line();
    println!();
    bench.targets();
    println!();
    println!("Checks:");
    for c in &bench.checks {
        println!("{c}");
    }
    println!("BULK-COMPARE-END");
}

/// The plan that creates `want` in an empty table (default options).
fn plan_from_empty(want: &Table) -> ipvsnl::sync::Plan {
    plan(
        &Table::new(),
        want,
        &PlanOptions::default(),
        &DrainLedger::new(),
        Instant::now(),
    )
}
