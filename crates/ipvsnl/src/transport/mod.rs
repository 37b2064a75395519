//! The I/O layer: one netlink socket, sans-IO framing on top of it.

pub(crate) mod frame;
pub(crate) mod netns;
pub(crate) mod socket;
