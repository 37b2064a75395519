//! The HTTP side: `/` (a link), the telemetry path (the metrics), 404
//! elsewhere; HTTP/1.1 on hyper, one tokio task per connection, under the
//! server's [`Limits`]: a connection table with a cap
//! (`connections.rs`), a phase and deadline per connection
//! (`conn_state.rs`, `supervise.rs`), listings shared by the responses
//! sent from them (`listings.rs`).

use std::convert::Infallible;
use std::io;
use std::net::{Ipv4Addr, Ipv6Addr, SocketAddr, ToSocketAddrs};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use hyper::body::Incoming;
use hyper::header::{HeaderValue, ALLOW, CONTENT_TYPE};
use hyper::{Method, Request, Response, StatusCode};
use hyper_util::rt::TokioIo;
use tokio::net::{TcpListener, TcpStream};

use crate::conn_state::ConnState;
use crate::connections::{Connections, Slot};
use crate::listing::{Listing, RendererHome};
use crate::listings::Listings;
use crate::server_stats::ServerStats;
use crate::supervise::supervise;
use crate::tracked_body::TrackedBody;
use crate::watched_io::WatchedStream;
use crate::{log_line, open_files_limit, Limits, MetricPrefix, Renderer, ScrapeBody, Source};

/// hyper's buffer limit per connection (its minimum is 8 KiB): the
/// request's headers must fit, and a response's body is polled for its
/// next part only while less than this is queued, so a connection whose
/// client stops reading holds one part of the body, not more.
const CONNECTION_BUFFER: usize = 16 << 10;
/// The first pause after a failed accept; it doubles up to
/// [`MAX_ACCEPT_PAUSE`] while accepts keep failing.
const MIN_ACCEPT_PAUSE: Duration = Duration::from_millis(10);
/// The longest pause after a failed accept.
const MAX_ACCEPT_PAUSE: Duration = Duration::from_secs(1);
/// What a refused connection gets before it is closed.
const REFUSED: &[u8] = b"HTTP/1.1 503 Service Unavailable\r\nConnection: close\r\n\
    Content-Type: text/plain; charset=utf-8\r\nContent-Length: 37\r\n\r\n\
    too many connections; try again later";
/// EMFILE and ENFILE (Linux): out of descriptors, for the process or the
/// system.
const OUT_OF_DESCRIPTORS: [i32; 2] = [24, 23];

/// Where log lines go: one call per line, without the newline.
pub type LogSink = Arc<dyn Fn(&str) + Send + Sync>;

/// What the server serves: the source of listings and how to name and
/// place the metrics.
#[non_exhaustive]
pub struct Exporter<S> {
    /// Where each scrape's listing comes from.
    pub source: S,
    /// The metric name prefix.
    pub metric_prefix: MetricPrefix,
    /// The path of the metrics (`/metrics`).
    pub telemetry_path: String,
    /// Where the log lines go (stderr unless [`Exporter::with_log`]).
    pub log: LogSink,
    /// One renderer for every scrape: it keeps the label sets while the
    /// table stays the same (lent to a listing while responses send it).
    renderer: RendererHome,
}

impl<S> std::fmt::Debug for Exporter<S> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Exporter")
            .field("metric_prefix", &self.metric_prefix)
            .field("telemetry_path", &self.telemetry_path)
            .finish_non_exhaustive()
    }
}

impl<S: Source> Exporter<S> {
    /// An exporter of `source`'s listings under `metric_prefix` at
    /// `telemetry_path`.
    pub fn new(source: S, metric_prefix: MetricPrefix, telemetry_path: impl Into<String>) -> Self {
        Exporter {
            source,
            telemetry_path: telemetry_path.into(),
            log: Arc::new(|line| eprintln!("{line}")),
            renderer: Arc::new(Mutex::new(Some(Renderer::new(&metric_prefix)))),
            metric_prefix,
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
        ScrapeBody::from_listing(Arc::new(self.list(0).await), started, None)
    }

    /// Takes listing `id`: the table and the totals, ready to render. A
    /// failed listing is an empty one, `up` 0, and one log line.
    async fn list(&self, id: u64) -> Listing {
        let home = Arc::clone(&self.renderer);
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
                Listing::new(id, snapshot.table, totals, true, &self.metric_prefix, home)
            }
            Err(e) => {
                (self.log)(&log_line("error", "scrape failed", Some(&e.to_string())));
                Listing::new(id, Vec::new(), None, false, &self.metric_prefix, home)
            }
        }
    }
}

/// The server: the exporter, and what it keeps for all connections.
struct Server<S> {
    exporter: Arc<Exporter<S>>,
    limits: Limits,
    listings: Arc<Listings>,
    connections: Arc<Connections>,
    stats: Arc<ServerStats>,
}

impl<S: Source> Server<S> {
    async fn answer(&self, req: &Request<Incoming>, conn: &Arc<ConnState>) -> Response<ScrapeBody> {
        let path = req.uri().path();
        let telemetry_path = &self.exporter.telemetry_path;
        let known = path == "/" || path == telemetry_path;
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
                ScrapeBody::whole(index_page(telemetry_path)),
                "text/html; charset=utf-8",
            )
        } else {
            (self.scrape(conn).await, crate::CONTENT_TYPE)
        };
        let mut r = Response::new(body);
        r.headers_mut()
            .insert(CONTENT_TYPE, HeaderValue::from_static(kind));
        r
    }

    /// A scrape's body for connection `conn`, from the listing being
    /// taken or a new one.
    async fn scrape(&self, conn: &Arc<ConnState>) -> ScrapeBody {
        let started = Instant::now();
        let exporter = Arc::clone(&self.exporter);
        let joined = self
            .listings
            .join(move |id| async move { exporter.list(id).await })
            .await;
        let listing = match joined {
            Some(l) => l,
            None => {
                let e = &self.exporter;
                let why = Some("the listing's task panicked");
                (e.log)(&log_line("error", "scrape failed", why));
                let home = Arc::clone(&e.renderer);
                Arc::new(Listing::new(
                    u64::MAX,
                    Vec::new(),
                    None,
                    false,
                    &e.metric_prefix,
                    home,
                ))
            }
        };
        conn.sending_listing(listing.id());
        listing.sent_by(conn);
        ScrapeBody::from_listing(listing, started, Some(Arc::clone(&self.stats)))
    }

    /// Serves one connection until it ends or is cut; its place in the
    /// table is given back after.
    async fn run(self: Arc<Self>, stream: TcpStream, conn: Arc<ConnState>, slot: Slot) {
        let io = TokioIo::new(WatchedStream::new(stream, Arc::clone(&conn)));
        let server = Arc::clone(&self);
        let state = Arc::clone(&conn);
        let service = hyper::service::service_fn(move |req| {
            let server = Arc::clone(&server);
            let state = Arc::clone(&state);
            async move {
                state.answering(Instant::now());
                let response = server.answer(&req, &state).await;
                Ok::<_, Infallible>(response.map(|body| TrackedBody::new(body, state)))
            }
        });
        // hyper's own header timeout is left off: it runs from the moment
        // hyper waits for a request, so on a kept-alive connection it
        // would be the idle timeout as well. The connection's phases
        // (conn_state.rs) time the two apart, and the response too.
        let serving = hyper::server::conn::http1::Builder::new()
            .header_read_timeout(None)
            .max_buf_size(CONNECTION_BUFFER)
            .serve_connection(io, service);
        // A client that goes away mid-request is no news: not logged.
        if let Some(why) = supervise(serving, &conn, &self.limits).await {
            self.stats.cut(why);
        }
        drop(slot);
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

/// Serves `exporter` on `listener` until the runtime stops, under the
/// default [`Limits`].
pub async fn serve<S: Source>(listener: TcpListener, exporter: Exporter<S>) -> io::Result<()> {
    serve_with(listener, exporter, Limits::default()).await
}

/// Serves `exporter` on `listener` until the runtime stops, under
/// `limits` (`max_connections` lowered to fit the open-files limit, with
/// a log line). Each connection is one task; a failed accept is logged
/// and followed by a pause that doubles while they keep failing (out of
/// descriptors, the connection waiting longest for a request is closed
/// to free one).
pub async fn serve_with<S: Source>(
    listener: TcpListener,
    exporter: Exporter<S>,
    limits: Limits,
) -> io::Result<()> {
    let (limits, lowered) = limits.fit_open_files(open_files_limit());
    if let Some(why) = lowered {
        (exporter.log)(&log_line("warn", &why, None));
    }
    let stats = Arc::new(ServerStats::default());
    let server = Arc::new(Server {
        exporter: Arc::new(exporter),
        limits,
        listings: Listings::new(limits.max_listings),
        connections: Connections::new(limits.max_connections, Arc::clone(&stats)),
        stats,
    });
    let mut pause = MIN_ACCEPT_PAUSE;
    loop {
        let stream = match listener.accept().await {
            Ok((stream, _)) => {
                pause = MIN_ACCEPT_PAUSE;
                stream
            }
            // The client reset before it was accepted: nothing is short.
            Err(e) if e.kind() == io::ErrorKind::ConnectionAborted => continue,
            Err(e) => {
                server.stats.accept_failed();
                let out_of_descriptors = e
                    .raw_os_error()
                    .is_some_and(|n| OUT_OF_DESCRIPTORS.contains(&n));
                if out_of_descriptors {
                    server.connections.evict_one();
                }
                let log = &server.exporter.log;
                log(&log_line("error", "accept failed", Some(&e.to_string())));
                tokio::time::sleep(pause).await;
                pause = (pause * 2).min(MAX_ACCEPT_PAUSE);
                continue;
            }
        };
        let conn = Arc::new(ConnState::new(Instant::now()));
        let Some(slot) = server.connections.admit(Arc::clone(&conn)).await else {
            server.stats.refused();
            refuse(stream);
            continue;
        };
        tokio::spawn(Arc::clone(&server).run(stream, conn, slot));
    }
}

/// Answers 503 on a connection that has no place, and closes it. The
/// socket is new and its send buffer empty, so the write does not block
/// (tokio's own `try_write` would not write: it has not seen the socket
/// writable yet); a write that fails changes nothing.
fn refuse(stream: TcpStream) {
    use std::io::Write;
    if let Ok(mut s) = stream.into_std() {
        let _ = s.write(REFUSED);
    }
}
