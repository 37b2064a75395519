//! The renderer: a listing and the totals in, exposition text out.
//!
//! A focused writer of the text format rather than prometheus-client's
//! encoder, for cost. Each label set is built once (per service, per
//! destination) into one buffer and reused by every family; counters are
//! written from the u64 digit by digit, never through `f64`.
//!
//! Measured A/B (`examples/render-cost.rs`: 10,000 services x 5
//! destinations, 800,010 series with the services' and the totals', release
//! build, `valgrind --tool=callgrind`, the listing-only run's 10.6 M
//! instructions subtracted):
//!
//! | renderer | instructions | per series |
//! | --- | --- | --- |
//! | this one, a steady table (label sets kept from the last scrape) | 157.2 M | 196 |
//! | this one, the first render (label sets built) | 197.9 M | 247 |
//! | prometheus-client 0.23 (a custom `Collector` of const metrics, label sets built once) | 2,707 M | 3,384 |
//!
//! Where this one's go (callgrind's profile, largest first): the label
//! set's `memcpy` into each line, the value's digits, the pushes'
//! capacity checks, building the label sets (once per destination, for
//! its 14 series), the name (a fixed 64-byte block).

use std::time::Duration;

use ipvsnl::{ServiceEntry, Stats};

use crate::families::{Scope, BACKEND, DEST, SCRAPE_DURATION, SERVICE, STATS, TOTALS, UP};
use crate::label_sets::{DestLabelKey, LabelSets, ServiceLabelKey};
use crate::text::{header, sample_u64, FamilyName, Kind};
use crate::Namespace;

/// Renders listings, keeping its label buffers from one scrape to the next.
///
/// ```
/// use ipvsnl::{Service, ServiceEntry, ServiceKey, Stats};
/// use ipvsnl_exporter::{Namespace, Renderer};
/// let table = [ServiceEntry::new(Service::new(ServiceKey::tcp("10.0.0.1".parse().unwrap(), 80)))
///     .with_stats(Stats::new().with_conns(u64::MAX))];
/// let mut out = Vec::new();
/// Renderer::new(&Namespace::default()).render(&mut out, &table, None);
/// let out = String::from_utf8(out).unwrap();
/// assert!(out.contains(
///     "ipvs_service_connections_total{local_address=\"10.0.0.1\",local_port=\"80\",\
///      local_mark=\"\",proto=\"TCP\",family=\"IPv4\",scheduler=\"wlc\"} 18446744073709551615\n"
/// ));
/// ```
#[derive(Debug, Clone)]
pub struct Renderer {
    namespace: Namespace,
    /// The services' label sets (kept while the services stay the same).
    services: LabelSets<ServiceLabelKey>,
    /// The destinations' label sets (kept while they stay the same).
    destinations: LabelSets<DestLabelKey>,
    /// One service's half of its destinations' label sets.
    service_half: Vec<u8>,
}

impl Renderer {
    /// A renderer of metrics named under `namespace`.
    pub fn new(namespace: &Namespace) -> Self {
        Renderer {
            namespace: namespace.clone(),
            services: LabelSets::new(),
            destinations: LabelSets::new(),
            service_half: Vec::new(),
        }
    }

    /// The namespace the metrics are named under.
    pub fn namespace(&self) -> &Namespace {
        &self.namespace
    }

    /// Appends the families of `table` (per service and per destination)
    /// and, when given, of the namespace's `totals` to `out`. Families
    /// without a series are left out. The label sets are kept for the next
    /// call and reused while the table's services and destinations (keys,
    /// schedulers, addresses, forwarding methods) stay the same.
    pub fn render(&mut self, out: &mut Vec<u8>, table: &[ServiceEntry], totals: Option<&Stats>) {
        if let Some(t) = totals {
            for family in &STATS {
                let name = self.family_name(&TOTALS, family.name);
                header(out, name.as_str(), family.kind, &family.help_in(&TOTALS));
                sample_u64(out, &name, b"", (family.read)(t));
            }
        }
        self.render_services(out, table);
        self.render_destinations(out, table);
    }

    fn render_services(&mut self, out: &mut Vec<u8>, table: &[ServiceEntry]) {
        if table.is_empty() {
            return;
        }
        self.services.update_services(table);
        for family in &STATS {
            let name = self.family_name(&SERVICE, family.name);
            header(out, name.as_str(), family.kind, &family.help_in(&SERVICE));
            out.reserve(table.len() * (name.as_str().len() + 160));
            for (entry, set) in table.iter().zip(self.services.iter()) {
                sample_u64(out, &name, set, (family.read)(&entry.stats));
            }
        }
    }

    fn render_destinations(&mut self, out: &mut Vec<u8>, table: &[ServiceEntry]) {
        self.destinations
            .update_destinations(table, &mut self.service_half);
        if self.destinations.len() == 0 {
            return;
        }
        for family in &DEST {
            let name = FamilyName::new(self.namespace.name(family.name));
            header(out, name.as_str(), Kind::Gauge, family.help);
            self.samples(out, &name, table, |d| (family.read)(d));
        }
        for family in &STATS {
            let name = self.family_name(&BACKEND, family.name);
            header(out, name.as_str(), family.kind, &family.help_in(&BACKEND));
            self.samples(out, &name, table, |d| (family.read)(&d.stats));
        }
    }

    /// One family's samples, one per destination of `table`, each with
    /// its label set.
    fn samples(
        &self,
        out: &mut Vec<u8>,
        name: &FamilyName,
        table: &[ServiceEntry],
        read: impl Fn(&ipvsnl::DestinationEntry) -> u64,
    ) {
        out.reserve(self.destinations.len() * (name.as_str().len() + 200));
        let dests = table.iter().flat_map(|e| &e.destinations);
        for (dest, set) in dests.zip(self.destinations.iter()) {
            sample_u64(out, name, set, read(dest));
        }
    }

    fn family_name(&self, scope: &Scope, name: &str) -> FamilyName {
        let mut full = self.namespace.name(scope.infix);
        full.push_str(name);
        FamilyName::new(full)
    }
}

/// Appends the exporter's own metrics: `<namespace>_up` (1 when the
/// listing worked, 0 when it failed) and `<namespace>_scrape_duration_seconds`.
///
/// ```
/// use std::time::Duration;
/// use ipvsnl_exporter::{render_exporter_metrics, Namespace};
/// let mut out = Vec::new();
/// render_exporter_metrics(&mut out, &Namespace::default(), false, Duration::from_millis(1500));
/// let out = String::from_utf8(out).unwrap();
/// assert!(out.contains("\nipvs_up 0\n"));
/// assert!(out.contains("\nipvs_scrape_duration_seconds 1.5\n"));
/// ```
pub fn render_exporter_metrics(out: &mut Vec<u8>, namespace: &Namespace, up: bool, took: Duration) {
    let name = FamilyName::new(namespace.name(UP));
    let help = "Whether the last listing of the IPVS table worked (1) or failed (0).";
    header(out, name.as_str(), Kind::Gauge, help);
    sample_u64(out, &name, b"", u64::from(up));
    let name = namespace.name(SCRAPE_DURATION);
    let help = "Seconds the scrape took: the listing, the totals and the rendering.";
    header(out, &name, Kind::Gauge, help);
    // Rust's shortest round-trip form of an f64 is valid exposition text.
    let line = format!("{name} {}\n", took.as_secs_f64());
    out.extend_from_slice(line.as_bytes());
}

/// Renders `table` and `totals` under `namespace` into a new string: the
/// one-shot form of [`Renderer::render`].
///
/// ```
/// use ipvsnl::Stats;
/// use ipvsnl_exporter::{render, Namespace};
/// let totals = Stats::new().with_conns(1 << 60);
/// let text = render(&Namespace::new("node_ipvs").unwrap(), &[], Some(&totals));
/// assert!(text.contains("\nnode_ipvs_connections_total 1152921504606846976\n"));
/// ```
pub fn render(namespace: &Namespace, table: &[ServiceEntry], totals: Option<&Stats>) -> String {
    let mut out = Vec::new();
    Renderer::new(namespace).render(&mut out, table, totals);
    // Only ASCII and the UTF-8 of label values went in.
    String::from_utf8(out).unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned())
}
