//! Leadership: which director of the fleet holds the VIPs and runs the
//! kernel's sync daemon as master, and what it does on each change.
//!
//! Contract: an agent leads when etcd's election says so **and** its
//! lease was renewed recently enough that etcd cannot have let it expire
//! (or, cut off from etcd, while every peer supports it); it steps down
//! before its lease can expire, so no two directors answer for a VIP; a
//! new leader takes its VIPs first, one stepping down drops them first.
//!
//! - [`state_machine`]: the rule, a state machine of times and events
//!   (no I/O);
//! - [`election`]: its driver, on etcd's election API and a lease;
//! - `keepalive`: the lease renewed every TTL/3, each renewal an event;
//! - [`peer_link`]: the reports to and from the peers over UDP, each an
//!   event of the machine;
//! - [`actions`]: each change of role applied: the VIPs and the sync
//!   daemon;
//! - [`sync_daemon`]: the kernel's sync daemon as master on the leader,
//!   backup on the followers.

pub mod actions;
pub mod election;
mod keepalive;
pub mod peer_link;
pub mod state_machine;
pub mod sync_daemon;
