//! The render's cost: a synthetic 10,000 services x 5 destinations listing
//! rendered once, by this crate's renderer or by prometheus-client's text
//! encoder, for counting instructions under valgrind:
//!
//! ```sh
//! cargo build --release -p ipvsnl-exporter --example render-cost
//! for mode in listing ours ours-twice client; do
//!   valgrind --tool=callgrind --callgrind-out-file=/dev/null \
//!     target/release/examples/render-cost $mode 2>&1 | grep 'Collected'
//! done
//! ```
//!
//! `listing` builds the listing only (the baseline to subtract); `ours`
//! and `client` build it and render it once; `ours-twice` renders it twice
//! with one renderer (the second render, of a steady table, reuses the
//! label sets: its cost is `ours-twice` less `ours`). Each prints the series count
//! and the output's size, so the two renders can be compared per series.

use std::fmt::Write as _;
use std::net::{IpAddr, Ipv4Addr};

use ipvsnl::{Destination, DestinationEntry, Service, ServiceEntry, ServiceKey, Stats};
use ipvsnl_exporter::{MetricPrefix, Renderer};
use prometheus_client::collector::Collector;
use prometheus_client::encoding::{DescriptorEncoder, EncodeMetric};
use prometheus_client::metrics::counter::ConstCounter;
use prometheus_client::metrics::gauge::ConstGauge;
use prometheus_client::metrics::MetricType;
use prometheus_client::registry::Registry;

const SERVICES: u32 = 10_000;
const DESTINATIONS: u32 = 5;

fn stats(seed: u64) -> Stats {
    Stats::new()
        .with_conns(seed * 7 + (1 << 40))
        .with_packets(seed * 1_000_003, seed * 999_983)
        .with_bytes(seed * 1_500_000_017 + (1 << 54), seed * 900_000_011)
        .with_cps(seed % 1000)
        .with_packet_rates(seed % 10_000, seed % 9_000)
        .with_byte_rates(seed % 15_000_000, seed % 9_000_000)
}

fn listing() -> Vec<ServiceEntry> {
    (0..SERVICES)
        .map(|i| {
            let vip = IpAddr::V4(Ipv4Addr::from(0x0a00_0000 + i));
            let key = ServiceKey::tcp(vip, 80 + (i % 3) as u16);
            let dests = (0..DESTINATIONS).map(|j| {
                let rip = IpAddr::V4(Ipv4Addr::from(0x0a80_0000 + i * DESTINATIONS + j));
                let n = u64::from(i * DESTINATIONS + j);
                DestinationEntry::new(Destination::new(rip, 8080).with_weight(j + 1))
                    .with_active_conns(j * 11)
                    .with_inactive_conns(j * 3)
                    .with_persistent_conns(j)
                    .with_stats(stats(n))
            });
            ServiceEntry::new(Service::new(key))
                .with_stats(stats(u64::from(i)))
                .with_destinations(dests)
        })
        .collect()
}

/// The same families through prometheus-client: a custom collector of
/// const metrics, each label set built once and reused by every family.
#[derive(Debug)]
struct ClientCollector {
    services: Vec<(Vec<(&'static str, String)>, Stats)>,
    dests: Vec<(Vec<(&'static str, String)>, DestinationEntry)>,
    totals: Stats,
}

type Read = fn(&Stats) -> u64;
type ReadDest = fn(&DestinationEntry) -> u64;
const FAMILIES: [(&str, MetricType, Read); 10] = [
    ("connections", MetricType::Counter, |s| s.conns),
    ("incoming_packets", MetricType::Counter, |s| s.in_packets),
    ("outgoing_packets", MetricType::Counter, |s| s.out_packets),
    ("incoming_bytes", MetricType::Counter, |s| s.in_bytes),
    ("outgoing_bytes", MetricType::Counter, |s| s.out_bytes),
    ("connections_per_second", MetricType::Gauge, |s| s.cps),
    ("incoming_packets_per_second", MetricType::Gauge, |s| {
        s.in_pps
    }),
    ("outgoing_packets_per_second", MetricType::Gauge, |s| {
        s.out_pps
    }),
    ("incoming_bytes_per_second", MetricType::Gauge, |s| s.in_bps),
    ("outgoing_bytes_per_second", MetricType::Gauge, |s| {
        s.out_bps
    }),
];

fn service_labels(key: &ServiceKey, sched: &str) -> Vec<(&'static str, String)> {
    let ServiceKey::Inet { addr, port, .. } = key else {
        return vec![];
    };
    vec![
        ("local_address", addr.to_string()),
        ("local_port", port.to_string()),
        ("local_mark", String::new()),
        ("proto", "TCP".to_owned()),
        ("family", "IPv4".to_owned()),
        ("scheduler", sched.to_owned()),
    ]
}

impl ClientCollector {
    fn new(table: &[ServiceEntry]) -> Self {
        let mut services = Vec::new();
        let mut dests = Vec::new();
        for e in table {
            let sched = e.service.scheduler.to_string();
            services.push((service_labels(&e.service.key, &sched), e.stats));
            for d in &e.destinations {
                let mut l = service_labels(&e.service.key, &sched);
                l.pop();
                l.push(("remote_address", d.destination.addr.to_string()));
                l.push(("remote_port", d.destination.port.to_string()));
                l.push(("forwarding_method", d.destination.forward.to_string()));
                dests.push((l, d.clone()));
            }
        }
        ClientCollector {
            services,
            dests,
            totals: stats(1),
        }
    }
}

fn family<T>(
    encoder: &mut DescriptorEncoder,
    name: &str,
    kind: MetricType,
    rows: &[(Vec<(&'static str, String)>, T)],
    read: impl Fn(&T) -> u64,
) -> Result<(), std::fmt::Error> {
    let mut metric = encoder.encode_descriptor(name, "help", None, kind)?;
    for (labels, row) in rows {
        let v = read(row);
        let sample = metric.encode_family(labels)?;
        match kind {
            MetricType::Counter => ConstCounter::new(v).encode(sample)?,
            _ => ConstGauge::new(v).encode(sample)?,
        }
    }
    Ok(())
}

impl Collector for ClientCollector {
    fn encode(&self, mut encoder: DescriptorEncoder) -> Result<(), std::fmt::Error> {
        let totals = [(Vec::new(), self.totals)];
        for (name, kind, read) in FAMILIES {
            family(&mut encoder, name, kind, &totals, read)?;
        }
        for (name, kind, read) in FAMILIES {
            let full = format!("service_{name}");
            family(&mut encoder, &full, kind, &self.services, read)?;
        }
        let gauges: [(&str, ReadDest); 4] = [
            ("backend_connections_active", |d| d.active_conns.into()),
            ("backend_connections_inactive", |d| d.inactive_conns.into()),
            ("backend_connections_persistent", |d| {
                d.persistent_conns.into()
            }),
            ("backend_weight", |d| d.destination.weight.into()),
        ];
        for (name, read) in gauges {
            family(&mut encoder, name, MetricType::Gauge, &self.dests, read)?;
        }
        for (name, kind, read) in FAMILIES {
            let full = format!("backend_{name}");
            family(&mut encoder, &full, kind, &self.dests, |d| read(&d.stats))?;
        }
        Ok(())
    }
}

fn main() {
    let mode = std::env::args().nth(1).unwrap_or_else(|| "ours".to_owned());
    let table = listing();
    let totals = stats(1);
    let series =
        10 + 10 * table.len() + 14 * table.iter().map(|e| e.destinations.len()).sum::<usize>();
    let size = match mode.as_str() {
        "listing" => 0,
        "ours" => {
            let mut out = Vec::new();
            Renderer::new(&MetricPrefix::default()).render(&mut out, &table, Some(&totals));
            out.len()
        }
        // Twice with one renderer, as the exporter scrapes a steady
        // table: the second render reuses the label sets (its cost is this
        // run's less the `ours` run's).
        "ours-twice" => {
            let mut renderer = Renderer::new(&MetricPrefix::default());
            let mut out = Vec::new();
            renderer.render(&mut out, &table, Some(&totals));
            let mut again = Vec::with_capacity(out.len());
            renderer.render(&mut again, &table, Some(&totals));
            again.len()
        }
        "client" => {
            // The label sets are part of the encoder's work, as in ours.
            let mut registry = Registry::with_prefix("ipvs");
            registry.register_collector(Box::new(ClientCollector::new(&table)));
            let mut out = String::new();
            prometheus_client::encoding::text::encode(&mut out, &registry)
                .unwrap_or_else(|e| eprintln!("encode failed: {e}"));
            out.len()
        }
        other => {
            eprintln!("usage: render-cost [listing|ours|ours-twice|client] (not {other:?})");
            std::process::exit(2);
        }
    };
    let mut line = String::new();
    let _ = write!(line, "{mode}: {series} series, {size} bytes");
    println!("{line}");
}
