//! An exporter served in this process on 127.0.0.1:0 with given limits,
//! and the raw client side of the limit tests: requests that stop
//! reading, bytes sent slowly, the server's own counters, this process's
//! RSS.

use std::io::{ErrorKind, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::time::{Duration, Instant};

use ipvsnl_exporter::{bind, serve_with, Exporter, Limits, MetricPrefix, Source};

/// Serves `source` with `limits` on a thread (and runtime) of its own.
pub(crate) fn start<S: Source>(source: S, limits: Limits) -> SocketAddr {
    let exporter = Exporter::new(source, MetricPrefix::default(), "/metrics").with_log(|_| {});
    start_exporter(exporter, limits)
}

/// Serves `exporter` with `limits` on a thread (and runtime) of its own.
pub(crate) fn start_exporter<S: Source>(exporter: Exporter<S>, limits: Limits) -> SocketAddr {
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        rt.block_on(async move {
            let listener = bind("127.0.0.1:0").await.unwrap();
            tx.send(listener.local_addr().unwrap()).unwrap();
            serve_with(listener, exporter, limits).await.unwrap();
        });
    });
    rx.recv().unwrap()
}

/// A connection that has sent `GET path` (`Connection: close`: the
/// server closes it after the response) and read nothing.
pub(crate) fn send_get(addr: SocketAddr, path: &str) -> TcpStream {
    let mut s = TcpStream::connect(addr).unwrap();
    write!(
        s,
        "GET {path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"
    )
    .unwrap();
    s
}

/// Reads the response's head (through the blank line) byte by byte, so
/// nothing of the body is read; `None` when the server closed first or
/// `within` passed.
pub(crate) fn read_head(s: &mut TcpStream, within: Duration) -> Option<String> {
    s.set_read_timeout(Some(within)).unwrap();
    let mut head = Vec::new();
    let mut byte = [0u8; 1];
    while !head.ends_with(b"\r\n\r\n") {
        match s.read(&mut byte) {
            Ok(1) => head.push(byte[0]),
            _ => return None,
        }
    }
    Some(String::from_utf8_lossy(&head).into_owned())
}

/// `GET path` on a new connection, `Connection: close`, read to the end:
/// the head and the body (chunked bodies are left chunked).
pub(crate) fn get_all(addr: SocketAddr, path: &str) -> (String, String) {
    request(addr, "GET", path)
}

/// `method path` on a new connection, `Connection: close`, read to the
/// end: the head and the body (chunked bodies are left chunked).
pub(crate) fn request(addr: SocketAddr, method: &str, path: &str) -> (String, String) {
    let mut s = TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
    write!(
        s,
        "{method} {path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"
    )
    .unwrap();
    let mut raw = Vec::new();
    s.read_to_end(&mut raw).unwrap();
    let raw = String::from_utf8_lossy(&raw).into_owned();
    let (head, body) = raw.split_once("\r\n\r\n").unwrap_or((&raw, ""));
    (head.to_owned(), body.to_owned())
}

/// The value of the sample that starts with `series` (name and labels) in
/// `body`.
pub(crate) fn sample(body: &str, series: &str) -> Option<u64> {
    body.lines()
        .find_map(|l| l.strip_prefix(series)?.strip_prefix(' ')?.parse().ok())
}

/// How the server ended a connection the client stopped reading at some
/// point: reads everything left until the end, within `within`.
#[derive(Debug)]
pub(crate) struct Ending {
    /// Bytes read until the end.
    pub bytes: usize,
    /// Whether the response's end (the scrape duration and after) came.
    pub complete: bool,
    /// Whether the connection ended (EOF or reset) within `within`.
    pub closed: bool,
    /// When it ended, from the call.
    pub after: Duration,
}

/// The line that opens the scrape's end (its own metrics, after the
/// table's).
const LAST_LINE: &str = "\nipvs_scrape_duration_seconds ";

fn contains(hay: &[u8], needle: &[u8]) -> bool {
    hay.windows(needle.len()).any(|w| w == needle)
}

/// Reads `s` until the server closes it or `within` passes.
pub(crate) fn drain(s: &mut TcpStream, within: Duration) -> Ending {
    let start = Instant::now();
    let mut bytes = 0;
    let mut tail = Vec::new();
    let mut complete = false;
    let mut buf = vec![0u8; 1 << 16];
    let closed = loop {
        let left = within.saturating_sub(start.elapsed());
        if left.is_zero() {
            break false;
        }
        s.set_read_timeout(Some(left)).unwrap();
        match s.read(&mut buf) {
            Ok(0) => break true,
            Ok(n) => {
                bytes += n;
                tail.extend_from_slice(&buf[..n]);
                complete |= contains(&tail, LAST_LINE.as_bytes());
                let keep = tail.len().saturating_sub(LAST_LINE.len());
                tail.drain(..keep);
            }
            Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) => {
                break false
            }
            Err(_) => break true,
        }
    };
    Ending {
        bytes,
        complete,
        closed,
        after: start.elapsed(),
    }
}

/// This process's resident set, in bytes (`VmRSS` of /proc/self/status).
pub(crate) fn rss_bytes() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    let line = status.lines().find(|l| l.starts_with("VmRSS:")).unwrap();
    let kb: u64 = line.split_whitespace().nth(1).unwrap().parse().unwrap();
    kb * 1024
}

/// Mebibytes, for messages.
pub(crate) fn mib(bytes: u64) -> f64 {
    bytes as f64 / (1 << 20) as f64
}

/// The server's own `_http_` lines of `body` (for failure messages).
pub(crate) fn http_lines(body: &str) -> String {
    let lines: Vec<&str> = body.lines().filter(|l| l.contains("_http_")).collect();
    format!("the body's _http_ lines: {lines:?}")
}
