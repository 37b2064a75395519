//! Every bad health check, each with its exact message at its line and
//! column (durations, times that do not fit, each kind's keys and values).

use ipvs_agent::config::parse_str;

/// The errors of `text` (a file named `t.toml`), one string each.
fn errors(text: &str) -> Vec<String> {
    match parse_str("t.toml", text) {
        Ok(c) => panic!("accepted a bad file: {c:?}"),
        Err(e) => e.lines().collect(),
    }
}

#[test]
fn durations_need_a_unit() {
    let text = r#"[[service]]
protocol = "tcp"
address = "192.0.2.1"
port = 80
check = { kind = "tcp", interval = "2", timeout = "1 s", jitter = "99999999999999999999ms" }
[[service.server]]
address = "10.0.0.1"

[[service]]
protocol = "tcp"
address = "192.0.2.2"
port = 80
check = { kind = "tcp", interval = "0s", timeout = "0ms" }

[[service.server]]
address = "10.0.0.1"

"#;
    assert_eq!(
        errors(text),
        [
            "t.toml:5:36: `interval`: \"2\" is not a duration: write a whole number and a unit, ms, s, m or h (\"500ms\", \"2s\")",
            "t.toml:5:51: `timeout`: \"1 s\" is not a duration: write a whole number and a unit, ms, s, m or h (\"500ms\", \"2s\")",
            "t.toml:5:67: `jitter`: \"99999999999999999999ms\" is too long a duration",
            "t.toml:13:36: `interval` must be longer than 0",
            "t.toml:13:52: `timeout` must be longer than 0",
        ]
    );
}

#[test]
fn check_times_fit_together() {
    let text = r#"[[service]]
protocol = "tcp"
address = "192.0.2.1"
port = 80
check = { kind = "tcp", interval = "1s", timeout = "2s", jitter = "1s", rise = 0, fall = 1001 }
[[service.server]]
address = "10.0.0.1"

"#;
    assert_eq!(
        errors(text),
        [
            "t.toml:5:52: `timeout` 2s is longer than `interval` 1s: a check would still run when the next is due",
            "t.toml:5:67: `jitter` 1s must be shorter than `interval` 1s",
            "t.toml:5:80: `rise` must be an integer from 1 to 1000, found 0",
            "t.toml:5:90: `fall` must be an integer from 1 to 1000, found 1001",
        ]
    );
}

#[test]
fn each_check_kind_takes_its_own_keys() {
    let text = r#"[[service]]
protocol = "tcp"
address = "192.0.2.1"
port = 80
check = { kind = "tcp", path = "/", tls_verify = false }
[[service.server]]
address = "10.0.0.1"
check = { kind = "dns", query = "a.example", status = 200, command = ["x"] }
[[service.server]]
address = "10.0.0.2"
check = { kind = "command", command = ["x"], port = 22 }
[[service.server]]
address = "10.0.0.3"
check = { kind = "http", tls_verify = true }
[[service.server]]
address = "10.0.0.4"
check = { interval = "1s" }
[[service.server]]
address = "10.0.0.5"
check = { kind = "icmp" }

"#;
    assert_eq!(
        errors(text),
        [
            "t.toml:5:32: `path` is not a key of a `kind = \"tcp\"` check",
            "t.toml:5:50: `tls_verify` is not a key of a `kind = \"tcp\"` check",
            "t.toml:8:55: `status` is not a key of a `kind = \"dns\"` check",
            "t.toml:8:70: `command` is not a key of a `kind = \"dns\"` check",
            "t.toml:11:53: `port` is not a key of a `kind = \"command\"` check",
            "t.toml:14:39: `tls_verify` is not a key of a `kind = \"http\"` check",
            "t.toml:17:9: `check` needs `kind`",
            "t.toml:20:18: `kind`: unknown value \"icmp\" (known: tcp, http, https, dns, command)",
        ]
    );
}

#[test]
fn http_check_values() {
    let text = r#"[[service]]
protocol = "tcp"
address = "192.0.2.1"
port = 80
check = { kind = "https", tls_verify = "no", status = 700, path = "x y", body_contains = "", port = 0, host = 1 }
[[service.server]]
address = "10.0.0.1"

"#;
    assert_eq!(
        errors(text),
        [
            "t.toml:5:40: `tls_verify` must be true or false, found a string",
            "t.toml:5:55: `status` must be an integer from 100 to 599, found 700",
            "t.toml:5:67: `path`: \"x y\" must start with / and have no spaces or control characters",
            "t.toml:5:90: `body_contains` must not be empty (leave it out to accept any body)",
            "t.toml:5:101: `port` must be an integer from 1 to 65535, found 0",
            "t.toml:5:111: `host` must be a string, found an integer",
        ]
    );
}

#[test]
fn an_http_request_line_cannot_be_broken_by_the_path_or_host() {
    let service = |address: &str, check: &str| {
        format!(
            "[[service]]\nprotocol = \"tcp\"\naddress = \"{address}\"\nport = 80\n\
             check = {check}\n[[service.server]]\naddress = \"10.0.0.1\"\n"
        )
    };
    let text = service(
        "192.0.2.1",
        r#"{ kind = "http", path = "/a\u0001b", host = "a b\r\nX-Injected: 1" }"#,
    ) + &service("192.0.2.2", r#"{ kind = "http", host = "" }"#);
    assert_eq!(
        errors(&text),
        [
            "t.toml:5:33: `path`: \"/a\\u{1}b\" must start with / and have no spaces or control characters",
            "t.toml:5:53: `host`: \"a b\\r\\nX-Injected: 1\" must not be empty nor have spaces or control characters",
            "t.toml:12:33: `host`: \"\" must not be empty nor have spaces or control characters",
        ]
    );
}

#[test]
fn dns_check_values() {
    let text = r#"[[service]]
protocol = "tcp"
address = "192.0.2.1"
port = 80
check = { kind = "dns", query = "bad name", type = "QQ", rcode = "OK" }
[[service.server]]
address = "10.0.0.1"
check = { kind = "dns" }

"#;
    assert_eq!(
        errors(text),
        [
            "t.toml:5:33: `query`: \"bad name\" is not a domain name",
            "t.toml:5:52: `type`: unknown value \"QQ\" (known: A, NS, CNAME, SOA, PTR, MX, TXT, AAAA, SRV)",
            "t.toml:5:66: `rcode`: unknown value \"OK\" (known: NOERROR, FORMERR, SERVFAIL, NXDOMAIN, NOTIMP, REFUSED)",
            "t.toml:8:9: a dns check needs `query`",
        ]
    );
}

#[test]
fn command_check_values() {
    let text = r#"[[service]]
protocol = "tcp"
address = "192.0.2.1"
port = 80
check = { kind = "command", command = [] }
[[service.server]]
address = "10.0.0.1"
check = { kind = "command", command = ["ok", 3] }
[[service.server]]
address = "10.0.0.2"
check = { kind = "command", command = "/bin/true" }

"#;
    assert_eq!(
        errors(text),
        [
            "t.toml:5:39: `command` needs a program: [\"/path/to/program\", \"arg\", ...]",
            "t.toml:8:46: `command` must be a string, found an integer",
            "t.toml:11:39: `command` must be an array of strings, found a string",
        ]
    );
}

#[test]
fn a_server_without_a_port_needs_a_check_that_names_one() {
    let text = r#"[[service]]
fwmark = 7
check = { kind = "tcp" }
[[service.server]]
address = "10.0.0.1"
[[service.server]]
address = "10.0.0.2"
check = { kind = "http", port = 8080 }
[[service.server]]
address = "10.0.0.3"
check = { kind = "command", command = ["/bin/true"] }
[[service.server]]
address = "10.0.0.4"
port = 53
check = { kind = "dns", query = "example.org" }
[[service.server]]
address = "10.0.0.5"
check = { kind = "dns", query = "example.org" }
"#;
    assert_eq!(
        errors(text),
        [
            "t.toml:5:11: the check of server 10.0.0.1 needs `port`: the server has none (port 0)",
            "t.toml:18:9: the check of server 10.0.0.5 needs `port`: the server has none (port 0)",
        ]
    );
}
