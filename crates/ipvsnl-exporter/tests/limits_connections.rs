//! The connection cap: a new connection beyond it closes the one that has
//! waited longest for a request; when every connection is busy answering,
//! the new one is answered 503 and closed.

mod common;

use std::net::TcpStream;
use std::time::Duration;

use common::served::{drain, get_all, http_lines, read_head, sample, send_get, start};
use common::sized::Sized;
use ipvsnl_exporter::Limits;

const CAP: usize = 4;

#[test]
fn the_cap_closes_the_longest_idle_then_refuses_when_all_are_busy() {
    let source = Sized::new(2000, 5, Duration::ZERO);
    let addr = start(
        source.clone(),
        Limits::default()
            .with_max_connections(CAP)
            .with_max_listings(8),
    );

    // CAP idle connections, then a scrape: the oldest idle one makes room.
    let mut idle: Vec<TcpStream> = Vec::new();
    for _ in 0..CAP {
        idle.push(TcpStream::connect(addr).unwrap());
        std::thread::sleep(Duration::from_millis(50));
    }
    source
        .services
        .store(1, std::sync::atomic::Ordering::SeqCst);
    let (head, body) = get_all(addr, "/metrics");
    assert!(head.starts_with("HTTP/1.1 200"), "{head}");
    assert_eq!(
        sample(&body, "ipvs_http_connections_cut_total{reason=\"evicted\"}"),
        Some(1),
        "{}",
        http_lines(&body)
    );
    let oldest = drain(&mut idle[0], Duration::from_secs(2));
    assert!(oldest.closed && oldest.bytes == 0, "{oldest:?}");
    drop(idle);

    // CAP responses being sent (never read): nothing to make room with.
    source
        .services
        .store(2000, std::sync::atomic::Ordering::SeqCst);
    std::thread::sleep(Duration::from_millis(200));
    let mut busy: Vec<TcpStream> = (0..CAP)
        .map(|_| {
            let mut s = send_get(addr, "/metrics");
            assert!(read_head(&mut s, Duration::from_secs(10)).is_some());
            s
        })
        .collect();
    let mut refused = TcpStream::connect(addr).unwrap();
    let head = read_head(&mut refused, Duration::from_secs(5));
    assert!(
        head.as_deref()
            .is_some_and(|h| h.starts_with("HTTP/1.1 503")),
        "{head:?}"
    );
    let ending = drain(&mut refused, Duration::from_secs(2));
    assert!(ending.closed, "{ending:?}");
    busy.clear();
    std::thread::sleep(Duration::from_millis(200));
    source
        .services
        .store(1, std::sync::atomic::Ordering::SeqCst);
    let (_, body) = get_all(addr, "/metrics");
    assert_eq!(
        sample(&body, "ipvs_http_connections_refused_total"),
        Some(1),
        "{}",
        http_lines(&body)
    );
}
