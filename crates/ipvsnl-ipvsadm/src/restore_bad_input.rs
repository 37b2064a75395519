//! `-R`'s reading of bad rules text (`restore::parse_rules`, which the
//! binary runs on the whole input before any kernel contact): each case
//! with the bad lines' numbers, ipvsadm's message and its exit status; a
//! million-line restore with one bad line at its end.

use ipvsnl::rules::Numeric;

use crate::restore::parse_rules;

/// (name, text, [(line, message, exit status)]).
type Case = (
    &'static str,
    &'static str,
    &'static [(usize, &'static str, i32)],
);

const TRY_HELP: &str = "Try `ipvsadm -h' or 'ipvsadm --help' for more information.";

const CASES: &[Case] = &[
    ("-A -t", "-A -t", &[(1, "-t: missing argument", 255)]),
    (
        "-a -t ADDR -r",
        "-a -t 10.0.0.1:80 -r",
        &[(1, "-r: missing argument", 255)],
    ),
    ("garbage", "@@@", &[(1, TRY_HELP, 255)]),
    ("a lone -", "-", &[(1, TRY_HELP, 255)]),
    ("a # comment", "# saved\n-C", &[(1, TRY_HELP, 255)]),
    (
        "an unknown option",
        "-A -t 10.0.0.1:80 --foo",
        &[(1, "--foo: unknown option", 255)],
    ),
    (
        "-p -1",
        "-A -t 10.0.0.1:80 -p -1",
        &[(1, "-1: unknown option", 255)],
    ),
    (
        "weight -1",
        "-a -t 10.0.0.1:80 -r 10.0.1.1 -w -1",
        &[(1, "illegal weight specified", 2)],
    ),
    (
        "port 65536",
        "-A -t 10.0.0.1:65536",
        &[(1, "illegal virtual server address[:port] specified", 2)],
    ),
    (
        "-M 129",
        "-A -t [2001:db8::1]:80 -M 129 -p",
        &[(1, "illegal ipv6 netmask specified", 2)],
    ),
    (
        "fwmark 0",
        "-A -f 0",
        &[(1, "invalid fwmark value `0' specified", 2)],
    ),
    (
        "-x on -A",
        "-A -t 10.0.0.1:80 -x 1",
        &[(
            1,
            "Illegal 'u-threshold' option with the 'add-service' command",
            2,
        )],
    ),
    (
        "--set of two",
        "--set 1 2",
        &[(1, "--set option requires 3 timeout values", 2)],
    ),
    (
        "an unknown role",
        "--start-daemon foo",
        &[(1, "illegal start-daemon parameter specified", 2)],
    ),
    (
        "--syncid 256",
        "--start-daemon master --syncid 256",
        &[(1, "illegal syncid specified", 2)],
    ),
    ("two commands", "-C -C", &[(1, "invalid option `-C'", 2)]),
    (
        "two services",
        "-A -t 10.0.0.1:80 -u 10.0.0.1:80",
        &[(1, "multiple 'service-address' options specified", 2)],
    ),
    (
        "two methods",
        "-a -t 10.0.0.1:80 -r 10.0.1.1 -g -m",
        &[(1, "multiple 'forwarding-method' options specified", 2)],
    ),
    (
        "a flag of another scheduler",
        "-A -t 10.0.0.1:80 -s rr -b sh-port",
        &[(1, "incompatible scheduler flag `sh-port'", 2)],
    ),
    ("a restore in a restore", "-C\n-R", &[(2, TRY_HELP, 255)]),
    (
        "every bad line, the first one's status first",
        "-L -n\n-A -f 0\n-C\n-A -t",
        &[
            (2, "invalid fwmark value `0' specified", 2),
            (4, "-t: missing argument", 255),
        ],
    ),
];

#[test]
fn bad_restore_lines_get_ipvsadm_messages_and_statuses() {
    for (name, text, want) in CASES {
        let errors = parse_rules(text, "ipvsadm", &Numeric).expect_err(name);
        let got: Vec<(usize, &str, i32)> = errors
            .iter()
            .map(|e| (e.line, e.error.message.as_str(), e.error.status))
            .collect();
        assert_eq!(got, *want, "{name}");
    }
}

/// Input that is not UTF-8 is read lossily (as `ipvsadm -R` reads stdin);
/// a scheduler name with a replacement character is left to the kernel
/// (no module has such a name: ENOENT), like ipvsadm.
#[test]
fn non_utf8_restore_input_is_read_lossily() {
    let text = String::from_utf8_lossy(b"-A -t 10.0.0.1:80 -s r\xe9\n\xff\n");
    let errors = parse_rules(&text, "ipvsadm", &Numeric).unwrap_err();
    assert_eq!(errors.len(), 1);
    assert_eq!((errors[0].line, errors[0].error.status), (2, 255));
    assert_eq!(errors[0].error.message, TRY_HELP);
}

/// A million good lines and one bad one at the end: the bad line is
/// reported, and there are no rules (nothing is applied).
#[test]
fn a_million_line_restore_with_one_bad_line_at_the_end() {
    let mut text = String::with_capacity(26 << 20);
    for s in 1..=100_000 {
        text.push_str(&format!("-A -f {s}\n"));
    }
    for s in 1..=100_000 {
        for d in 1..=9 {
            text.push_str(&format!("-a -f {s} -r 10.0.0.{d}\n"));
        }
    }
    text.push_str("-a -f 1 -r 10.0.0.10 -w -1\n");
    let errors = parse_rules(&text, "ipvsadm", &Numeric).unwrap_err();
    assert_eq!(errors.len(), 1);
    assert_eq!(
        errors[0].to_string(),
        "line 1000001: illegal weight specified"
    );
    assert_eq!(errors[0].error.status, 2);
}
