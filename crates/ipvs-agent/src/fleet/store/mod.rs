//! The store: how one configuration is kept under a prefix in etcd, and
//! read back.
//!
//! Contract: keys are named by content (a service's key ends in its
//! value's XXH3-128), so comparing keys compares values; `PREFIX/current`
//! names the complete generation, its service count and the sum of its
//! keys' digests, and a reader takes a generation only when what it read
//! adds up to `current` (never half of a publish); every value reads
//! back, through the configuration parser, equal to what was encoded;
//! every request to etcd is bounded by a timeout.
//!
//! - [`layout`]: the keys under a prefix, a configuration's entries and
//!   their verification against `current`;
//! - [`encode`]: a service and the agent's settings as the text of one
//!   value (canonical, versioned TOML);
//! - [`current`]: the `current` record and the digests (a sum a watcher
//!   updates key by key);
//! - [`values`]: a generation's values parsed into one configuration
//!   (only those that changed, with a [`values::ParseCache`]);
//! - [`read`]: a generation read at one revision and verified;
//! - [`etcd`]: the connection, every request bounded by a timeout.

pub mod current;
pub mod encode;
pub mod etcd;
pub mod layout;
pub mod read;
pub mod values;
