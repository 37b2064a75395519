//! A Prometheus exporter for the Linux IPVS load balancer, on [`ipvsnl`].
//!
//! The `ipvs-exporter` binary serves, per scrape, one listing of the IPVS
//! table (services, their destinations, their 64-bit counters and rates)
//! and the namespace's totals in the Prometheus text format 0.0.4. Where
//! node_exporter's ipvs collector has a metric, this exporter uses its
//! name and labels (with `--metrics.namespace=node_ipvs`, exactly), so
//! dashboards carry over.
//!
//! The library is what the binary is made of, each part callable alone:
//! the renderer ([`Renderer`], [`render`]: a listing in, text out, pure),
//! the flags ([`Flags`]), the source of listings ([`Source`], with
//! [`ClientSource`] on the kernel) and the HTTP server ([`serve`], or
//! [`serve_with`] under chosen [`Limits`]). The server also serves a
//! program's own routes and metrics beside the IPVS series
//! ([`Exporter::with_route`], [`Exporter::with_appendix`], written with
//! [`push_header`] and [`push_label`]): the ipvs-agent's endpoint is this
//! server. Durations, in flags and files, are read by [`parse_duration`].
//!
//! ```
//! use ipvsnl::{Destination, DestinationEntry, Service, ServiceEntry, ServiceKey, Stats};
//! use ipvsnl_exporter::{render, MetricPrefix};
//! let table = [ServiceEntry::new(Service::new(ServiceKey::tcp("10.0.0.1".parse().unwrap(), 80)))
//!     .with_destinations([DestinationEntry::new(Destination::new("10.1.0.1".parse().unwrap(), 80))
//!         .with_active_conns(3)])];
//! let text = render(&MetricPrefix::default(), &table, None);
//! assert!(text.contains(
//!     "ipvs_backend_connections_active{local_address=\"10.0.0.1\",local_port=\"80\",local_mark=\"\",\
//!      proto=\"TCP\",family=\"IPv4\",remote_address=\"10.1.0.1\",remote_port=\"80\",\
//!      forwarding_method=\"Masq\"} 3\n"
//! ));
//! ```

#![forbid(unsafe_code)]
#![warn(missing_docs)]

mod body;
mod conn_state;
mod connections;
mod duration;
mod exporter;
mod families;
mod flags;
mod label_sets;
mod labels;
mod limits;
mod listing;
mod listings;
mod log;
mod metric_prefix;
mod render;
mod server;
mod server_stats;
mod source;
mod supervise;
mod text;
mod tracked_body;
mod watched_io;

pub use body::{Appendix, ScrapeBody, PART_BYTES};
pub use duration::{format_duration, parse_duration, DurationBounds, DurationError};
pub use exporter::{Exporter, LogSink, Route, RouteFuture};
pub use flags::{command, FlagError, Flags, DEFAULT_LISTEN_ADDRESS};
pub use limits::{
    open_files_limit, Limits, DEFAULT_HEADER_TIMEOUT, DEFAULT_IDLE_TIMEOUT,
    DEFAULT_MAX_CONNECTIONS, DEFAULT_MAX_LISTINGS, DEFAULT_RESPONSE_TIMEOUT, RESERVED_DESCRIPTORS,
};
pub use log::log_line;
pub use metric_prefix::{InvalidMetricPrefix, MetricPrefix};
pub use render::{render, render_exporter_metrics, Position, Renderer};
pub use server::{bind, serve, serve_with, text_response};
pub use source::{ClientSource, ScrapeError, Snapshot, Source};
pub use text::{push_escaped, push_header, push_label, MetricKind, CONTENT_TYPE};
