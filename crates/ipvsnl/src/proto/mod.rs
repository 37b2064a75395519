//! The protocol core: pure state machines that speak IPVS generic netlink,
//! with no socket in sight, in the manner of quinn-proto.
//!
//! A driver (the blocking [`Client`](crate::Client), or one of your own
//! over any socket) owns the I/O; a machine owns every protocol decision:
//! sequence numbers, batch windows and ACK accounting, the barrier after
//! an overrun, reading out a dump abandoned half way, looking the family
//! id up again after the module was reloaded, taking an interrupted dump
//! again. The driver loops over [`Machine::poll`] and
//! [`Machine::handle`]:
//!
//! - [`Poll::Transmit`]: send these bytes as one datagram, report
//!   [`Input::Sent`] or [`Input::SendFailed`];
//! - [`Poll::Receive`]: receive (waiting as [`Wait`] says), report each
//!   datagram ([`Input::Datagram`], [`Input::Truncated`]), or
//!   [`Input::Overrun`] (`ENOBUFS`), [`Input::TimedOut`],
//!   [`Input::ReceiveFailed`];
//! - [`Poll::Finished`]: read the result.
//!
//! A [`Session`] keeps what lives between calls (family id, numbers, a
//! dump left unfinished); each call borrows it as a machine:
//! [`Session::call`] for a get or a dump ([`Call`]), [`Session::apply`]
//! for a pipelined batch of requests ([`Apply`], one [`Outcome`] per
//! request: done, refused, unknown, or not sent), and
//! [`Session::resolve_family`] ([`FamilyLookup`]). Dropping a machine
//! before it finished is always safe: the session stays consistent and
//! the next call does not read the abandoned one's replies.
//!
//! The crate's framing (its `frame` module) splits datagrams into
//! messages; it is what every machine reads with, and not public: a
//! [`Replies`] gets each IPVS message's command and attribute bytes (the
//! wire crate's `IpvsMessage::parse_with_param` reads them into owned
//! attributes). The fuzz targets reach the framing through `fuzzing`,
//! built only with `--cfg fuzzing`. The repeats a resumed dump can send
//! are dropped by the listing with this module's `keep_first`, whatever
//! the driver.

mod apply;
mod batch;
mod call;
mod closer;
mod family;
// Its items are `pub` for `fuzzing`: unreachable in every other build.
#[cfg_attr(not(fuzzing), allow(unreachable_pub))]
pub(crate) mod frame;
mod machine;
mod outcome;
pub(crate) mod repeats;
mod seq;
mod session;
mod state;

pub use apply::{Apply, Limits};
pub use batch::Encode;
pub use call::{Call, CallKind, Replies};
pub use family::FamilyLookup;
pub use machine::{Input, Machine, Poll, Wait};
pub use outcome::{Cause, Failure, Outcome, Outcomes};
pub use session::Session;

/// The framing's internals, for the fuzz targets only (after quinn's
/// `fuzzing` module): compiled only with `--cfg fuzzing`, which cargo-fuzz
/// passes to every crate it builds (`cargo fuzz run framing` in `fuzz/`;
/// see `fuzz/Cargo.toml`). Not part of the API: nothing else in the
/// workspace builds with that flag.
#[cfg(fuzzing)]
pub mod fuzzing {
    pub use super::frame::{all_frames, data_message_count, decode, frames, Frame, Frames, Reply};
}

#[cfg(test)]
mod tests;
