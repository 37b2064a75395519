//! The grammar and `-R`'s reading of rules against ipvsadm's messages,
//! exit statuses and quirks.

use super::*;
use crate::restore::{parse_rules, tokenize};
use ipvsnl::rules::{destination_rule, service_rule, Names, Numeric};
use ipvsnl::{Forward, Netmask, Request, ServiceFlags, ServiceKey, TunnelKind};

fn args(line: &str) -> Result<Command, ArgError> {
    let mut argv = vec!["ipvsadm"];
    argv.extend(line.split_whitespace());
    parse_args(&argv, &Numeric)
}

/// Like [`args`], for words that hold white space.
fn args_v(words: &[&str]) -> Result<Command, ArgError> {
    let mut argv = vec!["ipvsadm"];
    argv.extend(words);
    parse_args(&argv, &Numeric)
}

fn err(line: &str) -> (String, i32) {
    let e = args(line).unwrap_err();
    (e.message, e.status)
}

#[test]
fn one_command_line_parses_or_is_refused_with_a_status() {
    let c = parse_args(
        &["ipvsadm", "-A", "-t", "10.0.0.1:80", "-s", "rr"],
        &Numeric,
    )
    .unwrap();
    assert!(matches!(c, Command::Apply(Request::AddService(_))));
    let e = parse_args(&["ipvsadm", "-A", "-t", "10.0.0.1:80", "-o"], &Numeric).unwrap_err();
    assert_eq!(
        e.message,
        "One-Packet Scheduling is only for UDP virtual services"
    );
    assert_eq!(e.status, 2);
    let e = parse_args(&["ipvsadm", "-A", "-t", "10.0.0.1:80", "--bogus"], &Numeric).unwrap_err();
    assert_eq!(e.status, 255);
}

#[test]
fn a_scheduler_name_with_white_space_goes_to_the_kernel_as_an_unknown_name() {
    let Ok(Command::Apply(Request::EditService(s))) =
        args_v(&["-E", "-t", "10.0.0.1:80", "-s", "r r"])
    else {
        panic!("-s 'r r' must parse, as ipvsadm leaves the name to the kernel")
    };
    assert_eq!(s.scheduler.name(), "r/r");
    assert!(ipvsnl::Scheduler::named().all(|k| k.name() != "r/r"));
    let Ok(Command::Apply(Request::AddService(s))) =
        args_v(&["-A", "-t", "1.1.1.1:1", "-s", "\tx"])
    else {
        panic!("a tab parses too")
    };
    assert_eq!(s.scheduler.name(), "/x");
}

#[test]
fn validation_messages_match_ipvsadm() {
    let cases: &[(&str, &str, i32)] = &[
        ("-A -t 10.1.1.1", "Zero port specified for non-persistent service", 2),
        ("-A -u 10.1.1.1:53 -o -t 1.1.1.1:2", "multiple 'service-address' options specified", 2),
        ("-A -t 10.1.1.1:80 -o", "One-Packet Scheduling is only for UDP virtual services", 2),
        ("-A -t 10.1.1.1:80 -A", "invalid option `-A'", 2),
        ("-A -L", "invalid option `-L'", 2),
        ("-A -t 10.1.1.1:80 -r 1.1.1.1", "Illegal 'real-server' option with the 'add-service' command", 2),
        ("-A -t 10.1.1.1:80 -p 0", "invalid timeout value `0' specified", 2),
        ("-A -t 10.1.1.1:80 -p 2678401", "invalid timeout value `2678401' specified", 2),
        ("-A -t 10.1.1.1:80 -p abc", "invalid timeout value `abc' specified", 2),
        ("-A -t 10.1.1.1:80 -b flag-9", "invalid scheduler flag `flag-9'", 2),
        ("-A -t 10.1.1.1:80 -b sh-port", "incompatible scheduler flag `sh-port'", 2),
        ("-A -t [2001:db8::1]:80 -p -M 129", "illegal ipv6 netmask specified", 2),
        ("-A -t 2001:db8::1:80", "Zero port specified for non-persistent service", 2),
        ("-A -t [2001:db8::1", "illegal virtual server address[:port] specified", 2),
        ("-A -t 300.1.1.1:80", "illegal virtual server address[:port] specified", 2),
        ("-A -t 10.1.1.1:99999", "illegal virtual server address[:port] specified", 2),
        ("-A -t 10.1.1.1:nosuchsvc", "illegal virtual server address[:port] specified", 2),
        ("-A -t 12345", "illegal virtual server address[:port] specified", 2),
        ("-A -f 0", "invalid fwmark value `0' specified", 2),
        ("-A -f 4294967296", "invalid fwmark value `4294967296' specified", 2),
        ("-A -f 1x", "invalid fwmark value `1x' specified", 2),
        ("-A -6 -f 3", "-6 used before -f\n", 2),
        ("-a -t 10.0.0.1:80", "You need to supply the 'real-server' option for the 'add-server' command", 2),
        ("-a -t 10.0.0.1:80 -r 1.1.1.1 -w 2147483648", "illegal weight specified", 2),
        ("-a -t 10.0.0.1:80 -r 1.1.1.1 -w -1", "illegal weight specified", 2),
        ("-a -t 10.0.0.1:80 -r [2001:db8::5]", "illegal real server address[:port] specified", 2),
        ("-a -t 10.0.0.1:80 -r 1.1.1.1 --tun-type gue", "Tunnel options conflict with forward method", 2),
        ("-a -t 10.0.0.1:80 -r 1.1.1.1 -i --tun-type gue", "You need to supply the 'tun-port' option for the 'gue' tunnel type", 2),
        ("-a -t 10.0.0.1:80 -r 1.1.1.1 -i --tun-type gre --tun-port 10", "Illegal 'tun-port' option with the 'gre' tunnel type", 2),
        ("-a -t 10.0.0.1:80 -r 1.1.1.1 -i --tun-type gre --tun-csum --tun-nocsum", "The option 'tun-csum' conflicts with the 'tun-nocsum' option in the 'gre' tunnel type", 2),
        ("-a -t 10.0.0.1:80 -r 1.1.1.1 -i --tun-type foo", "illegal tunnel type specified", 2),
        ("-a -t 10.0.0.1:80 -r 1.1.1.1 -i --tun-port 5", "Illegal 'tun-port' option with the 'ipip' tunnel type", 2),
        ("-a -t 10.0.0.1:80 -r 1.1.1.1 -g -m", "multiple 'forwarding-method' options specified", 2),
        ("-a -t 10.0.0.1:80 -r 2001:db8::5", "Different address family is allowed only for tunneling servers", 2),
        ("-L -c -t 10.0.0.1:80", "The option 'service-address' conflicts with the 'connection' option in the 'list' command", 2),
        ("-L --timeout --stats", "options conflicts in the list command", 2),
        ("-L --daemon --persistent-conn", "options conflicts in the list command", 2),
        ("-L -n extra", "unexpected argument extra", 2),
        ("--set 1 2", "--set option requires 3 timeout values", 2),
        ("--set 1 2 x", "invalid timeout value `x' specified", 2),
        ("--start-daemon foo", "illegal start-daemon parameter specified", 2),
        ("--stop-daemon bar", "illegal start_daemon specified", 2),
        ("--start-daemon master --syncid 256", "illegal syncid specified", 2),
        ("--start-daemon master --mcast-group 10.0.0.1", "invalid IPv4 mcast-group `10.0.0.1'", 2),
        ("--start-daemon master --mcast-group ff02::1x", "invalid IPv6 mcast-group `ff02::1x'", 2),
        ("--start-daemon master --mcast-port 0", "illegal mcast-port specified", 2),
        ("--start-daemon master --sync-maxlen 65508", "illegal sync-maxlen specified", 2),
        ("-Z -n", "Illegal 'numeric' option with the 'zero' command", 2),
        ("-L --foo", "--foo: unknown option", 255),
        ("-L --numer", "--numer: unknown option", 255),
        ("-A -t 10.9.9.9:80 -p -1", "-1: unknown option", 255),
        ("-L -n -Z", "invalid option `-Z'", 2),
        ("-Q", "Try `ipvsadm -h' or 'ipvsadm --help' for more information.", 255),
        ("-S -c", "Illegal 'connection' option with the 'save' command", 2),
        ("-L -n -n", "multiple 'numeric' options specified", 2),
        ("-a -r 1.1.1.1:http -t 10.0.0.1:80", "illegal real server address[:port] specified", 2),
        ("-L -t", "-t: missing argument", 255),
        ("-L --stats=1", "--stats=1: option does not take an argument", 255),
    ];
    for (line, msg, status) in cases {
        assert_eq!(err(line), (msg.to_string(), *status), "{line}");
    }
}

#[test]
fn good_lines_parse() {
    for line in [
        "-A -t 10.1.1.1:80 -s sh -b sh-port,flag-1",
        "-A -t 10.1.1.1:80 -M 255.255.255.0",
        "-A -f 4294967295",
        "-a -t 10.0.0.1:80 -r 1.1.1.1 -w 65536",
        "-a -t 10.0.0.1:80 -r 1.1.1.1 -x 2147483647",
        "-a -t 10.0.0.1:80 -r 1.1.1.1 -y 10",
        "-A -u 10.9.9.9:80 -p 60 -o",
        "-L --tcp-service=10.0.0.1:80 --numeric",
        "-Lnt10.0.0.1:80",
        "--list -n --daemon",
    ] {
        args(line).unwrap_or_else(|e| panic!("{line}: {e}"));
    }
}

#[test]
fn netmask_follows_the_family_at_that_moment() {
    let Command::Apply(Request::AddService(s)) = args("-A -M 64 -t [2001:db8::9]:80 -p").unwrap()
    else {
        panic!()
    };
    assert_eq!(s.netmask, Netmask::V6(128));
    assert_eq!(s.timeout, 360);
    let Command::Apply(Request::AddService(s)) = args("-A -t [2001:db8::9]:80 -p -M 64").unwrap()
    else {
        panic!()
    };
    assert_eq!(s.netmask, Netmask::V6(64));
    let Command::Apply(Request::AddService(s)) = args("-A -t 10.1.1.1 -p 100 -M 24").unwrap()
    else {
        panic!()
    };
    assert_eq!(s.netmask, Netmask::V4("0.0.0.24".parse().unwrap()));
}

#[test]
fn dest_port_follows_the_service_for_dr_and_tunnel() {
    let Command::Apply(Request::AddDestination(k, d)) =
        args("-a -t 10.0.0.1:80 -r 192.168.5.5:8080 -g").unwrap()
    else {
        panic!()
    };
    assert_eq!(k, ServiceKey::tcp("10.0.0.1".parse().unwrap(), 80));
    assert_eq!(d.port, 80);
    assert_eq!(d.forward, Forward::Route);
    let Command::Apply(Request::AddDestination(_, d)) =
        args("-a -t 10.0.0.1:80 -r 192.168.5.5:8080 -m -w 3 -x 100 -y 10").unwrap()
    else {
        panic!()
    };
    assert_eq!(
        (d.port, d.weight, d.upper_threshold, d.lower_threshold),
        (8080, 3, 100, 10)
    );
    let Command::Apply(Request::EditDestination(_, d)) = args(
        "-e -t [2001:db8::1]:443 -r [2001:db8::5]:8443 -i --tun-type gue --tun-port 6080 --tun-remcsum",
    )
    .unwrap() else {
        panic!()
    };
    let t = d.forward.tunnel().unwrap();
    assert_eq!(
        (t.kind, t.port, t.flags.bits(), d.port),
        (TunnelKind::Gue, 6080, 2, 443)
    );
}

#[test]
fn edit_resets_to_defaults_and_truncates_scheduler() {
    let Command::Apply(Request::EditService(s)) = args("-E -u 10.1.1.1:53 -s wrr -o").unwrap()
    else {
        panic!()
    };
    assert_eq!(s.flags, ServiceFlags::ONE_PACKET);
    let Command::Apply(Request::AddService(s)) =
        args("-A -t 10.9.9.9:80 -s averyveryverylongschedulername").unwrap()
    else {
        panic!()
    };
    assert_eq!(s.scheduler.name(), "averyveryverylo");
}

#[test]
fn rules_report_every_bad_line() {
    let text = "-A -t 10.0.0.1:80\n# comment\n\n-a -t 10.0.0.1:80 -r 10.0.0.2 -w x\n-R\n-C";
    let errs = parse_rules(text, "ipvsadm", &Numeric).unwrap_err();
    let got: Vec<String> = errs.iter().map(|e| e.to_string()).collect();
    assert_eq!(
        got,
        [
            "line 2: Try `ipvsadm -h' or 'ipvsadm --help' for more information.",
            "line 4: illegal weight specified",
            "line 5: Try `ipvsadm -h' or 'ipvsadm --help' for more information.",
        ]
    );
    assert_eq!(errs[1].error.status, 2);
}

#[test]
fn save_round_trips() {
    let text = "\
-A -t 10.0.0.1:80 -s wlc
-a -t 10.0.0.1:80 -r 192.168.1.1:80 -g -w 5
-A -u 10.0.0.1:53 -s rr -o
-a -u 10.0.0.1:53 -r 192.168.1.3:53 -i -w 0 --tun-type ipip
-A -t [2001:db8::1]:443 -s wrr -p 300 -M 64 --pe sip
-a -t [2001:db8::1]:443 -r [2001:db8::a0a0]:443 -m -w 10
-A -f 5 -s sh -p 360 -M 255.255.255.0 -b sh-fallback,sh-port
-A --sctp-service [2001:db8:abcd:1234:5678:9abc:def0:1234]:65535 -s mh -b mh-fallback,mh-port
-a --sctp-service [2001:db8:abcd:1234:5678:9abc:def0:1234]:65535 -r [2001:db8:abcd:1234:5678:9abc:def0:fff1]:65535 -i -w 2147483647 --tun-type gue --tun-port 6080 --tun-csum
-A -f 9 -6 -s wlc -p 20 -M 64
";
    let rules = parse_rules(text, "ipvsadm", &Numeric).unwrap();
    let mut out = String::new();
    for r in rules {
        match r.command {
            Command::Apply(Request::AddService(s)) => out.push_str(&service_rule(&s, &Numeric)),
            Command::Apply(Request::AddDestination(k, d)) => {
                out.push_str(&destination_rule(&k, &d, &Numeric))
            }
            other => panic!("{other:?}"),
        }
        out.push('\n');
    }
    assert_eq!(out, text);
}

#[test]
fn tokenizer_quirks() {
    assert_eq!(tokenize("-C"), vec![(1, vec!["-C"])]);
    assert_eq!(tokenize("-C \n-Z "), vec![(1, vec!["-C"]), (2, vec!["-Z"])]);
    assert!(tokenize("").is_empty());
}

#[test]
fn names_are_used_when_given() {
    struct Local;
    impl Names for Local {
        fn host_v4(&self, name: &str) -> Option<std::net::Ipv4Addr> {
            (name == "localhost").then_some(std::net::Ipv4Addr::LOCALHOST)
        }
        fn port(&self, name: &str, proto: &str) -> Option<u16> {
            (name == "http" && proto == "tcp").then_some(80)
        }
        fn host_name(&self, _: &std::net::IpAddr) -> Option<String> {
            Some("localhost".into())
        }
        fn port_name(&self, port: u16, _: &str) -> Option<String> {
            (port == 80).then(|| "http".into())
        }
    }
    let mut argv = vec!["ipvsadm"];
    argv.extend("-A -t localhost:http -s rr".split(' '));
    let Command::Apply(Request::AddService(s)) = parse_args(&argv, &Local).unwrap() else {
        panic!()
    };
    assert_eq!(service_rule(&s, &Local), "-A -t localhost:http -s rr");
    assert_eq!(service_rule(&s, &Numeric), "-A -t 127.0.0.1:80 -s rr");
}

#[test]
fn never_panics_on_odd_input() {
    let words = [
        "-A",
        "-t",
        "-u",
        "-f",
        "-6",
        "-p",
        "-M",
        "-r",
        "-i",
        "-w",
        "-L",
        "-n",
        "-c",
        "--",
        "-",
        "--set",
        "--tun-type",
        "--tun-port",
        "--start-daemon",
        "--mcast-group",
        "-b",
        "=",
        "[",
        "[::1]:",
        "[::1]:80",
        "1.2.3.4:",
        ":80",
        "é",
        "-é",
        "--é=1",
        "-té",
        "-Lé",
        "0x",
        "",
        "gue",
        "master",
        "sh-port,",
        ",",
        "-1",
        "99999999999999999999999",
    ];
    for a in words {
        for b in words {
            for c in words {
                let _ = parse_args(&["ipvsadm", a, b, c], &Numeric);
                let _ = parse_args(&["ipvsadm", "-a", "-t", "1.1.1.1:1", a, b, c], &Numeric);
            }
        }
    }
    let _ = parse_args(&[], &Numeric);
    let _ = parse_rules("\u{0}\n\r\n-A\t-t\r\n", "x", &Numeric);
}

#[test]
fn short_letters_find_the_options_a_search_finds() {
    use super::options::{short_option, OPTIONS};
    for c in 0..=255u8 {
        let searched = OPTIONS.iter().find(|o| o.1 == Some(c));
        assert_eq!(short_option(c), searched, "letter {c}");
    }
}
