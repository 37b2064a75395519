//! The leader's VIPs on a real kernel (root, in the VM:
//! `.ci/kernel-tests -- fleet_vip`, built with `IPVSNL_CARGO_ARGS="-p
//! ipvs-agent --features fleet"`): two namespaces joined by a veth pair;
//! the VIP added in one is listed by `ip addr`, its gratuitous ARP
//! arrives in the other, a second hold changes nothing, an address
//! another tool added stays when the VIPs are released.
//!
//! The checks of `ADDR/PREFIX` and the ARP frame, which run anywhere, are
//! the host's (`tests/host/fleet_vip_frames.rs`). Also the support the lab
//! uses: `ip`, `in_netns`, `packet_socket`.

use std::net::Ipv4Addr;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::process::Command;
use std::sync::mpsc;
use std::time::Duration;

use ipvs_agent::fleet::vip::addresses::{Vip, Vips};
use ipvs_agent::fleet::vip::garp::arp_announcement;

/// Runs `ip ARGS`, panicking with its error output when it fails; its output.
pub(crate) fn ip(args: &[&str]) -> String {
    let out = Command::new("ip").args(args).output().expect("run ip");
    assert!(
        out.status.success(),
        "ip {}: {}",
        args.join(" "),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// Runs `f` on a thread that entered namespace `name` (`ip netns add`).
pub(crate) fn in_netns<T: Send + 'static>(
    name: &str,
    f: impl FnOnce() -> T + Send + 'static,
) -> std::thread::JoinHandle<T> {
    let path = format!("/run/netns/{name}");
    std::thread::spawn(move || {
        let ns = std::fs::File::open(&path).expect("the namespace's file");
        // SAFETY: setns(2) on an open namespace descriptor, for this thread only.
        let rc = unsafe { libc::setns(ns.as_raw_fd(), libc::CLONE_NEWNET) };
        assert_eq!(rc, 0, "setns: {}", std::io::Error::last_os_error());
        f()
    })
}

/// A packet socket of `kind` (`SOCK_DGRAM`: payloads, `SOCK_RAW`: whole
/// frames) for EtherType `ethertype`, in the calling thread's namespace,
/// its receives timing out after 5 s.
pub(crate) fn packet_socket(kind: i32, ethertype: u16) -> OwnedFd {
    // SAFETY: socket(2) takes no pointers.
    let fd = unsafe { libc::socket(libc::AF_PACKET, kind, i32::from(ethertype.to_be())) };
    assert!(
        fd >= 0,
        "packet socket: {}",
        std::io::Error::last_os_error()
    );
    // SAFETY: a descriptor just returned, owned here.
    let socket = unsafe { OwnedFd::from_raw_fd(fd) };
    let timeout = libc::timeval {
        tv_sec: 5,
        tv_usec: 0,
    };
    // SAFETY: a valid timeval of the size passed.
    unsafe {
        libc::setsockopt(
            socket.as_raw_fd(),
            libc::SOL_SOCKET,
            libc::SO_RCVTIMEO,
            (&timeout as *const libc::timeval).cast(),
            std::mem::size_of::<libc::timeval>() as u32,
        )
    };
    socket
}

/// Two namespaces, `va` in the first and `vb` in the second, both up.
pub(crate) struct Pair;

impl Pair {
    pub(crate) fn new() -> Pair {
        Pair.drop_all();
        ip(&["netns", "add", "fleet-vip-a"]);
        ip(&["netns", "add", "fleet-vip-b"]);
        ip(&[
            "-n",
            "fleet-vip-a",
            "link",
            "add",
            "va",
            "type",
            "veth",
            "peer",
            "name",
            "vb",
            "netns",
            "fleet-vip-b",
        ]);
        ip(&["-n", "fleet-vip-a", "link", "set", "va", "up"]);
        ip(&["-n", "fleet-vip-b", "link", "set", "vb", "up"]);
        Pair
    }

    fn drop_all(&self) {
        for n in ["fleet-vip-a", "fleet-vip-b"] {
            let _ = Command::new("ip").args(["netns", "del", n]).output();
        }
    }
}

impl Drop for Pair {
    fn drop(&mut self) {
        self.drop_all();
    }
}

/// Opens an ARP packet socket in `fleet-vip-b`, says it is ready, and
/// returns the first ARP payload from `va`'s MAC for 192.0.2.10 within 5 s.
fn arp_listener(
    ready: mpsc::Sender<()>,
    from: [u8; 6],
) -> std::thread::JoinHandle<Option<Vec<u8>>> {
    in_netns("fleet-vip-b", move || {
        let socket = packet_socket(libc::SOCK_DGRAM, 0x0806);
        ready.send(()).unwrap();
        let mut buf = [0u8; 1500];
        loop {
            // SAFETY: `buf` is valid for its length.
            let n =
                unsafe { libc::recv(socket.as_raw_fd(), buf.as_mut_ptr().cast(), buf.len(), 0) };
            if n < 0 {
                return None;
            }
            let payload = &buf[..n as usize];
            if payload.len() >= 28 && payload[8..14] == from && payload[14..18] == [192, 0, 2, 10] {
                return Some(payload[..28].to_vec());
            }
        }
    })
}

pub(crate) fn mac_of_va() -> [u8; 6] {
    let text = ip(&["-n", "fleet-vip-a", "-o", "link", "show", "va"]);
    let mac = text
        .split("link/ether ")
        .nth(1)
        .expect("link/ether")
        .split(' ')
        .next()
        .unwrap();
    let bytes: Vec<u8> = mac
        .split(':')
        .map(|h| u8::from_str_radix(h, 16).unwrap())
        .collect();
    bytes.try_into().unwrap()
}

pub(crate) fn addresses_of_va() -> String {
    ip(&["-n", "fleet-vip-a", "-o", "addr", "show", "dev", "va"])
}

#[test]
#[ignore = "kernel test (root, namespaces): .ci/kernel-tests -- fleet_vip"]
fn fleet_vip_held_announced_and_released_leaving_others_addresses() {
    let _pair = Pair::new();
    let mac = mac_of_va();
    let vip: Vip = "192.0.2.10/24".parse().unwrap();
    let theirs: Vip = "192.0.2.20/24".parse().unwrap();
    ip(&[
        "-n",
        "fleet-vip-a",
        "addr",
        "add",
        "192.0.2.20/24",
        "dev",
        "va",
    ]);

    let (ready, wait) = mpsc::channel();
    let listener = arp_listener(ready, mac);
    wait.recv_timeout(Duration::from_secs(5))
        .expect("listener ready");

    let holder = in_netns("fleet-vip-a", move || {
        let mut vips = Vips::new("va", vec![vip, theirs]);
        let first = vips.hold().unwrap();
        let listed = addresses_of_va();
        let second = vips.hold().unwrap();
        let ours = vips.ours().to_vec();
        let removed = vips.release().unwrap();
        let after = addresses_of_va();
        let again = vips.release().unwrap();
        (first, listed, second, ours, removed, after, again)
    });
    let (first, listed, second, ours, removed, after, again) = holder.join().unwrap();
    assert_eq!((first.added, first.present), (vec![vip], vec![theirs]));
    assert!(
        first.announce_errors.is_empty(),
        "{:?}",
        first.announce_errors
    );
    assert!(listed.contains("inet 192.0.2.10/24"), "{listed}");
    assert_eq!((second.added, second.present), (vec![], vec![vip, theirs]));
    assert_eq!(ours, [vip]);
    assert_eq!(removed, [vip]);
    assert!(!after.contains("192.0.2.10/"), "{after}");
    assert!(
        after.contains("inet 192.0.2.20/24"),
        "another tool's address stays: {after}"
    );
    assert!(again.is_empty());

    let arp = listener
        .join()
        .unwrap()
        .expect("a gratuitous ARP from va within 5 s");
    assert_eq!(arp, arp_announcement(mac, Ipv4Addr::new(192, 0, 2, 10)));
}

#[test]
#[ignore = "kernel test (root, namespaces): .ci/kernel-tests -- fleet_vip"]
fn fleet_vip_on_a_missing_interface_is_named() {
    let _ = Command::new("ip")
        .args(["netns", "del", "fleet-vip-c"])
        .output();
    ip(&["netns", "add", "fleet-vip-c"]);
    let e = in_netns("fleet-vip-c", || {
        Vips::new("nosuch0", vec!["192.0.2.10/24".parse().unwrap()])
            .hold()
            .unwrap_err()
            .to_string()
    })
    .join()
    .unwrap();
    let _ = Command::new("ip")
        .args(["netns", "del", "fleet-vip-c"])
        .output();
    assert!(e.starts_with("VIP: find interface nosuch0: "), "{e}");
}
