//! Side-by-side comparison of the bulk-sync engine with a plain netlink
//! client and with Debian's ipvsadm, in one boot on one kernel (run it in
//! the VM with `scripts/measure/bench`).
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
//! * Whole-process rows (`cli.rs`): `ipvsadm -R` and `ipvsadm -S -n`,
//!   ours and Debian's, and the plain client as a process of its own
//!   (`plain-client restore` / `save`), each timed from spawn to exit,
//!   start-up included, over `--cli-rounds N` rounds (default 3) in a
//!   rotated order; each `-R` in a fresh namespace, each `-S -n` in the
//!   namespace holding the table. The `-S -n` outputs must be
//!   byte-identical and the `-R` runs must leave identical tables, or the
//!   rows are INVALID and the program exits non-zero.
//! * The 16/32 KiB buffer listings and the resyncs run once each.
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
//!   (every thread), the whole-process rows as children.
//!
//! Prints a Markdown report: the table, the targets of the issue (met or
//! not), and the checks (every contestant's end state is the desired
//! table; the listings found every service and destination).
//!
//! Usage: `bulk-compare [--quick] [--memory-only] [--rounds N]
//! [--sizes 10000x5,5000x4] [--no-bucket] [--pause-ms MS] [--no-flush]`
//! [--cli-rounds N] [--cli-only] [--ours-ipvsadm PATH] [--plain-client PATH]`
//! (`--cli-only`: the whole-process rows alone, `cli_only.rs`)
//!
//! The scale run (`scale.rs`, run by `scripts/measure/bench --scale`): `bulk-compare
//! --scale [--sizes ...] [--rounds N] [--big-rounds N] [--resyncs-only]
//! [--memory-only]`
//! (default sizes 1000x10,10000x10,50000x10,100000x10, 3 rounds, 2 rounds
//! of the cold creates and listings above 10000 services; ours and the
//! plain client only, per destination); `bulk-compare --plot POINTS OUT.svg
//! [CAPTION]` draws its plot from the `SCALE-POINT` lines it printed.
//! (`--pause-ms` and `--no-flush` exist to measure the teardown; our
//! ipvsadm is `--ours-ipvsadm`, else `IPVSNL_OURS_IPVSADM`, else
//! `ipvsnl-ipvsadm` next to this program).

use std::alloc::{GlobalAlloc, Layout as AllocLayout, System};
use std::hint::black_box;
use std::io::Write;
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, AtomicIsize, Ordering};
use std::time::{Duration, Instant};

use ipvsnl::sync::{plan, DrainLedger, PlanOptions, Syncer, Table};
use ipvsnl::{Client, ClientOptions};

use ipvsnl_bench::plain::batches::Batches;
use ipvsnl_bench::plain::listing::{self, PlainDumper, PlainTable};
use ipvsnl_bench::plain::socket;
use ipvsnl_test_support::netns;
use ipvsnl_test_support::workload::{churn, churned, desired, Layout};

mod cli;
mod cli_only;
mod contest;
mod memory;
mod namespaces;
mod plot;
mod rows;
mod scale;
mod scale_report;
mod targets;
mod timing;

use contest::Measured;
use namespaces::{TeardownLog, DEFAULT_PAUSE};
use rows::{row, Row};
use timing::{speed_probe, timed, Runs, Times};

struct Options {
    rounds: usize,
    sizes: Vec<(u32, u32)>,
    bucket: Option<(u32, u32)>,
    pause: Duration,
    flush: bool,
    /// Rounds of the whole-process rows.
    cli_rounds: usize,
    /// `--scale`: rounds of the cold creates and listings above 10000
    /// services.
    big_rounds: usize,
    /// `--scale --resyncs-only`: no timed cold create nor listing (the
    /// table created once, untimed), only the resyncs.
    resyncs_only: bool,
    /// `--cli-only`: the whole-process rows alone (`cli_only.rs`).
    cli_only: bool,
}

/// The run: options, the programs of the whole-process rows, and what was
/// measured and checked so far.
struct Bench {
    opts: Options,
    programs: cli::Programs,
    checks: Vec<String>,
    measured: Vec<Measured>,
    teardown: TeardownLog,
    memory_peak: Option<f64>,
    /// A whole-process row failed its checks: exit non-zero.
    invalid: bool,
}

/// Prints a progress line on the console; `scripts/measure/bench` keeps it out of the
/// report.
fn progress(what: std::fmt::Arguments<'_>) {
    println!("BULK-COMPARE-PROGRESS {what}");
}

fn listed(c: &mut Client) -> Table {
    Table::from_entries(c.table().expect("list"))
}

/// A client with its family id resolved (so no contestant pays for it).
fn ready_client() -> Client {
    let mut c = Client::new().expect("client");
    c.family_id().expect("family");
    c
}

impl Bench {
    fn check(&mut self, what: String, ok: bool) {
        let line = format!("- {} {what}", if ok { "ok:" } else { "MISMATCH:" });
        self.checks.push(line);
    }

    fn note(&mut self, what: String, ok: bool) {
        let line = format!("- {} {what}", if ok { "ok:" } else { "WARNING:" });
        self.checks.push(line);
    }
}
fn usage() -> ! {
    eprintln!(
        "usage: bulk-compare [--quick] [--memory-only] [--rounds N] [--sizes SxD,...] [--no-bucket] [--pause-ms MS] [--no-flush] [--cli-rounds N] [--cli-only] [--ours-ipvsadm PATH] [--plain-client PATH]\n       bulk-compare --scale [--sizes SxD,...] [--rounds N] [--big-rounds N] [--resyncs-only] [--memory-only]\n       bulk-compare --plot POINTS OUT.svg [CAPTION]"
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
    let mut rounds = None;
    let mut scale = false;
    let mut sizes = None;
    let mut bucket = true;
    let mut pause = DEFAULT_PAUSE;
    let mut flush = true;
    let mut cli_rounds = 3;
    let mut big_rounds = 2;
    let mut resyncs_only = false;
    let mut cli_only = false;
    let mut ours = None;
    let mut plain_client = None;
    while let Some(a) = args.next() {
        match a.as_str() {
            "--quick" => quick = true,
            "--memory-only" => memory_only = true,
            "--rounds" => {
                rounds = Some(
                    args.next()
                        .and_then(|n| n.parse().ok())
                        .filter(|&n| n > 0)
                        .unwrap_or_else(|| usage()),
                )
            }
            "--scale" => scale = true,
            "--resyncs-only" => resyncs_only = true,
            "--cli-only" => cli_only = true,
            "--big-rounds" => {
                big_rounds = args
                    .next()
                    .and_then(|n| n.parse().ok())
                    .filter(|&n| n > 0)
                    .unwrap_or_else(|| usage())
            }
            "--plot" => {
                let points = args.next().unwrap_or_else(|| usage());
                let out = args.next().unwrap_or_else(|| usage());
                let caption = args.next().unwrap_or_default();
                if let Err(e) = plot::run(&points, &out, &caption) {
                    eprintln!("bulk-compare --plot: {e}");
                    std::process::exit(1);
                }
                return;
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
            "--cli-rounds" => {
                cli_rounds = args
                    .next()
                    .and_then(|n| n.parse().ok())
                    .filter(|&n| n > 0)
                    .unwrap_or_else(|| usage())
            }
            "--ours-ipvsadm" => ours = Some(args.next().unwrap_or_else(|| usage()).into()),
            "--plain-client" => plain_client = Some(args.next().unwrap_or_else(|| usage()).into()),
            _ => usage(),
        }
    }
    let rounds = rounds.unwrap_or(if scale { 3 } else { 5 });
    let sizes = sizes.unwrap_or_else(|| {
        if scale {
            scale::SIZES.to_vec()
        } else if quick {
            vec![(200, 4)]
        } else {
            vec![(1_000, 4), (5_000, 4), (10_000, 5)]
        }
    });
    let bucket = (bucket && !scale).then_some(if quick { (200, 4) } else { (10_000, 5) });
    let mut bench = Bench {
        opts: Options {
            rounds,
            sizes,
            bucket,
            pause,
            flush,
            cli_rounds,
            big_rounds,
            resyncs_only,
            cli_only,
        },
        programs: cli::Programs::find(ours, plain_client),
        checks: Vec::new(),
        measured: Vec::new(),
        teardown: TeardownLog::default(),
        memory_peak: None,
        invalid: false,
    };
    let kernel = std::fs::read_to_string("/proc/sys/kernel/osrelease")
        .unwrap_or_default()
        .trim()
        .to_string();
    println!("BULK-COMPARE-BEGIN");
    if scale {
        bench.scale_run(&kernel, memory_only);
        return;
    }
    if cli_only {
        println!("# ipvsadm as a process: ours vs a plain client vs Debian's\n");
    } else {
        println!("# Bulk sync: ipvsnl vs a plain netlink client vs ipvsadm\n");
    }
    println!("Kernel {kernel}, one boot. Method (see crates/ipvsnl-bench/src/bin/bulk-compare/main.rs):\n");
    // How the VM keeps time, as scripts/measure/bench says (instruction counting or not).
    if let Some(clock) = std::env::var("IPVSNL_BENCH_CLOCK")
        .ok()
        .filter(|c| !c.is_empty())
    {
        println!("- Clock: {clock}.");
    }
    if !cli_only {
        print_method_of_the_rounds(rounds);
    }
    println!(
        "- Whole-process rows: `plain-client restore` / `save` (the plain client as a process of its own: its own parse of the rules, family lookup, hand-encoded requests in 64 KiB datagrams with one ACK each; for `-S -n` the kernel work of our settings listing: one netlink service dump, one `IP_VS_SO_GET_SERVICES`, one `IP_VS_SO_GET_DESTS` per IPv4 service, printed with hand-written number formatting and written out every 64 KiB), our ipvsadm (`{}`) and Debian's (`{}`) `-R` and `-S -n`, each timed from spawn to exit (start-up included), over {cli_rounds} rounds in a rotated order; each `-R` in a fresh namespace (checked to leave the desired table), each `-S -n` in the namespace holding it (outputs checked byte-identical).",
        bench.programs.ours.display(),
        bench.programs.debian.display()
    );
    println!(
        "- A namespace holding a table is {} before it is left; each contestant starts {:.2} s after entering its fresh namespace. Family ids are resolved and sockets opened before the clock.",
        if flush { "flushed (untimed)" } else { "NOT flushed" },
        pause.as_secs_f64()
    );
    println!(
        "- Wall, user and sys in seconds (getrusage of this process; of the children for the whole-process rows). Ratio: this row's median wall over the named row's (plain: the plain client or listing; ours: `Syncer::sync` or `Client::table`)."
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
    if bench.opts.cli_only {
        for (s, d) in bench.opts.sizes.clone() {
            bench.cli_workload(Layout::Spread, s, d);
        }
    } else {
        for (s, d) in bench.opts.sizes.clone() {
            bench.workload(Layout::Spread, s, d, true);
        }
        if let Some((s, d)) = bench.opts.bucket {
            bench.workload(Layout::OneBucket, s, d, false);
        }
    }
    bench.teardown_line();
    println!();
    if bench.opts.cli_only {
        bench.cli_targets();
    } else {
        bench.targets();
    }
    println!();
    println!("Checks:");
    for c in &bench.checks {
        println!("{c}");
    }
    println!("BULK-COMPARE-END");
    if bench.invalid {
        eprintln!("bulk-compare: a whole-process row is INVALID (see the checks)");
        std::process::exit(1);
    }
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

/// The method lines of the cold-create, listing and resync rows.
fn print_method_of_the_rounds(rounds: usize) {
    println!(
        "- Cold create: {rounds} rounds; in each, `Syncer::sync`, `Client::apply` of the planned requests and the plain client each create the table in a fresh network namespace, in a rotated order (round r starts at contestant r mod 3)."
    );
    println!(
        "- Full listing: the plain listing (raw socket, 4 KiB buffer, one service dump then one destination dump per service, parsed into plain structs) and `Client::table` alternate over {rounds} rounds in one namespace holding the table."
    );
    println!(
        "- A row with several runs shows the run with the median wall time (its user and sys) and the wall range over the runs. The 16/32 KiB buffer listings and the resyncs run once."
    );
}
