//! Reading the kernel's table for an oracle, in the tests of the sync
//! engine and of the protocol's failure paths.

use ipvsnl::sync::Table;
use ipvsnl::{AddressFamily, Client, ServiceKey};

/// One service key of every kind: TCP, UDP and SCTP on IPv4 and IPv6, port
/// 0 and 65535, fwmark services of both families and the largest mark.
pub fn every_kind_of_key() -> Vec<ServiceKey> {
    let ip = |s: &str| s.parse().expect("an address");
    vec![
        ServiceKey::tcp(ip("10.0.0.1"), 80),
        ServiceKey::udp(ip("10.0.0.1"), 53),
        ServiceKey::sctp(ip("10.0.0.1"), 9000),
        ServiceKey::tcp(ip("2001:db8::1"), 443),
        ServiceKey::udp(ip("2001:db8::1"), 53),
        ServiceKey::sctp(ip("2001:db8::1"), 65535),
        ServiceKey::tcp(ip("10.0.0.2"), 0),
        ServiceKey::fwmark(1, AddressFamily::Inet),
        ServiceKey::fwmark(1, AddressFamily::Inet6),
        ServiceKey::fwmark(u32::MAX, AddressFamily::Inet),
    ]
}

/// The kernel's table as a [`Table`]: `Client::table` is whole while
/// other namespaces change theirs (the regression tests of that are in
/// `kernel_listing_whole.rs`), so one listing is the oracle.
pub fn kernel_table(c: &mut Client) -> Table {
    Table::from_entries(c.table().expect("list the table"))
}

/// A lock that makes tests take turns (a poisoned one is taken anyway: the
/// test that panicked reports its own failure).
pub fn serial(lock: &'static std::sync::Mutex<()>) -> std::sync::MutexGuard<'static, ()> {
    lock.lock().unwrap_or_else(|e| e.into_inner())
}

/// Panics unless the kernel's table has the settings of `want`.
pub fn assert_converged(c: &mut Client, want: &Table) {
    let got = kernel_table(c);
    assert!(
        got.same_settings(want),
        "kernel holds {} services / {} destinations, wanted {} / {}",
        got.len(),
        got.destination_count(),
        want.len(),
        want.destination_count()
    );
}
