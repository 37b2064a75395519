//! The netlink probe: asks the kernel for IPVS GET_INFO through `ipvsnl`.
//!
//! Resolving the "IPVS" generic-netlink family can make the kernel load
//! `ip_vs` (`MODULE_ALIAS_GENL_FAMILY`), so the doctor reads `/proc/modules`
//! before probing and reports when the probe loaded it.

use std::path::Path;

use crate::report::ProbeOutcome;

/// Something that can tell whether IPVS answers over netlink.
pub trait Probe {
    /// Probes IPVS in the caller's network namespace, or in the one bound at
    /// `netns`.
    fn probe(&self, netns: Option<&Path>) -> ProbeOutcome;
}

/// The real probe, using [`ipvsnl::Client`].
#[non_exhaustive]
#[derive(Debug, Clone, Copy, Default)]
pub struct NetlinkProbe;

impl NetlinkProbe {
    /// A new probe.
    pub fn new() -> NetlinkProbe {
        NetlinkProbe
    }
}

impl Probe for NetlinkProbe {
    fn probe(&self, _netns: Option<&Path>) -> ProbeOutcome {
        ProbeOutcome::Failed {
            errno: None,
            message: "TEMP STUB".to_string(),
        }
    }
}
