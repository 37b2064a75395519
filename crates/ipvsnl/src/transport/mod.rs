//! The I/O layer: one netlink socket (the framing is the protocol core's,
//! [`crate::proto::frame`]).

pub(crate) mod netns;
pub(crate) mod socket;
