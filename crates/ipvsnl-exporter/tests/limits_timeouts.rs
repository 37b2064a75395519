//! The server's timeouts, each against the client it is for: headers sent
//! slower than the header timeout, a connection that never sends, a
//! kept-alive connection left idle, a response never read, and responses
//! of a listing superseded by newer ones.

mod common;

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::time::{Duration, Instant};

use common::served::{drain, get_all, http_lines, read_head, sample, send_get, start};
use common::sized::Sized;
use ipvsnl_exporter::Limits;

fn secs(s: f64) -> Duration {
    Duration::from_secs_f64(s)
}

/// Waits for the server to close `s`, reading (and dropping) what comes;
/// how long that took, or `None` if still open after `within`.
fn closed_within(s: &mut TcpStream, within: Duration) -> Option<Duration> {
    let ending = drain(s, within);
    ending.closed.then_some(ending.after)
}

#[test]
fn headers_sent_slower_than_the_header_timeout_are_cut() {
    let limits = Limits::default()
        .with_header_timeout(secs(1.0))
        .with_idle_timeout(secs(30.0));
    let addr = start(Sized::new(3, 1, Duration::ZERO), limits);

    // A request line, then a header line every 200 ms, never the end.
    let mut slow = TcpStream::connect(addr).unwrap();
    let started = Instant::now();
    let mut writer = slow.try_clone().unwrap();
    std::thread::spawn(move || {
        let _ = writer.write_all(b"GET /metrics HTTP/1.1\r\n");
        for i in 0..50 {
            std::thread::sleep(Duration::from_millis(200));
            if writer
                .write_all(format!("X-Slow-{i}: 1\r\n").as_bytes())
                .is_err()
            {
                return;
            }
        }
    });
    let took = closed_within(&mut slow, secs(5.0)).map(|_| started.elapsed());
    assert!(
        took.is_some_and(|t| t >= secs(0.9) && t < secs(2.5)),
        "slow headers: closed after {took:?}, expected about 1 s"
    );

    // A connection that sends nothing at all is cut the same way.
    let mut silent = TcpStream::connect(addr).unwrap();
    let took = closed_within(&mut silent, secs(5.0));
    assert!(
        took.is_some_and(|t| t >= secs(0.9) && t < secs(2.5)),
        "silent connection: closed after {took:?}, expected about 1 s"
    );
    let (_, body) = get_all(addr, "/metrics");
    assert_eq!(
        sample(
            &body,
            "ipvs_http_connections_cut_total{reason=\"header_timeout\"}"
        ),
        Some(2),
        "{}",
        http_lines(&body)
    );
}

/// Sends `GET /` on `s` (kept alive) and reads its whole response.
fn index_on(s: &mut TcpStream) {
    s.write_all(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n").unwrap();
    let head = read_head(s, secs(5.0)).expect("a response");
    assert!(head.starts_with("HTTP/1.1 200"), "{head}");
    let length: usize = head
        .lines()
        .find_map(|l| {
            l.to_lowercase()
                .strip_prefix("content-length: ")?
                .parse()
                .ok()
        })
        .expect("the index page has a length");
    let mut body = vec![0u8; length];
    s.read_exact(&mut body).unwrap();
}

#[test]
fn an_idle_kept_alive_connection_is_closed_after_the_idle_timeout() {
    let limits = Limits::default()
        .with_header_timeout(secs(5.0))
        .with_idle_timeout(secs(1.0));
    let addr = start(Sized::new(3, 1, Duration::ZERO), limits);
    let mut s = TcpStream::connect(addr).unwrap();
    index_on(&mut s);
    // Kept alive across a pause shorter than the idle timeout.
    std::thread::sleep(secs(0.5));
    index_on(&mut s);
    let took = closed_within(&mut s, secs(4.0));
    assert!(
        took.is_some_and(|t| t >= secs(0.9) && t < secs(2.0)),
        "closed {took:?} after the response, expected about 1 s (the idle timeout, not the \
         header timeout's 5 s)"
    );
}

#[test]
fn a_response_not_read_within_the_response_timeout_is_cut() {
    let limits = Limits::default().with_response_timeout(secs(1.0));
    // 2,000 x 5: 31 MB of text, far more than the sockets hold.
    let source = Sized::new(2000, 5, Duration::ZERO);
    let addr = start(source.clone(), limits);
    let mut reader = send_get(addr, "/metrics");
    let started = Instant::now();
    assert!(read_head(&mut reader, secs(5.0)).is_some());
    std::thread::sleep(secs(2.0));
    let ending = drain(&mut reader, secs(10.0));
    assert!(
        ending.closed && !ending.complete,
        "the stalled response was not cut: {ending:?}"
    );
    let _ = started;
    source
        .services
        .store(1, std::sync::atomic::Ordering::SeqCst);
    let (_, body) = get_all(addr, "/metrics");
    assert_eq!(
        sample(
            &body,
            "ipvs_http_connections_cut_total{reason=\"response_timeout\"}"
        ),
        Some(1),
        "{}",
        http_lines(&body)
    );
}

/// Starts a scrape of `addr` that is never read, once its listing is made.
fn stalled_scrape(addr: SocketAddr) -> TcpStream {
    let mut s = send_get(addr, "/metrics");
    assert!(read_head(&mut s, secs(10.0)).is_some());
    s
}

#[test]
fn responses_of_a_superseded_listing_are_cut() {
    let limits = Limits::default().with_max_listings(2);
    let source = Sized::new(2000, 5, Duration::ZERO);
    let addr = start(source.clone(), limits);
    let mut first = stalled_scrape(addr);
    let mut second = stalled_scrape(addr);
    // A third listing: the first's responses go.
    let mut third = stalled_scrape(addr);
    let ending = drain(&mut first, secs(10.0));
    assert!(ending.closed && !ending.complete, "first: {ending:?}");
    // The counters' own scrape is a fourth listing: the second's go too.
    source
        .services
        .store(1, std::sync::atomic::Ordering::SeqCst);
    let (_, body) = get_all(addr, "/metrics");
    assert_eq!(
        sample(
            &body,
            "ipvs_http_connections_cut_total{reason=\"superseded\"}"
        ),
        Some(2),
        "{}",
        http_lines(&body)
    );
    let ending = drain(&mut second, secs(10.0));
    assert!(ending.closed && !ending.complete, "second: {ending:?}");
    // The third is still being sent: read to its end, it is whole.
    let ending = drain(&mut third, secs(60.0));
    assert!(ending.closed && ending.complete, "third: {ending:?}");
}
