//! `ipvs-agent import keepalived FILE [-o OUT] [--dry-run]` run as a
//! binary: the output written whole or not at all, what `--dry-run`
//! prints, and that `ipvs-agent check` accepts what was written.

use crate::cli::{agent, text};

const CONF: &str = "\
global_defs {
   router_id LB1
}
vrrp_instance VI_1 {
    interface eth0
    virtual_router_id 51
    virtual_ipaddress {
        192.0.2.10/24
    }
}
virtual_server 192.0.2.10 80 {
    delay_loop 5
    lb_algo wlc
    lb_kind DR
    real_server 10.0.0.1 80 {
        weight 5
        HTTP_GET {
            url {
                path /health
                status_code 204
            }
            connect_timeout 2
            retry 2
        }
    }
}
";

fn dir(name: &str) -> std::path::PathBuf {
    let d = std::env::temp_dir().join(format!("ipvs-agent-import-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

#[test]
fn import_writes_a_file_check_accepts_and_says_what_vrrp_becomes() {
    let d = dir("ok");
    let conf = d.join("keepalived.conf");
    std::fs::write(&conf, CONF).unwrap();
    let out_file = d.join("agent.toml");
    let out = agent(&[
        "import",
        "keepalived",
        conf.to_str().unwrap(),
        "-o",
        out_file.to_str().unwrap(),
    ]);
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert!(out.stdout.is_empty());
    assert!(
        stderr.contains(&format!(
            "warning: {}:4: outside the load balancer: `vrrp_instance VI_1`",
            conf.display()
        )),
        "{stderr}"
    );
    assert!(
        stderr.contains("ipvs-agent run --etcd URL --vip 192.0.2.10/24 --vip-interface eth0"),
        "{stderr}"
    );
    assert!(
        stderr.contains(&format!(
            "{}:23: changed meaning: `retry 2`",
            conf.display()
        )),
        "{stderr}"
    );
    let check = agent(&["check", out_file.to_str().unwrap()]);
    let rules = text(&check.stdout);
    assert_eq!(check.status.code(), Some(0), "{}", text(&check.stderr));
    assert!(rules.contains("-A -t 192.0.2.10:80 -s wlc\n"), "{rules}");
    assert!(
        rules.contains("-r 10.0.0.1:80 -g -w 5  # http GET /health -> 204 every 5s (timeout 2s, jitter 0s), rise 1 fall 3, starts up"),
        "{rules}"
    );
    // No temporary file left beside it.
    let left: Vec<_> = std::fs::read_dir(&d)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(left.len(), 2, "{left:?}");
    std::fs::remove_dir_all(&d).unwrap();
}

#[test]
fn dry_run_prints_and_writes_nothing() {
    let d = dir("dry");
    let conf = d.join("keepalived.conf");
    std::fs::write(&conf, CONF).unwrap();
    let out_file = d.join("agent.toml");
    let out = agent(&[
        "import",
        "keepalived",
        conf.to_str().unwrap(),
        "-o",
        out_file.to_str().unwrap(),
        "--dry-run",
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(text(&out.stdout)
        .contains("[[service]]\nprotocol = \"tcp\"\naddress = \"192.0.2.10\"\nport = 80\n"));
    assert!(text(&out.stderr).contains("dry run: would write"));
    assert!(!out_file.exists());
    std::fs::remove_dir_all(&d).unwrap();
}

#[test]
fn an_error_writes_nothing_and_keeps_the_old_file() {
    let d = dir("bad");
    let conf = d.join("keepalived.conf");
    std::fs::write(
        &conf,
        CONF.replace("lb_algo wlc", "lb_algo wlc\n    lb_nonsense 1"),
    )
    .unwrap();
    let out_file = d.join("agent.toml");
    std::fs::write(&out_file, "old").unwrap();
    let out = agent(&[
        "import",
        "keepalived",
        conf.to_str().unwrap(),
        "-o",
        out_file.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(1));
    let stderr = text(&out.stderr);
    assert!(
        stderr.contains(&format!(
            "{}:14: `lb_nonsense` is not a keyword of a `virtual_server` (keepalived 2.2.7)",
            conf.display()
        )),
        "{stderr}"
    );
    assert!(stderr.ends_with("1 error, nothing written\n"), "{stderr}");
    assert_eq!(std::fs::read_to_string(&out_file).unwrap(), "old");
    let out = agent(&["import", "keepalived"]);
    assert_eq!(out.status.code(), Some(2));
    std::fs::remove_dir_all(&d).unwrap();
}
