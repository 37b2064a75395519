//! The metric families: names (after the namespace), types and HELP texts.
//!
//! Where node_exporter's ipvs collector has the metric, the name is its
//! name less `node_ipvs_` (so `--metrics.namespace=node_ipvs` gives its
//! names exactly): the five totals counters and the three
//! `backend_*` gauges. The rest are ours, built on the same words.

use ipvsnl::Stats;

use crate::text::MetricKind;

/// One of the ten numbers of a [`Stats`]: a name suffix, its type, what it
/// counts, and how to read it.
pub(crate) struct StatFamily {
    /// The name after the namespace and the scope (`connections_total`).
    pub(crate) name: &'static str,
    /// Counter for the counts since the last zero, gauge for the rates.
    pub(crate) kind: MetricKind,
    /// The HELP text's start; the scope's words follow.
    pub(crate) help: &'static str,
    /// The value.
    pub(crate) read: fn(&Stats) -> u64,
}

/// The ten numbers of a [`Stats`], in the order they are served.
pub(crate) const STATS: [StatFamily; 10] = [
    StatFamily {
        name: "connections_total",
        kind: MetricKind::Counter,
        help: "Connections scheduled",
        read: |s| s.conns,
    },
    StatFamily {
        name: "incoming_packets_total",
        kind: MetricKind::Counter,
        help: "Packets in",
        read: |s| s.in_packets,
    },
    StatFamily {
        name: "outgoing_packets_total",
        kind: MetricKind::Counter,
        help: "Packets out",
        read: |s| s.out_packets,
    },
    StatFamily {
        name: "incoming_bytes_total",
        kind: MetricKind::Counter,
        help: "Bytes in",
        read: |s| s.in_bytes,
    },
    StatFamily {
        name: "outgoing_bytes_total",
        kind: MetricKind::Counter,
        help: "Bytes out",
        read: |s| s.out_bytes,
    },
    StatFamily {
        name: "connections_per_second",
        kind: MetricKind::Gauge,
        help: "Connections per second (the kernel's estimate)",
        read: |s| s.cps,
    },
    StatFamily {
        name: "incoming_packets_per_second",
        kind: MetricKind::Gauge,
        help: "Packets in per second (the kernel's estimate)",
        read: |s| s.in_pps,
    },
    StatFamily {
        name: "outgoing_packets_per_second",
        kind: MetricKind::Gauge,
        help: "Packets out per second (the kernel's estimate)",
        read: |s| s.out_pps,
    },
    StatFamily {
        name: "incoming_bytes_per_second",
        kind: MetricKind::Gauge,
        help: "Bytes in per second (the kernel's estimate)",
        read: |s| s.in_bps,
    },
    StatFamily {
        name: "outgoing_bytes_per_second",
        kind: MetricKind::Gauge,
        help: "Bytes out per second (the kernel's estimate)",
        read: |s| s.out_bps,
    },
];

/// Where a [`StatFamily`] is served: its name's middle part and the end of
/// its HELP text.
pub(crate) struct Scope {
    /// Inserted between the namespace and the family's name (`service_`).
    pub(crate) infix: &'static str,
    /// What the numbers are of, for the HELP text.
    pub(crate) what: &'static str,
}

/// The host's totals (node_exporter's names, no labels).
pub(crate) const TOTALS: Scope = Scope {
    infix: "",
    what: "all services of the network namespace",
};

/// Per virtual service.
pub(crate) const SERVICE: Scope = Scope {
    infix: "service_",
    what: "per virtual service",
};

/// Per destination (real server).
pub(crate) const BACKEND: Scope = Scope {
    infix: "backend_",
    what: "per real server of a virtual service",
};

impl StatFamily {
    /// The HELP text of this family in `scope`.
    pub(crate) fn help_in(&self, scope: &Scope) -> String {
        let since = match self.kind {
            MetricKind::Counter => ", since the counters were last zeroed",
            _ => "",
        };
        format!("{}, {}{since}.", self.help, scope.what)
    }
}

/// A destination's own gauges: connection counts and weight.
pub(crate) struct DestFamily {
    /// The name after the namespace (node_exporter's where it has one).
    pub(crate) name: &'static str,
    /// The HELP text.
    pub(crate) help: &'static str,
    /// The value.
    pub(crate) read: fn(&ipvsnl::DestinationEntry) -> u64,
}

/// The destination gauges, in the order they are served.
pub(crate) const DEST: [DestFamily; 4] = [
    DestFamily {
        name: "backend_connections_active",
        help: "Active connections to the real server.",
        read: |d| u64::from(d.active_conns),
    },
    DestFamily {
        name: "backend_connections_inactive",
        help: "Inactive connections to the real server.",
        read: |d| u64::from(d.inactive_conns),
    },
    DestFamily {
        name: "backend_connections_persistent",
        help: "Persistent connection templates pointing at the real server.",
        read: |d| u64::from(d.persistent_conns),
    },
    DestFamily {
        name: "backend_weight",
        help: "Weight of the real server (0 takes no new connections).",
        read: |d| u64::from(d.destination.weight),
    },
];

/// `<namespace>_up`'s suffix.
pub(crate) const UP: &str = "up";
/// `<namespace>_scrape_duration_seconds`'s suffix.
pub(crate) const SCRAPE_DURATION: &str = "scrape_duration_seconds";
