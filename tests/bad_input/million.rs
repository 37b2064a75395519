//! A million-line restore with one bad line at its end: the error names
//! that line, and there are no `Rules` (nothing would be applied).

use std::fmt::Write;
use std::time::Instant;

use ipvsnl::rules::{parse, Numeric};

/// 100,000 services (`-A`) then 10 real servers each (`-a`): 1,100,000
/// good lines, then `bad`.
fn text(bad: &str) -> (String, usize) {
    let mut t = String::with_capacity(48 << 20);
    let addr = |i: u32| format!("10.{}.{}.{}", i >> 16, (i >> 8) & 0xff, i & 0xff);
    let services = 100_000;
    for s in 0..services {
        writeln!(t, "-A -t {}:80 -s rr", addr(s)).unwrap();
    }
    for s in 0..services {
        let svc = addr(s);
        for d in 1..=10 {
            writeln!(t, "-a -t {svc}:80 -r 192.168.0.{d}:8080 -m -w {d}").unwrap();
        }
    }
    t.push_str(bad);
    t.push('\n');
    (t, services as usize * 11 + 1)
}

#[test]
fn a_million_lines_and_one_bad_line_at_the_end() {
    let (text, last) = text("-a -t 10.0.0.1:80 -r 192.168.0.11:8080 -m -w 2147483648");
    assert_eq!(text.lines().count(), last);
    let started = Instant::now();
    let e = parse(&text, &Numeric).expect_err("the last line is bad");
    let took = started.elapsed();
    assert_eq!(
        e.to_string(),
        format!("line {last}: weight \"2147483648\" is not a number from 0 to 2147483647")
    );
    assert_eq!(e.lines().len(), 1);
    assert_eq!(e.lines()[0].line(), 1_100_001);
    eprintln!("rules::parse of {last} lines: {took:?}");
}

/// A good text of the same size parses, and its table replays, with the
/// bad line a table refuses at the end: one error, on the last line.
#[test]
fn a_million_lines_and_one_line_no_table_takes() {
    let (text, last) = text("-a -t 10.0.0.1:80 -r 192.168.0.1:8080 -m");
    let rules = parse(&text, &Numeric).unwrap();
    assert_eq!(rules.len(), last);
    let e = rules
        .to_table()
        .expect_err("the last line adds a server twice");
    assert_eq!(
        e.to_string(),
        format!("line {last}: -a adds real server 192.168.0.1:8080 to TCP 10.0.0.1:80, which line 100011 already adds")
    );
}
