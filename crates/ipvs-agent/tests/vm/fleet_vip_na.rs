//! An IPv6 VIP announced by unsolicited neighbour advertisement, on a
//! real kernel (root, in the VM: `.ci/fleet-tests -- fleet_vip_`): the
//! pair of namespaces of `fleet_vip.rs`; the peer has the VIP in its
//! neighbour cache at another MAC (the old leader's); the VIP is added
//! in the first, the advertisement caught in the peer by a packet socket
//! and checked field by field (its checksum summed here, independently
//! of the agent's), and the peer's cache then says the new MAC.
//!
//! The checks of the packet and its checksum, which run anywhere, are the
//! host's (`tests/host/fleet_vip_frames.rs`); the frame's checker both
//! use is `tests/common/fleet_na_frame.rs`.

use std::net::Ipv6Addr;
use std::os::fd::AsRawFd;
use std::sync::mpsc;
use std::time::{Duration, Instant};

use ipvs_agent::fleet::vip::addresses::{Vip, Vips};

use super::fleet_na_frame::check_frame;
use super::fleet_vip::{addresses_of_va, in_netns, ip, mac_of_va, packet_socket, Pair};

const VIP: &str = "2001:db8::10";
const OLD_MAC: &str = "02:00:00:00:00:99";

/// Opens a raw IPv6 packet socket in `fleet-vip-b`, says it is ready, and
/// returns the first whole frame from `from` advertising `vip` within 5 s.
fn na_listener(
    ready: mpsc::Sender<()>,
    from: [u8; 6],
    vip: Ipv6Addr,
) -> std::thread::JoinHandle<Option<Vec<u8>>> {
    in_netns("fleet-vip-b", move || {
        let socket = packet_socket(libc::SOCK_RAW, 0x86dd);
        ready.send(()).unwrap();
        let mut buf = [0u8; 2048];
        loop {
            // SAFETY: `buf` is valid for its length.
            let n =
                unsafe { libc::recv(socket.as_raw_fd(), buf.as_mut_ptr().cast(), buf.len(), 0) };
            if n < 0 {
                return None;
            }
            let f = &buf[..n as usize];
            let is_na = f.len() >= 14 + 64
                && f[6..12] == from
                && f[14 + 6] == 58
                && f[14 + 40] == 136
                && f[14 + 48..14 + 64] == vip.octets();
            if is_na {
                return Some(f.to_vec());
            }
        }
    })
}

fn mac_text(mac: [u8; 6]) -> String {
    mac.iter()
        .map(|b| format!("{b:02x}"))
        .collect::<Vec<_>>()
        .join(":")
}

#[test]
#[ignore = "kernel test (root, namespaces): .ci/fleet-tests -- fleet_vip_"]
fn fleet_vip_ipv6_announced_by_neighbour_advertisement() {
    let _pair = Pair::new();
    let mac = mac_of_va();
    let address: Ipv6Addr = VIP.parse().unwrap();
    let vip: Vip = format!("{VIP}/64").parse().unwrap();
    // The peer knows the VIP at the old leader's MAC.
    ip(&[
        "-n",
        "fleet-vip-b",
        "-6",
        "neigh",
        "replace",
        VIP,
        "lladdr",
        OLD_MAC,
        "dev",
        "vb",
        "nud",
        "stale",
    ]);
    let neigh = || ip(&["-n", "fleet-vip-b", "-6", "neigh", "show", VIP, "dev", "vb"]);
    assert!(neigh().contains(OLD_MAC), "{}", neigh());
    // The peer's IPv6 ready on vb (its link-local address past DAD).
    let t = Instant::now();
    let ready = || {
        let a = ip(&["-n", "fleet-vip-b", "-6", "-o", "addr", "show", "dev", "vb"]);
        a.contains("fe80::") && !a.contains("tentative")
    };
    while !ready() && t.elapsed() < Duration::from_secs(5) {
        std::thread::sleep(Duration::from_millis(50));
    }
    let counters_before = icmp6_counters();

    let (ready, wait) = mpsc::channel();
    let listener = na_listener(ready, mac, address);
    wait.recv_timeout(Duration::from_secs(5))
        .expect("listener ready");
    let holder = in_netns("fleet-vip-a", move || {
        let mut vips = Vips::new("va", vec![vip]);
        let held = vips.hold().unwrap();
        let listed = addresses_of_va();
        (vips, held, listed)
    });
    let (mut vips, held, listed) = holder.join().unwrap();
    assert_eq!(held.added, [vip]);
    assert!(
        held.announce_errors.is_empty(),
        "{:?}",
        held.announce_errors
    );
    assert_eq!(held.announced, [vip]);
    let line = listed
        .lines()
        .find(|l| l.contains(&format!("inet6 {VIP}/64")))
        .unwrap_or_else(|| panic!("the VIP listed: {listed}"));
    assert!(
        line.contains("nodad") && !line.contains("tentative"),
        "added without DAD: {line}"
    );

    let frame = listener
        .join()
        .unwrap()
        .expect("a neighbour advertisement from va within 5 s");
    check_frame(&frame, mac, address);

    // The peer's cache follows the override.
    let t = Instant::now();
    let new = mac_text(mac);
    while !neigh().contains(&new) && t.elapsed() < Duration::from_secs(2) {
        std::thread::sleep(Duration::from_millis(20));
    }
    let after = neigh();
    let counters = icmp6_counters();
    println!(
        "FLEET-NA the peer's entry after the advertisement: {} (its ICMPv6 counters before \
         {counters_before:?}, after {counters:?})",
        after.trim()
    );
    assert!(
        after.contains(&format!("lladdr {new}")),
        "{after}; the peer's ICMPv6 counters before {counters_before:?}, after {counters:?}"
    );
    assert!(!after.contains(OLD_MAC), "{after}");

    let removed = in_netns("fleet-vip-a", move || vips.release().unwrap())
        .join()
        .unwrap();
    assert_eq!(removed, [vip]);
}

/// The peer's ICMPv6 and IPv6 receive counters that say whether the
/// kernel took the advertisement (`/proc/net/snmp6` in its namespace).
fn icmp6_counters() -> Vec<(String, u64)> {
    let text = ip(&["netns", "exec", "fleet-vip-b", "cat", "/proc/net/snmp6"]);
    text.lines()
        .filter_map(|l| {
            let mut w = l.split_whitespace();
            let (name, value) = (w.next()?, w.next()?);
            let wanted = [
                "Icmp6InMsgs",
                "Icmp6InErrors",
                "Icmp6InCsumErrors",
                "Icmp6InNeighborAdvertisements",
                "Ip6InDiscards",
                "Ip6InHdrErrors",
                "Ip6InReceives",
            ];
            wanted
                .contains(&name)
                .then(|| (name.to_string(), value.parse().unwrap_or(0)))
        })
        .collect()
}
