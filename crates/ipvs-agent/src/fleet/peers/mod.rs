//! The peers: what the directors of a fleet tell each other on the peer
//! link, and what their reports allow.
//!
//! Contract: a report is authenticated (HMAC-SHA256 under the fleet's
//! peer key) and a datagram that does not verify or parse is dropped; a
//! leader cut off from etcd keeps its VIPs only while every configured
//! peer supports it, in a report fresh enough that etcd cannot have let
//! its lease expire; a new leader takes its VIPs no earlier than the last
//! report it sent that could have supported another's hold allows. No
//! I/O here: the link that sends and receives the reports is the
//! election's ([`crate::fleet::leader::peer_link`]).
//!
//! - [`reports`]: the peers' reports and the rule they feed ([`reports::Peers`]);
//! - [`datagram`]: one report as a datagram, written and verified.

pub mod datagram;
pub mod reports;
