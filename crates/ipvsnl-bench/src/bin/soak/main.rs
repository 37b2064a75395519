//! The soak: random desired tables synced again and again, in a network
//! namespace of its own in the VM (`.ci/soak`), while Debian's ipvsadm
//! deletes, edits and adds our services and a co-tenant's, some syncs go
//! through a client with a tiny socket receive buffer (`ENOBUFS`) and the
//! cached view is dropped at random. After every quiet sync (churner
//! paused) the kernel's table is compared with the desired one field by
//! field; the co-tenant's services must come out of it untouched and no
//! request of ours may name a service out of our scope.
//!
//! The syncer's batches are allowed up to `--batch-requests` requests
//! (default 1000): with its default, the library sizes batches to the
//! socket buffer (a request per 2 KiB of it), so that a tiny buffer never
//! overflows and `ENOBUFS` is never seen; 1000 lets a batch of refusals
//! overflow it, as a caller tuning for throughput would.
//!
//! ```text
//! soak [--seconds N] [--seed S] [--max-services M] [--tiny-buffer BYTES] [--batch-requests N] [--local-forwarding]
//! ```
//!
//! Debian's ipvsadm is `$IPVSNL_DEBIAN_IPVSADM` or `/usr/sbin/ipvsadm`.
//! Prints the figures between `SOAK-BEGIN` and `SOAK-END`; exits 0 only if
//! no divergence and no panic was seen (and the other checks held), 1
//! otherwise, 2 for bad arguments or a machine it cannot run on.

mod churn;
mod figures;
mod memory;
mod rng;
mod round;
mod saved;
mod tables;

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::PathBuf;
use std::time::{Duration, Instant};

use ipvsnl::sync::{PlanOptions, Scope, Syncer, Table};
use ipvsnl::{
    AddressFamily, ApplyOptions, Client, ClientOptions, Request, Scheduler, Service, ServiceKey,
};

use crate::figures::Figures;
use crate::round::Soak;
use crate::tables::{is_ours, Universe};

/// The soak's arguments.
#[derive(Debug, Clone)]
struct Args {
    seconds: u64,
    seed: u64,
    max_services: usize,
    tiny_buffer: usize,
    batch_requests: usize,
    local_forwarding: bool,
}

const USAGE: &str = "usage: soak [--seconds N] [--seed S] [--max-services M] [--tiny-buffer BYTES] [--batch-requests N] [--local-forwarding]";

/// Syncs after which the first memory reading is taken (or a quarter of
/// the run, if that comes first).
const FIRST_MEMORY_SYNCS: u64 = 1000;

fn parse_args(argv: &[String]) -> Result<Args, String> {
    let mut a = Args {
        seconds: 60,
        seed: std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(1, |d| d.as_nanos() as u64),
        max_services: 300,
        tiny_buffer: 4096,
        batch_requests: 1000,
        local_forwarding: false,
    };
    let mut it = argv.iter();
    while let Some(flag) = it.next() {
        if flag == "--local-forwarding" {
            a.local_forwarding = true;
            continue;
        }
        if flag == "-h" || flag == "--help" {
            return Err(USAGE.to_owned());
        }
        let value = it
            .next()
            .ok_or_else(|| format!("{flag} needs a value\n{USAGE}"))?;
        let number = |what: &str| -> Result<u64, String> {
            value
                .parse::<u64>()
                .map_err(|_| format!("{flag}: {what} {value:?} is not a whole number\n{USAGE}"))
        };
        match flag.as_str() {
            "--seconds" => a.seconds = number("seconds")?.max(1),
            "--seed" => a.seed = number("seed")?,
            "--max-services" => a.max_services = number("service count")?.clamp(1, 5000) as usize,
            "--tiny-buffer" => a.tiny_buffer = number("byte count")?.clamp(1, 1 << 20) as usize,
            "--batch-requests" => {
                a.batch_requests = number("request count")?.clamp(1, 1 << 20) as usize
            }
            other => return Err(format!("unknown argument {other:?}\n{USAGE}")),
        }
    }
    Ok(a)
}

/// Moves the process (still single-threaded) into a new network namespace
/// with `lo` up; the churner and its ipvsadm runs inherit it.
fn own_namespace() -> Result<(), String> {
    ipvsnl_test_support::netns::enter_fresh_netns()
        .map_err(|e| format!("unshare(CLONE_NEWNET) and lo up: {e} (the soak needs root; run it in the VM with .ci/soak)"))
}

/// Asks the kernel which schedulers it has: each named scheduler is tried
/// on a scratch service, deleted again. Also whether the `sip`
/// persistence engine is there.
fn probe(client: &mut Client) -> (Vec<Scheduler>, bool, Vec<String>) {
    let scratch = ServiceKey::fwmark(tables::COTENANT_MARKS - 1, AddressFamily::Inet);
    let mut found = Vec::new();
    let mut missing = Vec::new();
    for s in Scheduler::named() {
        match client.add_service(&Service::new(scratch).with_scheduler(s.clone())) {
            Ok(()) => {
                let _ = client.delete_service(&scratch);
                found.push(s);
            }
            Err(e) => missing.push(format!("{}: {e}", s.name())),
        }
    }
    let sip = ServiceKey::udp(
        "10.10.255.1"
            .parse()
            .unwrap_or(std::net::IpAddr::from([10, 10, 255, 1])),
        5060,
    );
    let pe = Service::new(sip)
        .with_persistence(60)
        .with_persistence_engine("sip");
    let pe_sip = match client.add_service(&pe) {
        Ok(()) => {
            let _ = client.delete_service(&sip);
            true
        }
        Err(e) => {
            missing.push(format!("persistence engine sip: {e}"));
            false
        }
    };
    (found, pe_sip, missing)
}

/// Creates the co-tenant's services (outside our scope).
fn create_cotenant(client: &mut Client, t: &Table) -> Result<(), String> {
    let mut reqs = Vec::new();
    for s in t.iter() {
        reqs.push(Request::add_service(s.service.clone()));
        for d in &s.destinations {
            reqs.push(Request::AddDestination(s.service.key, d.destination));
        }
    }
    for (r, o) in reqs.iter().zip(client.apply(&reqs)) {
        if let Err(e) = o {
            return Err(format!("creating the co-tenant's {r}: {e}"));
        }
    }
    Ok(())
}

fn run(args: Args) -> Result<bool, String> {
    let started = Instant::now();
    let ipvsadm = PathBuf::from(
        std::env::var_os("IPVSNL_DEBIAN_IPVSADM").unwrap_or_else(|| "/usr/sbin/ipvsadm".into()),
    );
    if !ipvsadm.is_file() {
        return Err(format!(
            "Debian's ipvsadm not found at {} (set IPVSNL_DEBIAN_IPVSADM)",
            ipvsadm.display()
        ));
    }
    own_namespace()?;
    let mut normal = Client::new().map_err(|e| format!("opening the client: {e}"))?;
    let tiny_opts = ClientOptions::default().with_socket_buffer(args.tiny_buffer);
    let tiny = Client::with_options(tiny_opts)
        .map_err(|e| format!("opening the tiny-buffer client: {e}"))?;
    let (schedulers, pe_sip, missing) = probe(&mut normal);
    if schedulers.is_empty() {
        return Err(format!(
            "the kernel accepted no scheduler: {}",
            missing.join("; ")
        ));
    }
    let names: Vec<String> = schedulers.iter().map(|s| s.name().to_owned()).collect();
    let kernel = std::fs::read_to_string("/proc/sys/kernel/osrelease")
        .unwrap_or_default()
        .trim()
        .to_owned();
    eprintln!(
        "soak: kernel {kernel}, seed {}, {} s; schedulers: {}; sip engine: {pe_sip}",
        args.seed,
        args.seconds,
        names.join(" ")
    );
    for m in &missing {
        eprintln!("soak: not available: {m}");
    }
    let universe = Universe {
        schedulers,
        pe_sip,
        max_services: args.max_services,
        local_forwarding: args.local_forwarding,
    };
    let mut rng = rng::Rng::new(args.seed);
    let cotenant = tables::cotenant(&mut rng, &universe);
    create_cotenant(&mut normal, &cotenant)?;
    let exe = std::env::current_exe().map_err(|e| format!("finding this program: {e}"))?;
    let churner = churn::Churner::spawn(&exe, rng.fork(), &ipvsadm, &names)?;
    let mut soak = Soak {
        rng,
        universe,
        seed: args.seed,
        normal,
        tiny,
        syncer: Syncer::new(PlanOptions::new(Scope::predicate(is_ours))).with_apply_options(
            ApplyOptions::default().with_max_batch_requests(args.batch_requests),
        ),
        desired: Table::new(),
        churner: Some(churner),
        paused: false,
        figures: Figures::default(),
    };
    let deadline = Duration::from_secs(args.seconds);
    let mut next_progress = Duration::from_secs(30);
    while started.elapsed() < deadline {
        if catch_unwind(AssertUnwindSafe(|| soak.round())).is_err() {
            soak.figures.panics += 1;
            let line = format!(
                "seed {} round {}: a round panicked (see above)",
                args.seed, soak.figures.rounds
            );
            soak.figures.note(line);
            soak.syncer.forget();
            soak.resume();
        }
        let due = soak.figures.syncs() >= FIRST_MEMORY_SYNCS || started.elapsed() >= deadline / 4;
        if soak.figures.first_memory.is_none() && due {
            let m = soak.memory_checkpoint();
            soak.figures.first_memory = Some((soak.figures.syncs(), m));
        }
        if started.elapsed() >= next_progress {
            next_progress += Duration::from_secs(30);
            let f = &soak.figures;
            eprintln!(
                "soak: {:.0} s: {} rounds, {} syncs, {} requests, {} unknown, {} divergences, {} panics",
                started.elapsed().as_secs_f64(),
                f.rounds,
                f.syncs(),
                f.requests,
                f.unknown,
                f.divergences,
                f.panics
            );
        }
    }
    let m = soak.memory_checkpoint();
    soak.figures.last_memory = Some((soak.figures.syncs(), m));
    soak.pause();
    if let Some(c) = soak.churner.take() {
        match c.finish() {
            Ok(f) => soak.figures.churn = f,
            Err(e) => {
                soak.figures.churn_failures += 1;
                soak.figures.note(e);
            }
        }
    }
    let header = format!(
        "Soak on {kernel}, seed {}, `--seconds {}` (max {} services, tiny buffer {} bytes, at most {} requests a batch; schedulers: {}; sip engine: {})",
        args.seed,
        args.seconds,
        args.max_services,
        args.tiny_buffer,
        args.batch_requests,
        names.join(" "),
        if pe_sip { "yes" } else { "no" }
    );
    println!("SOAK-BEGIN");
    print!("{}", soak.figures.render(started.elapsed(), &header));
    println!("SOAK-END");
    Ok(soak.figures.passed())
}

fn main() {
    let argv: Vec<String> = std::env::args().skip(1).collect();
    if argv.first().map(String::as_str) == Some("churn") {
        std::process::exit(churn::run_child(&argv[1..]));
    }
    let args = match parse_args(&argv) {
        Ok(a) => a,
        Err(e) => {
            eprintln!("soak: {e}");
            std::process::exit(2);
        }
    };
    match run(args) {
        Ok(true) => {}
        Ok(false) => std::process::exit(1),
        Err(e) => {
            eprintln!("soak: {e}");
            std::process::exit(2);
        }
    }
}
