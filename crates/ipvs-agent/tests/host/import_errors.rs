//! Bad keepalived input: each error at its FILE:LINE, nothing produced;
//! and the language's corners that must work (a `{` on the next line,
//! includes by glob relative to the including file, comments, quotes).

use std::path::PathBuf;

use ipvs_agent::import::{keepalived, DiskFiles, Import, ImportErrors, MemFiles};

fn files(list: &[(&str, &str)]) -> MemFiles {
    let mut f = MemFiles::default();
    for (name, text) in list {
        f.files.insert(PathBuf::from(name), text.to_string());
    }
    f
}

fn run(list: &[(&str, &str)]) -> Result<Import, ImportErrors> {
    keepalived(&files(list), "k.conf".as_ref())
}

/// The errors of `text` as `FILE:LINE: message` lines.
fn errors(list: &[(&str, &str)]) -> Vec<String> {
    match run(list) {
        Ok(i) => panic!("imported:\n{}", i.toml),
        Err(e) => e.errors.iter().map(ToString::to_string).collect(),
    }
}

const SERVER: &str = "    real_server 10.0.0.1 80 {\n        TCP_CHECK {\n            connect_timeout 1\n        }\n    }\n";

fn vs(body: &str) -> String {
    format!("virtual_server 192.0.2.1 80 {{\n{body}{SERVER}}}\n")
}

#[test]
fn unbalanced_braces_are_errors_at_their_lines() {
    assert_eq!(
        errors(&[("k.conf", &format!("{}}}\n", vs("")))]),
        ["k.conf:8: unbalanced braces: `}` closes no block"]
    );
    assert_eq!(
        errors(&[("k.conf", "virtual_server 192.0.2.1 80 {\n    lb_algo rr\n")]),
        ["k.conf:1: unbalanced braces: the block of `virtual_server` is never closed"]
    );
    assert_eq!(
        errors(&[("k.conf", "{\n")]),
        ["k.conf:1: `{` opens no block: no keyword before it"]
    );
}

#[test]
fn an_unknown_keyword_is_an_error_at_its_line_in_every_section() {
    let text = vs("    lb_algo rr\n    lb_algorithm rr\n").replace(
        "connect_timeout 1",
        "connect_timeout 1\n            connect_tmeout 1",
    ) + "bogus_root {\n}\n";
    assert_eq!(
        errors(&[("k.conf", &text)]),
        [
            "k.conf:3: `lb_algorithm` is not a keyword of a `virtual_server` (keepalived 2.2.7)",
            "k.conf:7: `connect_tmeout` is not a keyword of TCP_CHECK (keepalived 2.2.7)",
            "k.conf:11: `bogus_root` is not a top-level keyword of keepalived 2.2.7",
        ]
    );
    let text = vs("").replace(
        "TCP_CHECK {",
        "HTTP_GET {\n            url {\n                pth /\n            }",
    );
    assert_eq!(
        errors(&[("k.conf", &text)]),
        ["k.conf:5: `pth` is not a keyword of a `url` (keepalived 2.2.7)"]
    );
}

#[test]
fn a_real_server_outside_a_virtual_server_is_an_error() {
    assert_eq!(
        errors(&[("k.conf", "real_server 10.0.0.1 80 {\n    weight 1\n}\n")]),
        ["k.conf:1: a `real_server` outside a `virtual_server`"]
    );
}

#[test]
fn circular_and_missing_includes_are_errors_at_the_include() {
    assert_eq!(
        errors(&[
            ("k.conf", "include a.conf\n"),
            ("a.conf", "! a\ninclude k.conf\n")
        ]),
        ["a.conf:2: `include k.conf`: k.conf includes itself (a circular include)"]
    );
    assert_eq!(
        errors(&[("k.conf", "include k.conf\n")]),
        ["k.conf:1: `include k.conf`: k.conf includes itself (a circular include)"]
    );
    assert_eq!(
        errors(&[("k.conf", "\ninclude nothere.conf\n")]),
        ["k.conf:2: `include nothere.conf`: nothere.conf cannot be read: entity not found"]
    );
    assert_eq!(
        errors(&[("k.conf", "include conf.d/*.conf\n")]),
        ["k.conf:1: `include conf.d/*.conf`: no file matches conf.d/*.conf"]
    );
}

#[test]
fn values_keepalived_would_refuse_are_errors() {
    assert_eq!(
        errors(&[(
            "k.conf",
            &vs("    lb_algo rrr\n    lb_kind FOO\n    delay_loop x\n")
        )]),
        [
            "k.conf:2: `lb_algo`: unknown scheduler rrr",
            "k.conf:3: `lb_kind`: unknown method FOO (NAT, DR or TUN)",
            "k.conf:4: `delay_loop`: \"x\" is not a time in seconds (such as 6 or 1.5)",
        ]
    );
    assert_eq!(
        errors(&[("k.conf", "virtual_server group NOPE {\n}\n")]),
        ["k.conf:1: no `virtual_server_group NOPE` is defined"]
    );
    assert_eq!(
        errors(&[(
            "k.conf",
            "virtual_server 1.2.3.4 80 {\n  protocol \"TCP\n}\n"
        )]),
        ["k.conf:2: a quoted string is not closed on its line"]
    );
}

#[test]
fn braces_comments_quotes_and_timers_read_as_keepalived_reads_them() {
    let text = "virtual_server 192.0.2.1 80\n{   # the block on the next line\n    delay_loop 1.5 ! seconds\n    lb_kind TUN type gue port 6080 csum\n    real_server 10.0.0.1 80 {\n        MISC_CHECK {\n            misc_path \"/bin/check 'a b' c\"\n            misc_timeout 0.5\n        }\n    }\n}\n";
    let out = run(&[("k.conf", text)]).unwrap();
    let config = ipvs_agent::config::parse_str("o", &out.toml).unwrap();
    let rules = ipvs_agent::render::render(&config);
    assert!(rules.contains("-r 10.0.0.1:80 -i -w 1"), "{rules}");
    assert!(rules.contains("every 1500ms (timeout 500ms"), "{rules}");
    assert!(
        out.toml
            .contains("command = [\"/bin/check\", \"a b\", \"c\"]"),
        "{}",
        out.toml
    );
    assert!(
        out.toml
            .contains("tunnel = { kind = \"gue\", port = 6080, checksum = \"csum\" }"),
        "{}",
        out.toml
    );
}

#[test]
fn includes_by_glob_from_the_including_files_directory() {
    let d = std::env::temp_dir().join(format!("ipvs-agent-import-inc-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(d.join("conf.d/sub")).unwrap();
    std::fs::write(d.join("keepalived.conf"), "include conf.d/*.conf\n").unwrap();
    std::fs::write(
        d.join("conf.d/a.conf"),
        vs("").replace("192.0.2.1", "192.0.2.7"),
    )
    .unwrap();
    std::fs::write(d.join("conf.d/b.conf"), "include sub/c.inc\n").unwrap();
    std::fs::write(d.join("conf.d/sub/c.inc"), vs("   lb_algo nonsense\n")).unwrap();
    std::fs::write(d.join("conf.d/x.txt"), "garbage {").unwrap();
    let e = keepalived(&DiskFiles::default(), &d.join("keepalived.conf")).unwrap_err();
    let c = d.join("conf.d/sub/c.inc");
    assert_eq!(
        e.to_string(),
        format!("{}:2: `lb_algo`: unknown scheduler nonsense", c.display())
    );
    std::fs::write(&c, vs("").replace("192.0.2.1", "192.0.2.8")).unwrap();
    let out = keepalived(&DiskFiles::default(), &d.join("keepalived.conf")).unwrap();
    assert_eq!(out.services, 2);
    assert!(
        out.toml
            .contains(&format!("# virtual_server, {}:1\n", c.display())),
        "{}",
        out.toml
    );
    std::fs::remove_dir_all(&d).unwrap();
}

#[test]
fn a_file_without_virtual_servers_is_refused_with_its_lines_noted() {
    let e = run(&[("k.conf", "vrrp_instance VI_1 {\n    virtual_ipaddress {\n        192.0.2.1\n    }\n}\n@node1 net_namespace lb\n")]).unwrap_err();
    assert_eq!(
        e.to_string(),
        "k.conf: no `virtual_server` with a real server: nothing for the agent's file"
    );
    let notes: Vec<String> = e.notes.iter().map(ToString::to_string).collect();
    assert_eq!(notes.len(), 2, "{notes:?}");
    assert!(
        notes[0].starts_with("k.conf:1: outside the load balancer: `vrrp_instance VI_1`"),
        "{notes:?}"
    );
    assert!(notes[0].ends_with("`--vip 192.0.2.1/32`"), "{notes:?}");
    assert!(
        notes[1].starts_with("k.conf:6: not supported: a conditional line (@node1)"),
        "{notes:?}"
    );
    assert_eq!(
        e.summary.last().map(String::as_str),
        Some("Run each director: ipvs-agent run --etcd URL --vip 192.0.2.1/32")
    );
}

#[test]
fn what_the_agent_would_refuse_is_said_at_keepaliveds_lines() {
    let text = format!(
        "{}{}",
        vs("    quorum 5\n    sorry_server 10.0.0.1 80\n"),
        vs("").replace(SERVER, &format!("{SERVER}{SERVER}"))
    );
    assert_eq!(
        errors(&[("k.conf", &text)]),
        [
            "k.conf:2: `quorum 5` can never be met: the real servers' weights sum to 1; the agent refuses such a quorum",
            "k.conf:3: the sorry server is also a real server (k.conf:4): the agent keeps them apart",
            "k.conf:10: this virtual service is configured twice (first at k.conf:1)",
            "k.conf:16: real server 10.0.0.1 port 80 is in this virtual server twice (first at k.conf:11)",
        ]
    );
}

#[test]
fn the_agents_own_refusals_are_said_at_keepaliveds_lines() {
    let text = "virtual_server fd00::1 80 {\n  real_server 10.0.0.1 80 {\n  }\n}\n\
                virtual_server 192.0.2.2 0 {\n  real_server 10.0.0.1 80 {\n  }\n}\n";
    assert_eq!(
        errors(&[("k.conf", text)]),
        [
            "k.conf:2: the agent refuses this: a server: invalid destination: IPv4 destination 10.0.0.1 on an IPv6 service needs tunnel forwarding",
            "k.conf:5: the agent refuses this: `port` 0 (every port) is only for a persistent service: add `persistence`",
        ]
    );
    // A granularity as a prefix length is a netmask for IPv4.
    let out = run(&[(
        "k.conf",
        &vs("    persistence_timeout 60\n    persistence_granularity 24\n"),
    )])
    .unwrap();
    assert!(
        out.toml
            .contains("persistence = { timeout = 60, netmask = \"255.255.255.0\" }"),
        "{}",
        out.toml
    );
}

#[test]
fn a_real_server_without_a_port_takes_the_services_with_a_note() {
    let out = run(&[(
        "k.conf",
        "virtual_server 192.0.2.1 80 {\n  lb_kind DR\n  real_server 10.0.0.1 {\n  }\n}\n",
    )])
    .unwrap();
    let config = ipvs_agent::config::parse_str("o", &out.toml).unwrap();
    assert_eq!(config.services[0].servers[0].destination.port, 80);
    let notes: Vec<String> = out.notes.iter().map(ToString::to_string).collect();
    assert_eq!(
        notes,
        ["k.conf:3: changed meaning: a real server without a port: keepalived gives the kernel port 0, the agent the service's port"]
    );
}
