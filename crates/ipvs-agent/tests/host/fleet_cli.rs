//! `ipvs-agent publish FILE --etcd URL`: exit 0 and what it wrote, 1 on
//! an error (nothing written), 2 on a usage error.

use crate::cli::{agent, text, EXAMPLE};
use crate::fleet_etcd::EtcdServer;

#[test]
fn publish_writes_a_generation_and_says_so() {
    let server = EtcdServer::start();
    let endpoint = server.endpoint();
    for n in 1..=2 {
        let out = agent(&["publish", EXAMPLE, "--etcd", &endpoint, "--prefix", "/cli"]);
        assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
        let stdout = text(&out.stdout);
        assert!(
            stdout.starts_with(&format!(
                "{EXAMPLE}: generation {n} published under /cli: 4 services ({} entries put, 0 deleted), {} transactions, ",
                if n == 1 { 4 } else { 0 },
                if n == 1 { 3 } else { 2 }
            )),
            "{stdout}"
        );
    }
}

#[test]
fn publish_refuses_a_bad_file_an_absent_etcd_and_a_bad_command_line() {
    let dir = std::env::temp_dir().join(format!("ipvs-agent-fleet-cli-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("bad.toml");
    std::fs::write(&file, "[[service]]\nprotocol = \"tcp\"\n").unwrap();
    let bad = file.to_str().unwrap().to_string();
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let nobody = format!("http://127.0.0.1:{port}");
    let out = agent(&["publish", &bad, "--etcd", &nobody]);
    assert_eq!(out.status.code(), Some(1));
    let stderr = text(&out.stderr);
    assert!(stderr.contains(&format!("{bad}:1:1: ")), "{stderr}");
    assert!(stderr.ends_with("errors, nothing published\n"), "{stderr}");
    std::fs::remove_dir_all(&dir).unwrap();

    let out = agent(&["publish", EXAMPLE, "--etcd", &nobody]);
    assert_eq!(out.status.code(), Some(1));
    let stderr = text(&out.stderr);
    assert!(
        stderr.starts_with(&format!("ipvs-agent publish: etcd at {nobody} unreachable")),
        "{stderr}"
    );

    for (args, message) in [
        (
            vec!["publish", EXAMPLE],
            "the following required arguments were not provided:\n  --etcd <URL[,URL...]>",
        ),
        (
            vec!["publish", "--etcd", "x"],
            "the following required arguments were not provided:\n  <FILE>",
        ),
        (
            vec![
                "publish",
                EXAMPLE,
                "--etcd",
                "x",
                "--cache",
                "c",
                "--no-cache",
            ],
            "the argument '--cache <PATH>' cannot be used with '--no-cache'",
        ),
        (
            vec!["publish", EXAMPLE, "--etcd", "x", "--prefx", "/p"],
            "tip: a similar argument exists: '--prefix'",
        ),
    ] {
        let out = agent(&args);
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let stderr = text(&out.stderr);
        assert!(stderr.contains(message), "{args:?}: {stderr}");
    }
    for (args, message) in [
        (
            vec!["publish", EXAMPLE, "--etcd", "a,,b"],
            "--etcd: \"a,,b\" has an empty endpoint",
        ),
        (
            vec!["publish", EXAMPLE, "--etcd", "x", "--prefix", "p"],
            "--prefix: \"p\" must start with / and name something",
        ),
    ] {
        let out = agent(&args);
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        assert_eq!(
            text(&out.stderr),
            format!("ipvs-agent publish: {message}\n")
        );
    }
}
