//! Following (`ipvs-agent run --etcd URL`): the configurations a running
//! agent takes from the store, each new generation as a reload.
//!
//! Contract: the first configuration is the complete generation (waited
//! for while etcd is unreachable or nothing is published); each new one
//! is handed to the agent whole, once the change adds up to `current`;
//! an error leaves the running configuration in place; the watch resumes
//! from the revision it has after a disconnect and reads the whole state
//! again after a compaction.
//!
//! - [`watch`]: [`Source`](watch::Source), the generations as etcd's
//!   watch brings them (only the values that changed parsed);
//! - [`reload`]: the first configuration waited for, then each new one
//!   handed to the agent (a [`reload::Reload`]: the daemon's handle,
//!   given by the command layer).

pub mod reload;
pub mod watch;
