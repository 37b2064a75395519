//! What a diagnosis inspects and how: roots, required schedulers, namespace,
//! whether to load modules and whether to probe.

use std::path::PathBuf;

use crate::roots::HostRoots;
use crate::DEFAULT_SCHEDULERS;

/// What to inspect and how.
#[non_exhaustive]
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Options {
    /// Where to look.
    pub roots: HostRoots,
    /// Scheduler modules required, normalised (`ip_vs_rr`), defaults first.
    pub schedulers: Vec<String>,
    /// A network namespace to inspect (`/var/run/netns/NAME`,
    /// `/proc/PID/ns/net`) instead of the caller's.
    pub netns: Option<PathBuf>,
    /// Run `modprobe` for modules that are not loaded.
    pub load: bool,
    /// Ask the kernel over netlink (may auto-load `ip_vs`).
    pub probe: bool,
    /// The `modprobe` to run; `None` finds it on `PATH`, `/sbin`, `/usr/sbin`.
    pub modprobe: Option<PathBuf>,
}

impl Default for Options {
    fn default() -> Self {
        Options::new()
    }
}

impl Options {
    /// The real host, the default schedulers, the probe on, no loading.
    pub fn new() -> Options {
        Options {
            roots: HostRoots::host(),
            schedulers: DEFAULT_SCHEDULERS.iter().map(|s| s.to_string()).collect(),
            netns: None,
            load: false,
            probe: true,
            modprobe: None,
        }
    }

    /// Inspects these roots instead of the host's.
    pub fn with_roots(mut self, roots: HostRoots) -> Options {
        self.roots = roots;
        self
    }

    /// Also requires this scheduler (`mh` or `ip_vs_mh`).
    pub fn with_scheduler(mut self, name: &str) -> Options {
        let module = crate::scheduler_module_name(name);
        if !self.schedulers.contains(&module) {
            self.schedulers.push(module);
        }
        self
    }

    /// Inspects the network namespace bound at this path.
    pub fn with_netns(mut self, path: impl Into<PathBuf>) -> Options {
        self.netns = Some(path.into());
        self
    }

    /// Runs `modprobe` for what is not loaded, or not.
    pub fn with_load(mut self, load: bool) -> Options {
        self.load = load;
        self
    }

    /// Runs the netlink probe, or not.
    pub fn with_probe(mut self, probe: bool) -> Options {
        self.probe = probe;
        self
    }

    /// Runs this `modprobe` binary.
    pub fn with_modprobe(mut self, modprobe: impl Into<PathBuf>) -> Options {
        self.modprobe = Some(modprobe.into());
        self
    }
}
