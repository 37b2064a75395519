//! Captures the kernel's reply bytes for the wire crate's fixtures
//! (crates/ipvsnl-wire/tests/data/): state is made with Debian's ipvsadm,
//! then dumps are sent on a raw socket and every datagram is printed as hex
//! between markers (seen with `--nocapture`; .ci/capture-fixtures extracts
//! them). As a test it checks that each exchange succeeded.

use crate::common;
use crate::rawnl;

use common::*;
use ipvsnl::wire::{IpvsAttr, IpvsCommand, IpvsMessage, ServiceAttr};
use rawnl::{hex_lines, RawNl};

fn print_capture(name: &str, x: &rawnl::Exchange) {
    let (maj, min) = kernel_version();
    let mut out = String::new();
    for d in &x.datagrams {
        out.push_str(&format!("@@CAPTURE {maj}.{min} {name}@@\n"));
        out.push_str(&hex_lines(d));
        out.push_str("@@END@@\n");
    }
    print!("{out}");
}

#[test]
#[ignore = "needs IPVS: runs in the VM via .ci/kernel-tests"]
fn capture_kernel_replies() {
    fresh_netns();
    for args in [
        &[
            "-A",
            "-t",
            "10.0.0.1:80",
            "-s",
            "wrr",
            "-p",
            "600",
            "-M",
            "255.255.255.0",
            "--pe",
            "sip",
        ][..],
        &[
            "-a",
            "-t",
            "10.0.0.1:80",
            "-r",
            "10.1.0.1:8080",
            "-m",
            "-w",
            "3",
            "-x",
            "100",
            "-y",
            "10",
        ],
        &[
            "-a",
            "-t",
            "10.0.0.1:80",
            "-r",
            "10.1.0.2:80",
            "-g",
            "-w",
            "0",
        ],
        &[
            "-a",
            "-t",
            "10.0.0.1:80",
            "-r",
            "10.1.0.3",
            "-i",
            "--tun-type",
            "gue",
            "--tun-port",
            "6080",
            "--tun-csum",
        ],
        &[
            "-a",
            "-t",
            "10.0.0.1:80",
            "-r",
            "10.1.0.4",
            "-i",
            "--tun-type",
            "gre",
            "--tun-csum",
        ],
        &[
            "-A",
            "-u",
            "[2001:db8::1]:53",
            "-s",
            "sh",
            "-b",
            "sh-fallback,sh-port",
            "-o",
        ],
        &[
            "-A",
            "-f",
            "7",
            "-6",
            "-s",
            "mh",
            "-b",
            "mh-fallback",
            "-p",
            "30",
            "-M",
            "96",
        ],
        &["--set", "10", "20", "30"],
        MASTER_DAEMON_EVERY_OPTION,
        &[
            "--start-daemon",
            "backup",
            "--mcast-interface",
            "lo",
            "--syncid",
            "6",
        ],
    ] {
        ipvsadm_ok(args);
    }
    let mut nl = RawNl::open().unwrap();
    let mut addr = [0u8; 16];
    addr[..4].copy_from_slice(&[10, 0, 0, 1]);
    let web = vec![
        ServiceAttr::AddressFamily(libc::AF_INET as u16),
        ServiceAttr::Protocol(libc::IPPROTO_TCP as u16),
        ServiceAttr::Address(addr),
        ServiceAttr::Port(80),
    ];
    let exchanges = [
        (
            "service-dump",
            IpvsMessage::new(IpvsCommand::GetService, vec![]),
            true,
        ),
        (
            "service-get",
            IpvsMessage::new(
                IpvsCommand::GetService,
                vec![IpvsAttr::Service(web.clone())],
            ),
            false,
        ),
        (
            "dest-dump",
            IpvsMessage::new(IpvsCommand::GetDest, vec![IpvsAttr::Service(web)]),
            true,
        ),
        (
            "info",
            IpvsMessage::new(IpvsCommand::GetInfo, vec![]),
            false,
        ),
        (
            "config",
            IpvsMessage::new(IpvsCommand::GetConfig, vec![]),
            false,
        ),
        (
            "daemon-dump",
            IpvsMessage::new(IpvsCommand::GetDaemon, vec![]),
            true,
        ),
    ];
    for (name, msg, dump) in exchanges {
        let x = nl.exchange(msg, dump).unwrap();
        assert_eq!(x.errno, 0, "{name}");
        print_capture(name, &x);
    }
}
