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
//! | this one, a steady table (label sets kept from the last scrape) | 166.4 M | 208 |
//! | this one, the first render (label sets built) | 207.4 M | 259 |
//! | the same, before it rendered in parts (one buffer, no row limit) | 157.2 M / 197.9 M | 196 / 247 |
//! | prometheus-client 0.23 (a custom `Collector` of const metrics, label sets built once) | 2,707 M | 3,384 |
//!
//! Where this one's go (callgrind's profile, largest first): the label
//! set's `memcpy` into each line, the value's digits, the pushes'
//! capacity checks, building the label sets (once per destination, for
//! its 14 series), the name (a fixed 64-byte block).

use std::time::Duration;

use ipvsnl::{DestinationEntry, ServiceEntry, Stats};

use crate::families::{
    DestFamily, Scope, StatFamily, BACKEND, DEST, SCRAPE_DURATION, SERVICE, STATS, TOTALS, UP,
};
use crate::label_sets::{DestLabelKey, LabelSets, ServiceLabelKey};
use crate::text::{push_header, sample_u64, FamilyName, MetricKind};
use crate::MetricPrefix;

/// Renders listings, keeping its label buffers from one scrape to the next.
///
/// ```
/// use ipvsnl::{Service, ServiceEntry, ServiceKey, Stats};
/// use ipvsnl_exporter::{MetricPrefix, Renderer};
/// let table = [ServiceEntry::new(Service::new(ServiceKey::tcp("10.0.0.1".parse().unwrap(), 80)))
///     .with_stats(Stats::new().with_conns(u64::MAX))];
/// let mut out = Vec::new();
/// Renderer::new(&MetricPrefix::default()).render(&mut out, &table, None);
/// let out = String::from_utf8(out).unwrap();
/// assert!(out.contains(
///     "ipvs_service_connections_total{local_address=\"10.0.0.1\",local_port=\"80\",\
///      local_mark=\"\",proto=\"TCP\",family=\"IPv4\",scheduler=\"wlc\"} 18446744073709551615\n"
/// ));
/// ```
#[derive(Debug, Clone)]
pub struct Renderer {
    metric_prefix: MetricPrefix,
    /// The services' label sets (kept while the services stay the same).
    services: LabelSets<ServiceLabelKey>,
    /// The destinations' label sets (kept while they stay the same).
    destinations: LabelSets<DestLabelKey>,
    /// One service's half of its destinations' label sets.
    service_half: Vec<u8>,
    /// Each destination of the prepared table: its service's index and
    /// its own.
    flat: Vec<(u32, u32)>,
}

impl Renderer {
    /// A renderer of metrics named under `metric_prefix`.
    pub fn new(metric_prefix: &MetricPrefix) -> Self {
        Renderer {
            metric_prefix: metric_prefix.clone(),
            services: LabelSets::new(),
            destinations: LabelSets::new(),
            service_half: Vec::new(),
            flat: Vec::new(),
        }
    }

    /// The prefix the metrics are named under.
    pub fn metric_prefix(&self) -> &MetricPrefix {
        &self.metric_prefix
    }

    /// Appends the families of `table` (per service and per destination)
    /// and, when given, of the namespace's `totals` to `out`. Families
    /// without a series are left out.
    pub fn render(&mut self, out: &mut Vec<u8>, table: &[ServiceEntry], totals: Option<&Stats>) {
        self.prepare(table);
        let mut at = Position::default();
        self.render_part(out, table, totals, &mut at, usize::MAX);
    }

    /// Readies the label sets of `table` for [`Renderer::render_part`]
    /// (once per scrape, before its first part).
    pub fn prepare(&mut self, table: &[ServiceEntry]) {
        self.services.update_services(table);
        self.destinations
            .update_destinations(table, &mut self.service_half);
        self.flat.clear();
        for (s, entry) in table.iter().enumerate() {
            for d in 0..entry.destinations.len() {
                self.flat.push((s as u32, d as u32));
            }
        }
    }

    /// Appends the text from `at` on, until `out` holds `limit` bytes or
    /// more (a line is never cut) or everything is written; moves `at` on
    /// and returns whether everything is. `table` and `totals` must be the
    /// ones of [`Renderer::prepare`], unchanged: the server streams a big
    /// scrape in parts of a fixed size this way, so it never holds the
    /// whole text.
    ///
    /// ```
    /// use ipvsnl::{Service, ServiceEntry, ServiceKey, Stats};
    /// use ipvsnl_exporter::{MetricPrefix, Position, Renderer};
    /// let table: Vec<ServiceEntry> = (1..=100)
    ///     .map(|p| ServiceEntry::new(Service::new(ServiceKey::tcp("10.0.0.1".parse().unwrap(), p))))
    ///     .collect();
    /// let mut r = Renderer::new(&MetricPrefix::default());
    /// let mut whole = Vec::new();
    /// r.render(&mut whole, &table, None);
    /// r.prepare(&table);
    /// let (mut at, mut parts, mut joined) = (Position::default(), 0, Vec::new());
    /// loop {
    ///     let mut part = Vec::new();
    ///     let done = r.render_part(&mut part, &table, None, &mut at, 1024);
    ///     joined.extend_from_slice(&part);
    ///     parts += 1;
    ///     if done { break; }
    /// }
    /// assert!(joined == whole, "{} bytes in parts, {} whole", joined.len(), whole.len());
    /// assert!(parts > 10);
    /// ```
    pub fn render_part(
        &self,
        out: &mut Vec<u8>,
        table: &[ServiceEntry],
        totals: Option<&Stats>,
        at: &mut Position,
        limit: usize,
    ) -> bool {
        let families = self.families(table, totals);
        while at.family < families.len() {
            let family = families[at.family];
            let rows = match family {
                Family::Totals(_) => 1,
                Family::Service(_) => table.len(),
                Family::Gauge(_) | Family::Backend(_) => self.flat.len(),
            };
            let name = self.name_of(family);
            if !at.started {
                at.started = true;
                let (kind, help) = match family {
                    Family::Totals(f) => (f.kind, f.help_in(&TOTALS)),
                    Family::Service(f) => (f.kind, f.help_in(&SERVICE)),
                    Family::Gauge(f) => (MetricKind::Gauge, f.help.to_string()),
                    Family::Backend(f) => (f.kind, f.help_in(&BACKEND)),
                };
                push_header(out, name.as_str(), kind, &help);
            }
            // One loop per kind of family, from the row it stands at, over
            // the entries and their label sets in order.
            let done = match family {
                Family::Totals(f) => {
                    if let Some(t) = totals {
                        sample_u64(out, &name, b"", (f.read)(t));
                    }
                    at.row = rows;
                    true
                }
                Family::Service(f) => {
                    let values = table.get(at.row..).unwrap_or_default().iter();
                    let values = values.map(|e| (f.read)(&e.stats));
                    rows_from(
                        out,
                        at,
                        limit,
                        &name,
                        values.zip(self.services.iter_from(at.row)),
                    )
                }
                Family::Gauge(f) => {
                    let values = self.dests_from(table, at.row).map(|d| (f.read)(d));
                    let sets = self.destinations.iter_from(at.row);
                    rows_from(out, at, limit, &name, values.zip(sets))
                }
                Family::Backend(f) => {
                    let values = self.dests_from(table, at.row).map(|d| (f.read)(&d.stats));
                    let sets = self.destinations.iter_from(at.row);
                    rows_from(out, at, limit, &name, values.zip(sets))
                }
            };
            if !done {
                return false;
            }
            at.family += 1;
            at.row = 0;
            at.started = false;
        }
        true
    }

    /// The destinations of `table` in the order of its services, from
    /// the `i`-th on.
    fn dests_from<'t>(
        &self,
        table: &'t [ServiceEntry],
        i: usize,
    ) -> impl Iterator<Item = &'t DestinationEntry> {
        let (s, d) = self.flat.get(i).copied().unwrap_or((table.len() as u32, 0));
        let (s, d) = (s as usize, d as usize);
        let first = table
            .get(s)
            .and_then(|e| e.destinations.get(d..))
            .unwrap_or_default();
        let rest = table.get(s + 1..).unwrap_or_default();
        first
            .iter()
            .chain(rest.iter().flat_map(|e| e.destinations.iter()))
    }

    /// The families served for `table` and `totals`, in order (those
    /// without a series left out).
    fn families(&self, table: &[ServiceEntry], totals: Option<&Stats>) -> Vec<Family> {
        let mut v = Vec::new();
        if totals.is_some() {
            v.extend(STATS.iter().map(Family::Totals));
        }
        if !table.is_empty() {
            v.extend(STATS.iter().map(Family::Service));
        }
        if !self.flat.is_empty() {
            v.extend(DEST.iter().map(Family::Gauge));
            v.extend(STATS.iter().map(Family::Backend));
        }
        v
    }

    fn name_of(&self, family: Family) -> FamilyName {
        match family {
            Family::Totals(f) => self.family_name(&TOTALS, f.name),
            Family::Service(f) => self.family_name(&SERVICE, f.name),
            Family::Gauge(f) => FamilyName::new(self.metric_prefix.name(f.name)),
            Family::Backend(f) => self.family_name(&BACKEND, f.name),
        }
    }

    fn family_name(&self, scope: &Scope, name: &str) -> FamilyName {
        let mut full = self.metric_prefix.name(scope.infix);
        full.push_str(name);
        FamilyName::new(full)
    }
}

/// Writes one sample a row from `rows` (value, label set) until `out`
/// holds `limit` bytes, counting them in `at`; whether all were written.
fn rows_from<'a>(
    out: &mut Vec<u8>,
    at: &mut Position,
    limit: usize,
    name: &FamilyName,
    rows: impl Iterator<Item = (u64, &'a [u8])>,
) -> bool {
    let mut written = 0;
    let mut all = true;
    for (value, set) in rows {
        if out.len() >= limit {
            all = false;
            break;
        }
        sample_u64(out, name, set, value);
        written += 1;
    }
    at.row += written;
    all
}

/// Where a render in parts ([`Renderer::render_part`]) stands: the family
/// being written and its next row.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct Position {
    family: usize,
    row: usize,
    /// Whether the family's header is written.
    started: bool,
}

/// One family of a render, and what its rows read.
#[derive(Clone, Copy)]
enum Family {
    Totals(&'static StatFamily),
    Service(&'static StatFamily),
    Gauge(&'static DestFamily),
    Backend(&'static StatFamily),
}

/// Appends the exporter's own metrics: `<metric_prefix>_up` (1 when the
/// listing worked, 0 when it failed) and `<metric_prefix>_scrape_duration_seconds`.
///
/// ```
/// use std::time::Duration;
/// use ipvsnl_exporter::{render_exporter_metrics, MetricPrefix};
/// let mut out = Vec::new();
/// render_exporter_metrics(&mut out, &MetricPrefix::default(), false, Duration::from_millis(1500));
/// let out = String::from_utf8(out).unwrap();
/// assert!(out.contains("\nipvs_up 0\n"));
/// assert!(out.contains("\nipvs_scrape_duration_seconds 1.5\n"));
/// ```
pub fn render_exporter_metrics(
    out: &mut Vec<u8>,
    metric_prefix: &MetricPrefix,
    up: bool,
    took: Duration,
) {
    let name = FamilyName::new(metric_prefix.name(UP));
    let help = "Whether the last listing of the IPVS table worked (1) or failed (0).";
    push_header(out, name.as_str(), MetricKind::Gauge, help);
    sample_u64(out, &name, b"", u64::from(up));
    let name = metric_prefix.name(SCRAPE_DURATION);
    let help = "Seconds the scrape took: the listing, the totals and the rendering.";
    push_header(out, &name, MetricKind::Gauge, help);
    // Rust's shortest round-trip form of an f64 is valid exposition text.
    let line = format!("{name} {}\n", took.as_secs_f64());
    out.extend_from_slice(line.as_bytes());
}

/// Renders `table` and `totals` under `metric_prefix` into a new string: the
/// one-shot form of [`Renderer::render`].
///
/// ```
/// use ipvsnl::Stats;
/// use ipvsnl_exporter::{render, MetricPrefix};
/// let totals = Stats::new().with_conns(1 << 60);
/// let text = render(&MetricPrefix::new("node_ipvs").unwrap(), &[], Some(&totals));
/// assert!(text.contains("\nnode_ipvs_connections_total 1152921504606846976\n"));
/// ```
pub fn render(
    metric_prefix: &MetricPrefix,
    table: &[ServiceEntry],
    totals: Option<&Stats>,
) -> String {
    let mut out = Vec::new();
    Renderer::new(metric_prefix).render(&mut out, table, totals);
    // Only ASCII and the UTF-8 of label values went in.
    String::from_utf8(out).unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned())
}
