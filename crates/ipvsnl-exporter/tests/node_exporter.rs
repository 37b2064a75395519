//! node_exporter 1.5's ipvs collector against ours, on the same table:
//! node_exporter reads a /proc written from the fixture in the kernel's
//! `/proc/net/ip_vs` format, and its `node_ipvs_backend_*` series must be
//! ours under `--metrics.namespace=node_ipvs`, less our extra labels.
//!
//! The binary comes from Debian's prometheus-node-exporter package, which
//! `.ci/setup` unpacks into the VM cache's `tools/` (or
//! `IPVSNL_NODE_EXPORTER`). Missing: fails under `CI=true`, skips
//! otherwise.

mod common;

use std::collections::BTreeSet;
use std::io::{Read, Write};
use std::net::{IpAddr, TcpListener, TcpStream};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use ipvsnl::{ServiceEntry, ServiceKey};
use ipvsnl_exporter::{render, MetricPrefix};

/// An address:port as the kernel writes it in `/proc/net/ip_vs`.
fn kernel_addr(addr: IpAddr, port: u16) -> String {
    match addr {
        IpAddr::V4(a) => format!("{:08X}:{port:04X}", u32::from(a)),
        IpAddr::V6(a) => {
            let groups: Vec<String> = a.segments().iter().map(|g| format!("{g:04x}")).collect();
            format!("[{}]:{port:04X}", groups.join(":"))
        }
    }
}

/// The fixture as `/proc/net/ip_vs`.
fn proc_ip_vs(table: &[ServiceEntry]) -> String {
    let mut s = String::from(
        "IP Virtual Server version 1.2.1 (size=4096)\n\
         Prot LocalAddress:Port Scheduler Flags\n\
         \x20 -> RemoteAddress:Port Forward Weight ActiveConn InActConn\n",
    );
    for e in table {
        let sched = e.service.scheduler.name();
        match e.service.key {
            ServiceKey::Inet {
                protocol,
                addr,
                port,
            } => {
                s += &format!("{protocol}  {} {sched}\n", kernel_addr(addr, port));
            }
            ServiceKey::Fwmark { mark, .. } => s += &format!("FWM  {mark:08X} {sched}\n"),
            _ => unreachable!("the fixture has no other key"),
        }
        for d in &e.destinations {
            let c = &d.destination;
            s += &format!(
                "  -> {}      {:<7} {:<6} {:<10} {}\n",
                kernel_addr(c.addr, c.port),
                c.forward.to_string(),
                c.weight,
                d.active_conns,
                d.inactive_conns
            );
        }
    }
    s
}

fn get(port: u16) -> Option<String> {
    let mut s = TcpStream::connect(("127.0.0.1", port)).ok()?;
    // HTTP/1.0: a plain body, no chunks to undo.
    write!(s, "GET /metrics HTTP/1.0\r\nHost: x\r\n\r\n").ok()?;
    let mut raw = String::new();
    s.read_to_string(&mut raw).ok()?;
    raw.split_once("\r\n\r\n").map(|(_, b)| b.to_owned())
}

/// `name{labels} value` lines of the `node_ipvs_backend_` families, each
/// label set sorted and without the labels in `drop`.
fn backend_series(text: &str, drop: &[&str]) -> BTreeSet<String> {
    text.lines()
        .filter(|l| l.starts_with("node_ipvs_backend_"))
        .filter(|l| {
            ["_active{", "_inactive{", "_weight{"]
                .iter()
                .any(|m| l.contains(m))
        })
        .map(|l| {
            let (name, rest) = l.split_once('{').unwrap();
            let (labels, value) = rest.rsplit_once("} ").unwrap();
            let mut kept: Vec<&str> = labels
                .split(',')
                .filter(|kv| !drop.iter().any(|d| kv.starts_with(&format!("{d}="))))
                .collect();
            kept.sort_unstable();
            format!("{name}{{{}}} {value}", kept.join(","))
        })
        .collect()
}

struct Killed(Child);

impl Drop for Killed {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn start(tool: &Path, procfs: &Path) -> (Killed, u16) {
    let port = TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let child = Command::new(tool)
        .arg("--collector.disable-defaults")
        .arg("--collector.ipvs")
        .arg(format!("--path.procfs={}", procfs.display()))
        .arg(format!("--web.listen-address=127.0.0.1:{port}"))
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap_or_else(|e| panic!("cannot run {}: {e}", tool.display()));
    (Killed(child), port)
}

#[test]
fn node_exporters_backend_series_are_ours() {
    let env = "IPVSNL_NODE_EXPORTER";
    let Some(tool) = common::tools::find(env, "prometheus-node-exporter") else {
        return common::tools::missing("node_exporter", "prometheus-node-exporter", env);
    };
    let table = common::table();
    let dir = std::env::temp_dir().join(format!("ipvsnl-exporter-proc-{}", std::process::id()));
    // procfs reads net/ and, in newer versions, self/net/.
    for sub in ["net", "self/net"] {
        let net = dir.join(sub);
        std::fs::create_dir_all(&net).unwrap();
        std::fs::write(net.join("ip_vs"), proc_ip_vs(&table)).unwrap();
        let stats = "   Total Incoming Outgoing         Incoming         Outgoing\n   \
                     Conns  Packets  Packets            Bytes            Bytes\n       \
                     5        1        2                2                3\n\n \
                     Conns/s   Pkts/s   Pkts/s          Bytes/s          Bytes/s\n       \
                     4        5        6                7                8\n";
        std::fs::write(net.join("ip_vs_stats"), stats).unwrap();
    }
    let (_child, port) = start(&tool, &dir);
    let deadline = Instant::now() + Duration::from_secs(10);
    let theirs = loop {
        if let Some(body) = get(port) {
            break body;
        }
        assert!(Instant::now() < deadline, "node_exporter did not answer");
        std::thread::sleep(Duration::from_millis(50));
    };
    let _ = std::fs::remove_dir_all(&dir);
    let ours = render(&MetricPrefix::new("node_ipvs").unwrap(), &table, None);
    let theirs = backend_series(&theirs, &[]);
    let ours = backend_series(&ours, &["family", "forwarding_method"]);
    // 3 families x 4 destinations.
    assert_eq!(theirs.len(), 12, "{theirs:#?}");
    assert_eq!(ours, theirs);
}
