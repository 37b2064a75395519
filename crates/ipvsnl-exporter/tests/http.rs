//! The HTTP server on 127.0.0.1:0 with a fake source: a good scrape, a
//! failing one (200, `up 0`, one log line), the index page, 404s, a
//! program's own routes and appendix.

mod common;

use std::net::SocketAddr;
use std::sync::{Arc, Mutex};

use common::served;
use hyper::StatusCode;
use ipvsnl_exporter::{
    text_response, Exporter, Limits, MetricPrefix, ScrapeError, Snapshot, Source,
};

/// Answers every scrape with the fixture, or with an error.
struct Fake {
    fail: bool,
}

impl Source for Fake {
    async fn scrape(&self) -> Result<Snapshot, ScrapeError> {
        if self.fail {
            return Err(ScrapeError::new("no \"ip_vs\" family"));
        }
        Ok(Snapshot::new(common::table(), Ok(common::totals())))
    }
}

/// Starts a server of `source` on a thread of its own; its address and
/// the log lines it writes.
fn start(source: Fake, ns: &str) -> (SocketAddr, Arc<Mutex<Vec<String>>>) {
    let log = Arc::new(Mutex::new(Vec::new()));
    let sink = Arc::clone(&log);
    let exporter = Exporter::new(source, MetricPrefix::new(ns).unwrap(), "/metrics")
        .with_log(move |line| sink.lock().unwrap().push(line.to_owned()));
    (served::start_exporter(exporter, Limits::default()), log)
}

/// One request; the status line, the headers and the body.
fn get(addr: SocketAddr, method: &str, path: &str) -> (String, String, String) {
    let (head, body) = served::request(addr, method, path);
    let (status, headers) = head.split_once("\r\n").unwrap_or((&head, ""));
    (status.to_owned(), headers.to_lowercase(), body)
}

#[test]
fn a_good_scrape_serves_the_listing_and_up_1() {
    let (addr, log) = start(Fake { fail: false }, "ipvs");
    let (status, headers, body) = get(addr, "GET", "/metrics");
    assert_eq!(status, "HTTP/1.1 200 OK");
    assert!(
        headers.contains("content-type: text/plain; version=0.0.4; charset=utf-8"),
        "{headers}"
    );
    assert!(body.contains("\nipvs_up 1\n"), "{body}");
    assert!(body.contains("\nipvs_connections_total 4294967301\n"));
    assert!(body.contains("\nipvs_scrape_duration_seconds "));
    assert!(body.contains("ipvs_backend_weight{"));
    assert!(log.lock().unwrap().is_empty(), "{:?}", log.lock().unwrap());
}

#[test]
fn a_failed_scrape_is_200_with_up_0_and_one_log_line() {
    let (addr, log) = start(Fake { fail: true }, "node_ipvs");
    let (status, _, body) = get(addr, "GET", "/metrics");
    assert_eq!(status, "HTTP/1.1 200 OK");
    assert!(body.contains("\nnode_ipvs_up 0\n"), "{body}");
    // The exporter's own metrics only: up, the duration, and the HTTP
    // server's counters.
    let samples: Vec<&str> = body.lines().filter(|l| !l.starts_with('#')).collect();
    let (server, own): (Vec<&str>, Vec<&str>) = samples
        .iter()
        .partition(|l| l.starts_with("node_ipvs_http_"));
    assert_eq!(own.len(), 2, "only up and the duration: {own:?}");
    assert_eq!(server.len(), 8, "{server:?}");
    let lines = log.lock().unwrap().clone();
    assert_eq!(lines.len(), 1, "{lines:?}");
    assert!(lines[0].starts_with("ts="), "{}", lines[0]);
    assert!(
        lines[0].ends_with(r#" level=error msg="scrape failed" err="no \"ip_vs\" family""#),
        "{}",
        lines[0]
    );
}

#[test]
fn the_index_links_to_the_metrics_and_other_paths_are_404() {
    let (addr, _) = start(Fake { fail: false }, "ipvs");
    let (status, headers, body) = get(addr, "GET", "/");
    assert_eq!(status, "HTTP/1.1 200 OK");
    assert!(headers.contains("content-type: text/html"), "{headers}");
    assert!(body.contains("<a href=\"/metrics\">"), "{body}");
    let (status, _, _) = get(addr, "GET", "/nope");
    assert_eq!(status, "HTTP/1.1 404 Not Found");
    let (status, _, _) = get(addr, "GET", "/metrics/extra");
    assert_eq!(status, "HTTP/1.1 404 Not Found");
    let (status, headers, _) = get(addr, "POST", "/metrics");
    assert_eq!(status, "HTTP/1.1 405 Method Not Allowed");
    assert!(headers.contains("allow: get, head"), "{headers}");
}

#[test]
fn a_programs_routes_and_appendix_are_served_beside_the_metrics() {
    let exporter = Exporter::new(Fake { fail: false }, MetricPrefix::default(), "/metrics")
        .with_log(|_| {})
        .with_route("/healthz", || async {
            text_response(StatusCode::OK, "ok\n")
        })
        .with_route("/metrics", || async {
            text_response(StatusCode::IM_A_TEAPOT, "never\n")
        })
        .with_appendix(|out| out.extend_from_slice(b"# TYPE my_ready gauge\nmy_ready 1\n"));
    let addr = served::start_exporter(exporter, Limits::default());
    let (status, headers, body) = get(addr, "GET", "/healthz");
    assert_eq!(
        (status.as_str(), body.as_str()),
        ("HTTP/1.1 200 OK", "ok\n")
    );
    assert!(headers.contains("content-type: text/plain; charset=utf-8"));
    let (status, _, _) = get(addr, "POST", "/healthz");
    assert_eq!(status, "HTTP/1.1 405 Method Not Allowed");
    // The telemetry path stays the exporter's; the appendix comes last.
    let (status, _, body) = get(addr, "GET", "/metrics");
    assert_eq!(status, "HTTP/1.1 200 OK");
    assert!(body.contains("\nipvs_up 1\n"), "{body}");
    assert!(body.ends_with("\nmy_ready 1\n"), "{body}");
}
