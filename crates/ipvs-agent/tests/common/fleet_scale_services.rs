//! Support, no test: the 10,000-service configuration that the VM's
//! `fleet_vm_scale` publishes and the figures (`fleet_scale_figures`,
//! `fleet_publish_cost`) measure. Included by `#[path]` in the `vm` and
//! `figures` test binaries.

use std::net::IpAddr;

use ipvsnl::ServiceKey;

/// The services of the scale configuration.
pub(crate) const SERVICES: usize = 10_000;
/// The service whose weight the change sets.
pub(crate) const CHANGED: usize = 4321;

/// The address of service `i` of [`scale_text`] (10.200.0.0 on).
pub(crate) fn service_addr(i: usize) -> IpAddr {
    IpAddr::from([
        10,
        200 + (i / 65536) as u8,
        (i / 256 % 256) as u8,
        (i % 256) as u8,
    ])
}

/// The key of service `i` of [`scale_text`].
pub(crate) fn service_key(i: usize) -> ServiceKey {
    ServiceKey::tcp(service_addr(i), 80)
}

/// `n` TCP services on port 80 (round robin), each with `servers` real
/// servers by direct routing, weight 1 but service [`CHANGED`]'s first
/// server, weight `weight`; no health check (every server in).
pub(crate) fn scale_text(n: usize, servers: &[IpAddr], weight: u32) -> String {
    let mut text = String::from("[agent]\nresync = \"10m\"\n");
    for i in 0..n {
        text.push_str(&format!(
            "[[service]]\nprotocol = \"tcp\"\naddress = \"{}\"\nport = 80\n",
            service_addr(i)
        ));
        for (j, s) in servers.iter().enumerate() {
            let w = if i == CHANGED && j == 0 { weight } else { 1 };
            text.push_str(&format!(
                "[[service.server]]\naddress = \"{s}\"\nport = 80\nweight = {w}\nforward = \"route\"\n"
            ));
        }
    }
    text
}
