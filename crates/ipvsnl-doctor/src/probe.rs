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

fn classify(err: &ipvsnl::Error) -> ProbeOutcome {
    if err.is_unavailable() {
        ProbeOutcome::NotRegistered
    } else if err.is_permission_denied() {
        ProbeOutcome::PermissionDenied
    } else {
        ProbeOutcome::Failed {
            errno: err.errno(),
            message: err.to_string(),
        }
    }
}

impl Probe for NetlinkProbe {
    fn probe(&self, netns: Option<&Path>) -> ProbeOutcome {
        let client = match netns {
            Some(path) => ipvsnl::Client::in_namespace(path),
            None => ipvsnl::Client::new(),
        };
        let mut client = match client {
            Ok(client) => client,
            Err(err) => return classify(&err),
        };
        match client.info() {
            Ok(info) => ProbeOutcome::Reachable {
                version: info.version_string(),
                conn_tab_size: info.conn_tab_size,
            },
            Err(err) => classify(&err),
        }
    }
}
