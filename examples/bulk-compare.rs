//! Side-by-side comparison of the bulk-sync engine with Debian's ipvsadm,
//! in one boot on one kernel (run it in the VM with `.ci/bench`).
//!
//! For each workload (services x destinations: services 10.0.0.1, 10.0.0.2,
//! ... port 80, rr; distinct masquerading real servers 172.16.0.1, ...):
//! cold create (ours vs `ipvsadm -R` fed the same rules), full listing
//! (ours vs `ipvsadm -S -n`), no-op resync and 1 % churn resync (full
//! listing vs the cached view). Then the kernel's worst case, every service
//! in one hash bucket (10.A.B.1:80). Every contestant runs in a fresh
//! network namespace (a table deleted in place leaves its destinations in
//! a trash list that slows later adds), with a pause after a big namespace
//! is destroyed (its teardown runs in the background). The end states are
//! checked to be the same.
//!
//! The floor every client is measured against: a plain client, every
//! request encoded before the clock starts, then 64 KiB of requests per
//! `sendmsg` with one ACK asked for per batch and nothing else (the shape
//! of the hand-written C client the issue measured).
//!
//! Prints a Markdown report: wall, user and sys seconds (getrusage of this
//! process for ours, of the children for ipvsadm) and the ratios.
//!
//! Usage: `bulk-compare [--quick] [--memory-only]`

use std::alloc::{GlobalAlloc, Layout as AllocLayout, System};
use std::io::Write;
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use ipvsnl::sync::{plan, DrainLedger, PlanOptions, Syncer, Table};
use ipvsnl::wire::netlink_packet_core::{NetlinkMessage, NLMSG_ERROR, NLM_F_ACK, NLM_F_REQUEST};
use ipvsnl::wire::netlink_packet_generic::GenlMessage;
use ipvsnl::{Client, ClientOptions, Request};

#[path = "../benches/support/netns.rs"]
mod netns;
#[path = "../benches/support/workload.rs"]
mod workload;
use workload::{churned, desired, Layout};

/// Counts live heap bytes and their peak, for the memory figure.
struct Counting;

static LIVE: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);

// SAFETY: defers to the system allocator; only adds bookkeeping.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: AllocLayout) -> *mut u8 {
        // SAFETY: same contract as the caller's.
        let p = unsafe { System.alloc(layout) };
        if !p.is_null() {
            let now = LIVE.fetch_add(layout.size(), Ordering::Relaxed) + layout.size();
            PEAK.fetch_max(now, Ordering::Relaxed);
        }
        p
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: AllocLayout) {
        // SAFETY: same contract as the caller's.
        unsafe { System.dealloc(ptr, layout) };
        LIVE.fetch_sub(layout.size(), Ordering::Relaxed);
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
fn ours<T>(f: impl FnOnce() -> T) -> (T, Times) {
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

struct Report {
    checks: Vec<String>,
}

impl Report {
    fn row(&mut self, workload: &str, op: &str, who: &str, t: Times, base: Option<Times>) {
        let ratio = base.map_or("".to_string(), |b| format!("{:.2}x", t.wall / b.wall));
        let line = format!(
            "| {workload} | {op} | {who} | {:.3} | {:.3} | {:.3} | {ratio} |",
            t.wall, t.user, t.sys
        );
        println!("{line}");
    }

    fn check(&mut self, what: String, ok: bool) {
        let line = format!("- {} {what}", if ok { "ok:" } else { "MISMATCH:" });
        self.checks.push(line);
    }
}

/// A fresh namespace for the next contestant, after the previous one (if
/// big) had time to be torn down.
fn next_namespace(pause: Duration) {
    // Leaving the old namespace starts its teardown; wait for it here, as
    // its services leave the kernel's (global) service table meanwhile.
    netns::fresh().expect("new network namespace");
    std::thread::sleep(pause);
}

fn listed(c: &mut Client) -> Table {
    Table::from_entries(c.list_table().expect("list"))
}

fn workload(rep: &mut Report, layout: Layout, services: u32, dests: u32, full: bool) {
    let name = format!(
        "{services} x {dests}{}",
        if layout == Layout::OneBucket {
            " one bucket"
        } else {
            ""
        }
    );
    let pause = Duration::from_millis(u64::from(services * dests) / 10).max(Duration::from_secs(1));
    let want = desired(layout, services, dests);
    let from_empty = plan(
        &Table::new(),
        &want,
        &PlanOptions::default(),
        &DrainLedger::new(),
        Instant::now(),
    );
    let rules = from_empty.to_rules();

    // Cold create: ours.
    next_namespace(pause);
    let mut client = Client::new().expect("client");
    let mut syncer = Syncer::new(PlanOptions::default());
    let (r, t_ours) = ours(|| syncer.sync(&mut client, &want).expect("sync"));
    rep.row(&name, "cold create", "ours", t_ours, None);
    let ours_table = listed(&mut client);
    rep.check(
        format!(
            "{name}: ours created {} / {} ({r})",
            ours_table.len(),
            ours_table.destination_count()
        ),
        r.is_complete() && ours_table.same_settings(&want),
    );

    // Full listing, same namespace: ours (several receive buffers), ipvsadm.
    let (_, t_list) = ours(|| client.list_table().expect("list"));
    rep.row(&name, "full listing", "ours", t_list, None);
    if full {
        let (_, t) = ours(|| client.table().expect("list"));
        rep.row(
            &name,
            "full listing",
            "ours, Client::table (the same listing)",
            t,
            Some(t_list),
        );
        for size in [16 << 10, 32 << 10] {
            let mut c = Client::with_options(ClientOptions::default().with_recv_buffer(size))
                .expect("client");
            let (_, t) = ours(|| c.list_table().expect("list"));
            rep.row(
                &name,
                "full listing",
                &format!("ours, {} KiB buffer", size >> 10),
                t,
                Some(t_list),
            );
        }
    }
    let (saved, t_save) = ipvsadm(&["-S", "-n"], None);
    rep.row(&name, "full listing", "ipvsadm -S -n", t_save, Some(t_list));
    let adds = saved.lines().filter(|l| l.starts_with("-A")).count();
    let dadds = saved.lines().filter(|l| l.starts_with("-a")).count();
    rep.check(
        format!("{name}: ipvsadm -S lists {adds} / {dadds}"),
        adds == want.len() && dadds == want.destination_count(),
    );

    // Resyncs.
    if full {
        let (r, t) = ours(|| syncer.sync(&mut client, &want).expect("sync"));
        rep.row(&name, "no-op resync", "ours, listed", t, None);
        rep.check(
            format!("{name}: no-op resync sends nothing"),
            r.requests().is_empty(),
        );
        let (r, t) = ours(|| syncer.sync_cached(&mut client, &want).expect("sync"));
        rep.row(&name, "no-op resync", "ours, cached view", t, None);
        rep.check(
            format!("{name}: cached no-op sends nothing"),
            r.requests().is_empty(),
        );
        let churn = churned(layout, services, dests, 1);
        let (r, t_full) = ours(|| syncer.sync(&mut client, &churn).expect("sync"));
        rep.row(&name, "1 % churn resync", "ours, listed", t_full, None);
        rep.check(
            format!("{name}: 1 % churn, listed: {} requests", r.requests().len()),
            r.is_complete(),
        );
        let after_full = listed(&mut client);
        drop(client);
        // Incremental, in a namespace of its own holding the same table.
        next_namespace(pause);
        let mut client = Client::new().expect("client");
        let mut syncer = Syncer::new(PlanOptions::default());
        assert!(syncer.sync(&mut client, &want).expect("sync").is_complete());
        let (r, t_inc) = ours(|| syncer.sync_cached(&mut client, &churn).expect("sync"));
        rep.row(
            &name,
            "1 % churn resync",
            "ours, cached view",
            t_inc,
            Some(t_full),
        );
        let after_inc = listed(&mut client);
        rep.check(
            format!(
                "{name}: 1 % churn, cached: {} requests, same end state",
                r.requests().len()
            ),
            r.is_complete()
                && after_inc.same_settings(&after_full)
                && after_inc.same_settings(&churn),
        );
        drop(client);
    } else {
        drop(client);
    }

    // Cold create: ipvsadm -R with the same rules.
    next_namespace(pause);
    let (_, t_r) = ipvsadm(&["-R"], Some(&rules));
    rep.row(&name, "cold create", "ipvsadm -R", t_r, Some(t_ours));
    let mut c = Client::new().expect("client");
    let theirs = listed(&mut c);
    rep.check(
        format!("{name}: ipvsadm -R created the same table"),
        theirs.same_settings(&ours_table),
    );
    drop(c);

    // Cold create: the same requests through Client::apply alone (no
    // listing, planning or cached view), to tell the pipeline's cost from
    // the sync engine's.
    next_namespace(pause);
    let mut c = Client::new().expect("client");
    let (outcomes, t_apply) = ours(|| c.apply(from_empty.requests()));
    rep.row(
        &name,
        "cold create",
        "ours, Client::apply of the planned requests",
        t_apply,
        Some(t_ours),
    );
    rep.check(
        format!("{name}: Client::apply applied every request"),
        outcomes.iter().all(Result::is_ok),
    );
    drop(c);

    // Cold create: the plain client's floor, same requests.
    next_namespace(pause);
    let (failed, t_plain) = plain_client(from_empty.requests());
    rep.row(
        &name,
        "cold create",
        "plain client (pre-encoded, 64 KiB per sendmsg, 1 ACK per batch)",
        t_plain,
        Some(t_ours),
    );
    let mut c = Client::new().expect("client");
    let plain = listed(&mut c);
    rep.check(
        format!(
            "{name}: the plain client created the same table ({failed} refused); Syncer::sync took {:.2}x its wall time ({:.2}x its system time), Client::apply {:.2}x",
            t_ours.wall / t_plain.wall,
            t_ours.sys / t_plain.sys.max(1e-9),
            t_apply.wall / t_plain.wall,
        ),
        failed == 0 && plain.same_settings(&ours_table),
    );
    drop(c);
}

/// The plain client: encodes every request first (not timed), then sends
/// batches of up to 64 KiB with only the last message of each asking for an
/// ACK, and reads until that ACK (counting refusals on the way).
fn plain_client(requests: &[Request]) -> (usize, Times) {
    const BATCH: usize = 64 << 10;
    let family = Client::new()
        .and_then(|mut c| c.family_id())
        .expect("family");
    let mut sock =
        netlink_sys::Socket::new(netlink_sys::protocols::NETLINK_GENERIC).expect("socket");
    sock.bind_auto().expect("bind");
    sock.connect(&netlink_sys::SocketAddr::new(0, 0))
        .expect("connect");
    // (bytes, seq of the last message) per batch.
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
    ours(|| {
        let mut refused = 0;
        let mut buf = vec![0u8; 8192];
        for (bytes, last) in &batches {
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

fn memory(rep: &mut Report) {
    let base = LIVE.load(Ordering::Relaxed);
    PEAK.store(base, Ordering::Relaxed);
    let want = desired(Layout::Spread, 10_000, 5);
    let after_desired = LIVE.load(Ordering::Relaxed) - base;
    let p = plan(
        &Table::new(),
        &want,
        &PlanOptions::default(),
        &DrainLedger::new(),
        Instant::now(),
    );
    let peak = PEAK.load(Ordering::Relaxed) - base;
    let line = format!(
        "- memory, 10000 x 5: desired state {:.1} MiB, desired + plan from empty ({} requests) peak {:.1} MiB (target: under 32 MiB)",
        after_desired as f64 / (1 << 20) as f64,
        p.len(),
        peak as f64 / (1 << 20) as f64
    );
    rep.checks.push(line);
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let quick = args.iter().any(|a| a == "--quick");
    let mut rep = Report { checks: Vec::new() };
    let kernel = std::fs::read_to_string("/proc/sys/kernel/osrelease")
        .unwrap_or_default()
        .trim()
        .to_string();
    println!("BULK-COMPARE-BEGIN");
    println!("# Bulk sync: ipvsnl vs ipvsadm\n");
    println!("Kernel {kernel}, one boot; each contestant in a fresh network namespace.");
    println!("Ratios: this row's wall time over the row it is compared with (ours, or the listed resync).\n");
    memory(&mut rep);
    if args.iter().any(|a| a == "--memory-only") {
        println!("BULK-COMPARE-END");
        return;
    }
    if !netns::ipvs_available() {
        println!("IPVS not available (needs root and ip_vs): only the memory figure.");
        println!("BULK-COMPARE-END");
        return;
    }
    println!();
    println!("| workload | operation | contestant | wall s | user s | sys s | ratio |");
    println!("|---|---|---|---|---|---|---|");
    let sizes: &[(u32, u32)] = if quick {
        &[(200, 4)]
    } else {
        &[(1_000, 4), (5_000, 4), (10_000, 5)]
    };
    for &(s, d) in sizes {
        workload(&mut rep, Layout::Spread, s, d, true);
    }
    let (s, d) = if quick { (200, 4) } else { (10_000, 5) };
    workload(&mut rep, Layout::OneBucket, s, d, false);
    println!();
    println!("Checks:");
    for c in &rep.checks {
        println!("{c}");
    }
    println!("BULK-COMPARE-END");
}
