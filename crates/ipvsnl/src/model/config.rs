//! Global settings: connection timeouts and module information.

use super::invalid::InvalidValue;

/// The largest connection timeout any kernel accepts, in seconds (it reads
/// timeouts as an `int`; its own bound, `INT_MAX / HZ`, is lower).
pub const TIMEOUT_MAX: u32 = i32::MAX as u32;

/// Connection timeouts in seconds (`ipvsadm --set`).
///
/// When setting, 0 means "leave this one unchanged".
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(default))]
#[non_exhaustive]
pub struct Timeouts {
    /// Established TCP connections (kernel default 900).
    pub tcp: u32,
    /// TCP connections after FIN (default 120).
    pub tcp_fin: u32,
    /// UDP (default 300).
    pub udp: u32,
}

impl Timeouts {
    /// Timeouts with the given values (0 leaves a value unchanged).
    pub fn new(tcp: u32, tcp_fin: u32, udp: u32) -> Self {
        Timeouts { tcp, tcp_fin, udp }
    }

    /// Checks what every kernel refuses: a timeout above
    /// [`TIMEOUT_MAX`], which it reads as a negative `int`. (Its real
    /// bound, `INT_MAX / HZ`, depends on the kernel's `HZ`: only the
    /// kernel can check that.)
    pub fn validate(&self) -> Result<(), InvalidValue> {
        let named = [
            ("TCP", self.tcp),
            ("TCP FIN", self.tcp_fin),
            ("UDP", self.udp),
        ];
        match named.into_iter().find(|(_, t)| *t > TIMEOUT_MAX) {
            Some((name, t)) => Err(InvalidValue::new(
                "timeout",
                format!(
                    "{name} timeout {t} is above {TIMEOUT_MAX} (the kernel reads it as a negative int)"
                ),
            )),
            None => Ok(()),
        }
    }
}

/// What `GET_INFO` reports.
///
/// ```
/// # use ipvsnl::Info;
/// let info = Info::new(0x010201, 4096);
/// assert_eq!(info.version_string(), "1.2.1");
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(default))]
#[non_exhaustive]
pub struct Info {
    /// IPVS version code, e.g. 0x010201 for 1.2.1.
    pub version: u32,
    /// Size of the connection hash table.
    pub conn_tab_size: u32,
}

impl Info {
    /// Info from its two numbers.
    pub fn new(version: u32, conn_tab_size: u32) -> Self {
        Info {
            version,
            conn_tab_size,
        }
    }

    /// The version as `major.minor.patch`.
    pub fn version_string(&self) -> String {
        let v = self.version;
        format!("{}.{}.{}", (v >> 16) & 0xff, (v >> 8) & 0xff, v & 0xff)
    }
}
