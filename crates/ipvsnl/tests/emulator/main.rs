//! The emulated kernel's tests, one binary with a module per topic:
//!
//! - `kernel`: the emulator refuses, lists and counts as the kernel does;
//! - `sockopt`: its socket-option interface lists what netlink lists;
//! - `faults`: the faults a daemon lives with, injected, and what the
//!   library makes of them;
//! - `socket_faults`: the emulated socket's own faults, and the answers
//!   IPVS gives rarely or never;
//! - `drain`: a removed destination's drain, with the counters a test
//!   sets (none set: deleted at once);
//! - `differential`: the emulator against the real kernel, request by
//!   request (a kernel test: ignored on the host, run in the VM);
//! - `bad_input`: the bad-input table never sent by a client, and sent
//!   raw, judged alike by the emulator and the kernel (the VM);
//! - `connections`: `/proc/net/ip_vs_conn` as a test sets it, printed as
//!   the kernel prints it (checked against the kernel's in the VM);
//! - `recovery`: a client after a socket the kernel stopped answering
//!   on moves to a fresh one for its next call;
//! - `reload`: the module reloaded at any change of a batch, one
//!   classification for every change it strikes;
//! - `one_controller`: one reconciling function, generic over the
//!   clients' operations, run with both clients.

mod bad_input;
mod connections;
mod differential;
mod drain;
mod faults;
mod kernel;
mod one_controller;
mod recovery;
mod reload;
mod socket_faults;
mod sockopt;

use std::net::IpAddr;

/// An address the test writes literally.
fn ip(s: &str) -> IpAddr {
    s.parse().unwrap()
}
