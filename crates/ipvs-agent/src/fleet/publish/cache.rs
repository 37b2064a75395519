//! The publisher's cache: for each `[[service]]` section of a file
//! ([`sections`](crate::config)) that read and checked without an error,
//! by the XXH3-128 of its text, what it gave: the service's identity and
//! name (for the checks across services) and its entry's digest and
//! length. A publish of a file where one service changed reads only that
//! one's section; the others are known by their text.
//!
//! The cache holds for one context ([`context`]): this program (its
//! version, and its executable's size, time and inode, so a rebuilt one
//! starts afresh) and the digest of the file's top part. It also says
//! what the publish that wrote it stored ([`Cache::stored`]): its prefix, the
//! revision of its `current` and each section's slot, so that the next
//! publish to that prefix knows the keys stored without reading them
//! (checked: `write`). It is kept in a file (`--cache PATH`), written whole
//! to a temporary file then renamed over the old one; a file missing, of
//! another version, or whose closing checksum does not match, is no cache,
//! and one of another context has no record the publish uses (then every
//! section is read). The text:
//!
//! ```text
//! # ipvs-agent publish cache v2
//! context ipvs-agent 0.1.0 exe 60082808-1765085640123456789-4718 top 6f...
//! settings SETTINGS-KEY                      (or -)
//! stored REVISION PREFIX                     (when the publish succeeded)
//! SECTION-XXH3 VALUE-DIGEST VALUE-LEN SLOT IDENTITY NAME   (NAME: - or = and its bytes in hex)
//! end XXH3-OF-THE-LINES-ABOVE
//! ```
//!
//! ```
//! use ipvs_agent::fleet::publish::cache::{Known, Cache};
//! let mut cache = Cache::new("ipvs-agent test".into());
//! cache.insert(7, Known::new("tcp-192.0.2.1-80".into(), Some("web 1".into()), "ab".repeat(16), 120, 0));
//! cache.stored = Some((42, "/ipvs".into()));
//! let text = cache.to_text();
//! assert_eq!(Cache::parse(&text).unwrap(), cache);
//! assert_eq!(
//!     cache.stored_keys("/ipvs"),
//!     Some((42, vec![format!("services/00000000-tcp-192.0.2.1-80/{}", "ab".repeat(16))]))
//! );
//! assert_eq!(cache.stored_keys("/other"), None);
//! assert_eq!(Cache::parse(&text.replace("120", "121")), None);
//! assert_eq!(Cache::parse(&text[..text.len() - 2]), None);
//! ```

use std::collections::HashMap;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};

use xxhash_rust::xxh3::{xxh3_128, xxh3_64};

use crate::fleet::store::current::Digests;
use crate::fleet::store::layout::SERVICES;

/// The first line of a cache's file.
pub const CACHE_HEADER: &str = "# ipvs-agent publish cache v2";

/// What one section gave when it was read.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Known {
    /// The service's identity, as its entry's key names it
    /// (`tcp-192.0.2.1-80`): two services with the same are the same
    /// service.
    pub identity: String,
    /// Its `name`, if it has one.
    pub name: Option<String>,
    /// Its entry's value's XXH3-128, in hex (the last part of the key).
    pub digest: String,
    /// Its entry's value's length in bytes.
    pub len: usize,
    /// Its position in the file the cache was written for (its key's slot).
    pub slot: usize,
}

impl Known {
    /// A record.
    pub fn new(
        identity: String,
        name: Option<String>,
        digest: String,
        len: usize,
        slot: usize,
    ) -> Self {
        Known {
            identity,
            name,
            digest,
            len,
            slot,
        }
    }

    /// The key of its entry at `slot` (relative to `PREFIX/entries/`).
    pub fn key(&self, slot: usize) -> String {
        let mut key = String::with_capacity(SERVICES.len() + 42 + self.identity.len());
        key.push_str(SERVICES);
        push_padded(&mut key, slot, 8);
        for part in ["-", &self.identity, "/", &self.digest] {
            key.push_str(part);
        }
        key
    }
}

/// The sections known in one context, by the XXH3-128 of their text.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Cache {
    /// What the records hold for ([`context`]).
    pub context: String,
    /// The key of the settings' entry, if the file had one.
    pub settings: Option<String>,
    /// The revision of the `current` the publish that wrote the cache
    /// wrote, and its prefix: the entries stored then are this cache's
    /// ([`Cache::stored_keys`]).
    pub stored: Option<(i64, String)>,
    /// The records.
    pub sections: HashMap<u128, Known, Digests>,
}

impl Cache {
    /// An empty cache for `context`.
    pub fn new(context: String) -> Self {
        Cache {
            context,
            settings: None,
            stored: None,
            sections: HashMap::default(),
        }
    }

    /// Records what the section of digest `section` gave.
    pub fn insert(&mut self, section: u128, known: Known) {
        self.sections.insert(section, known);
    }

    /// What the section of digest `section` gave, if known.
    pub fn get(&self, section: u128) -> Option<&Known> {
        self.sections.get(&section)
    }

    /// The keys of the entries the publish that wrote the cache stored
    /// under `prefix` (relative to `PREFIX/entries/`, each service at its
    /// slot), and the revision of its `current`.
    pub fn stored_keys(&self, prefix: &str) -> Option<(i64, Vec<String>)> {
        let (revision, p) = self.stored.as_ref()?;
        if p != prefix {
            return None;
        }
        let mut keys: Vec<String> = self.sections.values().map(|k| k.key(k.slot)).collect();
        keys.extend(self.settings.clone());
        Some((*revision, keys))
    }

    /// The cache as its file's text.
    pub fn to_text(&self) -> String {
        let mut o = String::with_capacity(128 * (self.sections.len() + 2));
        let settings = self.settings.as_deref().unwrap_or("-");
        for part in [
            CACHE_HEADER,
            "\ncontext ",
            &self.context,
            "\nsettings ",
            settings,
            "\n",
        ] {
            o.push_str(part);
        }
        if let Some((revision, prefix)) = &self.stored {
            o.push_str("stored ");
            push_padded(&mut o, usize::try_from(*revision).unwrap_or(0), 1);
            for part in [" ", prefix, "\n"] {
                o.push_str(part);
            }
        }
        for (h, k) in &self.sections {
            push_hex(&mut o, &h.to_be_bytes());
            for part in [" ", &k.digest, " "] {
                o.push_str(part);
            }
            push_padded(&mut o, k.len, 1);
            o.push(' ');
            push_padded(&mut o, k.slot, 1);
            o.push(' ');
            o.push_str(&k.identity);
            match &k.name {
                Some(n) => {
                    o.push_str(" =");
                    push_hex(&mut o, n.as_bytes());
                }
                None => o.push_str(" -"),
            }
            o.push('\n');
        }
        let sum = xxh3_128(o.as_bytes());
        o.push_str("end ");
        push_hex(&mut o, &sum.to_be_bytes());
        o.push('\n');
        o
    }

    /// Reads a cache's text; `None` unless it is whole and well formed.
    pub fn parse(text: &str) -> Option<Cache> {
        let body_end = text.trim_end_matches('\n').rfind('\n')? + 1;
        let (body, end) = text.split_at(body_end);
        let sum = end.strip_prefix("end ")?.strip_suffix('\n')?;
        if unhex128(sum)? != xxh3_128(body.as_bytes()) {
            return None;
        }
        let rest = body
            .strip_prefix(CACHE_HEADER)?
            .strip_prefix("\ncontext ")?;
        let (context, rest) = rest.split_once('\n')?;
        let (settings, mut rest) = rest.strip_prefix("settings ")?.split_once('\n')?;
        let mut cache = Cache::new(context.to_string());
        cache.settings = (settings != "-").then(|| settings.to_string());
        if let Some(stored) = rest.strip_prefix("stored ") {
            let (line, next) = stored.split_once('\n')?;
            let (revision, prefix) = line.split_once(' ')?;
            cache.stored = Some((revision.parse().ok()?, prefix.to_string()));
            rest = next;
        }
        cache.sections.reserve(rest.len() / 100);
        while !rest.is_empty() {
            let end = memchr::memchr(b'\n', rest.as_bytes())?;
            let (line, next) = (rest.get(..end)?, rest.get(end + 1..)?);
            rest = next;
            let (h, digest, line) = (line.get(..32)?, line.get(33..65)?, line.get(66..)?);
            let mut f = Fields(line);
            let (len, slot, identity, name) = (f.next()?, f.next()?, f.next()?, f.next()?);
            if f.next().is_some() {
                return None;
            }
            let name = match name {
                "-" => None,
                n => Some(String::from_utf8(unhex(n.strip_prefix('=')?)?).ok()?),
            };
            cache.insert(
                unhex128(h)?,
                Known::new(
                    identity.to_string(),
                    name,
                    digest.to_string(),
                    len.parse().ok()?,
                    slot.parse().ok()?,
                ),
            );
        }
        Some(cache)
    }

    /// Writes the cache to `path`: to a temporary file beside it, then
    /// renamed over it (a reader sees the old file or the new one, whole).
    pub fn save(&self, path: &Path) -> std::io::Result<()> {
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir)?;
        }
        // A name no other writer has (another process, or another thread
        // of this one).
        static WRITES: AtomicUsize = AtomicUsize::new(0);
        let mut tmp = path.as_os_str().to_owned();
        tmp.push(format!(
            ".{}-{}.tmp",
            std::process::id(),
            WRITES.fetch_add(1, Ordering::Relaxed)
        ));
        let tmp = PathBuf::from(tmp);
        let written = std::fs::File::create(&tmp).and_then(|mut f| {
            f.write_all(self.to_text().as_bytes())?;
            f.sync_all()
        });
        match written.and_then(|()| std::fs::rename(&tmp, path)) {
            Ok(()) => Ok(()),
            Err(e) => {
                let _ = std::fs::remove_file(&tmp);
                Err(e)
            }
        }
    }
}

/// The context a cache holds for: this program and its executable (so
/// that another build starts afresh), and the top part of the file
/// (`top`: its XXH3-128).
pub fn context(top: u128) -> String {
    use std::os::unix::fs::MetadataExt as _;
    let exe = std::env::current_exe()
        .and_then(std::fs::metadata)
        .map_or_else(
            |_| "unknown".to_string(),
            |m| {
                let nanos = i128::from(m.mtime()) * 1_000_000_000 + i128::from(m.mtime_nsec());
                format!("{}-{nanos}-{}", m.size(), m.ino())
            },
        );
    let mut out = format!("ipvs-agent {} exe {exe} top ", env!("CARGO_PKG_VERSION"));
    push_hex(&mut out, &top.to_be_bytes());
    out
}

/// Where the cache of a publish to `prefix` is kept by default:
/// `$XDG_CACHE_HOME/ipvs-agent/`, else `$HOME/.cache/ipvs-agent/`, else
/// `/var/cache/ipvs-agent/`, in a file named by the prefix's XXH3-64.
///
/// ```
/// let p = ipvs_agent::fleet::publish::cache::default_path("/ipvs-agent");
/// assert!(p.to_string_lossy().contains("ipvs-agent/publish-"));
/// assert_ne!(p, ipvs_agent::fleet::publish::cache::default_path("/other"));
/// ```
pub fn default_path(prefix: &str) -> PathBuf {
    let dir = match (
        std::env::var_os("XDG_CACHE_HOME").filter(|v| !v.is_empty()),
        std::env::var_os("HOME").filter(|v| !v.is_empty()),
    ) {
        (Some(x), _) => PathBuf::from(x),
        (None, Some(h)) => PathBuf::from(h).join(".cache"),
        (None, None) => PathBuf::from("/var/cache"),
    };
    dir.join("ipvs-agent")
        .join(format!("publish-{:016x}.cache", xxh3_64(prefix.as_bytes())))
}

/// Appends `bytes` in lower-case hex.
pub(crate) fn push_hex(out: &mut String, bytes: &[u8]) {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    // In pieces of 16 bytes: each one `push_str` (a `push` a digit costs
    // a UTF-8 encoding each).
    for piece in bytes.chunks(16) {
        let mut buf = [0u8; 32];
        for (i, b) in piece.iter().enumerate() {
            buf[2 * i] = DIGITS[usize::from(b >> 4)];
            buf[2 * i + 1] = DIGITS[usize::from(b & 15)];
        }
        out.push_str(std::str::from_utf8(&buf[..2 * piece.len()]).unwrap_or_default());
    }
}

/// Appends `n` in decimal, at least `width` digits (zeros before).
pub(crate) fn push_padded(out: &mut String, n: usize, width: usize) {
    let mut digits = [b'0'; 20];
    let (mut n, mut i) = (n, digits.len());
    while n > 0 || i == digits.len() {
        i -= 1;
        digits[i] = b'0' + (n % 10) as u8;
        n /= 10;
    }
    let i = i.min(digits.len().saturating_sub(width));
    out.push_str(std::str::from_utf8(&digits[i..]).unwrap_or_default());
}

/// The fields of a line, each up to the next space (`memchr`: cheaper
/// than `str::split`'s searcher on a cache's 10,000 lines).
struct Fields<'a>(&'a str);

impl<'a> Iterator for Fields<'a> {
    type Item = &'a str;

    fn next(&mut self) -> Option<&'a str> {
        if self.0.is_empty() {
            return None;
        }
        let end = memchr::memchr(b' ', self.0.as_bytes()).unwrap_or(self.0.len());
        let field = self.0.get(..end)?;
        self.0 = self.0.get(end + 1..).unwrap_or_default();
        Some(field)
    }
}

/// A 128-bit number from 32 lower-case hex digits.
fn unhex128(text: &str) -> Option<u128> {
    if text.len() != 32 {
        return None;
    }
    text.bytes().try_fold(0u128, |acc, b| {
        let d = match b {
            b'0'..=b'9' => b - b'0',
            b'a'..=b'f' => b - b'a' + 10,
            _ => return None,
        };
        Some(acc << 4 | u128::from(d))
    })
}

/// Bytes from hex.
fn unhex(text: &str) -> Option<Vec<u8>> {
    if text.len() % 2 != 0 {
        return None;
    }
    (0..text.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(text.get(i..i + 2)?, 16).ok())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_are_written_as_format_writes_them() {
        for (n, width) in [
            (0, 8),
            (7, 8),
            (12_345_678, 8),
            (123_456_789, 8),
            (42, 1),
            (0, 1),
        ] {
            let mut s = String::new();
            push_padded(&mut s, n, width);
            assert_eq!(s, format!("{n:0width$}"));
        }
        let mut s = String::new();
        push_hex(&mut s, &0x0123_4567_89ab_cdef_u64.to_be_bytes());
        assert_eq!(s, "0123456789abcdef");
        assert_eq!(
            unhex128(&"0f".repeat(16)),
            Some(0x0f0f_0f0f_0f0f_0f0f_0f0f_0f0f_0f0f_0f0f)
        );
        assert_eq!(unhex128("0f"), None);
        assert_eq!(unhex128(&"0g".repeat(16)), None);
        assert_eq!(unhex128(&"0F".repeat(16)), None);
    }
}
