//! A generation's values parsed into one configuration: each service's
//! value alone (checked against the digest its key names; an error names
//! its key and the line in the value), the settings, then the checks
//! across services (no service or name twice). A [`ParseCache`] keeps the
//! last generation's parsed values by key (keys are named by content), so
//! that a new generation parses only the values that changed, and a
//! watcher needs only those values.

use std::collections::HashMap;
use std::hash::BuildHasherDefault;

use ipvsnl::ServiceKey;

use crate::check::IdHasher;
use crate::config::{self, AgentSettings, Config, ConfigErrors, VirtualService};
use crate::fleet::errors::FleetError;
use crate::fleet::store::current::value_digest;

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

/// A value in the cache and the last generation that had it.
#[derive(Debug, Clone)]
struct Held {
    parsed: Parsed,
    generation: u64,
}

/// A map keyed by a value's digest, hashed cheaply: a watcher looks every
/// key of a generation up (10,000 services: 10,000 lookups a change), and
/// the keys are digests of what the publisher wrote, not chosen by the
/// network.
type ByDigest<V> = HashMap<String, V, BuildHasherDefault<IdHasher>>;

/// The values of the last generation parsed, by their digest (the last
/// part of their key: a service that only moved in the file is not parsed
/// again).
#[derive(Debug, Clone, Default)]
pub struct ParseCache {
    parsed: ByDigest<Held>,
    /// The generations built (each [`parse_keys`] call).
    generation: u64,
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
    cache.generation += 1;
    let mut added = Vec::new();
    match build(base, keys, cache, &mut added) {
        Ok((config, held)) => {
            // The values of no key of this generation go.
            if held < cache.parsed.len() {
                let generation = cache.generation;
                cache.parsed.retain(|_, h| h.generation == generation);
            }
            Ok(config)
        }
        Err(e) => {
            // The values parsed for this generation go; the others stay.
            for digest in added {
                cache.parsed.remove(&digest);
            }
            Err(e)
        }
    }
}

/// The configuration of `keys`, each value looked up in the cache (marked
/// as this generation's) or parsed into it (its digest then in `added`);
/// with it, how many of the cache's values this generation holds.
fn build<'a>(
    base: &str,
    keys: impl Iterator<Item = (&'a str, Option<&'a [u8]>)>,
    cache: &mut ParseCache,
    added: &mut Vec<String>,
) -> Result<(Config, usize), FleetError> {
    let generation = cache.generation;
    let mut agent = AgentSettings::default();
    let mut services = Vec::with_capacity(cache.len());
    let mut seen: HashMap<ServiceKey, &str, BuildHasherDefault<IdHasher>> =
        HashMap::with_capacity_and_hasher(cache.len(), Default::default());
    let mut names = HashMap::new();
    let mut held = 0;
    for (k, v) in keys {
        let digest = digest_of(k);
        let h = match cache.parsed.get_mut(digest) {
            Some(h) => h,
            None => {
                let key = format!("{base}{k}");
                let Some(v) = v else {
                    return Err(FleetError::Value {
                        key,
                        message: "its value was not read".to_string(),
                    });
                };
                let parsed = parse_one(&key, k, v)?;
                added.push(digest.to_string());
                cache.parsed.entry(digest.to_string()).or_insert(Held {
                    parsed,
                    generation: 0,
                })
            }
        };
        if h.generation != generation {
            h.generation = generation;
            held += 1;
        }
        match &h.parsed {
            Parsed::Settings(a) => agent = *a,
            Parsed::Service(vs) => {
                if let Some(first) = seen.insert(vs.service.key, k) {
                    let key = format!("{base}{k}");
                    let message = format!(
                        "service {} is configured twice (first at {base}{first})",
                        vs.service.key
                    );
                    return Err(FleetError::Value { key, message });
                }
                if let Some(n) = &vs.name {
                    if let Some(first) = names.insert(n.clone(), k) {
                        let key = format!("{base}{k}");
                        let message =
                            format!("service name \"{n}\" is used twice (first at {base}{first})");
                        return Err(FleetError::Value { key, message });
                    }
                }
                services.push(VirtualService::clone(vs));
            }
        }
    }
    Ok((Config { agent, services }, held))
}

/// The digest part of a key: what follows its last `/`.
fn digest_of(key: &str) -> &str {
    // A digest is 32 hex digits: looked at first, without a search from
    // the end (a third of the lookups' cost for 10,000 keys a change).
    let b = key.as_bytes();
    if b.len() > DIGEST_LEN
        && b[b.len() - DIGEST_LEN - 1] == b'/'
        && b[b.len() - DIGEST_LEN..].iter().all(u8::is_ascii_hexdigit)
    {
        return &key[key.len() - DIGEST_LEN..];
    }
    key.rsplit_once('/').map_or(key, |(_, d)| d)
}

/// The length of a value's digest in its key (XXH3-128 in hex).
const DIGEST_LEN: usize = 32;

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
