//! `ipvs-agent run --etcd` with the leader's options: `--vip`,
//! `--vip-interface`, `--sync-interface`, and what is refused.

use ipvs_agent::cli::RunOptions;

fn parse(args: &[&str]) -> Result<RunOptions, String> {
    RunOptions::parse(args).map_err(|e| e.to_string())
}

#[test]
fn the_leaders_options_are_taken_with_etcd() {
    let o = parse(&[
        "--etcd",
        "http://127.0.0.1:2379",
        "--vip",
        "192.0.2.10/24",
        "--vip",
        "2001:db8::10/64",
        "--vip-interface",
        "eth0",
        "--sync-interface",
        "eth1",
    ])
    .unwrap();
    assert_eq!(o.vips, ["192.0.2.10/24", "2001:db8::10/64"]);
    assert_eq!(o.vip_interface.as_deref(), Some("eth0"));
    assert_eq!(o.sync_interface.as_deref(), Some("eth1"));
    let o = parse(&["--etcd", "http://e:2379", "--sync-interface", "eth1"]).unwrap();
    assert!(o.vips.is_empty() && o.vip_interface.is_none());
}

#[test]
fn the_leaders_options_are_refused_when_incomplete_wrong_or_without_etcd() {
    let e = "http://127.0.0.1:2379";
    for (args, message) in [
        (
            vec!["--etcd", e, "--vip", "192.0.2.10/24"],
            "--vip needs --vip-interface",
        ),
        (
            vec!["--etcd", e, "--vip-interface", "eth0"],
            "--vip-interface needs --vip",
        ),
        (
            vec![
                "--etcd",
                e,
                "--vip",
                "192.0.2.10",
                "--vip-interface",
                "eth0",
            ],
            "--vip: VIP `192.0.2.10`: expected ADDRESS/PREFIX",
        ),
        (
            vec![
                "agent.toml",
                "--vip",
                "192.0.2.10/24",
                "--vip-interface",
                "eth0",
            ],
            "--vip, --vip-interface and --sync-interface go with --etcd",
        ),
        (
            vec!["agent.toml", "--sync-interface", "eth1"],
            "--vip, --vip-interface and --sync-interface go with --etcd",
        ),
    ] {
        assert_eq!(parse(&args).unwrap_err(), message, "{args:?}");
    }
    let e = parse(&["--etcd", e, "--vip"]).unwrap_err();
    assert!(
        e.starts_with("a value is required for '--vip <ADDR/PREFIX>'"),
        "{e}"
    );
}
