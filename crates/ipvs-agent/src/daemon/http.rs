//! The HTTP endpoint: `/metrics` (the exporter's IPVS series, then the
//! agent's), `/healthz` (the loop answers), `/ready` (the first sync is
//! done). Bounded: one request per connection, at most
//! [`MAX_CONNECTIONS`] at once (more get 503), each at most
//! [`CONNECTION_TIMEOUT`].

use std::convert::Infallible;
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use http_body_util::Full;
use hyper::body::Incoming;
use hyper::header::{HeaderValue, CONTENT_TYPE};
use hyper::{Method, Request, Response, StatusCode};
use hyper_util::rt::TokioIo;
use ipvsnl::AsyncClient;
use ipvsnl_exporter::{Exporter, MetricPrefix, ScrapeError, Snapshot, Source};
use tokio::net::TcpListener;
use tokio::sync::{Mutex, Semaphore};

use crate::daemon::connect::Connector;
use crate::daemon::control::Handle;

/// Connections served at once.
pub const MAX_CONNECTIONS: usize = 64;
/// The longest one connection (its request and response) may take.
pub const CONNECTION_TIMEOUT: Duration = Duration::from_secs(10);
/// The longest `/healthz` waits for the loop's answer.
const HEALTH_TIMEOUT: Duration = Duration::from_secs(2);

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

struct Endpoint {
    handle: Handle,
    exporter: Exporter<AgentSource>,
}

/// Serves the endpoint on `listener` until the task is dropped.
pub async fn serve(listener: TcpListener, handle: Handle, connector: Connector) {
    let source = AgentSource {
        connector,
        client: Mutex::new(None),
    };
    let exporter = Exporter::new(source, MetricPrefix::default(), "/metrics").with_log(|line| {
        tracing::warn!(exporter = line, "metrics listing");
    });
    let endpoint = Arc::new(Endpoint { handle, exporter });
    let slots = Arc::new(Semaphore::new(MAX_CONNECTIONS));
    loop {
        let stream = match listener.accept().await {
            Ok((s, _)) => s,
            Err(e) => {
                tracing::warn!(error = %e, "HTTP accept failed");
                tokio::time::sleep(Duration::from_millis(100)).await;
                continue;
            }
        };
        let Ok(slot) = Arc::clone(&slots).try_acquire_owned() else {
            drop(stream);
            continue;
        };
        let endpoint = Arc::clone(&endpoint);
        tokio::spawn(async move {
            let service = hyper::service::service_fn(move |req| {
                let endpoint = Arc::clone(&endpoint);
                async move { Ok::<_, Infallible>(endpoint.answer(&req).await) }
            });
            let conn = hyper::server::conn::http1::Builder::new()
                .keep_alive(false)
                .serve_connection(TokioIo::new(stream), service);
            let _ = tokio::time::timeout(CONNECTION_TIMEOUT, conn).await;
            drop(slot);
        });
    }
}

impl Endpoint {
    async fn answer(&self, req: &Request<Incoming>) -> Response<Full<Bytes>> {
        if req.method() != Method::GET && req.method() != Method::HEAD {
            return text(StatusCode::METHOD_NOT_ALLOWED, "GET or HEAD only\n");
        }
        match req.uri().path() {
            "/metrics" => {
                let mut body = self.exporter.scrape().await;
                body.extend_from_slice(self.handle.metrics_text().as_bytes());
                let mut r = Response::new(Full::new(Bytes::from(body)));
                r.headers_mut().insert(
                    CONTENT_TYPE,
                    HeaderValue::from_static(ipvsnl_exporter::CONTENT_TYPE),
                );
                r
            }
            "/healthz" => match tokio::time::timeout(HEALTH_TIMEOUT, self.handle.alive()).await {
                Ok(true) => text(StatusCode::OK, "ok\n"),
                _ => text(
                    StatusCode::SERVICE_UNAVAILABLE,
                    "the loop does not answer\n",
                ),
            },
            "/ready" if self.handle.ready() => text(StatusCode::OK, "ready\n"),
            "/ready" => text(
                StatusCode::SERVICE_UNAVAILABLE,
                "not ready: the first sync is not done\n",
            ),
            _ => text(StatusCode::NOT_FOUND, "404 page not found\n"),
        }
    }
}

fn text(status: StatusCode, body: &'static str) -> Response<Full<Bytes>> {
    let mut r = Response::new(Full::new(Bytes::from_static(body.as_bytes())));
    *r.status_mut() = status;
    r.headers_mut().insert(
        CONTENT_TYPE,
        HeaderValue::from_static("text/plain; charset=utf-8"),
    );
    r
}
