//! Every kind of bad input, each with its exact message at its line and
//! column; several errors of one file all reported; nothing accepted.

use ipvs_agent::config::parse_str;

/// The errors of `text` (a file named `t.toml`), one string each.
fn errors(text: &str) -> Vec<String> {
    match parse_str("t.toml", text) {
        Ok(c) => panic!("accepted a bad file: {c:?}"),
        Err(e) => e.lines().collect(),
    }
}

/// A valid service around `extra` lines (put after `port = 80`) and one
/// server with `server` lines.
fn service(extra: &str, server: &str) -> String {
    format!(
        "[[service]]\nprotocol = \"tcp\"\naddress = \"192.0.2.1\"\nport = 80\n{extra}\n\
         [[service.server]]\naddress = \"10.0.0.1\"\n{server}\n"
    )
}

#[test]
fn toml_syntax_errors_are_all_reported() {
    assert_eq!(
        errors("a = \nb = [1,\n[[service]\n"),
        [
            "t.toml:1:5: TOML syntax: string values must be quoted, expected literal string",
            "t.toml:3:3: TOML syntax: string values must be quoted, expected literal string",
            "t.toml:3:11: TOML syntax: unclosed array, expected `]`",
        ]
    );
}

#[test]
fn an_empty_file_configures_nothing_and_says_so() {
    assert_eq!(
        errors(""),
        ["t.toml:1:1: the file has no `[[service]]`: nothing to configure"]
    );
}

#[test]
fn unknown_keys_are_named_with_the_known_ones() {
    assert_eq!(
        errors(&format!("[agent]\ncolour = \"blue\"\n{}", service("weight = 3", "wieght = 3"))),
        [
            "t.toml:2:1: unknown key `colour` in [agent] (known: resync, drain_max, start_wait, reload_guard)",
            "t.toml:7:1: unknown key `weight` in a `[[service]]` (known: name, protocol, address, port, fwmark, family, scheduler, scheduler_flags, persistence, one_packet, check, server, sorry_server, quorum, remove_after_drain)",
            "t.toml:10:1: unknown key `wieght` in a `[[service.server]]` (known: address, port, weight, forward, tunnel, upper_threshold, lower_threshold, check)",
        ]
    );
}
#[test]
fn the_service_key_must_be_whole_and_valid() {
    let text = r#"[[service]]
protocol = "tcpp"
address = "192.0.2.300"
port = 70000
[[service.server]]
address = "10.0.0.1"
[[service]]
fwmark = 3
address = "10.0.0.1"
[[service.server]]
address = "10.0.0.1"
[[service]]
address = "10.0.0.9"
[[service.server]]
address = "10.0.0.1"
[[service]]
fwmark = 0
family = "inet7"
port = 80
[[service.server]]
address = "10.0.0.1"
[[service]]
protocol = "udp"
address = "224.0.0.1"
port = 53
[[service.server]]
address = "10.0.0.1"
"#;
    assert_eq!(
        errors(text),
        [
            "t.toml:2:12: `protocol`: unknown value \"tcpp\" (known: tcp, udp, sctp)",
            "t.toml:3:11: `address`: \"192.0.2.300\" is not an IPv4 or IPv6 address",
            "t.toml:4:8: `port` must be an integer from 0 to 65535, found 70000",
            "t.toml:9:11: a service has `address` or `fwmark`, not both",
            "t.toml:12:1: an address service needs `protocol`",
            "t.toml:12:1: an address service needs `port`",
            "t.toml:17:10: `fwmark` must be an integer from 1 to 4294967295, found 0",
            "t.toml:19:8: `port` is for an address service, not a `fwmark` one",
            "t.toml:24:11: `address`: 224.0.0.1 is not a unicast address",
        ]
    );
}

#[test]
fn port_zero_needs_persistence() {
    let text = r#"[[service]]
protocol = "tcp"
address = "192.0.2.1"
port = 0

[[service.server]]
address = "10.0.0.1"

"#;
    assert_eq!(
        errors(text),
        ["t.toml:4:8: `port` 0 (every port) is only for a persistent service: add `persistence`",]
    );
}

#[test]
fn a_service_needs_servers_and_an_address_or_mark() {
    let text = r#"[[service]]
protocol = "tcp"
address = "192.0.2.1"
port = 80
[[service]]
name = "x"
[[service.server]]
address = "10.0.0.1"
"#;
    assert_eq!(
        errors(text),
        [
            "t.toml:3:11: a service needs at least one `[[service.server]]`",
            "t.toml:5:1: a service needs `address` (with `protocol` and `port`) or `fwmark`",
        ]
    );
}

#[test]
fn schedulers_are_the_librarys_names_and_flags_belong_to_theirs() {
    let text = r#"[[service]]
protocol = "tcp"
address = "192.0.2.1"
port = 80
scheduler = "wrrr"
scheduler_flags = ["sh-port"]
[[service.server]]
address = "10.0.0.1"

[[service]]
protocol = "tcp"
address = "192.0.2.2"
port = 80
scheduler = "rr"
scheduler_flags = ["sh-port", "mh-port", "fast", 4]

[[service.server]]
address = "10.0.0.1"

[[service]]
protocol = "tcp"
address = "192.0.2.3"
port = 80
scheduler_flags = ["sh-port"]

[[service.server]]
address = "10.0.0.1"

"#;
    assert_eq!(
        errors(text),
        [
            "t.toml:5:13: `scheduler`: unknown scheduler \"wrrr\" (known: rr, wrr, lc, wlc, lblc, lblcr, dh, sh, sed, nq, fo, ovf, mh, twos, none)",
            "t.toml:15:20: `scheduler_flags`: \"sh-port\" is a flag of the sh scheduler, not of rr",
            "t.toml:15:31: `scheduler_flags`: \"mh-port\" is a flag of the mh scheduler, not of rr",
            "t.toml:15:42: `scheduler_flags`: unknown flag \"fast\" (known: sh-fallback, sh-port, mh-fallback, mh-port)",
            "t.toml:15:50: `scheduler_flags` must be a string, found an integer",
            "t.toml:24:20: `scheduler_flags`: \"sh-port\" is a flag of the sh scheduler, not of wlc",
        ]
    );
}

#[test]
fn values_of_the_wrong_type_are_named_with_the_type_found() {
    let text = r#"[[service]]
protocol = "tcp"
address = "192.0.2.1"
port = 80
name = 5
one_packet = "yes"
scheduler_flags = "sh-port"
remove_after_drain = 1
sorry_server = "10.0.0.9"
check = "tcp"
[[service.server]]
address = "10.0.0.1"
check = []
[[service]]
protocol = "tcp"
address = "192.0.2.9"
port = 80
server = 3
"#;
    assert_eq!(
        errors(text),
        [
            "t.toml:5:8: `name` must be a string, found an integer",
            "t.toml:6:14: `one_packet` must be true or false, found a string",
            "t.toml:7:19: `scheduler_flags` must be an array of strings, found a string",
            "t.toml:8:22: `remove_after_drain` must be true or false, found an integer",
            "t.toml:9:16: `sorry_server` must be a table, found a string",
            "t.toml:10:9: `check` must be a table, found a string",
            "t.toml:13:9: `check` must be a table, found an array",
            "t.toml:18:10: `server` must be an array of tables (`[[service.server]]`), found an integer",
        ]
    );
}

#[test]
fn weights_and_thresholds_within_the_kernels_limits() {
    let text = r#"[[service]]
protocol = "tcp"
address = "192.0.2.1"
port = 80

[[service.server]]
address = "10.0.0.1"
weight = 2147483648
[[service.server]]
address = "10.0.0.2"
weight = -1
[[service.server]]
address = "10.0.0.3"
upper_threshold = 5
lower_threshold = 6
[[service.server]]
address = "10.0.0.4"
upper_threshold = 4294967295

"#;
    assert_eq!(
        errors(text),
        [
            "t.toml:8:10: `weight` must be an integer from 0 to 2147483647, found 2147483648",
            "t.toml:11:10: `weight` must be an integer from 0 to 2147483647, found -1",
            "t.toml:15:19: a server: invalid thresholds: lower threshold 6 is above upper threshold 5 (0 means no upper threshold, so a lower one needs an upper one)",
            "t.toml:18:19: `upper_threshold` must be an integer from 0 to 2147483647, found 4294967295",
        ]
    );
}

#[test]
fn server_addresses_ports_and_families() {
    let text = r#"[[service]]
protocol = "tcp"
address = "192.0.2.1"
port = 80

[[service.server]]
address = "10.0.0.1"
port = 0
[[service.server]]
address = "10.0.0.256"
[[service.server]]
address = "2001:db8::1"
[[service.server]]
address = "255.255.255.255"
[[service.server]]
port = 80

"#;
    assert_eq!(
        errors(text),
        [
            "t.toml:8:8: `port` must be an integer from 1 to 65535, found 0",
            "t.toml:10:11: `address`: \"10.0.0.256\" is not an IPv4 or IPv6 address",
            "t.toml:12:11: a server: invalid destination: IPv6 destination 2001:db8::1 on an IPv4 service needs tunnel forwarding",
            "t.toml:14:11: a server: invalid destination: 255.255.255.255 is not a unicast address",
            "t.toml:15:1: a server needs `address`",
        ]
    );
}

#[test]
fn tunnel_parameters_only_with_tunnel_forwarding_and_consistent() {
    let text = r#"[[service]]
protocol = "tcp"
address = "192.0.2.1"
port = 80

[[service.server]]
address = "10.0.0.1"
forward = "route"
tunnel = { kind = "gre" }
[[service.server]]
address = "10.0.0.2"
forward = "tunnel"
tunnel = { kind = "gue" }
[[service.server]]
address = "10.0.0.3"
forward = "tunnel"
tunnel = { kind = "ipip", port = 6080, checksum = "yes" }
[[service.server]]
address = "10.0.0.4"
forward = "nat"

"#;
    assert_eq!(
        errors(text),
        [
            "t.toml:9:10: `tunnel` parameters need `forward = \"tunnel\"`",
            "t.toml:13:10: a GUE tunnel needs `port`",
            "t.toml:17:34: a tunnel `port` is only for `kind = \"gue\"`",
            "t.toml:17:51: `checksum`: unknown value \"yes\" (known: none, csum, remcsum)",
            "t.toml:20:11: `forward`: unknown value \"nat\" (known: masquerade, route, tunnel, local)",
        ]
    );
}

#[test]
fn persistence_netmask_prefix_and_engine() {
    let text = r#"[[service]]
protocol = "tcp"
address = "192.0.2.1"
port = 80
persistence = { timeout = 0, prefix = 64, engine = "a-very-long-engine-name", netmask = "255.0.255.0" }
[[service.server]]
address = "10.0.0.1"

[[service]]
protocol = "tcp"
address = "2001:db8::10"
port = 80
persistence = { netmask = "255.255.255.0", prefix = 129 }

[[service.server]]
address = "10.0.0.1"

"#;
    assert_eq!(
        errors(text),
        [
            "t.toml:5:27: `timeout` must be an integer from 1 to 4294967295, found 0",
            "t.toml:5:39: `prefix` is for an IPv6 service; an IPv4 one takes `netmask`",
            "t.toml:5:52: `engine`: \"a-very-long-engine-name\" must be 1 to 15 characters",
            "t.toml:5:89: `netmask`: \"255.0.255.0\" is not an IPv4 netmask (such as 255.255.255.0)",
            "t.toml:13:15: `persistence` needs `timeout`",
            "t.toml:13:27: `netmask` is for an IPv4 service; an IPv6 one takes `prefix`",
            "t.toml:13:53: `prefix` must be an integer from 1 to 128, found 129",
            "t.toml:16:11: a server: invalid destination: IPv4 destination 10.0.0.1 on an IPv6 service needs tunnel forwarding",
        ]
    );
}

#[test]
fn duplicate_services_and_servers_name_the_first() {
    let text = r#"[[service]]
protocol = "tcp"
address = "192.0.2.1"
port = 80

[[service.server]]
address = "10.0.0.1"
[[service.server]]
address = "10.0.0.1"
port = 80

[[service]]
protocol = "tcp"
address = "192.0.2.1"
port = 80
sorry_server = { address = "10.0.0.1" }

[[service.server]]
address = "10.0.0.1"

[[service]]
fwmark = 1

[[service.server]]
address = "10.0.0.1"

[[service]]
fwmark = 1
family = "inet"

[[service.server]]
address = "10.0.0.1"

"#;
    assert_eq!(
        errors(text),
        [
            "t.toml:9:11: server 10.0.0.1:80 is in service TCP 192.0.2.1:80 twice (first at line 7)",
            "t.toml:14:11: service TCP 192.0.2.1:80 is configured twice (first at line 3)",
            "t.toml:16:28: sorry server 10.0.0.1:80 is also a server of the service (line 19)",
            "t.toml:28:10: service fwmark 1 (IPv4) is configured twice (first at line 22)",
        ]
    );
}

#[test]
fn a_quorum_the_servers_cannot_meet() {
    let text = r#"[[service]]
protocol = "tcp"
address = "192.0.2.1"
port = 80
quorum = { min_weight = 3 }
[[service.server]]
address = "10.0.0.1"
weight = 2
[[service]]
protocol = "tcp"
address = "192.0.2.2"
port = 80
quorum = { min_weight = 0, below = "maybe", at = 1 }

[[service.server]]
address = "10.0.0.1"

"#;
    assert_eq!(
        errors(text),
        [
            "t.toml:5:25: quorum `min_weight` 3 can never be met: the servers' weights sum to 2",
            "t.toml:13:25: `min_weight` must be an integer from 1 to 4294967295, found 0",
            "t.toml:13:36: `below`: unknown value \"maybe\" (known: keep, withdraw)",
            "t.toml:13:45: unknown key `at` in `quorum` (known: min_weight, below)",
        ]
    );
}

#[test]
fn agent_settings() {
    let text = r#"[agent]
resync = "0s"
drain_max = "8d"
start_wait = 3
[[service]]
protocol = "tcp"
address = "192.0.2.1"
port = 80

[[service.server]]
address = "10.0.0.1"

"#;
    assert_eq!(
        errors(text),
        [
            "t.toml:2:10: `resync` must be longer than 0",
            "t.toml:3:13: `drain_max`: \"8d\" is not a duration: write a whole number and a unit, ms, s, m or h (\"500ms\", \"2s\")",
            "t.toml:4:14: `start_wait` must be a string, found an integer",
        ]
    );
}

#[test]
fn the_top_level_takes_agent_and_services() {
    let text = r#"service = 1
agents = 2
"#;
    assert_eq!(
        errors(text),
        [
            "t.toml:1:11: `service` must be an array of tables (`[[service]]`), found an integer",
            "t.toml:2:1: unknown key `agents` in the file (known: agent, service)",
        ]
    );
}

#[test]
fn service_names_are_unique_and_not_empty() {
    let text = r#"[[service]]
name = "web"
fwmark = 1
[[service.server]]
address = "10.0.0.1"
[[service]]
name = "web"
fwmark = 2
[[service.server]]
address = "10.0.0.1"
[[service]]
name = ""
fwmark = 3
[[service.server]]
address = "10.0.0.1"
"#;
    assert_eq!(
        errors(text),
        [
            "t.toml:7:8: service name \"web\" is used twice (first at line 2)",
            "t.toml:12:8: `name` must not be empty (leave it out for no name)",
        ]
    );
}
