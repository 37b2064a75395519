//! Where a configuration is stored under a prefix, and how a generation's
//! entries are made from a configuration and read back into one.
//!
//! - `PREFIX/generations/N/services/KEY`: one service ([`encode::service`]);
//!   `KEY` is its position in the file (8 digits, so that keys sort in the
//!   file's order) and its identity, e.g. `00000003-tcp-192.0.2.1-80`;
//! - `PREFIX/generations/N/settings`: the agent's `[agent]` settings
//!   ([`encode::agent`]), when they are not the defaults;
//! - `PREFIX/current`: the complete generation ([`Current`]);
//! - `PREFIX/publishing`: while a publisher writes a generation, its claim
//!   (on a lease, so a publisher that dies frees it).
//!
//! `N` is written with 20 digits, so that generations sort by number and
//! the older ones are one key range.
//!
//! ```
//! use ipvs_agent::fleet::layout::Layout;
//! let l = Layout::new("/ipvs/");
//! assert_eq!(l.current(), "/ipvs/current");
//! assert_eq!(l.generation(7), "/ipvs/generations/00000000000000000007/");
//! let text = "[[service]]\nprotocol = \"tcp\"\naddress = \"192.0.2.1\"\nport = 80\n\
//!             [[service.server]]\naddress = \"10.0.0.2\"\n";
//! let config = ipvs_agent::config::parse_str("a.toml", text).unwrap();
//! let entries = ipvs_agent::fleet::layout::entries(&config);
//! assert_eq!(entries[0].0, "services/00000000-tcp-192.0.2.1-80");
//! let (current, back) = ipvs_agent::fleet::layout::assemble(&l, 7, &entries).unwrap();
//! assert_eq!(back, config);
//! assert_eq!(current.services, 1);
//! ```

use ipvsnl::ServiceKey;

use crate::config::{AgentSettings, Config};
use crate::fleet::current::{digest, Current};
use crate::fleet::encode;
use crate::fleet::errors::FleetError;
use crate::fleet::values::{parse_values, ParseCache};
pub use crate::fleet::values::{SERVICES, SETTINGS};

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

    /// `PREFIX/generations/`: the start of every generation's keys.
    pub fn generations(&self) -> String {
        format!("{}/generations/", self.prefix)
    }

    /// `PREFIX/generations/N/`: the start of generation `n`'s keys.
    pub fn generation(&self, n: u64) -> String {
        format!("{}/generations/{n:020}/", self.prefix)
    }

    /// The end of a range of every key under `start` (`start` ends in `/`).
    pub fn range_end(start: &str) -> String {
        format!("{}0", start.trim_end_matches('/'))
    }
}

/// A service's identity in its key: `tcp-192.0.2.1-80`, `fwmark-5-inet6`.
fn identity(key: &ServiceKey) -> String {
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
        other => format!("{other:?}").replace(' ', ""),
    }
}

/// A configuration's entries, keys relative to the generation, in key
/// order: the settings (when not the defaults), then every service in
/// the file's order.
pub fn entries(config: &Config) -> Vec<(String, Vec<u8>)> {
    let mut out: Vec<(String, Vec<u8>)> = Vec::with_capacity(config.services.len() + 1);
    for (i, vs) in config.services.iter().enumerate() {
        out.push((
            format!("{SERVICES}{i:08}-{}", identity(&vs.service.key)),
            encode::service(vs).into_bytes(),
        ));
    }
    if config.agent != AgentSettings::default() {
        out.push((
            SETTINGS.to_string(),
            encode::agent(&config.agent).into_bytes(),
        ));
    }
    out
}

/// The `current` record of generation `n` of `entries`.
pub fn record(n: u64, entries: &[(String, Vec<u8>)]) -> Current {
    let services = entries
        .iter()
        .filter(|(k, _)| k.starts_with(SERVICES))
        .count();
    let d = digest(entries.iter().map(|(k, v)| (k.as_str(), v.as_slice())));
    Current::new(n, services, d)
}

/// Checks generation `n`'s `entries` (keys relative to the generation, in
/// key order) against the `current` record that names it, then parses them
/// into one configuration. An error names the generation (entries missing,
/// extra or changed) or the key whose value does not parse.
pub fn verify(
    layout: &Layout,
    current: &Current,
    entries: &[(String, Vec<u8>)],
) -> Result<Config, FleetError> {
    verify_with(layout, current, entries, &mut ParseCache::new())
}

/// [`verify`], the values unchanged since the generation `cache` holds
/// not parsed again (a watcher's case: one service changed in 10,000).
pub fn verify_with(
    layout: &Layout,
    current: &Current,
    entries: &[(String, Vec<u8>)],
    cache: &mut ParseCache,
) -> Result<Config, FleetError> {
    let n = current.generation;
    let found = record(n, entries);
    if found.services != current.services {
        return Err(FleetError::Incomplete {
            generation: n,
            message: format!(
                "{} services stored, `current` records {}",
                found.services, current.services
            ),
        });
    }
    if found.digest != current.digest {
        return Err(FleetError::Incomplete {
            generation: n,
            message: format!(
                "its entries' digest is {}, `current` records {}",
                found.digest, current.digest
            ),
        });
    }
    parse_values(&layout.generation(n), entries, cache)
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
