//! The `PREFIX/current` record: the number of the complete generation, its
//! service count and the digest of its keys and values, which a reader
//! checks before it takes the generation.
//!
//! ```
//! use ipvs_agent::fleet::current::{digest, Current};
//! let entries = [("agent", "a"), ("services/00000000", "s")];
//! let c = Current::new(7, 1, digest(entries.iter().map(|(k, v)| (*k, v.as_bytes()))));
//! assert_eq!(Current::parse(&c.to_text()), Ok(c));
//! ```

use sha2::{Digest as _, Sha256};

/// The first line of the record's text.
pub const CURRENT_HEADER: &str = "# ipvs-agent fleet current v1";

/// What `current` says.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Current {
    /// The generation's number.
    pub generation: u64,
    /// How many services it has.
    pub services: usize,
    /// `sha256:` and the hex digest of its entries ([`digest`]).
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
                        .filter(|d| d.starts_with("sha256:"))
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

/// The digest of a generation's entries, in order: each key (relative to
/// the generation) and value, each preceded by its length.
pub fn digest<'a>(entries: impl IntoIterator<Item = (&'a str, &'a [u8])>) -> String {
    let mut h = Sha256::new();
    for (k, v) in entries {
        h.update((k.len() as u64).to_be_bytes());
        h.update(k.as_bytes());
        h.update((v.len() as u64).to_be_bytes());
        h.update(v);
    }
    let sum = h.finalize();
    let mut out = String::from("sha256:");
    for b in sum.iter() {
        out.push_str(&format!("{b:02x}"));
    }
    out
}
