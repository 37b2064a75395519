//! Issue 44's side by side: for Debian's keepalived samples with virtual
//! servers and for configurations of our own, keepalived (`-C`, checkers
//! only) and `ipvs-agent run` on the file `ipvs-agent import keepalived`
//! made each build the table in a fresh namespace with the same real
//! servers up; their `ipvsadm -S -n` equal, or differing by the lines
//! listed here (and in crates/ipvs-agent/docs/FROM-KEEPALIVED.md, "Side by
//! side"); then one real server killed in both, and the tables again.
//! Needs keepalived in the VM (IPVSNL_VM_PEERS=1: .ci/kernel-tests sets it).

use crate::keepalived_side_support::{lines, side_by_side, Case, Conf};

#[test]
#[ignore = "needs IPVS and keepalived: runs in the VM via .ci/kernel-tests"]
fn keepalived_side_fwmark() {
    side_by_side(
        "fwmark",
        &Case {
            conf: Conf::Sample("fwmark"),
            listeners: &["192.168.201.100:80", "192.168.201.101:80"],
            kill: Some(1),
            up: lines(&[
                "-A -f 1 -s rr -p 900",
                "-a -f 1 -r 192.168.201.100:0 -m -w 1",
                "-a -f 1 -r 192.168.201.101:0 -m -w 1",
            ]),
            down: lines(&[
                "-A -f 1 -s rr -p 900",
                "-a -f 1 -r 192.168.201.100:0 -m -w 1",
            ]),
            // keepalived removes a failed server at once; the agent drains
            // it at weight 0 first and removes it (`remove_after_drain`)
            // once it has no connections: at once here.
            diffs: Vec::new(),
        },
    );
}

/// Ours: three NAT servers of different weights under wrr, checked by TCP
/// every second; the middle one killed (removed: no inhibit_on_failure).
const OWN_WRR: &str = "\
virtual_server 10.50.0.1 80 {
  delay_loop 1
  lb_algo wrr
  lb_kind NAT
  protocol TCP
  real_server 10.50.1.1 8080 {
    weight 3
    TCP_CHECK { connect_timeout 1 }
  }
  real_server 10.50.1.2 8080 {
    weight 2
    TCP_CHECK { connect_timeout 1 }
  }
  real_server 10.50.1.3 8080 {
    weight 1
    TCP_CHECK { connect_timeout 1 }
  }
}
";

#[test]
#[ignore = "needs IPVS and keepalived: runs in the VM via .ci/kernel-tests"]
fn keepalived_side_own_wrr() {
    side_by_side(
        "own-wrr",
        &Case {
            conf: Conf::Own(OWN_WRR),
            listeners: &["10.50.1.1:8080", "10.50.1.2:8080", "10.50.1.3:8080"],
            kill: Some(1),
            up: lines(&[
                "-A -t 10.50.0.1:80 -s wrr",
                "-a -t 10.50.0.1:80 -r 10.50.1.1:8080 -m -w 3",
                "-a -t 10.50.0.1:80 -r 10.50.1.2:8080 -m -w 2",
                "-a -t 10.50.0.1:80 -r 10.50.1.3:8080 -m -w 1",
            ]),
            down: lines(&[
                "-A -t 10.50.0.1:80 -s wrr",
                "-a -t 10.50.0.1:80 -r 10.50.1.1:8080 -m -w 3",
                "-a -t 10.50.0.1:80 -r 10.50.1.3:8080 -m -w 1",
            ]),
            // keepalived removes a failed server at once; the agent drains
            // it at weight 0 first and removes it (`remove_after_drain`)
            // once it has no connections: at once here.
            diffs: Vec::new(),
        },
    );
}

/// Ours: direct routing, source hashing, inhibit_on_failure on every
/// server: the killed one stays at weight 0 in both.
const OWN_INHIBIT_DR: &str = "\
virtual_server 10.51.0.1 443 {
  delay_loop 1
  lb_algo sh
  lb_kind DR
  protocol TCP
  real_server 10.51.1.1 443 {
    weight 5
    inhibit_on_failure
    TCP_CHECK { connect_timeout 1 }
  }
  real_server 10.51.1.2 443 {
    weight 5
    inhibit_on_failure
    TCP_CHECK { connect_timeout 1 }
  }
}
";

#[test]
#[ignore = "needs IPVS and keepalived: runs in the VM via .ci/kernel-tests"]
fn keepalived_side_own_inhibit_dr() {
    side_by_side(
        "own-inhibit-dr",
        &Case {
            conf: Conf::Own(OWN_INHIBIT_DR),
            listeners: &["10.51.1.1:443", "10.51.1.2:443"],
            kill: Some(0),
            up: lines(&[
                "-A -t 10.51.0.1:443 -s sh",
                "-a -t 10.51.0.1:443 -r 10.51.1.1:443 -g -w 5",
                "-a -t 10.51.0.1:443 -r 10.51.1.2:443 -g -w 5",
            ]),
            down: lines(&[
                "-A -t 10.51.0.1:443 -s sh",
                "-a -t 10.51.0.1:443 -r 10.51.1.1:443 -g -w 0",
                "-a -t 10.51.0.1:443 -r 10.51.1.2:443 -g -w 5",
            ]),
            // keepalived removes a failed server at once; the agent drains
            // it at weight 0 first and removes it (`remove_after_drain`)
            // once it has no connections: at once here.
            diffs: Vec::new(),
        },
    );
}
