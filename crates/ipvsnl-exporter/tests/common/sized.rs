//! A source of a synthetic table of any size (N services x D destinations),
//! which may take its time, and counts the listings it made.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use ipvsnl::{Destination, DestinationEntry, Service, ServiceEntry, ServiceKey, Stats};
use ipvsnl_exporter::{ScrapeError, Snapshot, Source};

/// `services` x `dests`: service `i` is TCP 10.x.y.z:80, its destinations
/// 172.16.x.y:8080 and up, every counter set.
pub(crate) fn big_table(services: usize, dests: usize) -> Vec<ServiceEntry> {
    (0..services)
        .map(|i| {
            let i = i as u32;
            let vip = std::net::Ipv4Addr::from(0x0a00_0000 | i);
            let stats = Stats::new()
                .with_conns(u64::from(i) * 1000)
                .with_packets(7, 8)
                .with_bytes(9, 10);
            ServiceEntry::new(Service::new(ServiceKey::tcp(vip.into(), 80)))
                .with_stats(stats)
                .with_destinations((0..dests).map(|d| {
                    let rip = std::net::Ipv4Addr::from(0xac10_0000 | (i << 4) | d as u32);
                    DestinationEntry::new(Destination::new(rip.into(), 8080 + d as u16))
                        .with_active_conns(d as u32)
                        .with_stats(stats)
                }))
        })
        .collect()
}

/// Lists `services` x `dests` (changeable while serving), building the
/// table first and then waiting `delay` before it answers.
#[derive(Clone)]
pub(crate) struct Sized {
    pub services: Arc<AtomicUsize>,
    pub dests: usize,
    pub delay: Duration,
    /// Listings made so far.
    pub listings: Arc<AtomicUsize>,
}

impl Sized {
    pub(crate) fn new(services: usize, dests: usize, delay: Duration) -> Self {
        Sized {
            services: Arc::new(AtomicUsize::new(services)),
            dests,
            delay,
            listings: Arc::new(AtomicUsize::new(0)),
        }
    }

    pub(crate) fn listings(&self) -> usize {
        self.listings.load(Ordering::SeqCst)
    }
}

impl Source for Sized {
    async fn scrape(&self) -> Result<Snapshot, ScrapeError> {
        let table = big_table(self.services.load(Ordering::SeqCst), self.dests);
        self.listings.fetch_add(1, Ordering::SeqCst);
        tokio::time::sleep(self.delay).await;
        Ok(Snapshot::new(table, Ok(Stats::new().with_conns(1))))
    }
}
