//! A daemon that follows the fleet's desired state: its first
//! configuration is the current generation (waited for while etcd is
//! unreachable or nothing is published), then every new generation is
//! handed to the agent as a reload ([`Handle::apply`]). An error leaves
//! the running configuration in place.

use crate::config::Config;
use crate::daemon::Handle;
use crate::fleet::watch::Source;

/// The first complete configuration `source` gives, waiting and logging
/// while there is none.
pub async fn first(source: &mut Source) -> Config {
    loop {
        match source.next().await {
            Ok(s) => {
                tracing::info!(
                    generation = s.generation,
                    services = s.config.services.len(),
                    revision = s.revision,
                    "fleet: configuration read"
                );
                return s.config;
            }
            Err(e) => tracing::warn!(error = %e, "fleet: no configuration yet, trying again"),
        }
    }
}

/// Hands every new generation of `source` to the agent behind `handle`,
/// until the agent stops.
pub async fn follow(mut source: Source, handle: Handle) {
    loop {
        match source.next().await {
            Ok(s) => {
                tracing::info!(
                    generation = s.generation,
                    services = s.config.services.len(),
                    revision = s.revision,
                    "fleet: new generation"
                );
                if !handle.apply(s.config).await {
                    return;
                }
            }
            Err(e) => {
                tracing::warn!(error = %e, "fleet: the running configuration stays");
                if !handle.alive().await {
                    return;
                }
            }
        }
    }
}
