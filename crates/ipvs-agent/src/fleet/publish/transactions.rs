//! A publish's puts and deletes split into transactions that etcd accepts: at most
//! `--max-txn-ops` operations and `--max-request-bytes` bytes each (etcd's
//! defaults 128 and 1.5 MiB), with room kept in each for the compares and
//! the publisher's own operations.
//!
//! ```
//! use ipvs_agent::fleet::publish::transactions::{batches, Limits};
//! let entries: Vec<(String, Vec<u8>)> =
//!     (0..300).map(|i| (format!("services/{i:08}"), vec![b'x'; 100])).collect();
//! let parts = batches(&entries, Limits::default()).unwrap();
//! assert_eq!(parts, vec![0..126, 126..252, 252..300]);
//! ```

use std::ops::Range;

/// etcd's limits on one transaction.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct Limits {
    /// Operations in one transaction (`--max-txn-ops`, default 128).
    pub max_ops: usize,
    /// Bytes of one request (`--max-request-bytes`, default 1.5 MiB).
    pub max_request_bytes: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_ops: 128,
            max_request_bytes: 1_572_864,
        }
    }
}

impl Limits {
    /// Limits other than etcd's defaults (a cluster started with others).
    pub fn new(max_ops: usize, max_request_bytes: usize) -> Self {
        Limits {
            max_ops,
            max_request_bytes,
        }
    }
}

/// Operations each transaction keeps for the publisher's own (the claim of
/// the generation, the flip of `current`).
pub const RESERVED_OPS: usize = 2;
/// Bytes each transaction keeps for its compares and the request's header.
pub const RESERVED_BYTES: usize = 4096;
/// What one put costs beyond its key and value (protobuf framing and the
/// raft request around it), rounded up.
pub const PUT_OVERHEAD: usize = 32;

/// The bytes one put of `key` and `value` is counted for.
pub fn put_bytes(key: &str, value: &[u8]) -> usize {
    key.len() + value.len() + PUT_OVERHEAD
}

/// The bytes one delete of `key` is counted for.
pub fn delete_bytes(key: &str) -> usize {
    key.len() + PUT_OVERHEAD
}

/// The entries in consecutive ranges, each within `limits`; the error names
/// an entry that fits in no transaction, with its size and the room there is.
pub fn batches(
    entries: &[(String, Vec<u8>)],
    limits: Limits,
) -> Result<Vec<Range<usize>>, (String, usize, usize)> {
    batches_by(
        entries.iter().map(|(k, v)| (k.as_str(), put_bytes(k, v))),
        limits,
    )
}

/// Operations (each its key and the bytes it is counted for:
/// [`put_bytes`], [`delete_bytes`]) in consecutive ranges, each within
/// `limits`; the error names an operation that fits in no transaction.
pub fn batches_by<'a>(
    ops: impl Iterator<Item = (&'a str, usize)>,
    limits: Limits,
) -> Result<Vec<Range<usize>>, (String, usize, usize)> {
    let most = limits.max_ops.saturating_sub(RESERVED_OPS).max(1);
    let room = limits.max_request_bytes.saturating_sub(RESERVED_BYTES);
    let mut out = Vec::new();
    let (mut start, mut bytes, mut end) = (0, 0, 0);
    for (i, (k, b)) in ops.enumerate() {
        if b > room {
            return Err((k.to_string(), b, room));
        }
        if i - start == most || bytes + b > room {
            out.push(start..i);
            start = i;
            bytes = 0;
        }
        bytes += b;
        end = i + 1;
    }
    if start < end {
        out.push(start..end);
    }
    Ok(out)
}
