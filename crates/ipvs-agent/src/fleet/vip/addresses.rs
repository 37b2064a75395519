//! The leader's virtual addresses on an interface, through rtnetlink:
//! added (each IPv4 one announced with gratuitous ARP, [`crate::fleet::vip::garp`],
//! each IPv6 one with an unsolicited neighbour advertisement,
//! [`crate::fleet::vip::unsolicited_na`]) when the agent becomes leader, removed when
//! it steps down. IPv6 VIPs are added without duplicate address
//! detection (`nodad`): the address moves between directors, and the
//! detection would hold it tentative, unusable and unannounceable, for a
//! second or more after each takeover.
//!
//! Idempotent, and careful with what is not its own: an address already
//! on the interface when the leader adds it is fine (it is announced) but
//! is not recorded as this agent's, and only the addresses this agent
//! added are removed.
//!
//! ```
//! use ipvs_agent::fleet::vip::addresses::Vip;
//! let vip: Vip = "192.0.2.10/24".parse().unwrap();
//! assert_eq!((vip.address.to_string(), vip.prefix), ("192.0.2.10".into(), 24));
//! assert_eq!(
//!     "192.0.2.10/33".parse::<Vip>().unwrap_err(),
//!     "VIP `192.0.2.10/33`: prefix length 33 is more than 32"
//! );
//! ```

use std::fmt;
use std::io;
use std::net::IpAddr;
use std::str::FromStr;

use netlink_packet_core::{
    NetlinkHeader, NetlinkMessage, NetlinkPayload, NLM_F_ACK, NLM_F_CREATE, NLM_F_EXCL,
    NLM_F_REQUEST,
};
use netlink_packet_route::address::{AddressAttribute, AddressFlags, AddressMessage};
use netlink_packet_route::link::{LinkAttribute, LinkMessage};
use netlink_packet_route::{AddressFamily, RouteNetlinkMessage};
use netlink_sys::{protocols::NETLINK_ROUTE, Socket, SocketAddr};

use crate::fleet::vip::record::VipState;
use crate::fleet::vip::{garp, unsolicited_na};

/// A virtual address and its prefix length (`ADDR/PREFIX`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[non_exhaustive]
pub struct Vip {
    /// The address.
    pub address: IpAddr,
    /// Its prefix length.
    pub prefix: u8,
}

impl Vip {
    /// `address/prefix`, the prefix checked against the address family.
    pub fn new(address: IpAddr, prefix: u8) -> Result<Vip, String> {
        let most = if address.is_ipv4() { 32 } else { 128 };
        if prefix > most {
            return Err(format!(
                "VIP `{address}/{prefix}`: prefix length {prefix} is more than {most}"
            ));
        }
        if address.is_unspecified() || address.is_multicast() || address.is_loopback() {
            return Err(format!(
                "VIP `{address}/{prefix}`: not an address a director can answer for"
            ));
        }
        Ok(Vip { address, prefix })
    }
}

impl FromStr for Vip {
    type Err = String;
    fn from_str(s: &str) -> Result<Vip, String> {
        let (address, prefix) = s
            .split_once('/')
            .ok_or_else(|| format!("VIP `{s}`: expected ADDRESS/PREFIX"))?;
        let address: IpAddr = address
            .parse()
            .map_err(|_| format!("VIP `{s}`: `{address}` is not an IP address"))?;
        let prefix: u8 = prefix
            .parse()
            .map_err(|_| format!("VIP `{s}`: `{prefix}` is not a prefix length"))?;
        Vip::new(address, prefix)
    }
}

impl fmt::Display for Vip {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.address, self.prefix)
    }
}

/// A VIP operation that failed: what was being done, and the system's error.
#[derive(Debug)]
#[non_exhaustive]
pub struct VipError {
    /// What was being done ("add 192.0.2.10/24 on eth0").
    pub doing: String,
    /// The error (the kernel's errno for a refusal).
    pub source: io::Error,
}

impl fmt::Display for VipError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "VIP: {}: {}", self.doing, self.source)
    }
}

impl std::error::Error for VipError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        Some(&self.source)
    }
}

/// What [`Vips::hold`] did.
#[derive(Debug, Default)]
#[non_exhaustive]
pub struct Held {
    /// The VIPs this call added.
    pub added: Vec<Vip>,
    /// The VIPs that were there already (not recorded as ours unless an
    /// earlier call added them).
    pub present: Vec<Vip>,
    /// VIPs announced (IPv4 by gratuitous ARP, IPv6 by unsolicited
    /// neighbour advertisement).
    pub announced: Vec<Vip>,
    /// Announcements that failed (the VIP is held all the same).
    pub announce_errors: Vec<VipError>,
}

/// The VIPs of one interface, and the record of those this agent added
/// (in memory, and on disk with [`with_state`](Vips::with_state)).
#[derive(Debug)]
pub struct Vips {
    interface: String,
    vips: Vec<Vip>,
    ours: Vec<Vip>,
    state: Option<VipState>,
}

impl Vips {
    /// `vips` on `interface`; none held yet.
    pub fn new(interface: impl Into<String>, vips: Vec<Vip>) -> Vips {
        Vips {
            interface: interface.into(),
            vips,
            ours: Vec::new(),
            state: None,
        }
    }

    /// The same, recording the VIPs it adds in `state` (before each add,
    /// after each removal).
    pub fn with_state(mut self, state: VipState) -> Vips {
        self.state = Some(state);
        self
    }

    /// Writes the record: ours, plus `adding` about to be added.
    fn record(&self, adding: Option<Vip>) -> Result<(), VipError> {
        let Some(state) = &self.state else {
            return Ok(());
        };
        let list: Vec<(String, Vip)> = self
            .ours
            .iter()
            .copied()
            .chain(adding.filter(|v| !self.ours.contains(v)))
            .map(|v| (self.interface.clone(), v))
            .collect();
        state.store(&list).map_err(|source| VipError {
            doing: "record the VIPs held".into(),
            source,
        })
    }

    /// Removes the VIPs the record (of a previous run, killed while it
    /// held them) lists, from the interfaces it names; one already gone is
    /// fine. Then the record is empty. What was removed.
    pub fn remove_recorded(&mut self) -> Result<Vec<(String, Vip)>, VipError> {
        let Some(state) = &self.state else {
            return Ok(Vec::new());
        };
        let recorded = state.load::<Vip>().map_err(|source| VipError {
            doing: "read the record of the VIPs held".into(),
            source,
        })?;
        let mut removed = Vec::new();
        if !recorded.is_empty() {
            let mut rtnl = Rtnl::open().map_err(|source| VipError {
                doing: "open a netlink socket".into(),
                source,
            })?;
            for (interface, vip) in recorded {
                let what = format!("remove the recorded {vip} from {interface}");
                let index = match rtnl.link(&interface) {
                    Ok((index, _)) => index,
                    // The interface is gone, and its addresses with it.
                    Err(e) if e.raw_os_error() == Some(libc::ENODEV) => continue,
                    Err(source) => {
                        return Err(VipError {
                            doing: what,
                            source,
                        })
                    }
                };
                match rtnl.address(RequestKind::Delete, index, vip) {
                    Ok(()) => removed.push((interface, vip)),
                    Err(e) if e.raw_os_error() == Some(libc::EADDRNOTAVAIL) => {}
                    Err(source) => {
                        return Err(VipError {
                            doing: what,
                            source,
                        })
                    }
                }
            }
        }
        self.ours.clear();
        self.record(None)?;
        Ok(removed)
    }

    /// The VIPs this agent added and has not removed.
    pub fn ours(&self) -> &[Vip] {
        &self.ours
    }

    /// Adds every VIP (one already there is fine) and announces each. Stops at the first refusal; those added before it stay
    /// recorded (a [`release`](Vips::release) removes them).
    pub fn hold(&mut self) -> Result<Held, VipError> {
        if self.vips.is_empty() {
            return Ok(Held::default());
        }
        let doing = |what: String| {
            move |source| VipError {
                doing: what,
                source,
            }
        };
        let mut rtnl = Rtnl::open().map_err(doing("open a netlink socket".into()))?;
        let (index, mac) = rtnl
            .link(&self.interface)
            .map_err(doing(format!("find interface {}", self.interface)))?;
        let mut held = Held::default();
        for &vip in &self.vips {
            let what = format!("add {vip} on {}", self.interface);
            // Recorded first: an agent killed right after the add leaves
            // an address its next run knows to remove.
            self.record(Some(vip))?;
            match rtnl.address(RequestKind::Add, index, vip) {
                Ok(()) => {
                    held.added.push(vip);
                    if !self.ours.contains(&vip) {
                        self.ours.push(vip);
                    }
                }
                Err(e) if e.raw_os_error() == Some(libc::EEXIST) => {
                    held.present.push(vip);
                    // Not ours (unless an earlier call added it): off the record.
                    self.record(None)?;
                }
                Err(source) => {
                    // Not added: off the record (best effort; the error
                    // reported is the add's).
                    let _ = self.record(None);
                    return Err(VipError {
                        doing: what,
                        source,
                    });
                }
            }
            if let Some(mac) = mac {
                let announced = match vip.address {
                    IpAddr::V4(v4) => garp::announce(index, mac, v4),
                    IpAddr::V6(v6) => unsolicited_na::announce(index, mac, v6),
                };
                match announced {
                    Ok(()) => held.announced.push(vip),
                    Err(source) => held.announce_errors.push(VipError {
                        doing: format!("announce {vip} on {}", self.interface),
                        source,
                    }),
                }
            }
        }
        Ok(held)
    }

    /// Removes the VIPs this agent added (one already gone is removed);
    /// the ones removed. Addresses another tool added stay.
    pub fn release(&mut self) -> Result<Vec<Vip>, VipError> {
        if self.ours.is_empty() {
            return Ok(Vec::new());
        }
        let doing = |what: String| {
            move |source| VipError {
                doing: what,
                source,
            }
        };
        let mut rtnl = Rtnl::open().map_err(doing("open a netlink socket".into()))?;
        let (index, _) = rtnl
            .link(&self.interface)
            .map_err(doing(format!("find interface {}", self.interface)))?;
        let mut removed = Vec::new();
        while let Some(&vip) = self.ours.first() {
            match rtnl.address(RequestKind::Delete, index, vip) {
                Ok(()) => {}
                Err(e) if e.raw_os_error() == Some(libc::EADDRNOTAVAIL) => {}
                Err(source) => {
                    return Err(VipError {
                        doing: format!("remove {vip} from {}", self.interface),
                        source,
                    })
                }
            }
            self.ours.remove(0);
            removed.push(vip);
            self.record(None)?;
        }
        Ok(removed)
    }
}

#[derive(Clone, Copy)]
enum RequestKind {
    Add,
    Delete,
}

/// A route netlink socket, one request at a time.
struct Rtnl {
    socket: Socket,
    seq: u32,
}

impl Rtnl {
    fn open() -> io::Result<Rtnl> {
        let mut socket = Socket::new(NETLINK_ROUTE)?;
        socket.bind_auto()?;
        socket.connect(&SocketAddr::new(0, 0))?;
        Ok(Rtnl { socket, seq: 0 })
    }

    /// The index and (Ethernet) MAC of interface `name`.
    fn link(&mut self, name: &str) -> io::Result<(u32, Option<[u8; 6]>)> {
        let mut message = LinkMessage::default();
        message
            .attributes
            .push(LinkAttribute::IfName(name.to_string()));
        let replies = self.request(RouteNetlinkMessage::GetLink(message), 0)?;
        for reply in replies {
            if let RouteNetlinkMessage::NewLink(link) = reply {
                let mac = link.attributes.iter().find_map(|a| match a {
                    LinkAttribute::Address(bytes) => <[u8; 6]>::try_from(bytes.as_slice()).ok(),
                    _ => None,
                });
                return Ok((link.header.index, mac));
            }
        }
        Err(io::Error::from_raw_os_error(libc::ENODEV))
    }

    /// Adds (exclusively: `EEXIST` if there) or deletes `vip` on `index`.
    fn address(&mut self, kind: RequestKind, index: u32, vip: Vip) -> io::Result<()> {
        let mut message = AddressMessage::default();
        message.header.family = match vip.address {
            IpAddr::V4(_) => AddressFamily::Inet,
            IpAddr::V6(_) => AddressFamily::Inet6,
        };
        message.header.prefix_len = vip.prefix;
        message.header.index = index;
        message
            .attributes
            .push(AddressAttribute::Local(vip.address));
        message
            .attributes
            .push(AddressAttribute::Address(vip.address));
        if vip.address.is_ipv6() {
            message
                .attributes
                .push(AddressAttribute::Flags(AddressFlags::Nodad));
        }
        let (request, flags) = match kind {
            RequestKind::Add => (
                RouteNetlinkMessage::NewAddress(message),
                NLM_F_CREATE | NLM_F_EXCL,
            ),
            RequestKind::Delete => (RouteNetlinkMessage::DelAddress(message), 0),
        };
        self.request(request, flags).map(drop)
    }

    /// Sends one request with an ACK asked for; its replies up to the
    /// ACK, or the kernel's refusal as an errno.
    fn request(
        &mut self,
        inner: RouteNetlinkMessage,
        flags: u16,
    ) -> io::Result<Vec<RouteNetlinkMessage>> {
        self.seq = self.seq.wrapping_add(1);
        let mut header = NetlinkHeader::default();
        header.flags = NLM_F_REQUEST | NLM_F_ACK | flags;
        header.sequence_number = self.seq;
        let mut message = NetlinkMessage::new(header, NetlinkPayload::InnerMessage(inner));
        message.finalize();
        let mut buffer = vec![0u8; message.buffer_len()];
        message.serialize(&mut buffer);
        self.socket.send(&buffer, 0)?;
        let mut replies = Vec::new();
        loop {
            let (datagram, _) = self.socket.recv_from_full()?;
            let mut offset = 0;
            while offset < datagram.len() {
                let reply = NetlinkMessage::<RouteNetlinkMessage>::deserialize(&datagram[offset..])
                    .map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e.to_string()))?;
                let length = reply.header.length as usize;
                if reply.header.sequence_number == self.seq {
                    match reply.payload {
                        NetlinkPayload::Error(e) => {
                            return match e.code {
                                None => Ok(replies),
                                Some(code) => Err(io::Error::from_raw_os_error(-code.get())),
                            }
                        }
                        NetlinkPayload::Done(_) => return Ok(replies),
                        NetlinkPayload::InnerMessage(m) => replies.push(m),
                        _ => {}
                    }
                }
                if length == 0 {
                    break;
                }
                offset += (length + 3) & !3;
            }
        }
    }
}
