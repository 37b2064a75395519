//! The VIPs: the leader's virtual addresses on an interface.
//!
//! Contract: added when the agent leads, removed when it steps down,
//! idempotently; an address already on the interface is announced but
//! not taken as this agent's, and only the addresses this agent added
//! are removed (by this run, or by the next one from the record a killed
//! run left); each address added is announced at once, so that the
//! segment sends to this director's MAC.
//!
//! - [`addresses`]: the VIPs added and removed through rtnetlink
//!   ([`addresses::Vips`]);
//! - [`record`]: the record on disk of the VIPs this agent added;
//! - [`garp`]: an IPv4 VIP announced by gratuitous ARP;
//! - [`unsolicited_na`]: an IPv6 VIP announced by an unsolicited
//!   neighbour advertisement;
//! - `packet`: the frame sent on the interface (`AF_PACKET`) for both.

pub mod addresses;
pub mod garp;
pub(crate) mod packet;
pub mod record;
pub mod unsolicited_na;
