//! The text work of `-S -n` and `-R` alone, on the host, for counting its
//! instructions (no kernel): a listed table of the bench's shape (10,000
//! TCP services x 5 masquerading destinations, in an order like the
//! kernel's) printed as `-S -n` prints it, and that text read back as
//! `-R` reads it, up to the requests it hands the library.
//!
//! Both are ignored tests, and so is a third (`listed_save`): `-S -n` as
//! the process runs it, the library's listing included, against the
//! emulated kernel. Each measured part is one `#[inline(never)]`
//! function, counted alone with callgrind (`scripts/measure/ipvsadm-text-cost` runs
//! it and takes the emulator's own cost out of the third):
//!
//!     cargo test --release -p ipvsnl-ipvsadm --no-run
//!     valgrind --tool=callgrind --toggle-collect='*text_cost*measured_save*' \
//!         target/release/deps/ipvsadm-HASH text_cost::save --ignored --exact
//!
//! The figures (instructions of the measured function / 60,000 lines) are
//! in `scripts/measure/ipvsadm-text-cost`'s header.

use std::hint::black_box;
use std::net::{IpAddr, Ipv4Addr};

use ipvsnl::rules::Numeric;
use ipvsnl::{Destination, DestinationEntry, Scheduler, Service, ServiceEntry, ServiceKey};

use crate::grammar::ListFormat;
use crate::restore::parse_script;

/// Services and destinations per service of the workload.
fn size() -> (u32, u32) {
    let get = |name: &str, default: u32| {
        std::env::var(name)
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(default)
    };
    (
        get("IPVSNL_TEXT_COST_SERVICES", 10_000),
        get("IPVSNL_TEXT_COST_DESTS", 5),
    )
}

/// The bench's table (services 10.0.0.1.. port 80, rr; destinations
/// 172.16.0.1.. port 80, masquerading, weight 1) as a listing gives it:
/// services in a scrambled order (the kernel's hash order), each one's
/// destinations newest first.
pub(crate) fn listed_table(services: u32, dests: u32) -> Vec<ServiceEntry> {
    let v4 = |base: u32, n: u32| IpAddr::V4(Ipv4Addr::from(base + n));
    let mut order: Vec<u32> = (1..=services).collect();
    order.sort_by_key(|i| i.wrapping_mul(2_654_435_761) >> 8);
    order
        .into_iter()
        .map(|i| {
            let key = ServiceKey::tcp(v4(0x0a00_0000, i), 80);
            let first = (i - 1) * dests + 1;
            ServiceEntry::new(Service::new(key).with_scheduler(Scheduler::RoundRobin))
                .with_destinations(
                    (first..first + dests)
                        .rev()
                        .map(|j| DestinationEntry::new(Destination::new(v4(0xac10_0000, j), 80))),
                )
        })
        .collect()
}

/// `-S -n`'s text work on a listed table: sorting and printing.
#[inline(never)]
fn measured_save(table: &[ServiceEntry]) -> Vec<u8> {
    let mut out = Vec::new();
    crate::list::save_table(&mut out, table, &ListFormat::default(), &Numeric);
    out
}

/// `-R`'s text work up to the library: every line parsed, the requests
/// gathered in one list (`restore::parse_script`).
#[inline(never)]
fn measured_restore(text: &str) -> usize {
    let script = parse_script(text, "ipvsadm", &Numeric).expect("the saved text reads back");
    black_box(&script);
    script.changes.len()
}

#[test]
#[ignore = "a workload for callgrind (see the module)"]
fn save() {
    let (s, d) = size();
    let table = black_box(listed_table(s, d));
    let text = measured_save(&table);
    assert_eq!(
        text.iter().filter(|&&b| b == b'\n').count(),
        (s + s * d) as usize
    );
    black_box(text);
}

/// `-S -n` as the process runs it, the kernel emulated: the library's
/// settings listing row by row and the text written (to a sink,
/// `save::save`). The emulator's own work is counted too:
/// `scripts/measure/ipvsadm-text-cost` takes its functions' inclusive cost out.
#[inline(never)]
fn measured_listed_save(client: &mut ipvsnl::Client) -> usize {
    let mut sink = Counted(0);
    crate::save::save(client, false, &Numeric, &mut sink).expect("listed");
    sink.0
}

/// A writer that counts what it is given.
struct Counted(usize);

impl std::io::Write for Counted {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0 += buf.len();
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

#[test]
#[ignore = "a workload for callgrind (see the module)"]
fn listed_save() {
    let (s, d) = size();
    let kernel = ipvsnl::emulator::Kernel::new();
    let mut client = ipvsnl::Client::emulated(&kernel);
    let mut requests = Vec::new();
    for se in listed_table(s, d) {
        let key = se.service.key;
        requests.push(ipvsnl::Request::AddService(Box::new(se.service)));
        // Oldest first: the kernel lists them newest first, as the
        // listed table has them.
        for de in se.destinations.into_iter().rev() {
            requests.push(ipvsnl::Request::AddDestination(key, de.destination));
        }
    }
    assert!(client.apply(&requests).iter().all(Result::is_ok));
    let expected = measured_save(&listed_table(s, d)).len();
    assert_eq!(measured_listed_save(black_box(&mut client)), expected);
}

#[test]
#[ignore = "a workload for callgrind (see the module)"]
fn restore() {
    let (s, d) = size();
    let text = String::from_utf8(measured_save(&listed_table(s, d))).expect("UTF-8");
    let n = measured_restore(black_box(&text));
    assert_eq!(n, (s + s * d) as usize);
}
