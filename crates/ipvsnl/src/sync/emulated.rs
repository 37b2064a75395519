//! The sync engine's tests run on the emulated kernel ([`crate::emulator`]),
//! the one model of the kernel: here is how they connect to it and what
//! they ask of it.

use std::net::IpAddr;
use std::time::Duration;

use crate::client_core::ClientCore;
use crate::emulator::{Connections, Kernel, Port, Taken};
use crate::{
    ClientOptions, Destination, DestinationEntry, Request, RequestKind, Service, ServiceKey, Stats,
};

/// The clients' reply timeout.
pub(crate) const TIMEOUT: Duration = Duration::from_secs(5);

/// A client's connection to the kernel's initial namespace; `told`: its
/// namespace can be told apart (as a real client's, by its namespace file).
pub(crate) fn connect(kernel: &Kernel, told: bool) -> ClientCore<Port> {
    let port = Port::open(kernel, crate::emulator::INIT_NETNS);
    let serial = port.serial();
    let opts = ClientOptions::default().with_timeout(TIMEOUT);
    // No socket-option interface: listings check themselves by dumping
    // again, as on a host without one.
    let no_sockopt = Err(std::io::Error::from_raw_os_error(libc::EAFNOSUPPORT));
    let dumps = Port::open(kernel, crate::emulator::INIT_NETNS);
    let mut core = ClientCore::new(port, 1 << 20, opts, None, (dumps, no_sockopt));
    core.emulated_ns = told.then_some(serial);
    core
}

/// Adds a service with destinations (each with its active connections).
pub(crate) fn put(kernel: &Kernel, service: Service, dests: &[(Destination, u32)]) {
    let ns = kernel.init_netns();
    let key = service.key;
    let mut requests = vec![Request::add_service(service)];
    requests.extend(dests.iter().map(|(d, _)| Request::AddDestination(key, *d)));
    assert!(ns.apply(&requests).iter().all(|&e| e == 0), "set up {key}");
    for (d, active) in dests {
        let conns = Connections::default().with_active(*active);
        ns.set_destination_state(&key, d.addr, d.port, conns, Stats::default());
    }
}

/// A destination of a service, if there.
pub(crate) fn dest(kernel: &Kernel, key: &ServiceKey, addr: IpAddr) -> Option<DestinationEntry> {
    let entry = kernel.init_netns().service(key)?;
    entry
        .destinations
        .into_iter()
        .find(|d| d.destination.addr == addr)
}

/// How many services the kernel holds.
pub(crate) fn services(kernel: &Kernel) -> usize {
    kernel.init_netns().table().len()
}

/// The changes taken so far (answered or not).
pub(crate) fn changes(kernel: &Kernel) -> Vec<Request> {
    kernel
        .requests()
        .into_iter()
        .filter(Taken::is_change)
        .filter_map(|t| t.request)
        .collect()
}

/// The services read back one by one (taken, answered or not).
pub(crate) fn reads(kernel: &Kernel) -> Vec<ServiceKey> {
    kernel
        .requests()
        .iter()
        .filter(|t| t.kind == Some(RequestKind::GetService))
        .filter_map(|t| t.service)
        .collect()
}
