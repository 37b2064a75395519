//! Labs: hosts, each in a network namespace of its own ([`Netns`]
//! threads), joined by veth pairs (the VM's kernels have veth and dummy but
//! no bridge).
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
