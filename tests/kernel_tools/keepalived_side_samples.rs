//! The side by side (keepalived_side_support.rs) on Debian's keepalived
//! samples (/usr/share/doc/keepalived/samples/keepalived.conf.*, keepalived
//! 2.2.7): every sample with a `virtual_server`. The real servers are
//! busybox httpd: plain HTTP, no TLS, no SMTP, no UDP, bodies whose MD5 is
//! not the samples' `digest`. So each difference below is one of the
//! import's known ones (crates/ipvs-agent/docs/FROM-KEEPALIVED.md, "Side by
//! side"), each stated with its reason.

use crate::keepalived_side_support::{lines, side_by_side, Case, Conf, Diff, Phase};

const DIGEST: &str = "the agent does not check a body's digest (keepalived's MD5 of the body): \
                      the sample's digest is not our page's, keepalived fails the server";

#[test]
#[ignore = "needs IPVS and keepalived: runs in the VM via .ci/kernel-tests"]
fn keepalived_side_sample() {
    let vs = "-A -t 10.10.10.2:1358 -s rr -p 50";
    let sorry = "-a -t 10.10.10.2:1358 -r 192.168.200.200:1358 -m -w 1";
    let rs = "-a -t 10.10.10.2:1358 -r 192.168.200.2:1358 -m -w 1";
    side_by_side(
        "sample",
        &Case {
            conf: Conf::Sample("sample"),
            listeners: &["192.168.200.2:1358"],
            kill: Some(0),
            // keepalived: the digest fails, the last server leaves, the
            // sorry server comes in.
            up: lines(&[vs, sorry]),
            down: lines(&[vs, sorry]),
            diffs: vec![Diff::new(Phase::Up, sorry, rs, DIGEST)],
        },
    );
}

#[test]
#[ignore = "needs IPVS and keepalived: runs in the VM via .ci/kernel-tests"]
fn keepalived_side_inhibit() {
    let vs = "-A -t 10.10.10.2:1358 -s rr -p 50";
    let rs0 = "-a -t 10.10.10.2:1358 -r 192.168.200.2:1358 -m -w 0";
    let rs1 = "-a -t 10.10.10.2:1358 -r 192.168.200.2:1358 -m -w 1";
    side_by_side(
        "inhibit",
        &Case {
            conf: Conf::Sample("inhibit"),
            listeners: &["192.168.200.2:1358"],
            kill: Some(0),
            up: lines(&[vs, rs0]),
            down: lines(&[vs, rs0]),
            diffs: vec![Diff::new(Phase::Up, rs0, rs1, DIGEST)],
        },
    );
}

#[test]
#[ignore = "needs IPVS and keepalived: runs in the VM via .ci/kernel-tests"]
fn keepalived_side_virtual_server_group() {
    let mut vips: Vec<String> = ["10.0.0.1:8080", "10.0.0.2:80", "192.168.200.1:1358"]
        .iter()
        .map(|v| format!("-t {v}"))
        .collect();
    vips.extend((3..=10).map(|i| format!("-t 192.168.200.{i}:80")));
    vips.extend(["-f 1".to_owned(), "-f 2".to_owned()]);
    let up: Vec<String> = vips.iter().map(|v| format!("-A {v} -s rr -p 50")).collect();
    let mut diffs = Vec::new();
    for v in &vips {
        for rs in ["192.168.200.1", "192.168.200.2"] {
            diffs.push(Diff {
                phase: Phase::Up,
                keepalived: None,
                agent: Some(format!("-a {v} -r {rs}:1358 -m -w 1")),
                why: DIGEST,
            });
        }
    }
    side_by_side(
        "vsg",
        &Case {
            conf: Conf::Sample("virtual_server_group"),
            listeners: &["192.168.200.1:1358", "192.168.200.2:1358"],
            // No kill: 192.168.200.1:1358 is a real server and also one
            // of the group's virtual services, so a check from the director
            // to it is balanced by IPVS over both servers: a kill of either
            // fails the other's checks in turn (in both peers; measured:
            // the agent's table emptied). Not a difference of the import.
            kill: None,
            up,
            down: Vec::new(),
            diffs,
        },
    );
}

#[test]
#[ignore = "needs IPVS and keepalived: runs in the VM via .ci/kernel-tests"]
fn keepalived_side_quorum() {
    let vs = "-A -t 10.0.1.1:80 -s wrr -p 900".to_owned();
    let rs = |i: u32| format!("-a -t 10.0.1.1:80 -r 10.0.0.{i}:8080 -m -w 1");
    let mut up = vec![vs.clone()];
    up.extend((1..=10).map(rs));
    let mut down = vec![vs];
    down.extend((1..=10).filter(|i| *i != 4).map(rs));
    side_by_side(
        "quorum",
        &Case {
            conf: Conf::Sample("quorum"),
            // The checks connect to port 80 (connect_port).
            listeners: &[
                "10.0.0.1:80",
                "10.0.0.2:80",
                "10.0.0.3:80",
                "10.0.0.4:80",
                "10.0.0.5:80",
                "10.0.0.6:80",
                "10.0.0.7:80",
                "10.0.0.8:80",
                "10.0.0.9:80",
                "10.0.0.10:80",
            ],
            kill: Some(3),
            up,
            down,
            diffs: Vec::new(),
        },
    );
}

#[test]
#[ignore = "needs IPVS and keepalived: runs in the VM via .ci/kernel-tests"]
fn keepalived_side_ipv6() {
    let vs = "-A -t [ae00::1]:80 -s rr -p 50";
    let rs = "-a -t [ae00::1]:80 -r [ae00::10]:25 -m -w 1";
    side_by_side(
        "ipv6",
        &Case {
            conf: Conf::Sample("IPv6"),
            listeners: &["[ae00::10]:25"],
            kill: Some(0),
            up: lines(&[vs]),
            down: lines(&[vs]),
            diffs: vec![Diff::new(
                Phase::Up,
                "",
                rs,
                "SMTP_CHECK is imported as a TCP connect: our listener sends no SMTP greeting, \
                 keepalived fails the server, the agent's connect succeeds",
            )],
        },
    );
}

#[test]
#[ignore = "needs IPVS and keepalived: runs in the VM via .ci/kernel-tests"]
fn keepalived_side_vrrp_lvs_syncd() {
    let vs = "-A -t 192.168.200.19:80 -s rr -p 50";
    let rs = "-a -t 192.168.200.19:80 -r 192.168.201.100:80 -m -w 1";
    side_by_side(
        "lvs-syncd",
        &Case {
            conf: Conf::Sample("vrrp.lvs_syncd"),
            listeners: &["192.168.201.100:80"],
            kill: Some(0),
            up: lines(&[vs, rs]),
            down: lines(&[vs]),
            diffs: Vec::new(),
        },
    );
}

/// A UDP service whose server no check of ours fails (PING_CHECK: the
/// agent has no such check and keeps the server; keepalived's ping of an
/// address of `lo` answers): equal, and no kill.
#[test]
#[ignore = "needs IPVS and keepalived: runs in the VM via .ci/kernel-tests"]
fn keepalived_side_ping_check() {
    let vs = "-A -u 10.10.10.2:1358 -s rr -p 50";
    let rs = "-a -u 10.10.10.2:1358 -r 192.168.200.6:1358 -m -w 1";
    side_by_side(
        "ping",
        &Case {
            conf: Conf::Sample("PING_CHECK"),
            listeners: &["192.168.200.6:80"],
            kill: None,
            up: lines(&[vs, rs]),
            down: Vec::new(),
            diffs: Vec::new(),
        },
    );
}

#[test]
#[ignore = "needs IPVS and keepalived: runs in the VM via .ci/kernel-tests"]
fn keepalived_side_udp_check() {
    let vs = "-A -u 10.10.10.2:1358 -s rr -p 50";
    let rs = "-a -u 10.10.10.2:1358 -r 192.168.200.6:1358 -m -w 1";
    side_by_side(
        "udp",
        &Case {
            conf: Conf::Sample("UDP_CHECK"),
            listeners: &["192.168.200.6:80"],
            kill: None,
            up: lines(&[vs]),
            down: Vec::new(),
            diffs: vec![Diff::new(
                Phase::Up,
                "",
                rs,
                "UDP_CHECK is not imported (the agent has no UDP check): nothing listens on UDP \
                 1358, keepalived's datagram gets a port unreachable and fails the server, the \
                 agent keeps it",
            )],
        },
    );
}

/// An HTTPS check against our plain-HTTP listener fails in both: the
/// server leaves both tables; no kill.
fn tls_fails(sample: &'static str, vs: &str, listeners: &'static [&'static str]) {
    side_by_side(
        sample,
        &Case {
            conf: Conf::Sample(sample),
            listeners,
            kill: None,
            up: lines(&[vs]),
            down: Vec::new(),
            diffs: Vec::new(),
        },
    );
}

#[test]
#[ignore = "needs IPVS and keepalived: runs in the VM via .ci/kernel-tests"]
fn keepalived_side_http_get_port() {
    tls_fails(
        "HTTP_GET.port",
        "-A -t 192.168.200.100:443 -s rr -p 50",
        &["192.168.201.100:444"],
    );
}

#[test]
#[ignore = "needs IPVS and keepalived: runs in the VM via .ci/kernel-tests"]
fn keepalived_side_status_code() {
    tls_fails(
        "status_code",
        "-A -t 192.168.200.100:443 -s rr -p 50",
        &["192.168.201.100:443"],
    );
}

#[test]
#[ignore = "needs IPVS and keepalived: runs in the VM via .ci/kernel-tests"]
fn keepalived_side_virtualhost() {
    tls_fails(
        "virtualhost",
        "-A -t 192.168.200.100:80 -s rr -p 50",
        &["192.168.201.100:80"],
    );
}

/// SSL_GET's service fails TLS in both; its HTTP_GET service's digest
/// fails in keepalived only, until the kill.
#[test]
#[ignore = "needs IPVS and keepalived: runs in the VM via .ci/kernel-tests"]
fn keepalived_side_ssl_get() {
    let vs443 = "-A -t 192.168.200.100:443 -s rr -p 50";
    let vs80 = "-A -t 192.168.200.100:80 -s rr -p 50";
    let rs80 = "-a -t 192.168.200.100:80 -r 192.168.201.100:80 -m -w 1";
    side_by_side(
        "ssl-get",
        &Case {
            conf: Conf::Sample("SSL_GET"),
            listeners: &["192.168.201.100:443", "192.168.201.100:80"],
            kill: Some(1),
            up: lines(&[vs443, vs80]),
            down: lines(&[vs443, vs80]),
            diffs: vec![Diff::new(Phase::Up, "", rs80, DIGEST)],
        },
    );
}

/// MISC_CHECK runs `/usr/local/bin/script.sh` (with `arg1 arg2` in
/// misc_check_arg): ours fetches the real server's page, so both peers
/// run the same command. (Not `wget -T`: Debian 12's static busybox 1.35
/// wget crashes with it, and both peers then fail the server.)
fn misc_check(sample: &'static str) {
    let script = "/usr/local/bin/script.sh";
    let _ = std::fs::create_dir_all("/usr/local/bin");
    let tmp = format!("{script}.{}", ipvsnl_test_support::netns::gettid());
    std::fs::write(
        &tmp,
        "#!/bin/sh\nexec busybox wget -q -O /dev/null http://192.168.200.6:1358/\n",
    )
    .expect("write the MISC_CHECK script");
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&tmp, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    std::fs::rename(&tmp, script).expect("the MISC_CHECK script in place");
    let vs = "-A -t 10.10.10.2:1358 -s rr -p 50";
    let rs = "-a -t 10.10.10.2:1358 -r 192.168.200.6:1358 -m -w 1";
    side_by_side(
        sample,
        &Case {
            conf: Conf::Sample(sample),
            listeners: &["192.168.200.6:1358"],
            kill: Some(0),
            up: lines(&[vs, rs]),
            down: lines(&[vs]),
            diffs: Vec::new(),
        },
    );
}

#[test]
#[ignore = "needs IPVS and keepalived: runs in the VM via .ci/kernel-tests"]
fn keepalived_side_misc_check() {
    misc_check("misc_check");
}

#[test]
#[ignore = "needs IPVS and keepalived: runs in the VM via .ci/kernel-tests"]
fn keepalived_side_misc_check_arg() {
    misc_check("misc_check_arg");
}
