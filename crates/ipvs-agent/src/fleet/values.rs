//! A generation's values parsed into one configuration: each service's
//! value alone (checked against the digest its key names; an error names
//! its key and the line in the value), the settings, then the checks
//! across services (no service or name twice). A [`ParseCache`] keeps the
//! last generation's parsed values by key (keys are named by content), so
//! that a new generation parses only the values that changed, and a
//! watcher needs only those values.

use std::collections::HashMap;

use crate::config::{self, AgentSettings, Config, ConfigErrors, VirtualService};
use crate::fleet::current::value_digest;
use crate::fleet::errors::FleetError;

/// The start of the settings' key within `PREFIX/entries/`.
pub const SETTINGS: &str = "settings/";
/// The start of the services' keys within `PREFIX/entries/`.
pub const SERVICES: &str = "services/";

/// A service the settings' text is read with (the parser takes no file
/// without one).
const CARRIER: &str = "\n[[service]]\nfwmark = 1\n[[service.server]]\naddress = \"192.0.2.1\"\n";

/// One value, parsed.
#[derive(Debug, Clone)]
enum Parsed {
    Service(Box<VirtualService>),
    Settings(AgentSettings),
}

/// The values of the last generation parsed, by their digest (the last
/// part of their key: a service that only moved in the file is not parsed
/// again).
#[derive(Debug, Clone, Default)]
pub struct ParseCache {
    parsed: HashMap<String, (Parsed, bool)>,
}

impl ParseCache {
    /// An empty cache.
    pub fn new() -> Self {
        ParseCache::default()
    }

    /// How many values it holds.
    pub fn len(&self) -> usize {
        self.parsed.len()
    }

    /// Whether it holds none.
    pub fn is_empty(&self) -> bool {
        self.parsed.is_empty()
    }

    /// Whether it holds the value of `key` (relative to `PREFIX/entries/`).
    pub fn contains(&self, key: &str) -> bool {
        self.parsed.contains_key(digest_of(key))
    }
}

/// The configuration `entries` (keys relative to `base`,
/// `PREFIX/entries/`, in key order) hold; `cache` then holds their values.
pub fn parse_values(
    base: &str,
    entries: &[(String, Vec<u8>)],
    cache: &mut ParseCache,
) -> Result<Config, FleetError> {
    parse_keys(
        base,
        entries
            .iter()
            .map(|(k, v)| (k.as_str(), Some(v.as_slice()))),
        cache,
    )
}

/// The configuration of a generation's keys (relative to `base`, in key
/// order), each with its value or `None` for one `cache` holds (a
/// watcher's case: the values of the keys a change put). `cache` then
/// holds this generation's values; on an error it is left as it was.
pub fn parse_keys<'a>(
    base: &str,
    keys: impl Iterator<Item = (&'a str, Option<&'a [u8]>)>,
    cache: &mut ParseCache,
) -> Result<Config, FleetError> {
    let mut next: HashMap<String, (Parsed, bool)> = HashMap::with_capacity(cache.len() + 1);
    let result = build(base, keys, cache, &mut next);
    if result.is_err() {
        // Back to the cache what came from it.
        cache
            .parsed
            .extend(next.into_iter().filter(|(_, (_, old))| *old));
    } else {
        cache.parsed = next;
    }
    result
}

fn build<'a>(
    base: &str,
    keys: impl Iterator<Item = (&'a str, Option<&'a [u8]>)>,
    cache: &mut ParseCache,
    next: &mut HashMap<String, (Parsed, bool)>,
) -> Result<Config, FleetError> {
    let mut agent = AgentSettings::default();
    let mut services = Vec::with_capacity(cache.len());
    let mut seen = HashMap::with_capacity(cache.len());
    let mut names = HashMap::new();
    for (k, v) in keys {
        let (name, parsed, old) = match cache.parsed.remove_entry(digest_of(k)) {
            Some((name, (p, _))) => (name, p, true),
            None => {
                let key = format!("{base}{k}");
                let Some(v) = v else {
                    return Err(FleetError::Value {
                        key,
                        message: "its value was not read".to_string(),
                    });
                };
                (digest_of(k).to_string(), parse_one(&key, k, v)?, false)
            }
        };
        match &parsed {
            Parsed::Settings(a) => agent = *a,
            Parsed::Service(vs) => {
                if let Some(first) = seen.insert(vs.service.key, k) {
                    let key = format!("{base}{k}");
                    let message = format!(
                        "service {} is configured twice (first at {base}{first})",
                        vs.service.key
                    );
                    next.insert(name, (parsed, old));
                    return Err(FleetError::Value { key, message });
                }
                if let Some(n) = &vs.name {
                    if let Some(first) = names.insert(n.clone(), k) {
                        let key = format!("{base}{k}");
                        let message =
                            format!("service name \"{n}\" is used twice (first at {base}{first})");
                        next.insert(name, (parsed, old));
                        return Err(FleetError::Value { key, message });
                    }
                }
                services.push(VirtualService::clone(vs));
            }
        }
        next.insert(name, (parsed, old));
    }
    Ok(Config { agent, services })
}

/// The digest part of a key: what follows its last `/`.
fn digest_of(key: &str) -> &str {
    key.rsplit_once('/').map_or(key, |(_, d)| d)
}

/// One value not parsed before: its digest checked against its key's, then
/// parsed.
fn parse_one(key: &str, k: &str, v: &[u8]) -> Result<Parsed, FleetError> {
    let err = |message: String| FleetError::Value {
        key: key.to_string(),
        message,
    };
    let (kind, named) = if let Some(rest) = k.strip_prefix(SERVICES) {
        match rest.rsplit_once('/') {
            Some((slot, d)) if !slot.is_empty() => (SERVICES, d),
            _ => return Err(err("a key this agent does not know".to_string())),
        }
    } else if let Some(d) = k.strip_prefix(SETTINGS) {
        (SETTINGS, d)
    } else {
        return Err(err("a key this agent does not know".to_string()));
    };
    let found = value_digest(v);
    if found != named {
        return Err(err(format!(
            "its value's XXH3-128 is {found}, its key names {named}"
        )));
    }
    let text = std::str::from_utf8(v).map_err(|e| err(format!("not UTF-8: {e}")))?;
    if kind == SETTINGS {
        let c = config::parse_str(key, &format!("{text}{CARRIER}"))
            .map_err(|e| value_error(key, &e))?;
        return Ok(Parsed::Settings(c.agent));
    }
    let mut c = config::parse_str(key, text).map_err(|e| value_error(key, &e))?;
    if c.services.len() != 1 {
        return Err(err(format!(
            "{} services in one value, one expected",
            c.services.len()
        )));
    }
    Ok(Parsed::Service(Box::new(c.services.remove(0))))
}

/// A value's first error, at its line in the value.
fn value_error(key: &str, e: &ConfigErrors) -> FleetError {
    let first = &e.errors[0];
    FleetError::Value {
        key: key.to_string(),
        message: format!("line {}: {}", first.line, first.message),
    }
}
