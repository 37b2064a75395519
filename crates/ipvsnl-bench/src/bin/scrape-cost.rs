//! The exporter's cost per scrape against the listing it is made of, in
//! the VM (`scripts/measure/scrape-bench`): a table of N services x D destinations is
//! created in a fresh namespace, then, each round,
//!
//! * `Client::table`: the blocking listing alone;
//! * `AsyncClient::table`: the same listing on tokio;
//! * one scrape: what `ipvs-exporter` does for a GET of /metrics (the
//!   async listing, the totals, the text rendered in 64 KiB parts, each
//!   dropped as the server drops it once sent), through the exporter's
//!   own [`Exporter::scrape_body`];
//! * the same scrape with the whole text joined in one buffer
//!   ([`Exporter::scrape`]): the A/B of the body's parts.
//!
//! It prints a Markdown table of the medians (wall time, and this
//! process's user and system time) and the exporter's own share: the
//! scrape's time on top of `Client::table`'s.
//!
//! `scrape-cost [--services N] [--dests D] [--rounds R]` (defaults 10000,
//! 5, 5).

use std::process::ExitCode;
use std::time::Instant;

use ipvsnl::{AsyncClient, Client, Request};
use ipvsnl_exporter::{ClientSource, Exporter, MetricPrefix};
use ipvsnl_test_support::netns;
use ipvsnl_test_support::workload::{desired, Layout};

#[derive(Debug, Clone, Copy, Default)]
struct Times {
    wall: f64,
    user: f64,
    sys: f64,
}

fn rusage() -> (f64, f64) {
    // SAFETY: rusage is plain data; getrusage fills it for this process.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: a valid `who` and a pointer to a live rusage.
    unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut ru) };
    let secs = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
    (secs(ru.ru_utime), secs(ru.ru_stime))
}

fn timed<T>(f: impl FnOnce() -> T) -> (T, Times) {
    let (u0, s0) = rusage();
    let t = Instant::now();
    let out = f();
    let wall = t.elapsed().as_secs_f64();
    let (u1, s1) = rusage();
    (
        out,
        Times {
            wall,
            user: u1 - u0,
            sys: s1 - s0,
        },
    )
}

fn median(mut v: Vec<Times>) -> Times {
    v.sort_by(|a, b| a.wall.total_cmp(&b.wall));
    v.get(v.len().saturating_sub(1) / 2)
        .copied()
        .unwrap_or_default()
}

fn arg(args: &[String], name: &str, default: u32) -> Result<u32, String> {
    match args.iter().position(|a| a == name) {
        None => Ok(default),
        Some(i) => args
            .get(i + 1)
            .and_then(|v| v.parse().ok())
            .filter(|n| *n > 0)
            .ok_or_else(|| format!("{name} takes a positive number")),
    }
}

fn run() -> Result<(), String> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let services = arg(&args, "--services", 10_000)?;
    let dests = arg(&args, "--dests", 5)?;
    let rounds = arg(&args, "--rounds", 5)?;
    netns::enter_fresh_netns().map_err(|e| format!("a fresh network namespace: {e}"))?;
    let mut client = Client::new().map_err(|e| e.to_string())?;
    let table = desired(Layout::Spread, services, dests);
    let requests: Vec<Request> = table
        .iter()
        .flat_map(|t| {
            std::iter::once(Request::add_service(t.service.clone())).chain(
                t.destinations
                    .iter()
                    .map(|d| Request::AddDestination(t.service.key, d.destination)),
            )
        })
        .collect();
    if let Some(e) = client.apply(&requests).into_iter().find_map(Result::err) {
        return Err(format!("creating the table: {e}"));
    }
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| e.to_string())?;
    let mut async_client = {
        let _in = rt.enter();
        AsyncClient::new().map_err(|e| e.to_string())?
    };
    let exporter = {
        let _in = rt.enter();
        Exporter::new(ClientSource::new(None), MetricPrefix::default(), "/metrics")
    };
    let (mut blocking, mut on_tokio, mut scrapes, mut wholes) =
        (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    let (mut bytes, mut parts) = (0, 0);
    for _ in 0..rounds {
        let (listed, t) = timed(|| client.table());
        let listed = listed.map_err(|e| e.to_string())?;
        if listed.len() != services as usize {
            return Err(format!("listed {} services of {services}", listed.len()));
        }
        drop(listed);
        blocking.push(t);
        let (listed, t) = timed(|| rt.block_on(async_client.table()));
        listed.map_err(|e| e.to_string())?;
        on_tokio.push(t);
        let ((sent, n, last), t) = timed(|| {
            let mut body = rt.block_on(exporter.scrape_body());
            let (mut sent, mut n, mut last) = (0, 0, bytes::Bytes::new());
            while let Some(part) = body.next_part() {
                sent += part.len();
                n += 1;
                last = part;
            }
            (sent, n, last)
        });
        if !last.windows(9).any(|w| w == b"ipvs_up 1") {
            return Err("the scrape failed (ipvs_up is not 1)".into());
        }
        (bytes, parts) = (sent, n);
        scrapes.push(t);
        let (text, t) = timed(|| rt.block_on(exporter.scrape()));
        if text.len() < bytes / 2 {
            return Err("the whole-text scrape is short".into());
        }
        drop(text);
        wholes.push(t);
    }
    let (b, a, s, w) = (
        median(blocking),
        median(on_tokio),
        median(scrapes),
        median(wholes),
    );
    let clock = std::env::var("IPVSNL_BENCH_CLOCK").unwrap_or_else(|_| "the host's clock".into());
    println!("SCRAPE-COST-BEGIN");
    println!("## One scrape of {services} services x {dests} destinations");
    println!();
    println!("Clock: {clock}. Medians of {rounds} rounds, one process, one boot.");
    println!();
    println!("| what | wall s | user s | sys s | vs Client::table |");
    println!("|---|---|---|---|---|");
    for (name, t) in [
        ("`Client::table` (blocking listing)", b),
        ("`AsyncClient::table` (the listing on tokio)", a),
        (
            "one scrape as served (`Exporter::scrape_body`: listing, totals, text in parts)",
            s,
        ),
        ("one scrape, the text in one buffer (`Exporter::scrape`)", w),
    ] {
        println!(
            "| {name} | {:.3} | {:.3} | {:.3} | {:.3}x |",
            t.wall,
            t.user,
            t.sys,
            t.wall / b.wall
        );
    }
    println!();
    println!(
        "The exporter's own work: {:+.1} % on top of the listing ({} bytes of text in {} parts, {} series).",
        (s.wall / b.wall - 1.0) * 100.0,
        bytes,
        parts,
        services as u64 * (10 + dests as u64 * 14)
    );
    println!("SCRAPE-COST-END");
    Ok(())
}

fn main() -> ExitCode {
    match run() {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("scrape-cost: {e}");
            ExitCode::FAILURE
        }
    }
}
