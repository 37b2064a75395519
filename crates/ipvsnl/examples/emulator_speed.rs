//! How fast the emulated kernel is: 10,000 services with 5 destinations
//! each created (pipelined, one `apply`) and listed back whole, by the
//! blocking client over the emulator, natively on the host.
//!
//! `cargo run --release -p ipvsnl --features emulator --example emulator_speed`

use std::net::IpAddr;
use std::time::Instant;

use ipvsnl::emulator::Kernel;
use ipvsnl::{Client, Destination, Request, Service, ServiceKey};

const SERVICES: u32 = 10_000;
const DESTINATIONS: u32 = 5;

fn main() {
    let mut requests = Vec::with_capacity((SERVICES * (DESTINATIONS + 1)) as usize);
    for i in 0..SERVICES {
        // Spread over the hash: 10.0.0.1, 10.0.0.2, ...
        let key = ServiceKey::tcp(IpAddr::from((0x0a00_0001 + i).to_be_bytes()), 80);
        requests.push(Request::add_service(Service::new(key)));
        for j in 0..DESTINATIONS {
            let addr = IpAddr::from((0xac10_0001 + j).to_be_bytes());
            requests.push(Request::AddDestination(key, Destination::new(addr, 80)));
        }
    }
    for round in 0..3 {
        let kernel = Kernel::new();
        // A benchmark keeps no record of its 60,000 requests.
        kernel.set_recording(false);
        let mut ipvs = Client::emulated(&kernel);
        let started = Instant::now();
        let outcomes = ipvs.apply(&requests);
        let created = started.elapsed();
        assert!(outcomes.iter().all(|o| o.is_ok()));
        let listed_at = Instant::now();
        let table = ipvs.table().expect("a listing");
        let listed = listed_at.elapsed();
        assert_eq!(table.len(), SERVICES as usize);
        assert!(table.iter().all(|e| e.destinations.len() == DESTINATIONS as usize));
        println!(
            "round {round}: create {:.1} ms, list {:.1} ms, total {:.1} ms",
            created.as_secs_f64() * 1e3,
            listed.as_secs_f64() * 1e3,
            started.elapsed().as_secs_f64() * 1e3
        );
    }
}
