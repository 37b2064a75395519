//! What `ipvs-agent publish` executes for one service changed in 10,000
//! (the VM proof's file, [`scale_text`]), counted by callgrind: figures
//! for benches/AGENT.md, not a test of speed. Needs valgrind and etcd:
//! `cargo test --release -p ipvs-agent --features fleet --test figures
//! fleet_publish_cost -- --ignored --nocapture`.
//!
//! Printed (`COST`): the instructions of a publish with the cache of the
//! publish before (`--cache`), of one without (`--no-cache`: every
//! section parsed), and of `check` of the same file.

use std::net::IpAddr;
use std::path::Path;
use std::process::Command;

use crate::fleet_etcd::EtcdServer;
use crate::fleet_scale_services::{scale_text, SERVICES};

const AGENT: &str = env!("CARGO_BIN_EXE_ipvs-agent");

/// Runs the agent with `args` under callgrind: its instructions and its
/// standard output.
fn counted(dir: &Path, name: &str, args: &[&str]) -> (u64, String) {
    let out = Command::new("valgrind")
        .arg("--tool=callgrind")
        .arg(format!(
            "--callgrind-out-file={}",
            dir.join(format!("callgrind.{name}")).display()
        ))
        .arg(AGENT)
        .args(args)
        .output()
        .expect("run valgrind (is it installed?)");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{name}: {stderr}");
    let instructions = stderr
        .lines()
        .find_map(|l| {
            l.split_once("Collected : ")
                .map(|(_, n)| n.trim().to_string())
        })
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("{name}: no count in {stderr}"));
    (
        instructions,
        String::from_utf8_lossy(&out.stdout).into_owned(),
    )
}

fn argv(args: &[String]) -> Vec<&str> {
    args.iter().map(String::as_str).collect()
}

fn millions(n: u64) -> String {
    format!("{:.1}M", n as f64 / 1e6)
}

#[test]
#[ignore = "figures for benches/AGENT.md (valgrind, release build), run by hand"]
fn fleet_publish_cost() {
    let server = EtcdServer::start();
    let endpoint = server.endpoint();
    let dir = std::env::temp_dir().join(format!("ipvs-agent-cost-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let servers: Vec<IpAddr> = vec!["10.0.0.11".parse().unwrap(), "10.0.0.12".parse().unwrap()];
    let file = |w: u32| {
        let path = dir.join(format!("w{w}.toml"));
        std::fs::write(&path, scale_text(SERVICES, &servers, w)).unwrap();
        path.display().to_string()
    };
    let cache = dir.join("publish.cache").display().to_string();
    let publish = |f: &str, cached: bool| {
        let mut a = vec!["publish", f, "--etcd", &endpoint];
        if cached {
            a.extend(["--cache", &cache]);
        } else {
            a.push("--no-cache");
        }
        a.into_iter().map(str::to_string).collect::<Vec<_>>()
    };
    // The first publish: every service parsed, the cache written.
    let args = publish(&file(1), true);
    let (first, said) = counted(&dir, "first", &argv(&args));
    println!(
        "COST first publish of {SERVICES}: {} ({said})",
        millions(first)
    );
    let mut rows = Vec::new();
    for (w, cached) in [(2, true), (3, true), (4, false), (5, true)] {
        let args = publish(&file(w), cached);
        let (n, said) = counted(&dir, &format!("w{w}"), &argv(&args));
        assert!(
            said.contains("(1 entries put, 1 deleted), 3 transactions"),
            "{said}"
        );
        println!(
            "COST one service changed, {}: {} ({said})",
            args[4..].join(" "),
            millions(n)
        );
        rows.push((cached, n));
    }
    let (check, _) = counted(&dir, "check", &["check", &file(5)]);
    println!("COST check of the same file: {}", millions(check));
    // The cache's publishes read one section: fewer instructions than the
    // one that read them all.
    let without = rows.iter().find(|(m, _)| !m).unwrap().1;
    assert!(rows.iter().filter(|(m, _)| *m).all(|(_, n)| *n < without));
    let _ = std::fs::remove_dir_all(&dir);
}
