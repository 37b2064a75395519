//! The exporter against the kernel, with real TCP traffic through a NAT
//! service: what it serves agrees with `ipvsadm -L -n --stats --exact`
//! read at the same moment, with Debian's node_exporter (its ipvs
//! collector) on every series both have, and passes `promtool check
//! metrics`.

use crate::common;

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::thread;
use std::time::Duration;

use common::prom::{find, samples};
use common::*;
use ipvsnl::{AddressFamily, Client, Destination, Scheduler, Service, ServiceKey};
use ipvsnl_test_support::client::{http_get, talk};
use ipvsnl_test_support::commands::sh;
use ipvsnl_test_support::echo::Answer;
use ipvsnl_test_support::real_server::{RealServers, REAL_SERVER};

/// Spawns a server from the calling thread (so in its namespace), killed
/// when dropped.
struct Daemon(Child);
impl Drop for Daemon {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn spawn(program: &PathBuf, args: &[&str]) -> Daemon {
    let child = Command::new(program)
        .args(args)
        .stdout(Stdio::null())
        .stderr(Stdio::inherit())
        .spawn()
        .unwrap_or_else(|e| panic!("spawn {}: {e}", program.display()));
    Daemon(child)
}

/// A tool Debian ships, put into the VM by .ci/vm/run from the packages
/// .ci/setup downloads.
fn debian_tool(name: &str) -> PathBuf {
    let p = PathBuf::from("/usr/bin").join(name);
    assert!(
        p.exists(),
        "{name} is not in the VM: .ci/setup downloads it (Debian's prometheus / \
         prometheus-node-exporter packages) and .ci/vm/run copies it in"
    );
    p
}

/// `ipvsadm -L -n --stats --exact` as (line kind, address:port) -> the five
/// counters (conns, in packets, out packets, in bytes, out bytes).
fn ipvsadm_stats() -> BTreeMap<String, [u64; 5]> {
    let text = ipvsadm_ok(&["-L", "-n", "--stats", "--exact"]);
    let mut out = BTreeMap::new();
    for line in text.lines().skip(3) {
        let words: Vec<&str> = line.split_whitespace().collect();
        let (key, nums) = match words.as_slice() {
            ["->", addr, rest @ ..] => (format!("-> {addr}"), rest),
            [proto, addr, rest @ ..] => (format!("{proto} {addr}"), rest),
            _ => continue,
        };
        if nums.len() != 5 {
            continue;
        }
        let n: Vec<u64> = nums.iter().map(|w| w.parse().expect("a count")).collect();
        out.insert(key, [n[0], n[1], n[2], n[3], n[4]]);
    }
    out
}

const COUNTERS: [&str; 5] = [
    "connections_total",
    "incoming_packets_total",
    "outgoing_packets_total",
    "incoming_bytes_total",
    "outgoing_bytes_total",
];

#[test]
#[ignore = "needs IPVS: runs in the VM via .ci/kernel-tests"]
fn the_exporter_counts_what_the_traffic_did() {
    fresh_netns();
    let _server = RealServers::start(8080, 1, Answer::AfterClose { reply_len: 5000 });
    sh("ip", &["addr", "add", "10.10.10.10/32", "dev", "lo"]);
    let mut c = Client::new().unwrap();
    let web = ServiceKey::tcp("10.10.10.10".parse().unwrap(), 80);
    c.add_service(&Service::new(web).with_scheduler(Scheduler::RoundRobin))
        .unwrap();
    c.add_destination(&web, &Destination::new(REAL_SERVER.parse().unwrap(), 8080))
        .unwrap();
    // Two more, without traffic, for the label spellings.
    let dns = ServiceKey::udp("10.10.10.10".parse().unwrap(), 53);
    c.add_service(&Service::new(dns)).unwrap();
    c.add_destination(
        &dns,
        &Destination::new(REAL_SERVER.parse().unwrap(), 53).with_weight(3),
    )
    .unwrap();
    let mark = ServiceKey::fwmark(7, AddressFamily::Inet);
    c.add_service(&Service::new(mark)).unwrap();
    c.add_destination(&mark, &Destination::new(REAL_SERVER.parse().unwrap(), 0))
        .unwrap();

    for _ in 0..20 {
        let reply = talk("10.10.10.10:80", &[b'q'; 1000]);
        assert_eq!(reply.len(), 5000, "the real server's reply came back whole");
    }
    // The kernel folds its per-CPU counters into what it reports every
    // 2 s (the rate estimator's tick): wait until the listing shows the
    // traffic.
    let deadline = std::time::Instant::now() + Duration::from_secs(15);
    while ipvsadm_stats().get("TCP 10.10.10.10:80").map(|c| c[0]) != Some(20) {
        assert!(
            std::time::Instant::now() < deadline,
            "the kernel never counted the 20 connections:\n{}",
            ipvsadm_ok(&["-L", "-n", "--stats", "--exact"])
        );
        thread::sleep(Duration::from_millis(250));
    }

    let exporter = tool("ipvs-exporter");
    let ns_path = format!(
        "/proc/{}/task/{}/ns/net",
        std::process::id(),
        // SAFETY: gettid has no preconditions.
        unsafe { libc::syscall(libc::SYS_gettid) }
    );
    let _ours = spawn(
        &exporter,
        &["--web.listen-address=127.0.0.1:19901", "--netns", &ns_path],
    );
    let _compat = spawn(
        &exporter,
        &[
            "--web.listen-address=127.0.0.1:19902",
            "--metrics.namespace=node_ipvs",
        ],
    );
    let _node = spawn(
        &debian_tool("prometheus-node-exporter"),
        &[
            "--web.listen-address=127.0.0.1:19903",
            "--collector.disable-defaults",
            "--collector.ipvs",
        ],
    );

    // Ours and ipvsadm at the same moment (the traffic is over, so the
    // counters stand still; a retry absorbs an estimator tick between the
    // two reads, or a late ACK).
    let mut mismatches = Vec::new();
    for attempt in 0..8 {
        if attempt > 0 {
            thread::sleep(Duration::from_millis(700));
        }
        let scrape = thread::spawn(|| http_get("127.0.0.1:19901", "/metrics"));
        let reference = ipvsadm_stats();
        let (status, body) = scrape.join().unwrap();
        assert_eq!(status, 200);
        let ours = samples(&body);
        assert_eq!(
            find(&ours, "ipvs_up", &[]).map(|s| s.value.as_str()),
            Some("1")
        );
        mismatches.clear();
        let web_labels = [
            ("local_address", "10.10.10.10"),
            ("local_port", "80"),
            ("proto", "TCP"),
        ];
        let real = [("remote_address", REAL_SERVER), ("remote_port", "8080")];
        let backend: Vec<(&str, &str)> = web_labels.iter().chain(&real).copied().collect();
        let service_line = reference
            .get("TCP 10.10.10.10:80")
            .expect("the service in ipvsadm");
        let dest_line = reference
            .get("-> 10.9.0.2:8080")
            .expect("the destination in ipvsadm");
        for (i, counter) in COUNTERS.iter().enumerate() {
            for (name, labels, want) in [
                (
                    format!("ipvs_service_{counter}"),
                    &web_labels[..],
                    service_line[i],
                ),
                (
                    format!("ipvs_backend_{counter}"),
                    &backend[..],
                    dest_line[i],
                ),
            ] {
                let got = find(&ours, &name, labels).map(|s| s.value.clone());
                if got.as_deref() != Some(want.to_string().as_str()) {
                    mismatches.push(format!("{name}: ours {got:?}, ipvsadm {want}"));
                }
            }
        }
        if mismatches.is_empty() {
            assert_eq!(service_line[0], 20, "20 connections were made");
            assert!(service_line[3] >= 20 * 1000 && service_line[4] >= 20 * 5000);
            break;
        }
    }
    assert!(mismatches.is_empty(), "{}", mismatches.join("\n"));

    // node_exporter: every node_ipvs_ series it has, ours has with the same
    // value (its labels a subset of ours: we add a few).
    let (status, node_text) = http_get("127.0.0.1:19903", "/metrics");
    assert_eq!(status, 200);
    let (status, compat_text) = http_get("127.0.0.1:19902", "/metrics");
    assert_eq!(status, 200);
    let node = samples(&node_text);
    let compat = samples(&compat_text);
    let mut compared = 0;
    let mut differ = Vec::new();
    for s in node.iter().filter(|s| s.name.starts_with("node_ipvs_")) {
        let want: Vec<(&str, &str)> = s
            .labels
            .iter()
            .map(|(k, v)| (k.as_str(), v.as_str()))
            .collect();
        match find(&compat, &s.name, &want) {
            Some(o) if o.value.parse::<f64>().ok() == s.value.parse::<f64>().ok() => compared += 1,
            other => differ.push(format!(
                "{} {:?}: node {}, ours {:?}",
                s.name,
                s.labels,
                s.value,
                other.map(|o| &o.value)
            )),
        }
    }
    assert!(
        differ.is_empty(),
        "{}\n--- node_exporter:\n{node_text}",
        differ.join("\n")
    );
    // Totals (5) and three backend gauges for each of the 3 real servers.
    assert!(
        compared >= 5 + 3 * 3,
        "only {compared} series compared:\n{node_text}"
    );

    // promtool's lint and parse of what we serve, both namespaces.
    for text in [&compat_text, &http_get("127.0.0.1:19901", "/metrics").1] {
        let mut check = Command::new(debian_tool("promtool"))
            .args(["check", "metrics"])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("promtool");
        use std::io::Write;
        check
            .stdin
            .take()
            .unwrap()
            .write_all(text.as_bytes())
            .unwrap();
        let out = check.wait_with_output().unwrap();
        assert!(
            out.status.success(),
            "promtool check metrics: {}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
    }
}
