//! The server's own counters (connections open, refused, cut and why,
//! failed accepts), rendered after every scrape the server answers.

use std::sync::atomic::{AtomicU64, Ordering};

use crate::conn_state::Cut;
use crate::text::{push_header, sample_u64, FamilyName, MetricKind};
use crate::MetricPrefix;

/// What the server counted since it started.
#[derive(Debug, Default)]
pub(crate) struct ServerStats {
    open: AtomicU64,
    refused: AtomicU64,
    accept_errors: AtomicU64,
    cut: [AtomicU64; Cut::ALL.len()],
}

impl ServerStats {
    /// Connections open now.
    pub(crate) fn set_open(&self, n: usize) {
        self.open.store(n as u64, Ordering::Relaxed);
    }

    /// A connection refused: the cap reached, none waiting to make room.
    pub(crate) fn refused(&self) {
        self.refused.fetch_add(1, Ordering::Relaxed);
    }

    /// An accept that failed.
    pub(crate) fn accept_failed(&self) {
        self.accept_errors.fetch_add(1, Ordering::Relaxed);
    }

    /// A connection the server closed for `why`.
    pub(crate) fn cut(&self, why: Cut) {
        let i = Cut::ALL.iter().position(|c| *c == why).unwrap_or(0);
        self.cut[i].fetch_add(1, Ordering::Relaxed);
    }

    /// Appends the counters' families under `metric_prefix`.
    pub(crate) fn render(&self, out: &mut Vec<u8>, metric_prefix: &MetricPrefix) {
        let read = |c: &AtomicU64| c.load(Ordering::Relaxed);
        let family = |out: &mut Vec<u8>, suffix: &str, kind, help: &str| {
            let name = FamilyName::new(metric_prefix.name(suffix));
            push_header(out, name.as_str(), kind, help);
            name
        };
        let name = family(
            out,
            "http_connections",
            MetricKind::Gauge,
            "HTTP connections open to the exporter.",
        );
        sample_u64(out, &name, b"", read(&self.open));
        let name = family(
            out,
            "http_connections_refused_total",
            MetricKind::Counter,
            "Connections answered 503 and closed: --web.max-connections were open, all answering.",
        );
        sample_u64(out, &name, b"", read(&self.refused));
        let name = family(
            out,
            "http_connections_cut_total",
            MetricKind::Counter,
            "Connections the exporter closed, by reason: a timeout (header, idle, response), \
             evicted for a new connection, or sending a superseded listing.",
        );
        for (why, count) in Cut::ALL.iter().zip(&self.cut) {
            let labels = format!("{{reason=\"{}\"}}", why.label());
            sample_u64(out, &name, labels.as_bytes(), read(count));
        }
        let name = family(
            out,
            "http_accept_errors_total",
            MetricKind::Counter,
            "Accepts that failed (out of descriptors and the like); each is followed by a pause.",
        );
        sample_u64(out, &name, b"", read(&self.accept_errors));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counters_render_under_the_metric_prefix() {
        let stats = ServerStats::default();
        stats.set_open(3);
        stats.cut(Cut::Superseded);
        stats.cut(Cut::Superseded);
        stats.refused();
        let mut out = Vec::new();
        stats.render(&mut out, &MetricPrefix::new("node_ipvs").unwrap());
        let out = String::from_utf8(out).unwrap();
        for line in [
            "\nnode_ipvs_http_connections 3\n",
            "\nnode_ipvs_http_connections_refused_total 1\n",
            "\nnode_ipvs_http_connections_cut_total{reason=\"superseded\"} 2\n",
            "\nnode_ipvs_http_connections_cut_total{reason=\"header_timeout\"} 0\n",
            "\nnode_ipvs_http_accept_errors_total 0\n",
            "# TYPE node_ipvs_http_connections_cut_total counter\n",
        ] {
            assert!(out.contains(line), "{line:?} in\n{out}");
        }
    }
}
