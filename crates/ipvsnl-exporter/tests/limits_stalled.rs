//! Clients that ask for the metrics and never read them: what the server
//! holds for them stays bounded, whatever the table's size. Alone in its
//! test binary, so the RSS it reads is the server's and this test's only.

mod common;

use std::time::{Duration, Instant};

use common::served::{mib, read_head, rss_bytes, send_get, start};
use common::sized::Sized;
use ipvsnl_exporter::Limits;

const READERS: usize = 40;

/// What `READERS` never-reading clients of one `services` x 5 table add
/// to the process's RSS, in bytes, measured from the moment the table of
/// their scrape is listed (so the one listing every scrape needs is not
/// counted) until each has its response's head; and the listings made for
/// them.
fn growth_from_stalled_readers(services: usize) -> (u64, usize) {
    // The listing waits 1 s after building the table: long enough for
    // every reader to send its request while it is taken.
    let source = Sized::new(services, 5, Duration::from_secs(1));
    let addr = start(source.clone(), Limits::default());
    // A whole scrape first: the renderer's label sets are built and kept.
    let (head, body) = common::served::get_all(addr, "/metrics");
    assert!(head.starts_with("HTTP/1.1 200"), "{head}");
    assert!(body.len() > services * 5 * 1000, "{} bytes", body.len());
    drop(body);
    let before = source.listings();

    let mut readers = vec![send_get(addr, "/metrics")];
    let deadline = Instant::now() + Duration::from_secs(10);
    while source.listings() == before {
        assert!(
            Instant::now() < deadline,
            "the first reader's listing never began"
        );
        std::thread::sleep(Duration::from_millis(5));
    }
    let rss_listed = rss_bytes();
    readers.extend((1..READERS).map(|_| send_get(addr, "/metrics")));
    for (i, r) in readers.iter_mut().enumerate() {
        let head = read_head(r, Duration::from_secs(20))
            .unwrap_or_else(|| panic!("reader {i} got no response head"));
        assert!(head.starts_with("HTTP/1.1 200"), "{head}");
    }
    // Let the server fill the sockets as far as they take.
    std::thread::sleep(Duration::from_millis(500));
    let rss_stalled = rss_bytes();
    let growth = rss_stalled.saturating_sub(rss_listed);
    eprintln!(
        "{services} x 5: RSS {:.1} MiB with the listing taken, {:.1} MiB with {READERS} \
         stalled readers: +{:.1} MiB; listings made for them: {}",
        mib(rss_listed),
        mib(rss_stalled),
        mib(growth),
        source.listings() - before
    );
    drop(readers);
    (growth, source.listings() - before)
}

/// 40 clients of a 10,000 x 5 table (156 MB of text) and of a 20,000 x 5
/// one stop reading after the head: each may hold about one part of the
/// body (64 KiB) and hyper's buffers, not its own copy of the table.
/// Before the fix each held its own listing and renderer (some 6 MiB a
/// reader at 10,000 x 5).
#[test]
fn never_reading_clients_hold_a_bounded_part_whatever_the_table() {
    let bound = 16 << 20;
    let small = growth_from_stalled_readers(10_000);
    let large = growth_from_stalled_readers(20_000);
    assert!(
        small.0 < bound && large.0 < bound,
        "{READERS} stalled readers added {:.1} MiB (10,000 x 5, {} listings) and {:.1} MiB \
         (20,000 x 5, {} listings); at most {:.0} MiB expected",
        mib(small.0),
        small.1,
        mib(large.0),
        large.1,
        mib(bound)
    );
}
