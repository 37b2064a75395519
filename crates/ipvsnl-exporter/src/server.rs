//! The HTTP side: `/` (a link), the telemetry path (the metrics), the
//! exporter's own routes ([`Exporter::with_route`]), 404 elsewhere;
//! HTTP/1.1 on hyper, one tokio task per connection, under the
//! server's [`Limits`]: a connection table with a cap
//! (`connections.rs`), a phase and deadline per connection
//! (`conn_state.rs`, `supervise.rs`), listings shared by the responses
//! sent from them (`listings.rs`).

use std::convert::Infallible;
use std::io;
use std::net::{Ipv4Addr, Ipv6Addr, SocketAddr, ToSocketAddrs};
use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::Bytes;

use hyper::body::Incoming;
use hyper::header::{HeaderValue, ALLOW, CONTENT_TYPE};
use hyper::{Method, Request, Response, StatusCode};
use hyper_util::rt::TokioIo;
use tokio::net::{TcpListener, TcpStream};

use crate::conn_state::ConnState;
use crate::connections::{Connections, Slot};
use crate::listing::Listing;
use crate::listings::Listings;
use crate::server_stats::ServerStats;
use crate::supervise::supervise;
use crate::tracked_body::TrackedBody;
use crate::watched_io::WatchedStream;
use crate::{log_line, open_files_limit, Exporter, Limits, ScrapeBody, Source};

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
        let route = self.exporter.route(path);
        let known = path == "/" || path == telemetry_path || route.is_some();
        if !known {
            return text_response(StatusCode::NOT_FOUND, "404 page not found\n");
        }
        if req.method() != Method::GET && req.method() != Method::HEAD {
            let mut r = text_response(StatusCode::METHOD_NOT_ALLOWED, "GET or HEAD only\n");
            r.headers_mut()
                .insert(ALLOW, HeaderValue::from_static("GET, HEAD"));
            return r;
        }
        if let (Some(route), false) = (route, path == "/" || path == telemetry_path) {
            return route().await;
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
        let stats = Some(Arc::clone(&self.stats));
        ScrapeBody::from_listing(listing, started, stats, self.exporter.appendix.clone())
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

/// A `text/plain` response of `status` and `body`: what a route's handler
/// (and the server, for 404 and 405) answers.
///
/// ```
/// use hyper::StatusCode;
/// use ipvsnl_exporter::text_response;
/// let r = text_response(StatusCode::SERVICE_UNAVAILABLE, "not ready\n");
/// assert_eq!(r.status(), 503);
/// assert_eq!(r.headers()["content-type"], "text/plain; charset=utf-8");
/// assert_eq!(r.into_body().into_vec(), b"not ready\n");
/// ```
pub fn text_response(status: StatusCode, body: impl Into<Bytes>) -> Response<ScrapeBody> {
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
