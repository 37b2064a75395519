//! The cost of the library's listings beside the plain listing, in one
//! namespace holding a table (run in the VM by `scripts/measure/listing-cost`, which
//! runs this program built from two revisions of the library in one boot,
//! under qemu's instruction counting).
//!
//! `listing-cost fill SERVICES DESTS [mixed]`: creates the bench's table
//! (services 10.0.0.1, 10.0.0.2, ... port 80, spread over the kernel's
//! hash buckets, each with its own masquerading real servers; with
//! `mixed`, one service in ten IPv6 and one in ten tunnelled:
//! `workload::mixed`) in the caller's namespace.
//!
//! `listing-cost list LABEL ROUNDS [mixed]`: in each round, the plain
//! listing (a raw socket with a 4 KiB buffer: one service dump, then one
//! destination dump per service, parsed into plain structs), then
//! `Client::table`, then `Client::services`, then `Client::table_settings`
//! of a client with the socket-option listing on, then the plain
//! socket-option listing (`IP_VS_SO_GET_INFO`, `GET_SERVICES`, one
//! `GET_DESTS` per service: `plain::sockopt`, the older interface's floor,
//! which sees only the IPv4 services), then a no-op sync of the table by a
//! new `Syncer` (its settings listing, and a plan that finds nothing to
//! do), each on a socket opened (and its family resolved) before the
//! clock. Prints one line per run, `LISTING|LABEL|WHAT|SECONDS`,
//! and checks each listing found the whole table.

use std::time::Instant;

use ipvsnl::sync::Table;
use ipvsnl::sync::{PlanOptions, Syncer};
use ipvsnl::{Client, ClientOptions};
use ipvsnl_bench::plain::listing::{self, PlainDumper};
use ipvsnl_bench::plain::sockopt;
use ipvsnl_test_support::workload::{desired, mixed, Layout};

fn usage() -> ! {
    eprintln!(
        "usage: listing-cost fill SERVICES DESTS [mixed] | listing-cost list LABEL ROUNDS [mixed]"
    );
    std::process::exit(2)
}

fn number(arg: Option<String>) -> u32 {
    arg.and_then(|a| a.parse().ok()).unwrap_or_else(|| usage())
}

/// The table of this size, mixed or not (the last argument).
fn table_of(services: u32, dests: u32, how: Option<String>) -> Table {
    match how.as_deref() {
        None => desired(Layout::Spread, services, dests),
        Some("mixed") => mixed(services, dests),
        Some(_) => usage(),
    }
}

fn seconds<T>(f: impl FnOnce() -> T) -> (T, f64) {
    let t = Instant::now();
    let out = f();
    (out, t.elapsed().as_secs_f64())
}

fn main() {
    let mut args = std::env::args().skip(1);
    match args.next().as_deref() {
        Some("fill") => {
            let (services, dests) = (number(args.next()), number(args.next()));
            let want = table_of(services, dests, args.next());
            let mut c = Client::new().expect("client");
            let report = Syncer::new(PlanOptions::default())
                .sync(&mut c, &want)
                .expect("sync");
            assert!(report.is_complete(), "{report}");
            println!("LISTING-FILLED|{services}|{dests}");
        }
        Some("list") => {
            let label = args.next().unwrap_or_else(|| usage());
            let rounds = number(args.next());
            let how = args.next();
            let family = Client::new()
                .and_then(|mut c| c.family_id())
                .expect("family");
            for _ in 0..rounds {
                let mut d = PlainDumper::new(family).expect("plain socket");
                let (plain, t) = seconds(|| listing::list(&mut d).expect("plain listing"));
                println!("LISTING|{label}|plain|{t:.4}");
                let services = plain.services.len();
                let dests = plain.dests.len();
                let mut c = Client::new().expect("client");
                c.family_id().expect("family");
                let (table, t) = seconds(|| c.table().expect("table"));
                println!("LISTING|{label}|table|{t:.4}");
                let listed: usize = table.iter().map(|e| e.destinations.len()).sum();
                assert_eq!((table.len(), listed), (services, dests), "table");
                let mut c = Client::new().expect("client");
                c.family_id().expect("family");
                let (only, t) = seconds(|| c.services().expect("services"));
                println!("LISTING|{label}|services|{t:.4}");
                assert_eq!(only.len(), services, "services");
                let opts = ClientOptions::default().with_socket_option_listing(true);
                let mut c = Client::with_options(opts).expect("client");
                c.family_id().expect("family");
                let (settings, t) = seconds(|| c.table_settings().expect("table_settings"));
                println!("LISTING|{label}|table-settings|{t:.4}");
                let listed: usize = settings.iter().map(|e| e.destinations.len()).sum();
                assert_eq!(
                    (settings.len(), listed),
                    (services, dests),
                    "table_settings"
                );
                let fd = sockopt::open().expect("socket-option socket");
                let (old, t) = seconds(|| sockopt::list(&fd).expect("socket-option listing"));
                println!("LISTING|{label}|sockopt|{t:.4}");
                if how.is_none() {
                    assert_eq!((old.services.len(), old.dests.len()), (services, dests));
                }
                let want = table_of(services as u32, (dests / services) as u32, how.clone());
                let mut c = Client::new().expect("client");
                c.family_id().expect("family");
                let mut syncer = Syncer::new(PlanOptions::default());
                let (report, t) = seconds(|| syncer.sync(&mut c, &want).expect("sync"));
                println!("LISTING|{label}|sync-noop|{t:.4}");
                assert!(report.is_complete(), "{report}");
            }
        }
        _ => usage(),
    }
}
