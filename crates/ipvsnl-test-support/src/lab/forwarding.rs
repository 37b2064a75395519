//! A client, a director and two real servers, each in a network namespace of
//! its own, joined by veth pairs: the layout the kernel's IPVS selftest uses
//! to show that services carry traffic, without a bridge.
//!
//! ```text
//!  client ns            director ns (the test's thread)         real server ns
//!  c  10.0.1.2 ------ dc 10.0.1.1     d1 10.0.2.1 ------------ r1 10.0.2.2  (rs1)
//!     fd00:1::2          fd00:1::1    d2 10.0.3.1 ------------ r2 10.0.3.2  (rs2)
//!                        lo: VIP 10.0.100.1, fd00:100::1
//! ```
//!
//! Each real server has a link of its own to the director: one L2 hop, which
//! is all direct routing needs (the director sends the unchanged packet to
//! the real server's MAC). The client and the real servers route everything
//! through the director, so a real server's replies pass it in every method:
//! NAT needs that, and for direct routing and tunnels it is only forwarding.
//!
//! A namespace is a [`Netns`]: a thread that made a fresh namespace and
//! then runs the jobs it is given ([`Netns::exec`]); the threads and child
//! processes it starts are in its namespace too.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};

use ipvsnl::{Forward, Tunnel};

use crate::commands::{ip_batch, sh};
use crate::digest_servers::EchoServers;
use crate::netns::{fresh_netns, load_module, sysctl, Netns};

/// The virtual service's port (TCP, UDP and SCTP).
pub const PORT: u16 = 5000;
/// The real servers' port behind a NAT service (the director translates it).
pub const NAT_PORT: u16 = 6000;
/// The UDP port of the GUE tunnel's receiving end on the real servers.
pub const GUE_PORT: u16 = 6080;
/// MTU of the director's links to the real servers: a full-size packet from
/// the client (MTU 1500) still fits once encapsulated, so no tunnel needs
/// path MTU discovery (which retransmits, and blurs the byte counts).
pub const SERVER_LINK_MTU: u32 = 1600;

/// IPv4 or IPv6: which addresses the service, the real servers and the
/// client use.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Family {
    /// IPv4.
    V4,
    /// IPv6.
    V6,
}

impl Family {
    /// The virtual address (on the director's `lo`).
    pub fn vip(self) -> IpAddr {
        match self {
            Family::V4 => Ipv4Addr::new(10, 0, 100, 1).into(),
            Family::V6 => Ipv6Addr::new(0xfd00, 0x100, 0, 0, 0, 0, 0, 1).into(),
        }
    }

    /// Host `host` (1: the director, 2: the other end) on link `link` (1: the
    /// client's, 2 and 3: the real servers').
    pub fn host(self, link: u8, host: u8) -> IpAddr {
        match self {
            Family::V4 => Ipv4Addr::new(10, 0, link, host).into(),
            Family::V6 => Ipv6Addr::new(0xfd00, link.into(), 0, 0, 0, 0, 0, host.into()).into(),
        }
    }

    /// The client's address.
    pub fn client(self) -> IpAddr {
        self.host(1, 2)
    }

    /// Bytes of an IP header without options.
    pub fn ip_header(self) -> u64 {
        match self {
            Family::V4 => 20,
            Family::V6 => 40,
        }
    }

    fn prefix(self) -> u8 {
        match self {
            Family::V4 => 24,
            Family::V6 => 64,
        }
    }

    fn host_prefix(self) -> u8 {
        match self {
            Family::V4 => 32,
            Family::V6 => 128,
        }
    }
}

/// Both families' addresses of host `host` on link `link`, with their
/// prefixes: what `ip addr add` gets.
fn dual_stack(link: u8, host: u8) -> [String; 2] {
    [Family::V4, Family::V6].map(|f| format!("{}/{}", f.host(link, host), f.prefix()))
}

/// How the director forwards to the real servers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Method {
    /// NAT: the real servers answer through the director, which translates.
    Masquerade,
    /// Direct routing: the unchanged packet to the real server's MAC.
    DirectRouting,
    /// IP-in-IP (IPv6: IPv6-in-IPv6).
    Ipip,
    /// GUE to [`GUE_PORT`].
    Gue,
    /// GRE.
    Gre,
}

impl Method {
    /// The library's forwarding method for it.
    pub fn forward(self) -> Forward {
        match self {
            Method::Masquerade => Forward::Masquerade,
            Method::DirectRouting => Forward::Route,
            Method::Ipip => Forward::Tunnel(Tunnel::ipip()),
            Method::Gue => Forward::Tunnel(Tunnel::gue(GUE_PORT)),
            Method::Gre => Forward::Tunnel(Tunnel::gre()),
        }
    }

    /// The real servers' port (the destinations' port).
    pub fn server_port(self) -> u16 {
        match self {
            Method::Masquerade => NAT_PORT,
            _ => PORT,
        }
    }
}

/// One of the lab's real servers: its namespace and the echo servers in it.
pub struct LabServer {
    /// `rs1`, `rs2`: what it answers with.
    pub name: String,
    /// Its address on its link (the destination's address).
    pub addr: IpAddr,
    // Dropped before the namespace: stops the servers first.
    _echo: EchoServers,
    _ns: Netns,
}

/// The four namespaces, configured for one method and family. The thread
/// that builds it is the director.
pub struct ForwardingLab {
    /// How the director forwards.
    pub method: Method,
    /// The addresses the service, the servers and the client use.
    pub family: Family,
    /// The client's namespace.
    pub client: Netns,
    /// `rs1` and `rs2`.
    pub servers: Vec<LabServer>,
}

impl ForwardingLab {
    /// Moves the calling thread into a fresh namespace (the director) and
    /// builds the rest around it; the echo servers are listening when this
    /// returns. The director's IPVS table is empty.
    pub fn build(method: Method, family: Family) -> ForwardingLab {
        fresh_netns();
        load_module("veth");
        for (name, value) in [
            ("net.ipv6.conf.default.accept_dad", "0"),
            ("net.ipv4.ip_forward", "1"),
            ("net.ipv6.conf.all.forwarding", "1"),
            // With direct routing and tunnels the real servers' replies come
            // from the VIP, an address of the director's own: IPv4 drops a
            // forwarded packet with a local source as a martian unless this
            // is set (without it every IPv4 connect timed out on 6.12;
            // IPv6 needs nothing).
            ("net.ipv4.conf.all.accept_local", "1"),
        ] {
            sysctl(name, value);
        }
        let client = Netns::new("client");
        let server_ns = [Netns::new("rs1"), Netns::new("rs2")];

        let mut director = Vec::new();
        let links = [("dc", "c", client.tid(), 1, 1500)].into_iter().chain(
            server_ns
                .iter()
                .zip([("d1", "r1", 2), ("d2", "r2", 3)])
                .map(|(ns, (d, r, link))| (d, r, ns.tid(), link, SERVER_LINK_MTU)),
        );
        for (here, there, tid, link, mtu) in links {
            director.push(format!(
                "link add name {here} mtu {mtu} type veth peer name {there} mtu {mtu}"
            ));
            director.push(format!("link set dev {there} netns {tid}"));
            for a in dual_stack(link, 1) {
                director.push(format!("addr add {a} dev {here} nodad"));
            }
            director.push(format!("link set dev {here} up"));
        }
        for f in [Family::V4, Family::V6] {
            director.push(vip_on_lo(f));
        }
        ip_batch(&director);

        client.exec(|| ip_batch(&end_of_link("c", 1)));
        let servers = server_ns
            .into_iter()
            .enumerate()
            .map(|(i, ns)| {
                let name = format!("rs{}", i + 1);
                let link = i as u8 + 2;
                let bind = match method {
                    Method::Masquerade => SocketAddr::new(family.host(link, 2), NAT_PORT),
                    _ => SocketAddr::new(family.vip(), PORT),
                };
                let echo = ns.exec({
                    let name = name.clone();
                    move || {
                        real_server_setup(method, family, &format!("r{}", i + 1), link);
                        EchoServers::start(&name, bind)
                    }
                });
                LabServer {
                    name,
                    addr: family.host(link, 2),
                    _echo: echo,
                    _ns: ns,
                }
            })
            .collect();
        ForwardingLab {
            method,
            family,
            client,
            servers,
        }
    }

    /// The virtual service's address and port.
    pub fn service_addr(&self) -> SocketAddr {
        SocketAddr::new(self.family.vip(), PORT)
    }

    /// The real server whose address is `addr`.
    pub fn server_at(&self, addr: IpAddr) -> &LabServer {
        self.servers
            .iter()
            .find(|s| s.addr == addr)
            .unwrap_or_else(|| panic!("no real server at {addr}"))
    }
}

/// The `ip` command that puts `family`'s VIP on `lo`, usable at once
/// (`nodad`): an IPv6 address left to duplicate address detection is
/// tentative, and cannot be bound, until the kernel's DAD work has run,
/// which under load came after a real server's echo servers bound the VIP.
pub fn vip_on_lo(family: Family) -> String {
    format!(
        "addr add {}/{} dev lo nodad",
        family.vip(),
        family.host_prefix()
    )
}

/// `ip` commands for the far end `dev` of link `link`: both families'
/// addresses, up, default routes through the director.
fn end_of_link(dev: &str, link: u8) -> Vec<String> {
    let mut cmds: Vec<String> = dual_stack(link, 2)
        .iter()
        .map(|a| format!("addr add {a} dev {dev} nodad"))
        .collect();
    cmds.push(format!("link set dev {dev} up"));
    for f in [Family::V4, Family::V6] {
        cmds.push(format!("route add default via {}", f.host(link, 1)));
    }
    cmds
}

/// Configures a real server's namespace (on its thread) for `method`: its
/// link, and for direct routing and tunnels the VIP on `lo` (not announced
/// on the link) and the tunnel's receiving end.
fn real_server_setup(method: Method, family: Family, dev: &str, link: u8) {
    let mut cmds = end_of_link(dev, link);
    if method != Method::Masquerade {
        cmds.push(vip_on_lo(family));
        // Answer ARP only for addresses of the interface asked on, and
        // source ARP from the link's own address: the VIP stays the
        // director's on the link. (IPv6 neighbour discovery already answers
        // only for the addresses of the interface asked on.)
        sysctl("net.ipv4.conf.all.arp_ignore", "1");
        sysctl("net.ipv4.conf.all.arp_announce", "2");
    }
    let local = family.host(link, 2);
    let tunnel = match (method, family) {
        (Method::Masquerade | Method::DirectRouting, _) => None,
        // GUE carries IP-in-IP: fou strips the UDP and GUE headers, then the
        // IP-in-IP device takes the inner packet.
        (Method::Ipip | Method::Gue, Family::V4) => Some(("ipip", "type ipip")),
        (Method::Ipip | Method::Gue, Family::V6) => Some(("ip6_tunnel", "type ip6tnl mode ip6ip6")),
        (Method::Gre, Family::V4) => Some(("ip_gre", "type gre")),
        (Method::Gre, Family::V6) => Some(("ip6_gre", "type ip6gre")),
    };
    if let Some((module, kind)) = tunnel {
        load_module(module);
        cmds.push(format!("link add name tun {kind} local {local}"));
        cmds.push("link set dev tun up".to_string());
    }
    ip_batch(&cmds);
    if tunnel.is_some() {
        // Decapsulated packets come in on `tun` from a client reached over
        // the link: not the reverse path, which rp_filter would drop.
        for dev in ["all", "default", "tun", dev] {
            sysctl(&format!("net.ipv4.conf.{dev}.rp_filter"), "0");
        }
    }
    if method == Method::Gue {
        load_module("fou");
        let fam = match family {
            Family::V4 => "-4",
            Family::V6 => "-6",
        };
        let port = GUE_PORT.to_string();
        sh("ip", &[fam, "fou", "add", "port", &port, "gue"]);
    }
}
