//! Publishing (`ipvs-agent publish FILE --etcd URL`): a configuration
//! file written as the fleet's next generation.
//!
//! Contract: a file with any error writes nothing (its errors are the
//! whole parse's, each at its line and column); only the entries that
//! changed since the stored generation are written, in transactions etcd
//! accepts, and `current` flips to the new generation in a last one, so
//! that a reader sees the old generation or the new one, never half; two
//! publishers cannot interleave (the second gets
//! [`FleetError::Conflict`](crate::fleet::FleetError::Conflict)); the
//! cache spares the services it knows their parse, and a wrong cache is
//! found out and dropped ([`FleetError::Stale`](crate::fleet::FleetError::Stale)).
//!
//! - [`file`](mod@file): a file published: read, parsed, written, its cache kept;
//! - [`incremental`]: the file parsed, only the `[[service]]` sections
//!   the [`cache`] does not know read and checked;
//! - [`cache`]: the publisher's cache (`--cache PATH`): what each section
//!   known by its text gave, and what the last publish stored;
//! - [`entries`]: a generation's entries as a publish gets them, some
//!   values made only when put;
//! - [`delta`]: the keys to put and to delete against what is stored;
//! - [`transactions`]: the puts and deletes cut into transactions within
//!   etcd's limits;
//! - [`write`](mod@write): the generation written: a claim, the changes,
//!   `current` flipped.

pub mod cache;
pub mod delta;
pub mod entries;
pub mod file;
pub mod incremental;
pub mod transactions;
pub mod write;
