//! A daemon that follows the fleet's desired state: its first
//! configuration is the current generation (waited for while etcd is
//! unreachable or nothing is published), then every new generation is
//! handed to the agent as a reload ([`Reload::apply`]). An error leaves
//! the running configuration in place.
//!
//! The agent is what the command layer gives as a [`Reload`] (the
//! daemon's handle): fleet mode does not import the daemon.

use std::future::Future;

use crate::config::Config;
use crate::fleet::follow::watch::Source;

/// What the follower hands each new generation to: the daemon's agent,
/// through its handle.
pub trait Reload: Send + Sync + 'static {
    /// Applies `config` as a SIGHUP reload would; false when the agent
    /// has stopped.
    fn apply(&self, config: Config) -> impl Future<Output = bool> + Send;
    /// Whether the agent still runs.
    fn alive(&self) -> impl Future<Output = bool> + Send;
}

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
pub async fn follow(mut source: Source, handle: impl Reload) {
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
