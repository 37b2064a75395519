//! Destinations (real servers) and how packets reach them.

use std::fmt;
use std::net::{IpAddr, SocketAddr};

use bitflags::bitflags;

use super::invalid::InvalidValue;
use super::other::{OtherForward, OtherTunnelKind};
use crate::{AddressFamily, ServiceKey};

/// The tunnel encapsulation of a tunnelled destination.
///
/// [`TunnelKind::from_raw`] gives the named value for a known number, and
/// [`TunnelKind::Other`] only for another one.
///
/// ```
/// use ipvsnl::TunnelKind;
/// assert_eq!(TunnelKind::from_raw(1), TunnelKind::Gue);
/// assert!(matches!(TunnelKind::from_raw(9), TunnelKind::Other(k) if k.get() == 9));
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
#[non_exhaustive]
pub enum TunnelKind {
    /// IP-in-IP (0), the default.
    #[default]
    Ipip,
    /// Generic UDP Encapsulation (1, kernel 5.2+): needs a port.
    Gue,
    /// GRE (2, kernel 5.3+).
    Gre,
    /// A type this crate does not know (never the number of one above).
    Other(OtherTunnelKind),
}

impl TunnelKind {
    /// The kernel's number.
    pub fn to_raw(self) -> u8 {
        match self {
            TunnelKind::Ipip => 0,
            TunnelKind::Gue => 1,
            TunnelKind::Gre => 2,
            TunnelKind::Other(n) => n.get(),
        }
    }

    /// The type for a kernel number: the named value for 0, 1 and 2,
    /// [`TunnelKind::Other`] for any other.
    pub fn from_raw(raw: u8) -> Self {
        match raw {
            0 => TunnelKind::Ipip,
            1 => TunnelKind::Gue,
            2 => TunnelKind::Gre,
            n => TunnelKind::Other(OtherTunnelKind(n)),
        }
    }
}

impl fmt::Display for TunnelKind {
    /// ipvsadm's word (`ipip`, `gue`, `gre`), or the number of an unnamed
    /// type.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TunnelKind::Ipip => f.write_str("ipip"),
            TunnelKind::Gue => f.write_str("gue"),
            TunnelKind::Gre => f.write_str("gre"),
            TunnelKind::Other(n) => write!(f, "{n}"),
        }
    }
}

bitflags! {
    /// Tunnel checksum flags (`IP_VS_TUNNEL_ENCAP_FLAG_*`); empty means no
    /// checksum.
    #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
    pub struct TunnelFlags: u16 {
        /// Outer checksum.
        const CSUM = 1 << 0;
        /// Remote checksum offload.
        const REMCSUM = 1 << 1;
        const _ = !0;
    }
}

/// Tunnel parameters: they exist only on [`Forward::Tunnel`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(default))]
#[non_exhaustive]
pub struct Tunnel {
    /// Encapsulation.
    pub kind: TunnelKind,
    /// Destination UDP port for GUE (0 otherwise).
    pub port: u16,
    /// Checksum flags.
    pub flags: TunnelFlags,
}

impl Tunnel {
    /// IP-in-IP, the classic tunnel.
    pub fn ipip() -> Self {
        Tunnel::default()
    }

    /// GUE to a UDP port.
    pub fn gue(port: u16) -> Self {
        Tunnel {
            kind: TunnelKind::Gue,
            port,
            flags: TunnelFlags::empty(),
        }
    }

    /// GRE.
    pub fn gre() -> Self {
        Tunnel {
            kind: TunnelKind::Gre,
            port: 0,
            flags: TunnelFlags::empty(),
        }
    }

    /// Sets the checksum flags.
    #[must_use]
    pub fn with_flags(mut self, flags: TunnelFlags) -> Self {
        self.flags = flags;
        self
    }
}

impl fmt::Display for Tunnel {
    /// The kind, the port for GUE, and the checksum flags:
    /// `gue port 6080 csum`, `ipip nocsum`.
    ///
    /// ```
    /// use ipvsnl::{Tunnel, TunnelFlags};
    /// let t = Tunnel::gue(6080).with_flags(TunnelFlags::CSUM);
    /// assert_eq!(t.to_string(), "gue port 6080 csum");
    /// assert_eq!(Tunnel::gre().to_string(), "gre nocsum");
    /// ```
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.kind)?;
        if self.kind == TunnelKind::Gue || self.port != 0 {
            write!(f, " port {}", self.port)?;
        }
        write!(f, " {}", self.flags)
    }
}

/// How the director forwards packets to a destination
/// (`IP_VS_CONN_F_FWD_MASK` bits).
///
/// [`Forward::from_raw`] gives the named method for a known number, and
/// [`Forward::Other`] only for another one (5 to 7).
///
/// ```
/// use ipvsnl::{Forward, Tunnel};
/// assert_eq!(Forward::from_raw(3), Some(Forward::Route));
/// assert_eq!(Forward::from_raw(2), Some(Forward::Tunnel(Tunnel::ipip())));
/// assert!(matches!(Forward::from_raw(6), Some(Forward::Other(m)) if m.get() == 6));
/// assert_eq!(Forward::from_raw(8), None);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "snake_case"))]
#[non_exhaustive]
pub enum Forward {
    /// NAT (0): ipvsadm `-m`.
    #[default]
    Masquerade,
    /// Local node (1).
    Local,
    /// IP tunnelling (2): ipvsadm `-i`.
    Tunnel(Tunnel),
    /// Direct routing (3): ipvsadm `-g`.
    Route,
    /// Bypass (4).
    Bypass,
    /// A method number this crate does not know (5 to 7; never the number
    /// of one above).
    Other(OtherForward),
}

impl Forward {
    /// The kernel's method number.
    pub fn to_raw(self) -> u32 {
        match self {
            Forward::Masquerade => 0,
            Forward::Local => 1,
            Forward::Tunnel(_) => 2,
            Forward::Route => 3,
            Forward::Bypass => 4,
            Forward::Other(n) => n.get(),
        }
    }

    /// The method for a number of the kernel's three-bit field: the named
    /// method for 0 to 4 (a tunnel is IP-in-IP: set its parameters after),
    /// [`Forward::Other`] for 5 to 7, `None` above 7.
    pub fn from_raw(raw: u32) -> Option<Self> {
        (raw <= 7).then(|| Forward::from_kernel(raw, Tunnel::ipip()))
    }

    /// The method for a kernel number (its low three bits) and the tunnel
    /// attributes.
    pub(crate) fn from_kernel(raw: u32, tunnel: Tunnel) -> Self {
        match raw & 0x7 {
            0 => Forward::Masquerade,
            1 => Forward::Local,
            2 => Forward::Tunnel(tunnel),
            3 => Forward::Route,
            4 => Forward::Bypass,
            n => Forward::Other(OtherForward(n)),
        }
    }

    /// The tunnel parameters, for a tunnel.
    pub fn tunnel(&self) -> Option<&Tunnel> {
        match self {
            Forward::Tunnel(t) => Some(t),
            _ => None,
        }
    }
}

impl fmt::Display for Forward {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Forward::Masquerade => f.write_str("Masq"),
            Forward::Local => f.write_str("Local"),
            Forward::Tunnel(_) => f.write_str("Tunnel"),
            Forward::Route => f.write_str("Route"),
            Forward::Bypass => f.write_str("Bypass"),
            Forward::Other(n) => write!(f, "method {n}"),
        }
    }
}

/// The largest weight the kernel accepts (it reads the weight as an `int`).
pub const WEIGHT_MAX: u32 = i32::MAX as u32;

/// The largest connection threshold the kernel accepts.
pub const THRESHOLD_MAX: u32 = i32::MAX as u32;

/// A destination's configuration: what you add, edit and compare.
///
/// ```
/// use ipvsnl::{Destination, Forward, Tunnel};
/// let d = Destination::new("10.1.0.2".parse().unwrap(), 8080)
///     .with_weight(3)
///     .with_forward(Forward::Tunnel(Tunnel::gue(6080)));
/// assert_eq!(d.forward.tunnel().unwrap().port, 6080);
/// ```
///
/// From a socket address (`From<SocketAddr>`: masqueraded, weight 1), as
/// a configuration or a service registry hands out backends:
///
/// ```
/// use std::net::SocketAddr;
/// use ipvsnl::sync::Table;
/// use ipvsnl::{Destination, Service, ServiceKey};
///
/// let backends: Vec<SocketAddr> = ["10.1.0.1:8080", "[2001:db8::7]:8080"]
///     .iter()
///     .map(|s| s.parse().unwrap())
///     .collect();
/// let d: Destination = backends[0].into();
/// assert_eq!((d.addr, d.port, d.weight), (backends[0].ip(), 8080, 1));
///
/// let mut want = Table::new();
/// let key = ServiceKey::tcp("192.0.2.10".parse().unwrap(), 80);
/// want.insert(Service::new(key), backends.iter().copied().map(Destination::from));
/// assert_eq!(want.destination_count(), 2);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[non_exhaustive]
pub struct Destination {
    /// Real server address (its family may differ from the service's only
    /// when tunnelling).
    pub addr: IpAddr,
    /// Real server port.
    pub port: u16,
    /// Forwarding method.
    #[cfg_attr(feature = "serde", serde(default))]
    pub forward: Forward,
    /// Weight, 0 to [`WEIGHT_MAX`]; 0 takes no new connections.
    #[cfg_attr(
        feature = "serde",
        serde(default = "crate::model::serde_impls::default_weight")
    )]
    pub weight: u32,
    /// Upper connection threshold; 0 means none.
    #[cfg_attr(feature = "serde", serde(default))]
    pub upper_threshold: u32,
    /// Lower connection threshold; must not exceed a non-zero upper one.
    #[cfg_attr(feature = "serde", serde(default))]
    pub lower_threshold: u32,
}

impl Destination {
    /// A masqueraded destination of weight 1 (ipvsadm's defaults).
    pub fn new(addr: IpAddr, port: u16) -> Self {
        Destination {
            addr,
            port,
            forward: Forward::Masquerade,
            weight: 1,
            upper_threshold: 0,
            lower_threshold: 0,
        }
    }

    /// The real server's address and port.
    pub fn socket_addr(&self) -> SocketAddr {
        SocketAddr::new(self.addr, self.port)
    }

    /// Sets the forwarding method.
    #[must_use]
    pub fn with_forward(mut self, forward: Forward) -> Self {
        self.forward = forward;
        self
    }

    /// Sets the weight.
    #[must_use]
    pub fn with_weight(mut self, weight: u32) -> Self {
        self.weight = weight;
        self
    }

    /// Sets the upper and lower connection thresholds.
    #[must_use]
    pub fn with_thresholds(mut self, upper: u32, lower: u32) -> Self {
        self.upper_threshold = upper;
        self.lower_threshold = lower;
        self
    }

    /// The address family of the real server.
    pub fn family(&self) -> AddressFamily {
        AddressFamily::of(&self.addr)
    }

    /// Checks what the kernel would refuse, for a destination of `service`.
    pub fn validate_for(&self, service: &ServiceKey) -> Result<(), InvalidValue> {
        if self.weight > WEIGHT_MAX {
            return Err(InvalidValue::new(
                "weight",
                format!("{} is above the kernel's maximum {WEIGHT_MAX}", self.weight),
            ));
        }
        // The kernel refuses thresholds above INT_MAX (EINVAL, measured on
        // 6.1 and 6.12), like weights.
        if self.upper_threshold > THRESHOLD_MAX || self.lower_threshold > THRESHOLD_MAX {
            return Err(InvalidValue::new(
                "thresholds",
                format!(
                    "upper {} / lower {}: the kernel's maximum is {THRESHOLD_MAX}",
                    self.upper_threshold, self.lower_threshold
                ),
            ));
        }
        if self.lower_threshold > self.upper_threshold {
            return Err(InvalidValue::new(
                "thresholds",
                format!(
                    "lower threshold {} is above upper threshold {} (0 means no upper threshold, so a lower one needs an upper one)",
                    self.lower_threshold, self.upper_threshold
                ),
            ));
        }
        // A method with no name is 5 to 7 (`OtherForward` is made by no one
        // else): it fits the kernel's three-bit field.
        if let Forward::Tunnel(t) = self.forward {
            if t.kind == TunnelKind::Gue && t.port == 0 {
                return Err(InvalidValue::new("tunnel", "a GUE tunnel needs a port"));
            }
            if t.kind != TunnelKind::Gue && t.port != 0 {
                return Err(InvalidValue::new(
                    "tunnel",
                    "a tunnel port is only meaningful for GUE",
                ));
            }
        }
        if self.family() != service.family() && self.forward.tunnel().is_none() {
            return Err(InvalidValue::new(
                "destination",
                format!(
                    "{} destination {} on an {} service needs tunnel forwarding",
                    self.family(),
                    self.addr,
                    service.family()
                ),
            ));
        }
        let addr_ok = match self.addr {
            IpAddr::V4(a) => !(a.is_unspecified() || a.is_broadcast() || a.is_multicast()),
            IpAddr::V6(a) => !(a.is_unspecified() || a.is_multicast()),
        };
        if !addr_ok {
            return Err(InvalidValue::new(
                "destination",
                format!("{} is not a unicast address", self.addr),
            ));
        }
        Ok(())
    }
}

impl From<SocketAddr> for Destination {
    /// A masqueraded destination of weight 1 at a socket address (an IPv6
    /// one's flow label and scope are dropped).
    ///
    /// ```
    /// use std::net::SocketAddr;
    /// use ipvsnl::Destination;
    /// let at: SocketAddr = "[2001:db8::2]:8080".parse().unwrap();
    /// let d = Destination::from(at);
    /// assert_eq!(d, Destination::new(at.ip(), 8080));
    /// assert_eq!(d.socket_addr(), at);
    /// ```
    fn from(at: SocketAddr) -> Self {
        Destination::new(at.ip(), at.port())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn svc() -> ServiceKey {
        ServiceKey::tcp("10.0.0.1".parse().unwrap(), 80)
    }

    #[test]
    fn refuses_what_the_kernel_refuses() {
        let d = Destination::new("10.0.0.2".parse().unwrap(), 80);
        d.validate_for(&svc()).unwrap();
        let e = d.with_thresholds(0, 10).validate_for(&svc()).unwrap_err();
        assert!(e.to_string().contains("lower threshold 10"), "{e}");
        assert!(d.with_weight(WEIGHT_MAX + 1).validate_for(&svc()).is_err());
        assert!(d
            .with_thresholds(THRESHOLD_MAX, 0)
            .validate_for(&svc())
            .is_ok());
        let e = d.with_thresholds(THRESHOLD_MAX + 1, 0).validate_for(&svc());
        assert_eq!(e.unwrap_err().field(), "thresholds");
        let gue0 = d.with_forward(Forward::Tunnel(Tunnel::gue(0)));
        assert!(gue0.validate_for(&svc()).is_err());
        let v6 = Destination::new("2001:db8::2".parse().unwrap(), 80);
        let e = v6.validate_for(&svc()).unwrap_err().to_string();
        assert!(e.contains("needs tunnel forwarding"), "{e}");
        v6.with_forward(Forward::Tunnel(Tunnel::ipip()))
            .validate_for(&svc())
            .unwrap();
        let mc = Destination::new("224.0.0.1".parse().unwrap(), 80);
        assert!(mc.validate_for(&svc()).is_err());
    }

    #[test]
    fn forward_numbers_round_trip() {
        for raw in 0..8 {
            assert_eq!(Forward::from_raw(raw).unwrap().to_raw(), raw);
            assert_eq!(Forward::from_kernel(raw, Tunnel::ipip()).to_raw(), raw);
        }
        assert_eq!(Forward::from_raw(8), None);
        assert_eq!(Forward::from_kernel(8 | 3, Tunnel::ipip()), Forward::Route);
        for raw in 0..=255u8 {
            assert_eq!(TunnelKind::from_raw(raw).to_raw(), raw);
        }
    }

    /// Every known number gives its named value, and `Other` holds only
    /// the numbers no named value has.
    #[test]
    fn known_numbers_give_named_values_only() {
        let gre = Tunnel::gre();
        let named = [
            (0, Forward::Masquerade),
            (1, Forward::Local),
            (2, Forward::Tunnel(gre)),
            (3, Forward::Route),
            (4, Forward::Bypass),
        ];
        for (raw, f) in named {
            assert_eq!(Forward::from_kernel(raw, gre), f);
        }
        for raw in 0..=u32::from(u8::MAX) {
            let f = Forward::from_kernel(raw, gre);
            assert_eq!(matches!(f, Forward::Other(_)), raw & 7 > 4, "{raw}");
            if let Some(f) = Forward::from_raw(raw) {
                assert_eq!(matches!(f, Forward::Other(_)), raw > 4, "{raw}");
            }
        }
        let kinds = [
            (0, TunnelKind::Ipip),
            (1, TunnelKind::Gue),
            (2, TunnelKind::Gre),
        ];
        for (raw, k) in kinds {
            assert_eq!(TunnelKind::from_raw(raw), k);
        }
        for raw in 0..=255u8 {
            let k = TunnelKind::from_raw(raw);
            assert_eq!(matches!(k, TunnelKind::Other(_)), raw > 2, "{raw}");
        }
    }
}
