//! The connection synchronisation daemon.

use std::fmt;
use std::net::IpAddr;

use super::invalid::InvalidValue;
use super::scheduler::check_name;

/// The role of a sync daemon. Both may run at once.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "lowercase"))]
#[non_exhaustive]
pub enum DaemonRole {
    /// Sends connection state (1).
    Master,
    /// Receives connection state (2).
    Backup,
}

impl DaemonRole {
    /// The kernel's state number.
    pub fn to_raw(self) -> u32 {
        match self {
            DaemonRole::Master => 1,
            DaemonRole::Backup => 2,
        }
    }

    /// The role for a kernel state number.
    pub fn from_raw(raw: u32) -> Option<Self> {
        match raw {
            1 => Some(DaemonRole::Master),
            2 => Some(DaemonRole::Backup),
            _ => None,
        }
    }
}

impl fmt::Display for DaemonRole {
    /// ipvsadm's word: `master` or `backup`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            DaemonRole::Master => "master",
            DaemonRole::Backup => "backup",
        })
    }
}

/// The largest sync id (the kernel keeps it in a byte).
pub const SYNC_ID_MAX: u32 = 255;

/// The longest interface name the kernel accepts.
pub const IFNAME_MAX: usize = 15;

/// A sync daemon's configuration; listed daemons carry the effective values
/// the kernel chose (on kernels 4.3 and later).
///
/// ```
/// use ipvsnl::{DaemonRole, SyncDaemon};
/// let d = SyncDaemon::new(DaemonRole::Master, "eth0").with_sync_id(9);
/// d.validate().unwrap();
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[non_exhaustive]
pub struct SyncDaemon {
    /// Master or backup.
    pub role: DaemonRole,
    /// Multicast interface.
    pub interface: String,
    /// Sync id (0..=255).
    #[cfg_attr(feature = "serde", serde(default))]
    pub sync_id: u32,
    /// Maximum sync message length (kernel default: from the MTU).
    #[cfg_attr(feature = "serde", serde(default))]
    pub max_len: Option<u16>,
    /// Multicast group (default 224.0.0.81).
    #[cfg_attr(feature = "serde", serde(default))]
    pub group: Option<IpAddr>,
    /// UDP port (default 8848).
    #[cfg_attr(feature = "serde", serde(default))]
    pub port: Option<u16>,
    /// Multicast TTL (default 1).
    #[cfg_attr(feature = "serde", serde(default))]
    pub ttl: Option<u8>,
}

impl SyncDaemon {
    /// A daemon with the kernel's defaults.
    pub fn new(role: DaemonRole, interface: impl Into<String>) -> Self {
        SyncDaemon {
            role,
            interface: interface.into(),
            sync_id: 0,
            max_len: None,
            group: None,
            port: None,
            ttl: None,
        }
    }

    /// Sets the sync id.
    #[must_use]
    pub fn with_sync_id(mut self, id: u32) -> Self {
        self.sync_id = id;
        self
    }

    /// Sets the maximum sync message length.
    #[must_use]
    pub fn with_max_len(mut self, len: u16) -> Self {
        self.max_len = Some(len);
        self
    }

    /// Sets the multicast group (IPv4 or IPv6).
    #[must_use]
    pub fn with_group(mut self, group: IpAddr) -> Self {
        self.group = Some(group);
        self
    }

    /// Sets the multicast UDP port.
    #[must_use]
    pub fn with_port(mut self, port: u16) -> Self {
        self.port = Some(port);
        self
    }

    /// Sets the multicast TTL (1 to 255).
    #[must_use]
    pub fn with_ttl(mut self, ttl: u8) -> Self {
        self.ttl = Some(ttl);
        self
    }

    /// Checks what the kernel would refuse.
    pub fn validate(&self) -> Result<(), InvalidValue> {
        check_name("sync daemon interface", &self.interface, IFNAME_MAX, false)?;
        // The kernel keeps the id in a byte: it would misread 256 as 0.
        if self.sync_id > SYNC_ID_MAX {
            return Err(InvalidValue::new(
                "sync id",
                format!("{} is above {SYNC_ID_MAX}", self.sync_id),
            ));
        }
        if let Some(group) = self.group {
            if !group.is_multicast() {
                return Err(InvalidValue::new(
                    "multicast group",
                    format!("{group} is not a multicast address"),
                ));
            }
        }
        if self.ttl == Some(0) {
            return Err(InvalidValue::new("multicast TTL", "must be 1 to 255"));
        }
        Ok(())
    }
}
