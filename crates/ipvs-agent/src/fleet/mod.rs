//! Fleet mode (issue 26, part 1): one desired state in etcd.
//!
//! - [`encode`]: a service and the agent's settings as the text of one
//!   etcd value (canonical, versioned TOML the configuration parser reads
//!   back equal);
//! - [`current`]: the record naming the complete generation, with its
//!   service count and digest (a sum a watcher updates per key);
//! - [`delta`]: what a publish writes: only the entries that changed;
//! - [`split`]: a generation's puts in transactions within etcd's limits;
//! - [`layout`]: the keys under a prefix, a configuration's entries and
//!   their verification; [`values`]: the values parsed (only those that
//!   changed, for a watcher);
//! - [`connect`]: the etcd client, every request bounded by a timeout;
//! - [`write`](mod@write) and [`read`]: a generation written so that a reader never
//!   sees half of it, and read back verified;
//! - [`publish`]: `ipvs-agent publish FILE --etcd URL`: the file made
//!   ready by [`prepare`] (only the services that changed read, the others
//!   known from the publisher's [`memo`]), its entries [`staged`];
//! - [`watch`]: [`Source`], the configurations a running agent follows;
//!   [`follow`]: a daemon following them (`ipvs-agent run --etcd`);
//! - [`leadership`]: whether this agent may hold the VIPs (a state
//!   machine of times and events); [`election`]: the driver, on etcd's
//!   election API and a lease (issue 26, part 2), its lease renewed by
//!   `keepalive`; [`roles`]: the kernel's
//!   sync daemon as master on the leader, backup on the followers;
//!   [`vip`]: the leader's addresses on an interface (rtnetlink), each
//!   IPv4 one announced by [`garp`], each IPv6 one by [`unsolicited_na`]
//!   (both sent by [`packet`]); [`lead`]: both applied on each change
//!   of role;
//! - [`peers`]: the other directors' reports on their own link and what
//!   they allow (a leader cut off from etcd keeps its VIPs while every
//!   peer is too); [`peer_link`]: their reports over UDP, each a
//!   [`peer_datagram`];
//!   [`vip_state`]: the record of the VIPs this agent added, on disk, so
//!   that a restarted agent removes what a killed one left;
//! - [`errors`]: [`FleetError`], naming what failed.

pub mod connect;
pub mod current;
pub mod delta;
pub mod election;
pub mod encode;
pub mod errors;
pub mod follow;
pub mod garp;
mod keepalive;
pub mod layout;
pub mod lead;
pub mod leadership;
pub mod memo;
pub mod packet;
pub mod peer_datagram;
pub mod peer_link;
pub mod peers;
pub mod prepare;
pub mod publish;
pub mod read;
pub mod roles;
pub mod split;
pub mod staged;
pub mod unsolicited_na;
pub mod values;
pub mod vip;
pub mod vip_state;
pub mod watch;
pub mod write;

pub use errors::FleetError;
pub use watch::Source;
