//! The renderer: a listing and the totals in, exposition text out.
//!
//! A focused writer of the text format rather than prometheus-client's
//! encoder, for cost. Each label set is built once (per service, per
//! destination) into one buffer and reused by every family; counters are
//! written from the u64 with `itoa`, never through `f64`.
//!
//! Measured A/B (`examples/render-cost.rs`, 10,000 services x 5
//! destinations = 700,000 series, release build, instructions counted by
//! `valgrind --tool=callgrind`; the figures are in the crate README):
//! this renderer about 170 instructions per series, prometheus-client
//! 0.23's encoder (a custom `Collector` of const metrics) about 1,300.

use std::time::Duration;

use ipvsnl::{ServiceEntry, Stats};

use crate::families::{Scope, BACKEND, DEST, SCRAPE_DURATION, SERVICE, STATS, TOTALS, UP};
use crate::labels;
use crate::text::{header, sample_u64, Kind};
use crate::Namespace;

/// Renders listings, keeping its label buffers from one scrape to the next.
///
/// ```
/// use ipvsnl::{Service, ServiceEntry, ServiceKey, Stats};
/// use ipvsnl_exporter::{Namespace, Renderer};
/// let table = [ServiceEntry::new(Service::new(ServiceKey::tcp("10.0.0.1".parse().unwrap(), 80)))
///     .with_stats(Stats::new().with_conns(u64::MAX))];
/// let mut out = String::new();
/// Renderer::new(&Namespace::default()).render(&mut out, &table, None);
/// assert!(out.contains(
///     "ipvs_service_connections_total{local_address=\"10.0.0.1\",local_port=\"80\",\
///      local_mark=\"\",proto=\"TCP\",family=\"IPv4\",scheduler=\"wlc\"} 18446744073709551615\n"
/// ));
/// ```
#[derive(Debug, Clone)]
pub struct Renderer {
    namespace: Namespace,
    /// Every label set of one kind, back to back.
    labels: String,
    /// Where each label set in `labels` ends.
    ends: Vec<usize>,
    /// Room to format one label value before escaping it.
    scratch: String,
}

impl Renderer {
    /// A renderer of metrics named under `namespace`.
    pub fn new(namespace: &Namespace) -> Self {
        Renderer {
            namespace: namespace.clone(),
            labels: String::new(),
            ends: Vec::new(),
            scratch: String::new(),
        }
    }

    /// The namespace the metrics are named under.
    pub fn namespace(&self) -> &Namespace {
        &self.namespace
    }

    /// Appends the families of `table` (per service and per destination)
    /// and, when given, of the namespace's `totals` to `out`. Families
    /// without a series are left out.
    pub fn render(&mut self, out: &mut String, table: &[ServiceEntry], totals: Option<&Stats>) {
        if let Some(t) = totals {
            for family in &STATS {
                let name = self.family_name(&TOTALS, family.name);
                header(out, &name, family.kind, &help(family.help, &TOTALS));
                sample_u64(out, &name, "", (family.read)(t));
            }
        }
        self.render_services(out, table);
        self.render_destinations(out, table);
    }

    fn render_services(&mut self, out: &mut String, table: &[ServiceEntry]) {
        if table.is_empty() {
            return;
        }
        self.labels.clear();
        self.ends.clear();
        for entry in table {
            labels::push_service(&mut self.labels, &mut self.scratch, entry);
            self.ends.push(self.labels.len());
        }
        for family in &STATS {
            let name = self.family_name(&SERVICE, family.name);
            header(out, &name, family.kind, &help(family.help, &SERVICE));
            out.reserve(self.labels.len() + table.len() * (name.len() + 22));
            let mut start = 0;
            for (entry, &end) in table.iter().zip(&self.ends) {
                let set = &self.labels[start..end];
                sample_u64(out, &name, set, (family.read)(&entry.stats));
                start = end;
            }
        }
    }

    fn render_destinations(&mut self, out: &mut String, table: &[ServiceEntry]) {
        self.labels.clear();
        self.ends.clear();
        for entry in table {
            if entry.destinations.is_empty() {
                continue;
            }
            // The service's half once, copied in front of each destination's.
            self.scratch.clear();
            labels::push_service_key(&mut self.scratch, &entry.service.key);
            for dest in &entry.destinations {
                self.labels.push_str(&self.scratch);
                labels::push_destination(&mut self.labels, dest);
                self.ends.push(self.labels.len());
            }
        }
        if self.ends.is_empty() {
            return;
        }
        for family in &DEST {
            let name = self.namespace.name(family.name);
            header(out, &name, Kind::Gauge, family.help);
            self.samples(out, &name, table, |d| (family.read)(d));
        }
        for family in &STATS {
            let name = self.family_name(&BACKEND, family.name);
            header(out, &name, family.kind, &help(family.help, &BACKEND));
            self.samples(out, &name, table, |d| (family.read)(&d.stats));
        }
    }

    /// One family's samples, one per destination of `table`, each with
    /// its label set from `labels`.
    fn samples(
        &self,
        out: &mut String,
        name: &str,
        table: &[ServiceEntry],
        read: impl Fn(&ipvsnl::DestinationEntry) -> u64,
    ) {
        out.reserve(self.labels.len() + self.ends.len() * (name.len() + 22));
        let mut start = 0;
        let mut ends = self.ends.iter();
        for dest in table.iter().flat_map(|e| &e.destinations) {
            let Some(&end) = ends.next() else { return };
            sample_u64(out, name, &self.labels[start..end], read(dest));
            start = end;
        }
    }

    fn family_name(&self, scope: &Scope, name: &str) -> String {
        let mut full = self.namespace.name(scope.infix);
        full.push_str(name);
        full
    }
}

fn help(start: &str, scope: &Scope) -> String {
    let mut s = String::with_capacity(start.len() + scope.help.len());
    s.push_str(start);
    s.push_str(scope.help);
    s
}

/// Appends the exporter's own metrics: `<namespace>_up` (1 when the
/// listing worked, 0 when it failed) and `<namespace>_scrape_duration_seconds`.
///
/// ```
/// use std::time::Duration;
/// use ipvsnl_exporter::{render_exporter_metrics, Namespace};
/// let mut out = String::new();
/// render_exporter_metrics(&mut out, &Namespace::default(), false, Duration::from_millis(1500));
/// assert!(out.contains("\nipvs_up 0\n"));
/// assert!(out.contains("\nipvs_scrape_duration_seconds 1.5\n"));
/// ```
pub fn render_exporter_metrics(out: &mut String, namespace: &Namespace, up: bool, took: Duration) {
    let name = namespace.name(UP);
    let help = "Whether the last listing of the IPVS table worked (1) or failed (0).";
    header(out, &name, Kind::Gauge, help);
    sample_u64(out, &name, "", u64::from(up));
    let name = namespace.name(SCRAPE_DURATION);
    let help = "Seconds the scrape took: the listing, the totals and the rendering.";
    header(out, &name, Kind::Gauge, help);
    out.push_str(&name);
    out.push(' ');
    // Rust's shortest round-trip form of an f64 is valid exposition text.
    out.push_str(&took.as_secs_f64().to_string());
    out.push('\n');
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
    let mut out = String::new();
    Renderer::new(namespace).render(&mut out, table, totals);
    out
}
