//! Labs: hosts, each in a network namespace of its own ([`Netns`]
//! threads), joined by veth pairs. These labs use no bridge; the VM's
//! kernels have one now (.ci/vm/kernel-cache.bash's EXTRA_MODULES), and
//! the fleet's lab (crates/ipvs-agent/tests/vm/fleet_lab.rs) puts its
//! hosts on one L2 segment with it.
//!
//! * [`forwarding::ForwardingLab`]: a client, a director and two real
//!   servers, for traffic through a service in every forwarding method
//!   and family;
//! * [`backends::Backend`]: a real server a namespace, each behind a veth
//!   pair of its own from the director, serving TCP echo, HTTP, HTTPS, a
//!   silent listener or DNS, each port stopped and served again at will
//!   (a director daemon's health checks);
//! * [`failover::FailoverLab`]: two directors, a client and a real server,
//!   for the sync daemons and a failover between the directors.
//!
//! [`Netns`]: crate::netns::Netns

pub mod backends;
pub mod failover;
pub mod forwarding;
