//! The plain netlink client: what a straightforward hand-written C client
//! (such as ipvsadm's library) does, with no abstraction over the socket.
//! Its figures are the floors the library is measured against.

pub mod attrs;
pub mod batches;
pub mod family;
pub mod listing;
pub mod socket;
pub mod sockopt;
