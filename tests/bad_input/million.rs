//! A million-line restore with one bad line at its end: the error names
//! that line, and there are no `Rules` (nothing would be applied).

use std::fmt::Write;
use std::time::Instant;

use ipvsnl::rules::{parse, Numeric};

/// 100,000 fwmark services (`-A`) then 9 real servers each (`-a`, as
/// short as lines go: directly routed, the service's port): 1,000,000
/// good lines, then `bad`.
fn text(bad: &str) -> (String, usize) {
    let services: u32 = 100_000;
    let mut t = String::with_capacity(26 << 20);
    for s in 1..=services {
        writeln!(t, "-A -f {s}").unwrap();
    }
    for s in 1..=services {
        for d in 1..=9 {
            writeln!(t, "-a -f {s} -r 10.0.0.{d}").unwrap();
        }
    }
    t.push_str(bad);
    t.push('\n');
    (t, services as usize * 10 + 1)
}

#[test]
fn a_million_lines_and_one_bad_line_at_the_end() {
    let (text, last) = text("-a -f 1 -r 10.0.0.10 -w 2147483648");
    assert_eq!(text.lines().count(), last);
    let started = Instant::now();
    let e = parse(&text, &Numeric).expect_err("the last line is bad");
    let took = started.elapsed();
    assert_eq!(
        e.to_string(),
        format!("line {last}: weight \"2147483648\" is not a number from 0 to 2147483647")
    );
    assert_eq!(e.lines().len(), 1);
    assert_eq!(e.lines()[0].line(), 1_000_001);
    eprintln!("rules::parse of {last} lines: {took:?}");
}
