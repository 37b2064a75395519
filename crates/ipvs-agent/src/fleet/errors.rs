//! What can go wrong in fleet mode, each error naming what failed: the
//! etcd endpoints that could not be reached, the generation that is
//! incomplete, the key whose value does not parse, the file with errors.
//!
//! ```
//! use ipvs_agent::fleet::FleetError;
//! let e = FleetError::Conflict {
//!     prefix: "/ipvs".into(),
//!     reason: "`current` changed since it was read".into(),
//! };
//! assert_eq!(
//!     e.to_string(),
//!     "/ipvs: another publisher got there first: `current` changed since it was read; nothing of this publish is in effect"
//! );
//! ```

use std::fmt;

use crate::config::LoadError;

/// Why a fleet operation failed.
#[derive(Debug)]
#[non_exhaustive]
pub enum FleetError {
    /// etcd did not answer (connection refused, timed out, no leader).
    Unreachable {
        /// The endpoints tried, comma-separated, as given.
        endpoints: String,
        /// What was being done.
        operation: &'static str,
        /// The client's message.
        message: String,
    },
    /// etcd answered with an error other than unreachability.
    Etcd {
        /// What was being done.
        operation: &'static str,
        /// etcd's message.
        message: String,
    },
    /// Nothing is published under the prefix (no `current`).
    NothingPublished {
        /// The prefix.
        prefix: String,
    },
    /// `current`'s value is not a record this agent reads.
    BadCurrent {
        /// The key.
        key: String,
        /// What is wrong with it.
        message: String,
    },
    /// The generation `current` names does not have the entries `current`
    /// records: keys missing or extra, or a digest that differs.
    Incomplete {
        /// The generation.
        generation: u64,
        /// What differs.
        message: String,
    },
    /// Another publisher changed `current`, or is writing a generation now:
    /// nothing of this publish is in effect.
    Conflict {
        /// The prefix.
        prefix: String,
        /// What the check found.
        reason: String,
    },
    /// A stored value that does not parse as configuration text.
    Value {
        /// The key.
        key: String,
        /// The parser's message (with the line in the value).
        message: String,
    },
    /// A service whose value fits in no transaction within etcd's limits.
    TooLarge {
        /// The key.
        key: String,
        /// Its size in bytes (key, value and framing).
        bytes: usize,
        /// The room one transaction has.
        room: usize,
    },
    /// A read at a revision etcd has compacted away.
    Compacted {
        /// The revision asked for.
        revision: i64,
    },
    /// The configuration file could not be read or has errors.
    File(LoadError),
    /// An entry the publisher's cache (`--cache`) named, made again from
    /// the file, is not the value its key names: the cache was wrong;
    /// nothing is written.
    Stale {
        /// The entry's key.
        key: String,
    },
}

impl fmt::Display for FleetError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            FleetError::Unreachable {
                endpoints,
                operation,
                message,
            } => write!(f, "etcd at {endpoints} unreachable ({operation}): {message}"),
            FleetError::Etcd { operation, message } => write!(f, "etcd: {operation}: {message}"),
            FleetError::NothingPublished { prefix } => {
                write!(f, "{prefix}: nothing published (no `{prefix}/current`)")
            }
            FleetError::BadCurrent { key, message } => write!(f, "{key}: {message}"),
            FleetError::Incomplete {
                generation,
                message,
            } => write!(f, "generation {generation} is incomplete: {message}"),
            FleetError::Conflict { prefix, reason } => write!(
                f,
                "{prefix}: another publisher got there first: {reason}; nothing of this publish is in effect"
            ),
            FleetError::Value { key, message } => write!(f, "{key}: {message}"),
            FleetError::TooLarge { key, bytes, room } => write!(
                f,
                "{key}: {bytes} bytes, more than the {room} one etcd transaction holds"
            ),
            FleetError::Compacted { revision } => {
                write!(f, "etcd: revision {revision} has been compacted")
            }
            FleetError::File(e) => write!(f, "{e}"),
            FleetError::Stale { key } => write!(
                f,
                "{key}: the publish cache named a value the file does not give; nothing written \
                 (publish again: the cache is removed)"
            ),
        }
    }
}

impl std::error::Error for FleetError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            FleetError::File(e) => Some(e),
            _ => None,
        }
    }
}

impl FleetError {
    /// Whether trying again later may succeed (etcd unreachable).
    pub fn is_transient(&self) -> bool {
        matches!(self, FleetError::Unreachable { .. })
    }
}
