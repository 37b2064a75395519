//! The `PREFIX/current` record: the number of the complete generation, its
//! service count and the digest of its entries' keys, which a reader
//! checks before it takes the generation.
//!
//! Each entry's key names its value's XXH3-128 ([`layout`](crate::fleet::store::layout)),
//! so a digest of the keys covers the values. The digest is a [`KeySum`]:
//! the sum of the keys' XXH3-128 modulo 2^128, so a watcher that holds one
//! generation gets the next one's by adding the keys a change put and
//! subtracting those it deleted, in time proportional to the change, not
//! to the services. (A check against a torn or partial read and a changed
//! value, not against someone who can write to etcd: XXH3 is a checksum,
//! not a cryptographic hash.)
//!
//! ```
//! use ipvs_agent::fleet::store::current::{digest, Current, KeySum};
//! let keys = ["services/00000000-tcp-192.0.2.1-80/ab", "settings/cd"];
//! let c = Current::new(7, 1, digest(keys));
//! assert_eq!(Current::parse(&c.to_text()), Ok(c.clone()));
//! let mut sum = KeySum::default();
//! sum.add("settings/cd");
//! sum.add("services/00000000-tcp-192.0.2.1-80/ab");
//! sum.add("services/00000001-tcp-192.0.2.2-80/ef");
//! sum.remove("services/00000001-tcp-192.0.2.2-80/ef");
//! assert_eq!(sum.to_text(), c.digest);
//! ```

use std::hash::{BuildHasherDefault, Hasher};

use xxhash_rust::xxh3::{xxh3_128, xxh3_64_with_seed};

/// The first line of the record's text.
pub const CURRENT_HEADER: &str = "# ipvs-agent fleet current v2";
/// How a digest's text starts.
pub const DIGEST_PREFIX: &str = "xxh3-sum:";

/// What `current` says.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Current {
    /// The generation's number.
    pub generation: u64,
    /// How many services it has.
    pub services: usize,
    /// [`DIGEST_PREFIX`] and the hex of its entries' [`KeySum`].
    pub digest: String,
}

impl Current {
    /// A record.
    pub fn new(generation: u64, services: usize, digest: String) -> Self {
        Current {
            generation,
            services,
            digest,
        }
    }

    /// The record as the value of `current`.
    pub fn to_text(&self) -> String {
        format!(
            "{CURRENT_HEADER}\ngeneration = {}\nservices = {}\ndigest = \"{}\"\n",
            self.generation, self.services, self.digest
        )
    }

    /// Reads a record; the error says what is wrong.
    pub fn parse(text: &str) -> Result<Current, String> {
        let mut lines = text.lines();
        if lines.next() != Some(CURRENT_HEADER) {
            return Err(format!("the first line is not \"{CURRENT_HEADER}\""));
        }
        let (mut generation, mut services, mut digest) = (None, None, None);
        for line in lines {
            let Some((k, v)) = line.split_once(" = ") else {
                return Err(format!("\"{line}\" is not `key = value`"));
            };
            match k {
                "generation" => generation = v.parse::<u64>().ok(),
                "services" => services = v.parse::<usize>().ok(),
                "digest" => {
                    digest = v
                        .strip_prefix('"')
                        .and_then(|v| v.strip_suffix('"'))
                        .filter(|d| d.starts_with(DIGEST_PREFIX))
                        .map(str::to_string)
                }
                _ => return Err(format!("unknown key `{k}`")),
            }
        }
        match (generation, services, digest) {
            (Some(generation), Some(services), Some(digest)) => Ok(Current {
                generation,
                services,
                digest,
            }),
            _ => Err(
                "`generation`, `services` and `digest` are each needed, well formed".to_string(),
            ),
        }
    }
}

/// The sum of keys' XXH3-128, modulo 2^128: the same whatever the order
/// the keys are added in, and a key added then removed leaves no trace.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct KeySum(u128);

impl KeySum {
    /// Adds `key`.
    pub fn add(&mut self, key: &str) {
        self.0 = self.0.wrapping_add(xxh3_128(key.as_bytes()));
    }

    /// Removes `key` (added before).
    pub fn remove(&mut self, key: &str) {
        self.0 = self.0.wrapping_sub(xxh3_128(key.as_bytes()));
    }

    /// [`DIGEST_PREFIX`] and the sum in hex, as `current` records it.
    pub fn to_text(&self) -> String {
        let mut out = String::from(DIGEST_PREFIX);
        out.push_str(&hex(&self.0.to_be_bytes()));
        out
    }
}

/// The digest of a generation whose entries have `keys` (relative to
/// `PREFIX/entries/`), in any order.
pub fn digest<'a>(keys: impl IntoIterator<Item = &'a str>) -> String {
    let mut sum = KeySum::default();
    for k in keys {
        sum.add(k);
    }
    sum.to_text()
}

/// The XXH3-128 of a value, in hex (32 digits): the last part of its key.
pub fn value_digest(value: &[u8]) -> String {
    hex(&xxh3_128(value).to_be_bytes())
}

/// Bytes in lower-case hex.
pub(crate) fn hex(bytes: &[u8]) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut out = String::with_capacity(bytes.len() * 2);
    for b in bytes {
        out.push(char::from(DIGITS[usize::from(b >> 4)]));
        out.push(char::from(DIGITS[usize::from(b & 15)]));
    }
    out
}

/// A [`HashMap`](std::collections::HashMap)'s hasher for keys that are
/// digests already (XXH3): a digest's low 64 bits, a string's XXH3-64.
/// Not for keys an adversary chooses (a publisher's own file is not
/// one).
#[derive(Debug, Clone, Copy, Default)]
pub struct DigestHasher(u64);

impl Hasher for DigestHasher {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        self.0 = xxh3_64_with_seed(bytes, self.0);
    }

    fn write_u8(&mut self, n: u8) {
        self.0 = self.0.rotate_left(8) ^ u64::from(n);
    }

    fn write_u128(&mut self, n: u128) {
        // The low 64 bits of a digest: as good as all of them.
        self.0 ^= n as u64;
    }
}

/// [`DigestHasher`]s for a [`HashMap`](std::collections::HashMap) or a
/// `HashSet`.
pub type Digests = BuildHasherDefault<DigestHasher>;
