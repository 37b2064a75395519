//! A writer in a namespace of its own that adds and deletes services in
//! pipelined batches: the churn that made the kernel's service dumps of
//! other namespaces skip services (`kernel_listing_whole/whole.rs`,
//! `kernel_listing_sockopt/sockopt.rs`).

use std::net::IpAddr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;

use ipvsnl::{Client, Request, Service, ServiceKey};

use super::fresh_netns;

/// A client of a namespace of its own adding, then deleting, 40 services
/// in pipelined batches, until told to stop; joined, it says how many
/// rounds it made (its namespace left empty).
pub struct Churn {
    stop: Arc<AtomicBool>,
    writer: JoinHandle<u64>,
}

impl Churn {
    /// Starts the writer on a thread of its own.
    pub fn start() -> Self {
        let stop = Arc::new(AtomicBool::new(false));
        let flag = Arc::clone(&stop);
        let writer = std::thread::spawn(move || {
            fresh_netns();
            let mut c = Client::new().unwrap();
            let keys: Vec<ServiceKey> = (1..=40u8)
                .map(|i| ServiceKey::tcp(IpAddr::from([10, 99, 0, i]), 80))
                .collect();
            let adds: Vec<Request> = keys
                .iter()
                .map(|k| Request::add_service(Service::new(*k)))
                .collect();
            let deletes: Vec<Request> = keys.iter().map(|k| Request::DeleteService(*k)).collect();
            let mut rounds = 0;
            while !flag.load(Ordering::Relaxed) {
                assert!(c.apply(&adds).iter().all(Result::is_ok), "churn: adds");
                assert!(
                    c.apply(&deletes).iter().all(Result::is_ok),
                    "churn: deletes"
                );
                rounds += 1;
            }
            rounds
        });
        Churn { stop, writer }
    }

    /// Stops and joins the writer; panics if it never churned.
    pub fn stop(self) -> u64 {
        self.stop.store(true, Ordering::Relaxed);
        let rounds = self.writer.join().expect("the churning writer panicked");
        assert!(rounds > 0, "the writer never churned");
        rounds
    }
}
