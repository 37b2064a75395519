//! The agent's own metrics: each real server's check state, failures by
//! reason and transitions, check latency, syncs and their requests, config
//! reloads. The loop updates them; `/metrics` renders them in the
//! Prometheus text format after the exporter's IPVS series, with the
//! exporter's writer (its headers and escaped label values).

use std::collections::BTreeMap;
use std::io::Write as _;
use std::net::SocketAddr;
use std::time::Duration;

use ipvsnl::sync::DestinationId;
use ipvsnl_exporter::{push_header, push_label, MetricKind};

use crate::check::{Failure, Health};
use crate::config::{CheckKind, Config, RealServer, VirtualService};

/// Upper bounds (seconds) of the latency and duration histograms.
const BUCKETS: [f64; 12] = [
    0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0,
];

/// A histogram: counts per bucket, sum and count.
#[derive(Debug, Clone, Default)]
struct Histogram {
    counts: [u64; BUCKETS.len()],
    sum: f64,
    count: u64,
}

impl Histogram {
    fn observe(&mut self, d: Duration) {
        let s = d.as_secs_f64();
        for (i, le) in BUCKETS.iter().enumerate() {
            if s <= *le {
                self.counts[i] += 1;
            }
        }
        self.sum += s;
        self.count += 1;
    }

    /// Appends the series of `name`; `labels` is a label list without
    /// its braces (empty for none).
    fn render(&self, out: &mut Vec<u8>, name: &str, labels: &[u8]) {
        let sep: &[u8] = if labels.is_empty() { b"" } else { b"," };
        let bucket = |out: &mut Vec<u8>, le: &dyn std::fmt::Display, n: u64| {
            let _ = write!(out, "{name}_bucket{{");
            out.extend_from_slice(labels);
            out.extend_from_slice(sep);
            let _ = writeln!(out, "le=\"{le}\"}} {n}");
        };
        for (le, n) in BUCKETS.iter().zip(self.counts) {
            bucket(out, le, n);
        }
        bucket(out, &"+Inf", self.count);
        for (suffix, value) in [
            ("sum", &self.sum as &dyn std::fmt::Display),
            ("count", &self.count),
        ] {
            let _ = write!(out, "{name}_{suffix}");
            if !labels.is_empty() {
                out.push(b'{');
                out.extend_from_slice(labels);
                out.push(b'}');
            }
            let _ = writeln!(out, " {value}");
        }
    }
}

/// One real server's series.
#[derive(Debug, Clone)]
struct Server {
    name: String,
    checked: bool,
    up: bool,
    failures: BTreeMap<&'static str, u64>,
    to_up: u64,
    to_down: u64,
}

/// A server's series after a reload: `old`'s counters (or new ones), its
/// name, whether it is checked and its health as they are now.
fn carried(old: Option<Server>, vs: &VirtualService, rs: &RealServer, health: Health) -> Server {
    let mut s = old.unwrap_or_else(|| Server {
        name: String::new(),
        checked: false,
        up: true,
        failures: BTreeMap::new(),
        to_up: 0,
        to_down: 0,
    });
    s.name = vs.name.clone().unwrap_or_default();
    s.checked = rs.check.is_some();
    s.up = health == Health::Up;
    s
}

/// The agent's metrics.
#[derive(Debug, Clone, Default)]
pub(crate) struct Metrics {
    servers: BTreeMap<DestinationId, Server>,
    check_latency: BTreeMap<&'static str, Histogram>,
    /// Checks that could not run for the director's own shortage, by kind.
    inconclusive: BTreeMap<&'static str, u64>,
    /// Checks due while their server's previous run was still under way
    /// (not started: one run per server at a time).
    overlapping: u64,
    /// Checks put off while the checks in flight were at their cap.
    deferred: u64,
    sync_duration: Histogram,
    syncs: BTreeMap<&'static str, u64>,
    sync_requests: BTreeMap<&'static str, u64>,
    reloads: u64,
    reload_errors: u64,
    /// Reloads the guard refused (counted in `reload_errors` too).
    reloads_guarded: u64,
    last_reload_ok: bool,
    ready: bool,
}

/// The `reason` label value of a check failure: one stable value per
/// variant (the README's table), so a dashboard's queries keep working.
/// No wildcard arm: a new variant must be given its value here.
pub(crate) fn reason_label(f: &Failure) -> &'static str {
    match f {
        Failure::Timeout => "timeout",
        Failure::Refused => "refused",
        Failure::Status { .. } => "status",
        Failure::BodyMismatch => "body",
        Failure::Tls(_) => "tls",
        Failure::Rcode { .. } => "rcode",
        Failure::Exit(_) => "exit",
        Failure::Other(_) => "other",
    }
}

/// The `kind` label value of a check kind (no wildcard arm either).
pub(crate) fn kind_label(k: &CheckKind) -> &'static str {
    match k {
        CheckKind::Tcp { .. } => "tcp",
        CheckKind::Http(h) if h.tls.is_some() => "https",
        CheckKind::Http(_) => "http",
        CheckKind::Dns(_) => "dns",
        CheckKind::Command { .. } => "command",
    }
}

impl Metrics {
    /// Holds exactly the servers of `config` (kept ones keep their
    /// counters), each with its health from `health`.
    pub(crate) fn reconcile(&mut self, config: &Config, health: impl Fn(&DestinationId) -> Health) {
        let mut next = BTreeMap::new();
        for vs in &config.services {
            for rs in &vs.servers {
                let id = (vs.service.key, rs.destination.addr, rs.destination.port);
                let s = carried(self.servers.remove(&id), vs, rs, health(&id));
                next.insert(id, s);
            }
        }
        self.servers = next;
    }

    /// [`reconcile`](Self::reconcile) for one service only, held as `old`
    /// had it and to be as `new` has it (`None`: gone).
    pub(crate) fn reconcile_service(
        &mut self,
        old: Option<&VirtualService>,
        new: Option<&VirtualService>,
        health: impl Fn(&DestinationId) -> Health,
    ) {
        let mut taken = Vec::new();
        for vs in new.iter() {
            for rs in &vs.servers {
                let id = (vs.service.key, rs.destination.addr, rs.destination.port);
                let s = carried(self.servers.remove(&id), vs, rs, health(&id));
                taken.push((id, s));
            }
        }
        for vs in old.iter() {
            for rs in &vs.servers {
                let id = (vs.service.key, rs.destination.addr, rs.destination.port);
                self.servers.remove(&id);
            }
        }
        self.servers.extend(taken);
    }

    /// One check's result.
    pub(crate) fn check(
        &mut self,
        id: &DestinationId,
        kind: &'static str,
        took: Duration,
        failure: Option<&Failure>,
    ) {
        self.check_latency.entry(kind).or_default().observe(took);
        // The server looked up on a failure only (a lookup every check
        // cost 650 instructions of about 10,000: callgrind,
        // benches/AGENT.md).
        if let Some(f) = failure {
            if let Some(s) = self.servers.get_mut(id) {
                *s.failures.entry(reason_label(f)).or_default() += 1;
            }
        }
    }

    /// A check of kind `kind` the director could not run (its own
    /// shortage): no result for its server.
    pub(crate) fn inconclusive(&mut self, kind: &'static str) {
        *self.inconclusive.entry(kind).or_default() += 1;
    }

    /// Checks due while their server's previous run was under way, and
    /// checks put off at the cap of checks in flight, since the last call.
    pub(crate) fn not_started(&mut self, overlapping: u64, deferred: u64) {
        self.overlapping += overlapping;
        self.deferred += deferred;
    }

    /// A server changed state.
    pub(crate) fn transition(&mut self, id: &DestinationId, to: Health) {
        if let Some(s) = self.servers.get_mut(id) {
            s.up = to == Health::Up;
            match to {
                Health::Up => s.to_up += 1,
                _ => s.to_down += 1,
            }
        }
    }

    /// A sync ended: `result` is `complete`, `incomplete` or `error`.
    pub(crate) fn sync(
        &mut self,
        result: &'static str,
        took: Duration,
        done: usize,
        failed: usize,
    ) {
        *self.syncs.entry(result).or_default() += 1;
        self.sync_duration.observe(took);
        *self.sync_requests.entry("done").or_default() += done as u64;
        *self.sync_requests.entry("failed").or_default() += failed as u64;
    }

    /// A reload: `ok` or not.
    pub(crate) fn reload(&mut self, ok: bool) {
        if ok {
            self.reloads += 1;
        } else {
            self.reload_errors += 1;
        }
        self.last_reload_ok = ok;
    }

    /// A reload the guard refused (it would have removed most services).
    pub(crate) fn reload_guarded(&mut self) {
        self.reloads_guarded += 1;
    }

    /// Ready: every service has gone in at start and a sync since ended
    /// without error.
    pub(crate) fn set_ready(&mut self) {
        self.ready = true;
    }

    /// Whether it is ready.
    pub(crate) fn is_ready(&self) -> bool {
        self.ready
    }

    /// Reload errors so far.
    pub(crate) fn reload_errors(&self) -> u64 {
        self.reload_errors
    }

    /// The metrics as Prometheus text.
    pub(crate) fn render(&self) -> String {
        let mut out = Vec::new();
        self.render_into(&mut out);
        // Only ASCII and the UTF-8 of names went in.
        String::from_utf8(out)
            .unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned())
    }

    /// Appends the metrics as Prometheus text to `out`.
    fn render_into(&self, out: &mut Vec<u8>) {
        use MetricKind::{Counter, Gauge, Histogram};
        push_header(
            out,
            "ipvs_agent_server_up",
            Gauge,
            "1 when the real server is healthy (its configured weight), 0 when failing (drained).",
        );
        for (id, s) in &self.servers {
            series(out, "ipvs_agent_server_up", id, s);
            let _ = writeln!(out, ",checked=\"{}\"}} {}", s.checked, u8::from(s.up));
        }
        push_header(
            out,
            "ipvs_agent_check_failures_total",
            Counter,
            "Failed checks of the real server, by reason.",
        );
        for (id, s) in &self.servers {
            for (reason, n) in &s.failures {
                series(out, "ipvs_agent_check_failures_total", id, s);
                let _ = writeln!(out, ",reason=\"{reason}\"}} {n}");
            }
        }
        push_header(
            out,
            "ipvs_agent_checks_inconclusive_total",
            Counter,
            "Checks the director could not run for its own shortage (file descriptors, buffers, memory, local ports), by check kind: no result for the server.",
        );
        for (kind, n) in &self.inconclusive {
            let _ = writeln!(
                out,
                "ipvs_agent_checks_inconclusive_total{{kind=\"{kind}\"}} {n}"
            );
        }
        push_header(
            out,
            "ipvs_agent_checks_not_started_total",
            Counter,
            "Checks due but not started: overlapping (the server's previous run still under way), deferred (the checks in flight at their cap, started later).",
        );
        for (why, n) in [
            ("overlapping", self.overlapping),
            ("deferred", self.deferred),
        ] {
            let _ = writeln!(
                out,
                "ipvs_agent_checks_not_started_total{{why=\"{why}\"}} {n}"
            );
        }
        push_header(
            out,
            "ipvs_agent_transitions_total",
            Counter,
            "Changes of the real server's state, by the state entered.",
        );
        for (id, s) in &self.servers {
            for (to, n) in [("up", s.to_up), ("down", s.to_down)] {
                series(out, "ipvs_agent_transitions_total", id, s);
                let _ = writeln!(out, ",to=\"{to}\"}} {n}");
            }
        }
        let name = "ipvs_agent_check_duration_seconds";
        push_header(out, name, Histogram, "How long checks took, by check kind.");
        for (kind, h) in &self.check_latency {
            let mut labels = Vec::new();
            push_label(&mut labels, true, "kind", kind);
            h.render(out, name, &labels);
        }
        let name = "ipvs_agent_sync_duration_seconds";
        push_header(
            out,
            name,
            Histogram,
            "How long syncs of the kernel's table took.",
        );
        self.sync_duration.render(out, name, b"");
        push_header(
            out,
            "ipvs_agent_syncs_total",
            Counter,
            "Syncs of the kernel's table, by result (complete, incomplete, error).",
        );
        for result in ["complete", "incomplete", "error"] {
            let n = self.syncs.get(result).copied().unwrap_or(0);
            let _ = writeln!(out, "ipvs_agent_syncs_total{{result=\"{result}\"}} {n}");
        }
        push_header(
            out,
            "ipvs_agent_sync_requests_total",
            Counter,
            "Requests the syncs sent to the kernel, by outcome (done, failed).",
        );
        for outcome in ["done", "failed"] {
            let n = self.sync_requests.get(outcome).copied().unwrap_or(0);
            let _ = writeln!(
                out,
                "ipvs_agent_sync_requests_total{{outcome=\"{outcome}\"}} {n}"
            );
        }
        let last_ok = self.last_reload_ok || self.reloads + self.reload_errors == 0;
        for (name, kind, help, value) in [
            (
                "ipvs_agent_config_reloads_total",
                Counter,
                "Configuration reloads applied.",
                self.reloads,
            ),
            (
                "ipvs_agent_config_reload_errors_total",
                Counter,
                "Configuration reloads refused (the file had errors, or the guard refused it; the running configuration was kept).",
                self.reload_errors,
            ),
            (
                "ipvs_agent_config_reloads_guarded_total",
                Counter,
                "Configuration reloads the guard refused: they would have removed more than half of the services (reload_guard).",
                self.reloads_guarded,
            ),
            (
                "ipvs_agent_config_last_reload_successful",
                Gauge,
                "0 when the last reload was refused.",
                u64::from(last_ok),
            ),
            (
                "ipvs_agent_ready",
                Gauge,
                "1 once every service has gone in at start and a sync since then has ended without error.",
                u64::from(self.ready),
            ),
        ] {
            push_header(out, name, kind, help);
            let _ = writeln!(out, "{name} {value}");
        }
    }
}

/// Appends `name{service="…",name="…",server="…"` of a server's series
/// (the label list left open for the series' own label).
fn series(out: &mut Vec<u8>, name: &str, id: &DestinationId, s: &Server) {
    out.extend_from_slice(name.as_bytes());
    out.push(b'{');
    push_label(out, true, "service", &id.0.to_string());
    push_label(out, false, "name", &s.name);
    push_label(
        out,
        false,
        "server",
        &SocketAddr::new(id.1, id.2).to_string(),
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every value of the `reason` label, in the README's order.
    const REASONS: [&str; 8] = [
        "timeout", "refused", "status", "body", "tls", "rcode", "exit", "other",
    ];

    /// One failure of every variant with the label the README documents.
    fn every_failure() -> Vec<(Failure, &'static str)> {
        vec![
            (Failure::Timeout, "timeout"),
            (Failure::Refused, "refused"),
            (
                Failure::Status {
                    expected: 200,
                    got: 503,
                },
                "status",
            ),
            (Failure::BodyMismatch, "body"),
            (Failure::Tls("invalid peer certificate".into()), "tls"),
            (
                Failure::Rcode {
                    expected: 0,
                    got: 3,
                },
                "rcode",
            ),
            (Failure::Exit(Some(1)), "exit"),
            (Failure::Exit(None), "exit"),
            (Failure::Other("connect: no route to host".into()), "other"),
        ]
    }

    #[test]
    fn every_failure_has_its_documented_reason_and_every_reason_a_failure() {
        for (f, want) in every_failure() {
            assert_eq!(reason_label(&f), want, "{f:?}");
        }
        let used: std::collections::BTreeSet<_> = every_failure()
            .iter()
            .map(|(f, _)| reason_label(f))
            .collect();
        let all: std::collections::BTreeSet<_> = REASONS.into_iter().collect();
        assert_eq!(used, all);
        let readme = include_str!("../../README.md");
        for r in REASONS {
            assert!(
                readme.contains(&format!("| `{r}` |")),
                "the README's table of reasons lacks `{r}`"
            );
        }
    }

    #[test]
    fn a_failure_is_counted_under_its_reason_label() {
        let config = crate::config::parse_str(
            "m.toml",
            "[[service]]\nname = \"web\"\nprotocol = \"tcp\"\naddress = \"192.0.2.1\"\nport = 80\n\
             [[service.server]]\naddress = \"10.0.0.1\"\n\
             check = { kind = \"tcp\" }\n",
        )
        .unwrap_or_else(|e| panic!("{e}"));
        let vs = &config.services[0];
        let id = (vs.service.key, vs.servers[0].destination.addr, 80);
        let mut m = Metrics::default();
        m.reconcile(&config, |_| Health::Up);
        for (f, _) in every_failure() {
            m.check(&id, "tcp", Duration::from_millis(3), Some(&f));
        }
        let text = m.render();
        let series = "ipvs_agent_check_failures_total{service=\"TCP 192.0.2.1:80\",name=\"web\",server=\"10.0.0.1:80\"";
        for (reason, n) in [("timeout", 1), ("exit", 2), ("other", 1), ("tls", 1)] {
            let line = format!("{series},reason=\"{reason}\"}} {n}\n");
            assert!(text.contains(&line), "{line} not in:\n{text}");
        }
        let count = text.lines().filter(|l| l.starts_with(series)).count();
        assert_eq!(count, REASONS.len(), "{text}");
    }
}
