//! The main job, end to end: in a network namespace of its own (so it never
//! touches the host's table), create services of every kind with the
//! library, push a thousand more through one pipelined batch, and list the
//! table back.
//!
//! Run it where IPVS exists, as root: `.ci/demo` boots a VM and runs it.

use std::net::IpAddr;
use std::process::{Command, ExitCode};
use std::time::Instant;

use ipvsnl::{
    AddressFamily, Client, Destination, Forward, Netmask, Request, Scheduler, Service,
    ServiceEntry, ServiceFlags, ServiceKey, Tunnel, TunnelFlags,
};

fn main() -> ExitCode {
    match run() {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("demo: {e}");
            ExitCode::FAILURE
        }
    }
}

fn ip(s: &str) -> IpAddr {
    s.parse().expect("literal address")
}

fn run() -> Result<(), Box<dyn std::error::Error>> {
    enter_private_namespace()?;
    let mut ipvs = Client::new()?;
    let info = ipvs.info()?;
    println!(
        "IPVS {} (connection table size {})",
        info.version_string(),
        info.conn_tab_size
    );

    let web = ServiceKey::tcp(ip("192.0.2.10"), 80);
    ipvs.add_service(&Service::new(web).with_scheduler(Scheduler::RoundRobin))?;
    for (i, real) in ["10.1.0.1", "10.1.0.2", "10.1.0.3"].into_iter().enumerate() {
        let d = Destination::new(ip(real), 8080).with_weight(i as u32 + 1);
        ipvs.add_destination(&web, &d)?;
    }

    let dns = ServiceKey::udp(ip("2001:db8::53"), 53);
    let dns_svc = Service::new(dns)
        .with_scheduler(Scheduler::SourceHashing)
        .with_flags(ServiceFlags::SH_PORT | ServiceFlags::SH_FALLBACK)
        .with_persistence(60)
        .with_netmask(Netmask::V6(64));
    ipvs.add_service(&dns_svc)?;
    ipvs.add_destination(
        &dns,
        &Destination::new(ip("2001:db8::1:1"), 53).with_forward(Forward::Route),
    )?;

    let marked = ServiceKey::fwmark(7, AddressFamily::Inet);
    ipvs.add_service(&Service::new(marked).with_scheduler(Scheduler::Maglev))?;
    let gue = Tunnel::gue(6080).with_flags(TunnelFlags::CSUM);
    ipvs.add_destination(
        &marked,
        &Destination::new(ip("10.2.0.1"), 0).with_forward(Forward::Tunnel(gue)),
    )?;
    // A tunnel may cross address families.
    ipvs.add_destination(
        &marked,
        &Destination::new(ip("2001:db8::2:1"), 0).with_forward(Forward::Tunnel(Tunnel::ipip())),
    )?;

    // Bad input is refused before anything is sent.
    let refused = ipvs
        .add_destination(
            &web,
            &Destination::new(ip("10.1.0.9"), 80).with_thresholds(0, 5),
        )
        .unwrap_err();
    println!("refused locally: {refused}");
    // The kernel's refusals keep their errno and say what failed.
    let dup = ipvs.add_service(&Service::new(web)).unwrap_err();
    println!(
        "refused by the kernel: {dup} [errno {}]",
        dup.errno().unwrap_or(0)
    );

    // A thousand services with two destinations each, pipelined.
    let mut batch = Vec::new();
    for i in 0..1000u32 {
        let key = ServiceKey::tcp(IpAddr::from([198, 18, (i >> 8) as u8, i as u8]), 443);
        batch.push(Request::add_service(Service::new(key)));
        for r in 1..=2u8 {
            batch.push(Request::AddDestination(
                key,
                Destination::new(IpAddr::from([172, 16, r, (i % 250) as u8 + 1]), 443),
            ));
        }
    }
    let started = Instant::now();
    let outcomes = ipvs.apply(&batch);
    let failed = outcomes.iter().filter(|o| o.is_err()).count();
    println!(
        "pipelined {} requests in {:.3} s, {} failed",
        batch.len(),
        started.elapsed().as_secs_f64(),
        failed
    );

    let started = Instant::now();
    let table = ipvs.table()?;
    println!(
        "listed {} services and {} destinations in {:.3} s",
        table.len(),
        table.iter().map(|t| t.destinations.len()).sum::<usize>(),
        started.elapsed().as_secs_f64()
    );
    let mut shown: Vec<&ServiceEntry> = table
        .iter()
        .filter(|t| !matches!(t.service.key, ServiceKey::Inet { port: 443, .. }))
        .collect();
    shown.sort_by_key(|t| t.service.key);
    for t in shown {
        print_entry(t);
    }
    if failed != 0 {
        return Err(format!("{failed} pipelined requests failed").into());
    }
    Ok(())
}

fn print_entry(t: &ServiceEntry) {
    let s = &t.service;
    print!("{}  {}", s.key, s.scheduler);
    if !s.flags.is_empty() {
        print!("  flags {}", s.flags.display_for(&s.scheduler));
    }
    if s.flags.contains(ServiceFlags::PERSISTENT) {
        print!("  persistent {} s, netmask {}", s.timeout, s.netmask);
    }
    println!();
    for d in &t.destinations {
        let dest = &d.destination;
        print!("  -> {} port {}  {}", dest.addr, dest.port, dest.forward);
        if let Some(tun) = dest.forward.tunnel() {
            print!(" ({tun})");
        }
        println!(
            "  weight {}  active {} inactive {}",
            dest.weight, d.active_conns, d.inactive_conns
        );
    }
}

/// Moves this (single-threaded) process into a new network namespace with
/// `lo` up, so the demo's table is its own.
fn enter_private_namespace() -> Result<(), Box<dyn std::error::Error>> {
    // SAFETY: unshare takes only flags; the process has one thread here, so
    // the whole process moves.
    if unsafe { libc::unshare(libc::CLONE_NEWNET) } != 0 {
        return Err(format!(
            "cannot create a network namespace (run as root): {}",
            std::io::Error::last_os_error()
        )
        .into());
    }
    let status = Command::new("ip")
        .args(["link", "set", "lo", "up"])
        .status()?;
    if !status.success() {
        return Err("`ip link set lo up` failed".into());
    }
    Ok(())
}
