//! The HTTP side: `/` (a link), the telemetry path (the metrics), 404
//! elsewhere; HTTP/1.1 on hyper, one tokio task per connection.

use std::convert::Infallible;
use std::io;
use std::net::{Ipv4Addr, Ipv6Addr, SocketAddr, ToSocketAddrs};
use std::sync::{Arc, Mutex};
use std::time::Instant;

use hyper::body::Incoming;
use hyper::header::{HeaderValue, ALLOW, CONTENT_TYPE};
use hyper::{Method, Request, Response, StatusCode};
use hyper_util::rt::TokioIo;
use tokio::net::TcpListener;

use crate::{log_line, Namespace, Renderer, ScrapeBody, Source};

/// Where log lines go: one call per line, without the newline.
pub type LogSink = Arc<dyn Fn(&str) + Send + Sync>;

/// What the server serves: the source of listings and how to name and
/// place the metrics.
#[non_exhaustive]
pub struct Exporter<S> {
    /// Where each scrape's listing comes from.
    pub source: S,
    /// The metric name prefix.
    pub namespace: Namespace,
    /// The path of the metrics (`/metrics`).
    pub telemetry_path: String,
    /// Where the log lines go (stderr unless [`Exporter::with_log`]).
    pub log: LogSink,
    /// One renderer for every scrape: it keeps the label sets while the
    /// table stays the same (lent to a scrape's body while it is sent).
    renderer: Arc<Mutex<Option<Renderer>>>,
}

impl<S> std::fmt::Debug for Exporter<S> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Exporter")
            .field("namespace", &self.namespace)
            .field("telemetry_path", &self.telemetry_path)
            .finish_non_exhaustive()
    }
}

impl<S: Source> Exporter<S> {
    /// An exporter of `source`'s listings under `namespace` at
    /// `telemetry_path`.
    pub fn new(source: S, namespace: Namespace, telemetry_path: impl Into<String>) -> Self {
        Exporter {
            source,
            telemetry_path: telemetry_path.into(),
            log: Arc::new(|line| eprintln!("{line}")),
            renderer: Arc::new(Mutex::new(Some(Renderer::new(&namespace)))),
            namespace,
        }
    }

    /// The same exporter, its log lines sent to `log` instead of stderr.
    #[must_use]
    pub fn with_log(mut self, log: impl Fn(&str) + Send + Sync + 'static) -> Self {
        self.log = Arc::new(log);
        self
    }

    /// One scrape, the whole text: the listing, rendered, then the
    /// exporter's own metrics. A failed listing gives only those, with
    /// `up 0`, and one log line.
    pub async fn scrape(&self) -> Vec<u8> {
        self.scrape_body().await.into_vec()
    }

    /// One scrape as a response body rendered in parts (what the server
    /// sends): the listing is taken now, the text as the body is read.
    pub async fn scrape_body(&self) -> ScrapeBody {
        let started = Instant::now();
        match self.source.scrape().await {
            Ok(snapshot) => {
                let totals = match snapshot.totals {
                    Ok(t) => Some(t),
                    Err(e) => {
                        let msg = "totals unavailable";
                        (self.log)(&log_line("warn", msg, Some(&e.to_string())));
                        None
                    }
                };
                let home = Arc::clone(&self.renderer);
                ScrapeBody::scrape(snapshot.table, totals, true, &self.namespace, home, started)
            }
            Err(e) => {
                (self.log)(&log_line("error", "scrape failed", Some(&e.to_string())));
                let home = Arc::clone(&self.renderer);
                ScrapeBody::scrape(Vec::new(), None, false, &self.namespace, home, started)
            }
        }
    }

    async fn answer(&self, req: &Request<Incoming>) -> Response<ScrapeBody> {
        let path = req.uri().path();
        let known = path == "/" || path == self.telemetry_path;
        if !known {
            return plain(StatusCode::NOT_FOUND, "404 page not found\n".into());
        }
        if req.method() != Method::GET && req.method() != Method::HEAD {
            let mut r = plain(StatusCode::METHOD_NOT_ALLOWED, "GET or HEAD only\n".into());
            r.headers_mut()
                .insert(ALLOW, HeaderValue::from_static("GET, HEAD"));
            return r;
        }
        let (body, kind) = if path == "/" {
            (
                ScrapeBody::whole(index_page(&self.telemetry_path)),
                "text/html; charset=utf-8",
            )
        } else {
            (self.scrape_body().await, crate::CONTENT_TYPE)
        };
        let mut r = Response::new(body);
        r.headers_mut()
            .insert(CONTENT_TYPE, HeaderValue::from_static(kind));
        r
    }
}

fn plain(status: StatusCode, body: String) -> Response<ScrapeBody> {
    let mut r = Response::new(ScrapeBody::whole(body));
    *r.status_mut() = status;
    r.headers_mut().insert(
        CONTENT_TYPE,
        HeaderValue::from_static("text/plain; charset=utf-8"),
    );
    r
}

/// The index page: a link to the metrics. The path was checked by the
/// flags; its `&`, `<`, `>` and `"` are escaped all the same.
fn index_page(telemetry_path: &str) -> String {
    let mut href = String::new();
    for c in telemetry_path.chars() {
        match c {
            '&' => href.push_str("&amp;"),
            '<' => href.push_str("&lt;"),
            '>' => href.push_str("&gt;"),
            '"' => href.push_str("&quot;"),
            c => href.push(c),
        }
    }
    format!(
        "<html>\n<head><title>IPVS exporter</title></head>\n<body>\n\
         <h1>IPVS exporter</h1>\n<p><a href=\"{href}\">Metrics</a></p>\n</body>\n</html>\n"
    )
}

/// Binds `address` as `--web.listen-address` takes it: `:PORT` is every
/// address (IPv6 and IPv4, or IPv4 alone on a host without IPv6),
/// otherwise `HOST:PORT` or `[V6]:PORT`, resolved.
pub async fn bind(address: &str) -> io::Result<TcpListener> {
    if let Some(port) = address.strip_prefix(':') {
        let port: u16 = port.parse().map_err(|_| {
            io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("bad port in {address:?}"),
            )
        })?;
        let any6 = SocketAddr::from((Ipv6Addr::UNSPECIFIED, port));
        return match TcpListener::bind(any6).await {
            Ok(l) => Ok(l),
            Err(_) => TcpListener::bind(SocketAddr::from((Ipv4Addr::UNSPECIFIED, port))).await,
        };
    }
    let addrs: Vec<SocketAddr> = address.to_socket_addrs()?.collect();
    TcpListener::bind(&addrs[..]).await
}

/// Serves `exporter` on `listener` until the runtime stops. Each
/// connection is one task; a failed connection is logged and dropped.
pub async fn serve<S: Source>(listener: TcpListener, exporter: Exporter<S>) -> io::Result<()> {
    let exporter = Arc::new(exporter);
    loop {
        let (stream, _) = match listener.accept().await {
            Ok(s) => s,
            Err(e) => {
                // Out of descriptors and the like: say so, wait a little
                // (not to spin), keep serving.
                (exporter.log)(&log_line("error", "accept failed", Some(&e.to_string())));
                tokio::time::sleep(std::time::Duration::from_millis(100)).await;
                continue;
            }
        };
        let exporter = Arc::clone(&exporter);
        tokio::spawn(async move {
            let service = hyper::service::service_fn(move |req| {
                let exporter = Arc::clone(&exporter);
                async move { Ok::<_, Infallible>(exporter.answer(&req).await) }
            });
            let conn = hyper::server::conn::http1::Builder::new()
                .serve_connection(TokioIo::new(stream), service);
            // A client that goes away mid-request is no news: not logged.
            let _ = conn.await;
        });
    }
}
