//! keepalived 2.2.7's keywords, per section, as its parsers install them
//! (check/check_parser.c, check/check_*.c, core/global_parser.c,
//! vrrp/vrrp_parser.c, bfd/bfd_parser.c): a word keepalived does not
//! know in a section the import reads is an error at its line.

// The top-level keywords of the load balancer, `virtual_server`,
// `virtual_server_group` and `SSL`, are matched by the converter itself.

/// The top-level keywords outside the load balancer (VRRP, global
/// settings, BFD): summarised, not converted; their blocks' contents are
/// not checked word by word.
pub(crate) const ROOT_OUTSIDE: &[&str] = &[
    "global_defs",
    "linkbeat_use_polling",
    "net_namespace",
    "net_namespace_ipvs",
    "namespace_with_ipsets",
    "use_pid_dir",
    "instance",
    "child_wait_time",
    "track_group",
    "static_ipaddress",
    "static_routes",
    "static_rules",
    "vrrp_sync_group",
    "garp_group",
    "linkbeat_interfaces",
    "vrrp_instance",
    "vrrp_script",
    "vrrp_track_process",
    "vrrp_track_file",
    "track_file",
    "interface_up_down_delays",
    "bfd_instance",
];

/// A `virtual_server`'s keywords.
pub(crate) const VIRTUAL_SERVER: &[&str] = &[
    "ip_family",
    "retry",
    "delay_before_retry",
    "warmup",
    "connect_timeout",
    "delay_loop",
    "inhibit_on_failure",
    "lb_algo",
    "lvs_sched",
    "hashed",
    "ops",
    "flag-1",
    "flag-2",
    "flag-3",
    "sh-port",
    "sh-fallback",
    "mh-port",
    "mh-fallback",
    "lb_kind",
    "lvs_method",
    "persistence_engine",
    "persistence_timeout",
    "persistence_granularity",
    "protocol",
    "ha_suspend",
    "smtp_alert",
    "virtualhost",
    "snmp_name",
    "alpha",
    "omega",
    "quorum_up",
    "quorum_down",
    "quorum",
    "hysteresis",
    "weight",
    "sorry_server",
    "sorry_server_inhibit",
    "sorry_server_lvs_method",
    "real_server",
];

/// A `real_server`'s keywords (its checkers: [`CHECKERS`]).
pub(crate) const REAL_SERVER: &[&str] = &[
    "weight",
    "lvs_method",
    "uthreshold",
    "lthreshold",
    "inhibit_on_failure",
    "notify_up",
    "notify_down",
    "alpha",
    "retry",
    "delay_before_retry",
    "warmup",
    "connect_timeout",
    "delay_loop",
    "smtp_alert",
    "virtualhost",
    "snmp_name",
];

/// The checkers a `real_server` may hold.
pub(crate) const CHECKERS: &[&str] = &[
    "MISC_CHECK",
    "SMTP_CHECK",
    "TCP_CHECK",
    "PING_CHECK",
    "UDP_CHECK",
    "HTTP_GET",
    "SSL_GET",
    "DNS_CHECK",
    "FILE_CHECK",
    "BFD_CHECK",
];

/// The connection keywords of the checkers that connect.
const CONNECTION: &[&str] = &[
    "connect_ip",
    "connect_port",
    "bindto",
    "bind_port",
    "bind_if",
    "connect_timeout",
    "fwmark",
];

/// The keywords of every checker but FILE_CHECK and BFD_CHECK.
const COMMON: &[&str] = &[
    "retry",
    "delay_before_retry",
    "warmup",
    "delay_loop",
    "alpha",
    "log_all_failures",
];

/// An HTTP_GET's or SSL_GET's own keywords.
const HTTP: &[&str] = &[
    "nb_get_retry",
    "virtualhost",
    "http_protocol",
    "enable_sni",
    "fast_recovery",
    "url",
];

/// A `url` block's keywords.
pub(crate) const URL: &[&str] = &[
    "path",
    "digest",
    "status_code",
    "virtualhost",
    "regex",
    "regex_no_match",
    "regex_options",
    "regex_min_offset",
    "regex_max_offset",
    "regex_stack",
];

/// An `SSL` block's keywords.
pub(crate) const SSL: &[&str] = &["password", "ca", "certificate", "key"];

/// Whether `word` is a keyword of the checker `checker`.
pub(crate) fn of_checker(checker: &str, word: &str) -> bool {
    let has = |list: &[&str]| list.contains(&word);
    match checker {
        "TCP_CHECK" | "PING_CHECK" => has(CONNECTION) || has(COMMON),
        "HTTP_GET" | "SSL_GET" => has(CONNECTION) || has(COMMON) || has(HTTP),
        "MISC_CHECK" => has(COMMON) || has(&["misc_path", "misc_timeout", "misc_dynamic", "user"]),
        "SMTP_CHECK" => has(CONNECTION) || has(COMMON) || has(&["helo_name", "host"]),
        "DNS_CHECK" => has(CONNECTION) || has(COMMON) || has(&["type", "name"]),
        "UDP_CHECK" => {
            has(CONNECTION)
                || has(COMMON)
                || has(&[
                    "payload",
                    "require_reply",
                    "min_reply_length",
                    "max_reply_length",
                ])
        }
        "FILE_CHECK" => has(&["track_file", "weight"]),
        "BFD_CHECK" => has(&["name", "alpha"]),
        _ => false,
    }
}

/// Whether `word` is a keyword of an SMTP_CHECK's `host` block.
pub(crate) fn of_smtp_host(word: &str) -> bool {
    CONNECTION.contains(&word) || COMMON.contains(&word)
}
