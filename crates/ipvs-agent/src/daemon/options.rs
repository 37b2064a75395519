//! How an agent runs: the options the command layer fills.

use std::path::PathBuf;

use crate::daemon::notify::Notifier;

/// How an agent runs.
#[derive(Debug, Clone, Default)]
#[non_exhaustive]
pub struct AgentOptions {
    /// The configuration file a reload reads (`None`: reloads are refused).
    pub config_path: Option<PathBuf>,
    /// At stop, remove the agent's own services from the kernel (by
    /// default the table is left as it is).
    pub remove_on_exit: bool,
    /// The service manager to tell of readiness, reloads and stop.
    pub notifier: Option<Notifier>,
    /// The most checks in flight at once (`None`: what the open-files
    /// limit leaves after the HTTP endpoint and the daemon's own
    /// descriptors). A check due beyond it waits for one to end.
    pub max_checks_in_flight: Option<usize>,
}

impl AgentOptions {
    /// Reloads read `path`.
    #[must_use]
    pub fn with_config_path(mut self, path: impl Into<PathBuf>) -> Self {
        self.config_path = Some(path.into());
        self
    }

    /// At stop, remove the agent's services (`--remove-on-exit`).
    #[must_use]
    pub fn with_remove_on_exit(mut self, yes: bool) -> Self {
        self.remove_on_exit = yes;
        self
    }

    /// No more than `cap` checks in flight at once.
    #[must_use]
    pub fn with_max_checks_in_flight(mut self, cap: usize) -> Self {
        self.max_checks_in_flight = Some(cap);
        self
    }

    /// Tell `notifier` of readiness, reloads and stop.
    #[must_use]
    pub fn with_notifier(mut self, notifier: Option<Notifier>) -> Self {
        self.notifier = notifier;
        self
    }
}
