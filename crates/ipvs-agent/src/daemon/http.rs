//! The HTTP endpoint: `/metrics` (the exporter's IPVS series, its server's
//! counters, then the agent's), `/healthz` (the loop answers), `/ready`
//! (every service in at start and synced), served by the exporter's server
//! ([`ipvsnl_exporter::serve_with`]) under [`endpoint_limits`]: a
//! request's head must come within 10 s, an idle kept-alive connection
//! is closed after 30 s, a response must be taken within 10 s. At most
//! [`MAX_CONNECTIONS`] are open at once: one more closes the connection
//! that has waited longest for its request (a slow or idle client), so a
//! probe is never kept out by slow clients; only when every connection is
//! answering is the new one answered 503 and closed. The cap is lowered
//! to fit the open-files limit.

use std::time::Duration;

use hyper::StatusCode;
use ipvsnl::AsyncClient;
use ipvsnl_exporter::{
    serve_with, text_response, Exporter, Limits, MetricPrefix, ScrapeError, Snapshot, Source,
};
use tokio::net::TcpListener;
use tokio::sync::Mutex;

use crate::daemon::connect::Connector;
use crate::daemon::control::Handle;

/// Connections open at once.
pub const MAX_CONNECTIONS: usize = 64;
/// The longest a request's head may take to arrive, and a response to be
/// taken.
pub const REQUEST_TIMEOUT: Duration = Duration::from_secs(10);
/// The longest a kept-alive connection may stay idle.
pub const IDLE_TIMEOUT: Duration = Duration::from_secs(30);
/// The longest `/healthz` waits for the loop's answer.
const HEALTH_TIMEOUT: Duration = Duration::from_secs(2);

/// The endpoint's limits: [`MAX_CONNECTIONS`], [`REQUEST_TIMEOUT`] for a
/// request's head and for its response, [`IDLE_TIMEOUT`] between
/// requests.
pub fn endpoint_limits() -> Limits {
    Limits::default()
        .with_max_connections(MAX_CONNECTIONS)
        .with_header_timeout(REQUEST_TIMEOUT)
        .with_idle_timeout(IDLE_TIMEOUT)
        .with_response_timeout(REQUEST_TIMEOUT)
}

/// The exporter's source: a client of the agent's kernel of its own (not
/// the loop's), made on first use and again after a failed listing.
struct AgentSource {
    connector: Connector,
    client: Mutex<Option<AsyncClient>>,
}

impl Source for AgentSource {
    async fn scrape(&self) -> Result<Snapshot, ScrapeError> {
        let mut guard = self.client.lock().await;
        let client = match guard.as_mut() {
            Some(c) => c,
            None => guard.insert(self.connector.connect().await?),
        };
        let table = match client.table().await {
            Ok(t) => t,
            Err(e) => {
                *guard = None;
                return Err(e.into());
            }
        };
        let totals = client.totals().await.map_err(ScrapeError::from);
        Ok(Snapshot::new(table, totals))
    }
}

/// Serves the endpoint on `listener` until the task is dropped.
pub async fn serve(listener: TcpListener, handle: Handle, connector: Connector) {
    let source = AgentSource {
        connector,
        client: Mutex::new(None),
    };
    let metrics = handle.clone();
    let health = handle.clone();
    let exporter = Exporter::new(source, MetricPrefix::default(), "/metrics")
        .with_log(|line| tracing::warn!(exporter = line, "metrics endpoint"))
        .with_appendix(move |out| out.extend_from_slice(metrics.metrics_text().as_bytes()))
        .with_route("/healthz", move || {
            let handle = health.clone();
            async move {
                match tokio::time::timeout(HEALTH_TIMEOUT, handle.alive()).await {
                    Ok(true) => text_response(StatusCode::OK, "ok\n"),
                    _ => text_response(
                        StatusCode::SERVICE_UNAVAILABLE,
                        "the loop does not answer\n",
                    ),
                }
            }
        })
        .with_route("/ready", move || {
            let ready = handle.ready();
            async move {
                if ready {
                    text_response(StatusCode::OK, "ready\n")
                } else {
                    text_response(
                        StatusCode::SERVICE_UNAVAILABLE,
                        "not ready: the first sync is not done\n",
                    )
                }
            }
        });
    if let Err(e) = serve_with(listener, exporter, endpoint_limits()).await {
        tracing::error!(error = %e, "HTTP endpoint stopped");
    }
}
