//! Where a configuration is stored under a prefix, and how its entries
//! are made from a configuration and read back into one.
//!
//! - `PREFIX/entries/services/KEY/DIGEST`: one service
//!   ([`encode::service`]); `KEY` is its position in the file (8 digits, so
//!   that keys sort in the file's order) and its identity, e.g.
//!   `00000003-tcp-192.0.2.1-80`; `DIGEST` is the XXH3-128 of the value, in
//!   hex: keys are named by content, so a publisher learns what is stored
//!   from the keys alone, and a changed service is a new key (the old one
//!   deleted);
//! - `PREFIX/entries/settings/DIGEST`: the agent's `[agent]` settings
//!   ([`encode::agent`]), when they are not the defaults;
//! - `PREFIX/current`: the complete generation ([`Current`]): its number,
//!   its service count and the digest of its entries' keys;
//! - `PREFIX/publishing`: while a publisher writes, its claim (on a lease,
//!   so a publisher that dies frees it).
//!
//! A publish writes only the entries that changed, then `current`; the
//! generation in force is the entries as they were at `current`'s last
//! write (its mod revision): a reader reads them at that revision, or at a
//! later one if nothing was written since (`read`).
//!
//! ```
//! use ipvs_agent::fleet::store::layout::Layout;
//! let l = Layout::new("/ipvs/");
//! assert_eq!(l.current(), "/ipvs/current");
//! assert_eq!(l.entries(), "/ipvs/entries/");
//! let text = "[[service]]\nprotocol = \"tcp\"\naddress = \"192.0.2.1\"\nport = 80\n\
//!             [[service.server]]\naddress = \"10.0.0.2\"\n";
//! let config = ipvs_agent::config::parse_str("a.toml", text).unwrap();
//! let entries = ipvs_agent::fleet::store::layout::entries(&config);
//! assert!(entries[0].0.starts_with("services/00000000-tcp-192.0.2.1-80/"));
//! let (current, back) = ipvs_agent::fleet::store::layout::assemble(&l, 7, &entries).unwrap();
//! assert_eq!(back, config);
//! assert_eq!(current.services, 1);
//! ```

use ipvsnl::ServiceKey;

use crate::config::{AgentSettings, Config};
use crate::fleet::errors::FleetError;
pub use crate::fleet::store::current::value_digest;
use crate::fleet::store::current::{digest, Current};
use crate::fleet::store::encode;
use crate::fleet::store::values::{parse_values, ParseCache};
pub use crate::fleet::store::values::{SERVICES, SETTINGS};

/// The keys under one prefix.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Layout {
    /// The prefix, without a trailing `/` (`/ipvs`).
    pub prefix: String,
}

impl Layout {
    /// The layout under `prefix` (a trailing `/` is dropped).
    pub fn new(prefix: &str) -> Self {
        Layout {
            prefix: prefix.trim_end_matches('/').to_string(),
        }
    }

    /// `PREFIX/current`.
    pub fn current(&self) -> String {
        format!("{}/current", self.prefix)
    }

    /// `PREFIX/publishing`.
    pub fn publishing(&self) -> String {
        format!("{}/publishing", self.prefix)
    }

    /// `PREFIX/entries/`: the start of every entry's key.
    pub fn entries(&self) -> String {
        format!("{}/entries/", self.prefix)
    }

    /// The range a watcher watches: from `PREFIX/current` to the end of
    /// `PREFIX/entries/` (`current` sorts just before it), so that one
    /// watch sees a publish's entries and then its flip, in order.
    pub fn watched(&self) -> (String, String) {
        (self.current(), Layout::range_end(&self.entries()))
    }

    /// The end of a range of every key under `start` (`start` ends in `/`).
    pub fn range_end(start: &str) -> String {
        format!("{}0", start.trim_end_matches('/'))
    }
}

/// A service's identity in its key: `tcp-192.0.2.1-80`, `fwmark-5-inet6`.
pub(crate) fn identity(key: &ServiceKey) -> String {
    match key {
        ServiceKey::Inet {
            protocol,
            addr,
            port,
        } => format!(
            "{}-{addr}-{port}",
            protocol.to_string().to_ascii_lowercase()
        ),
        ServiceKey::Fwmark { mark, family } => {
            let f = if *family == ipvsnl::AddressFamily::Inet6 {
                "inet6"
            } else {
                "inet"
            };
            format!("fwmark-{mark}-{f}")
        }
        other => format!("{other:?}").replace([' ', '/'], ""),
    }
}

/// A configuration's entries, keys relative to `PREFIX/entries/`, in key
/// order: every service in the file's order, then the settings (when not
/// the defaults).
pub fn entries(config: &Config) -> Vec<(String, Vec<u8>)> {
    let mut out: Vec<(String, Vec<u8>)> = Vec::with_capacity(config.services.len() + 1);
    for (i, vs) in config.services.iter().enumerate() {
        let value = encode::service(vs).into_bytes();
        out.push((
            format!(
                "{SERVICES}{i:08}-{}/{}",
                identity(&vs.service.key),
                value_digest(&value)
            ),
            value,
        ));
    }
    if config.agent != AgentSettings::default() {
        let value = encode::agent(&config.agent).into_bytes();
        out.push((format!("{SETTINGS}{}", value_digest(&value)), value));
    }
    out
}

/// How many of `keys` are services'.
pub fn services_in<'a>(keys: impl IntoIterator<Item = &'a str>) -> usize {
    keys.into_iter().filter(|k| k.starts_with(SERVICES)).count()
}

/// The `current` record of generation `n` of `entries`.
pub fn record(n: u64, entries: &[(String, Vec<u8>)]) -> Current {
    let keys = || entries.iter().map(|(k, _)| k.as_str());
    Current::new(n, services_in(keys()), digest(keys()))
}

/// Checks a generation's service count and digest (`found`, of the
/// entries read or held) against the `current` record that names it.
pub fn check(current: &Current, services: usize, found: &str) -> Result<(), FleetError> {
    let n = current.generation;
    if services != current.services {
        return Err(FleetError::Incomplete {
            generation: n,
            message: format!(
                "{services} services stored, `current` records {}",
                current.services
            ),
        });
    }
    if found != current.digest {
        return Err(FleetError::Incomplete {
            generation: n,
            message: format!(
                "its entries' digest is {found}, `current` records {}",
                current.digest
            ),
        });
    }
    Ok(())
}

/// Checks the `entries` of the generation `current` names (keys relative
/// to `PREFIX/entries/`, in key order) against it, then parses them into
/// one configuration. An error names the generation (entries missing,
/// extra or changed) or the key whose value does not parse or does not
/// have the digest its key names.
pub fn verify(
    layout: &Layout,
    current: &Current,
    entries: &[(String, Vec<u8>)],
) -> Result<Config, FleetError> {
    verify_with(layout, current, entries, &mut ParseCache::new())
}

/// [`verify`], the values `cache` holds (the last generation's) not parsed
/// again.
pub fn verify_with(
    layout: &Layout,
    current: &Current,
    entries: &[(String, Vec<u8>)],
    cache: &mut ParseCache,
) -> Result<Config, FleetError> {
    let found = record(current.generation, entries);
    check(current, found.services, &found.digest)?;
    parse_values(&layout.entries(), entries, cache)
}

/// [`record`] and [`verify`] together: the record of `entries` and the
/// configuration they hold (what a publish stores and a reader gets).
pub fn assemble(
    layout: &Layout,
    n: u64,
    entries: &[(String, Vec<u8>)],
) -> Result<(Current, Config), FleetError> {
    let current = record(n, entries);
    let config = verify(layout, &current, entries)?;
    Ok((current, config))
}
