//! The ownership record on disk: its text form (read and written whole),
//! its atomic, durable write, and the lock that keeps one owner per
//! record.
//!
//! The form, one item a line:
//!
//! ```text
//! ipvsnl ownership record 1
//! owner <the owner's name>
//! key TCP 192.0.2.1:80
//! key fwmark 5 (IPv4)
//! end 2 <FNV-1a 64 of the lines above, in hex>
//! ```
//!
//! The trailer's count and checksum tell a record cut short or changed
//! from a whole one; anything else is refused, never half-read.

use std::collections::BTreeSet;
use std::fs::{File, OpenOptions};
use std::io::Write;
use std::os::fd::AsRawFd;
use std::path::{Path, PathBuf};

use crate::sync::ownership_error::OwnershipError;
use crate::ServiceKey;

/// The first line of every record.
const MAGIC: &str = "ipvsnl ownership record 1";

/// A record as read: its owner and keys.
pub(crate) struct Record {
    pub(crate) owner: String,
    pub(crate) keys: BTreeSet<ServiceKey>,
}

/// FNV-1a, 64 bits: enough to tell a changed record from a whole one
/// (no adversary: the file is the owner's own).
fn fnv(text: &str) -> u64 {
    text.bytes().fold(0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    })
}

/// The record's text.
pub(crate) fn encode(owner: &str, keys: &BTreeSet<ServiceKey>) -> String {
    let mut body = format!("{MAGIC}\nowner {owner}\n");
    for k in keys {
        body.push_str(&format!("key {k}\n"));
    }
    let sum = fnv(&body);
    body.push_str(&format!("end {} {sum:016x}\n", keys.len()));
    body
}

/// Reads a record's text (`path` for the errors).
pub(crate) fn decode(path: &Path, text: &str) -> Result<Record, OwnershipError> {
    let corrupt = |line: usize, why: String| OwnershipError::Corrupt {
        path: path.to_path_buf(),
        line,
        why,
    };
    let lines: Vec<&str> = text.split_inclusive('\n').collect();
    if lines.first().map(|l| l.trim_end_matches('\n')) != Some(MAGIC) {
        return Err(corrupt(1, format!("the first line is not {MAGIC:?}")));
    }
    let owner = match lines.get(1).map(|l| l.trim_end_matches('\n')) {
        Some(l) if l.starts_with("owner ") => l["owner ".len()..].to_string(),
        _ => return Err(corrupt(2, "no `owner` line".into())),
    };
    let mut keys = BTreeSet::new();
    let mut consumed = MAGIC.len() + 1 + lines[1].len();
    for (i, line) in lines.iter().enumerate().skip(2) {
        let n = i + 1;
        if !line.ends_with('\n') {
            return Err(corrupt(
                n,
                "the record is cut short (no end of line)".into(),
            ));
        }
        let l = line.trim_end_matches('\n');
        if let Some(key) = l.strip_prefix("key ") {
            let key: ServiceKey = key
                .parse()
                .map_err(|e| corrupt(n, format!("not a service key: {e}")))?;
            keys.insert(key);
            consumed += line.len();
            continue;
        }
        let Some(end) = l.strip_prefix("end ") else {
            return Err(corrupt(n, format!("{l:?} is not `key ...` or `end ...`")));
        };
        let (count, sum) = end
            .split_once(' ')
            .ok_or_else(|| corrupt(n, "the `end` line has no checksum".into()))?;
        let want = format!("{:016x}", fnv(&text[..consumed]));
        if count != (i - 2).to_string() || sum != want {
            return Err(corrupt(
                n,
                "the count or checksum does not match the lines above (changed or cut short)"
                    .into(),
            ));
        }
        if i + 1 != lines.len() {
            return Err(corrupt(n + 1, "lines after `end`".into()));
        }
        return Ok(Record { owner, keys });
    }
    Err(corrupt(
        lines.len() + 1,
        "the record is cut short (no `end` line)".into(),
    ))
}

/// Reads the record at `path` (`None`: there is none).
pub(crate) fn read(path: &Path) -> Result<Option<Record>, OwnershipError> {
    match std::fs::read(path) {
        Ok(bytes) => {
            let text = String::from_utf8(bytes).map_err(|e| OwnershipError::Corrupt {
                path: path.to_path_buf(),
                line: 1,
                why: format!("not UTF-8 text: {e}"),
            })?;
            decode(path, &text).map(Some)
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(source) => Err(io(path, "read", source)),
    }
}

fn io(path: &Path, what: &'static str, source: std::io::Error) -> OwnershipError {
    OwnershipError::Io {
        path: path.to_path_buf(),
        what,
        source,
    }
}

/// `path` with `suffix` appended to its file name.
pub(crate) fn beside(path: &Path, suffix: &str) -> PathBuf {
    let mut name = path.file_name().unwrap_or_default().to_os_string();
    name.push(suffix);
    path.with_file_name(name)
}

/// Writes `text` to `path` atomically and durably: a temporary file
/// beside it, written and synced, renamed over it, the directory synced.
/// A crash leaves the old record or the new one, whole.
pub(crate) fn write(path: &Path, text: &str) -> Result<(), OwnershipError> {
    let tmp = beside(path, ".tmp");
    let mut f = File::create(&tmp).map_err(|e| io(&tmp, "create", e))?;
    f.write_all(text.as_bytes())
        .and_then(|()| f.sync_all())
        .map_err(|e| io(&tmp, "write", e))?;
    drop(f);
    std::fs::rename(&tmp, path).map_err(|e| io(path, "replace", e))?;
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    File::open(dir)
        .and_then(|d| d.sync_all())
        .map_err(|e| io(dir, "sync the directory of", e))
}

/// Takes the record's lock (`<path>.lock`, kept for the owner's life):
/// an exclusive `flock`, released by the kernel when the owner's process
/// ends, however it ends.
pub(crate) fn lock(path: &Path) -> Result<File, OwnershipError> {
    let lock_path = beside(path, ".lock");
    let f = OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(&lock_path)
        .map_err(|e| io(&lock_path, "open the lock of", e))?;
    // SAFETY: flock on a descriptor this function owns, open for the
    // call; std has no file lock at the crate's MSRV (File::lock: 1.89).
    let rc = unsafe { libc::flock(f.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) };
    if rc == 0 {
        return Ok(f);
    }
    let e = std::io::Error::last_os_error();
    if e.raw_os_error() == Some(libc::EWOULDBLOCK) {
        return Err(OwnershipError::Locked {
            path: path.to_path_buf(),
        });
    }
    Err(io(&lock_path, "lock", e))
}
