//! `--sync-id N`: the sync daemon's id from the command line, 0 to 255
//! (the kernel keeps 8 bits of the attribute's 32), with
//! `--sync-interface` and `--etcd`; 0 without; a wrong one exits 2 with
//! its error. Both roles started with it: the VM's
//! `fleet_vm_peers_c_*` (`fleet_vm_peers.rs`, the daemons listed).

use ipvs_agent::cli::RunOptions;

fn parse(args: &[&str]) -> Result<RunOptions, String> {
    RunOptions::parse(args).map_err(|e| e.to_string())
}

const E: &str = "http://127.0.0.1:2379";

#[test]
fn the_sync_id_is_taken_from_0_to_255_and_defaults_to_0() {
    let o = parse(&["--etcd", E, "--sync-interface", "eth1"]).unwrap();
    assert_eq!(o.sync_id, 0, "the default");
    for (given, id) in [("0", 0u8), ("7", 7), ("255", 255)] {
        let o = parse(&["--etcd", E, "--sync-interface", "eth1", "--sync-id", given]).unwrap();
        assert_eq!(o.sync_id, id, "{given}");
    }
    let o = parse(&["--etcd", E, "--sync-id", "9", "--sync-interface", "eth1"]).unwrap();
    assert_eq!(o.sync_id, 9, "before --sync-interface too");
}

#[test]
fn a_wrong_or_misplaced_sync_id_is_named() {
    for bad in ["256", "-1", "4294967296", "x", "", "1.5", " 7"] {
        assert_eq!(
            parse(&["--etcd", E, "--sync-interface", "eth1", "--sync-id", bad]).unwrap_err(),
            format!(
                "--sync-id: \"{bad}\" is not a sync id (a whole number from 0 to 255: the kernel \
                 keeps 8 bits)"
            ),
            "{bad:?}"
        );
    }
    for (args, message) in [
        (
            vec!["--etcd", E, "--sync-id", "7"],
            "--sync-id needs --sync-interface",
        ),
        (
            vec![
                "--etcd",
                E,
                "--vip",
                "192.0.2.1/32",
                "--vip-interface",
                "eth0",
                "--sync-id",
                "7",
            ],
            "--sync-id needs --sync-interface",
        ),
        (
            vec!["agent.toml", "--sync-id", "7"],
            "--sync-id goes with --etcd and --sync-interface",
        ),
    ] {
        assert_eq!(parse(&args).unwrap_err(), message, "{args:?}");
    }
    let e = parse(&["--etcd", E, "--sync-interface", "eth1", "--sync-id"]).unwrap_err();
    assert!(
        e.starts_with("a value is required for '--sync-id <N>'"),
        "{e}"
    );
}

#[test]
fn the_agent_exits_2_naming_a_wrong_sync_id() {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_ipvs-agent"))
        .args([
            "run",
            "--etcd",
            E,
            "--sync-interface",
            "eth1",
            "--sync-id",
            "300",
        ])
        .output()
        .expect("run the agent");
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("--sync-id: \"300\" is not a sync id (a whole number from 0 to 255"),
        "{stderr}"
    );
}
