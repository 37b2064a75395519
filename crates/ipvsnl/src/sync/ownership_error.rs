//! Why an [`Ownership`](crate::sync::Ownership) record could not be
//! opened, read or written. Each names the record's file.

use std::io;
use std::path::PathBuf;

/// Why an ownership record could not be opened, read or written.
///
/// A refused record is never half-used: opening fails whole, and a write
/// that fails leaves the record (on disk and in memory) as it was.
///
/// ```
/// use ipvsnl::sync::{Ownership, OwnershipError};
/// let dir = std::env::temp_dir().join(format!("ipvsnl-doc-err-{}", std::process::id()));
/// std::fs::create_dir_all(&dir).unwrap();
/// let path = dir.join("owned");
/// std::fs::write(&path, "not a record\n").unwrap();
/// let e = Ownership::open(&path, "me").unwrap_err();
/// assert!(matches!(e, OwnershipError::Corrupt { line: 1, .. }), "{e}");
/// assert!(e.to_string().contains("owned"), "{e}");
/// # std::fs::remove_dir_all(&dir).unwrap();
/// ```
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum OwnershipError {
    /// Another owner holds the record (its lock file is locked): two
    /// owners must not share one record.
    #[error(
        "{}: the ownership record is held by another process (give each owner its own record)",
        path.display()
    )]
    Locked {
        /// The record's file.
        path: PathBuf,
    },
    /// Reading, writing or locking the record failed.
    #[error("{}: cannot {what} the ownership record: {source}", path.display())]
    Io {
        /// The file at fault (the record, its lock, its temporary file or
        /// its directory).
        path: PathBuf,
        /// What was being done (`read`, `write`, `lock`, ...).
        what: &'static str,
        /// The system's error.
        source: io::Error,
    },
    /// The record is not one this crate wrote, or was cut short or
    /// changed since (its trailer's count or checksum is wrong).
    #[error("{}:{line}: not a whole ownership record: {why}", path.display())]
    Corrupt {
        /// The record's file.
        path: PathBuf,
        /// The line at fault (1-based; the line after the last for a
        /// record cut short).
        line: usize,
        /// What is wrong there.
        why: String,
    },
    /// The record was written by another owner (another host, boot or
    /// namespace, as the owner's name tells them apart).
    #[error(
        "{}: the ownership record is {found:?}'s, not {expected:?}'s",
        path.display()
    )]
    OtherOwner {
        /// The record's file.
        path: PathBuf,
        /// The owner the record names.
        found: String,
        /// The owner that opened it.
        expected: String,
    },
}
