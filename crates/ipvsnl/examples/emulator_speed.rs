//! How fast the emulated kernel is: 10,000 services with 5 destinations
//! each created (pipelined, one `apply`) and listed back whole, by the
//! blocking client over the emulator, natively on the host.
//!
//! `cargo run --release -p ipvsnl --features emulator --example emulator_speed`
//! (`EMULATOR_SPEED="1000 1"`: 1,000 services, one round, for an
//! instruction count under `valgrind --tool=callgrind`).

use std::net::IpAddr;
use std::time::Instant;

use ipvsnl::emulator::Kernel;
use ipvsnl::{Client, Destination, Request, Service, ServiceKey};

const DESTINATIONS: u32 = 5;

/// The CPU time this thread has used: on a shared machine, wall-clock
/// time counts the other processes too.
fn cpu_time() -> std::time::Duration {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid timespec to write; the clock id is a
    // constant every Linux has.
    let r = unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    assert_eq!(r, 0, "clock_gettime");
    std::time::Duration::new(ts.tv_sec as u64, ts.tv_nsec as u32)
}

fn main() {
    let (services, rounds) = match std::env::var("EMULATOR_SPEED") {
        Ok(v) => {
            let mut n = v.split_whitespace().map(|x| x.parse::<u32>().unwrap_or(1));
            (n.next().unwrap_or(10_000), n.next().unwrap_or(3))
        }
        Err(_) => (10_000, 3),
    };
    let mut requests = Vec::with_capacity((services * (DESTINATIONS + 1)) as usize);
    for i in 0..services {
        // Spread over the hash: 10.0.0.1, 10.0.0.2, ...
        let key = ServiceKey::tcp(IpAddr::from((0x0a00_0001 + i).to_be_bytes()), 80);
        requests.push(Request::add_service(Service::new(key)));
        for j in 0..DESTINATIONS {
            let addr = IpAddr::from((0xac10_0001 + j).to_be_bytes());
            requests.push(Request::AddDestination(key, Destination::new(addr, 80)));
        }
    }
    for round in 0..rounds {
        let kernel = Kernel::new();
        // A benchmark keeps no record of its 60,000 requests.
        kernel.set_recording(false);
        let mut ipvs = Client::emulated(&kernel);
        let started = Instant::now();
        let cpu = cpu_time();
        let outcomes = ipvs.apply(&requests);
        let created = started.elapsed();
        assert!(outcomes.iter().all(|o| o.is_ok()));
        let listed_at = Instant::now();
        let table = ipvs.table().expect("a listing");
        let listed = listed_at.elapsed();
        assert_eq!(table.len(), services as usize);
        assert!(table
            .iter()
            .all(|e| e.destinations.len() == DESTINATIONS as usize));
        let cpu = cpu_time() - cpu;
        println!(
            "round {round}: create {:.1} ms, list {:.1} ms, total {:.1} ms wall, {:.1} ms CPU",
            created.as_secs_f64() * 1e3,
            listed.as_secs_f64() * 1e3,
            started.elapsed().as_secs_f64() * 1e3,
            cpu.as_secs_f64() * 1e3
        );
    }
}
