//! A generation's values parsed into one configuration: each service's
//! value alone (an error names its key and the line in the value), the
//! settings, then the checks across services (no service or name twice).
//! A [`ParseCache`] keeps the last generation's parsed services by value,
//! so that a new generation parses only the values that changed.

use std::collections::HashMap;

use crate::config::{self, AgentSettings, Config, ConfigErrors, VirtualService};
use crate::fleet::errors::FleetError;

/// The key of the settings within a generation.
pub const SETTINGS: &str = "settings";
/// The start of the services' keys within a generation.
pub const SERVICES: &str = "services/";

/// A service the settings' text is read with (the parser takes no file
/// without one).
const CARRIER: &str = "\n[[service]]\nfwmark = 1\n[[service.server]]\naddress = \"192.0.2.1\"\n";

/// The services of the last generation parsed, by value.
#[derive(Debug, Clone, Default)]
pub struct ParseCache {
    services: HashMap<Vec<u8>, VirtualService>,
}

impl ParseCache {
    /// An empty cache.
    pub fn new() -> Self {
        ParseCache::default()
    }

    /// How many services it holds.
    pub fn len(&self) -> usize {
        self.services.len()
    }

    /// Whether it holds none.
    pub fn is_empty(&self) -> bool {
        self.services.is_empty()
    }
}

/// The configuration `entries` (keys relative to `base`, the generation's
/// prefix) hold; `cache` then holds their services.
pub fn parse_values(
    base: &str,
    entries: &[(String, Vec<u8>)],
    cache: &mut ParseCache,
) -> Result<Config, FleetError> {
    let mut agent = AgentSettings::default();
    let mut services = Vec::with_capacity(entries.len());
    let mut next = HashMap::with_capacity(entries.len());
    let mut keys = HashMap::new();
    let mut names = HashMap::new();
    for (k, v) in entries {
        let key = format!("{base}{k}");
        let text = || {
            std::str::from_utf8(v).map_err(|e| FleetError::Value {
                key: key.clone(),
                message: format!("not UTF-8: {e}"),
            })
        };
        if k == SETTINGS {
            let c = config::parse_str(&key, &format!("{}{CARRIER}", text()?))
                .map_err(|e| value_error(&key, &e))?;
            agent = c.agent;
            continue;
        }
        if !k.starts_with(SERVICES) {
            return Err(FleetError::Value {
                key,
                message: "a key this agent does not know".to_string(),
            });
        }
        let vs = match cache.services.get(v.as_slice()) {
            Some(vs) => vs.clone(),
            None => {
                let mut c = config::parse_str(&key, text()?).map_err(|e| value_error(&key, &e))?;
                if c.services.len() != 1 {
                    return Err(FleetError::Value {
                        key,
                        message: format!(
                            "{} services in one value, one expected",
                            c.services.len()
                        ),
                    });
                }
                c.services.remove(0)
            }
        };
        if let Some(first) = keys.insert(vs.service.key, key.clone()) {
            return Err(FleetError::Value {
                key,
                message: format!(
                    "service {} is configured twice (first at {first})",
                    vs.service.key
                ),
            });
        }
        if let Some(name) = &vs.name {
            if let Some(first) = names.insert(name.clone(), key.clone()) {
                return Err(FleetError::Value {
                    key,
                    message: format!("service name \"{name}\" is used twice (first at {first})"),
                });
            }
        }
        next.insert(v.clone(), vs.clone());
        services.push(vs);
    }
    cache.services = next;
    Ok(Config { agent, services })
}

/// A value's first error, at its line in the value.
fn value_error(key: &str, e: &ConfigErrors) -> FleetError {
    let first = &e.errors[0];
    FleetError::Value {
        key: key.to_string(),
        message: format!("line {}: {}", first.line, first.message),
    }
}
