//! `-R`'s reading of a rules text: lines split into words the way
//! ipvsadm's `config_stream.c` splits them, each line parsed with the
//! command-line grammar, and every bad line reported with its number.

use std::fmt;

use ipvsnl::rules::Names;
use ipvsnl::Request;

use crate::grammar::{parse_args, ArgError, Command};

/// One command of a rules text, with its 1-based line number.
#[cfg(test)]
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Rule {
    /// Line number in the text (1-based).
    pub(crate) line: usize,
    /// The command on that line.
    pub(crate) command: Command,
}

/// A bad line of a rules text: its number and ipvsadm's message for it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct RuleError {
    /// Line number in the text (1-based).
    pub(crate) line: usize,
    /// ipvsadm's message and exit status for the line.
    pub(crate) error: ArgError,
}

impl fmt::Display for RuleError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "line {}: {}", self.line, self.error.message)
    }
}

impl std::error::Error for RuleError {}

/// A byte of a rules text: part of a token, a separator, or the end of a
/// line.
const ORDINARY: u8 = 0;
const SEPARATOR: u8 = 1;
const NEWLINE: u8 = 2;
const CLASS: [u8; 256] = {
    let mut c = [ORDINARY; 256];
    c[b' ' as usize] = SEPARATOR;
    c[b'\t' as usize] = SEPARATOR;
    c[b'\r' as usize] = SEPARATOR;
    c[b'\n' as usize] = NEWLINE;
    c
};

/// Hands `each` every line of a rules text that has tokens, split the way
/// `ipvsadm -R` splits them (`config_stream.c`): tokens are separated by
/// spaces, tabs and carriage returns; a token that is exactly `ipvsadm` is
/// dropped; lines without tokens are skipped; a last line without a
/// newline counts (even if it ends in white space). `each` gets the line
/// number and `argv`: `first` then the line's tokens (one buffer for every
/// line).
fn for_each_line<'a>(text: &'a str, first: &'a str, mut each: impl FnMut(usize, &[&'a str])) {
    // One pass over the bytes, lines and tokens together. (Measured on
    // the host with `scripts/measure/ipvsadm-text-cost`: splitting lines first, then
    // each line into a new `Vec`, cost 1,900 instructions a line; this,
    // about 350.)
    let mut argv: Vec<&'a str> = Vec::with_capacity(16);
    let b = text.as_bytes();
    let separator = |c: u8| CLASS[usize::from(c)] == SEPARATOR;
    let ordinary = |c: u8| CLASS[usize::from(c)] == ORDINARY;
    let mut line = 0;
    let mut i = 0;
    while i < b.len() {
        line += 1;
        argv.clear();
        argv.push(first);
        loop {
            while i < b.len() && separator(b[i]) {
                i += 1;
            }
            if i >= b.len() || b[i] == b'\n' {
                break;
            }
            let start = i;
            while i < b.len() && ordinary(b[i]) {
                i += 1;
            }
            // Cut at ASCII bytes: on character boundaries.
            let token = &text[start..i];
            if token != "ipvsadm" {
                argv.push(token);
            }
        }
        if argv.len() > 1 {
            each(line, &argv);
        }
        // Past the newline (a text that ends in one has no line after it).
        i += 1;
    }
}

/// The lines of a rules text as `ipvsadm -R` splits them (see
/// [`for_each_line`]): (line number, tokens).
#[cfg(test)]
pub(crate) fn tokenize(text: &str) -> Vec<(usize, Vec<&str>)> {
    let mut out = Vec::new();
    for_each_line(text, "", |n, argv| out.push((n, argv[1..].to_vec())));
    out
}

/// What a rules text asks for, in its order: every change
/// (`Command::Apply`) in one list, and each other command (a listing, a
/// save...) with the number of changes before it. Kept this way, a
/// restore of 60,000 lines holds 60,000 requests and nothing more (a list
/// of every line's command, then the changes copied out of it, made the
/// process touch twice the memory: page faults are the kernel's time).
#[derive(Debug, Default)]
pub(crate) struct Script {
    /// The changes, in order.
    pub(crate) changes: Vec<Request>,
    /// The other commands, each after as many changes as it says.
    pub(crate) others: Vec<(usize, Command)>,
}

/// Parses a whole rules text (what `ipvsadm -R` reads) with ipvsadm's
/// grammar into a [`Script`]. `program` stands for argv\[0\] in messages
/// that name it.
///
/// Returns the script, or, if any line is bad, every bad line with its
/// number and ipvsadm's message. A restore inside a restore (`-R` on a
/// line) is a bad line, as it is for ipvsadm.
pub(crate) fn parse_script(
    text: &str,
    program: &str,
    names: &dyn Names,
) -> Result<Script, Vec<RuleError>> {
    let mut script = Script::default();
    let errors = parse_each(text, program, names, |_, command| match command {
        Command::Apply(req) => script.changes.push(req),
        other => script.others.push((script.changes.len(), other)),
    });
    if errors.is_empty() {
        Ok(script)
    } else {
        Err(errors)
    }
}

/// Hands `each` every good line's command with its line number; returns
/// the bad lines.
fn parse_each(
    text: &str,
    program: &str,
    names: &dyn Names,
    mut each: impl FnMut(usize, Command),
) -> Vec<RuleError> {
    let mut errors = Vec::new();
    for_each_line(text, program, |line, argv| match parse_args(argv, names) {
        Ok(Command::Restore) => errors.push(RuleError {
            line,
            error: ArgError::try_help(program),
        }),
        Ok(command) => each(line, command),
        Err(error) => errors.push(RuleError { line, error }),
    });
    errors
}

/// [`parse_script`] as one list of commands with their line numbers.
#[cfg(test)]
pub(crate) fn parse_rules(
    text: &str,
    program: &str,
    names: &dyn Names,
) -> Result<Vec<Rule>, Vec<RuleError>> {
    let mut rules = Vec::new();
    let errors = parse_each(text, program, names, |line, command| {
        rules.push(Rule { line, command })
    });
    if errors.is_empty() {
        Ok(rules)
    } else {
        Err(errors)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ipvsnl::rules::Numeric;

    #[test]
    fn tokens_split_like_config_stream() {
        let t = tokenize("ipvsadm -A -t 1.2.3.4:80\r\n\n-C\t\n-Z ");
        assert_eq!(
            t,
            vec![
                (1, vec!["-A", "-t", "1.2.3.4:80"]),
                (3, vec!["-C"]),
                (4, vec!["-Z"])
            ]
        );
    }

    #[test]
    fn every_bad_line_is_reported_with_its_number() {
        let text = "-A -t 10.0.0.1:80 -s rr\n-a -t 10.0.0.1:80 -r 10.0.1.1 -m\n";
        let rules = parse_rules(text, "ipvsadm", &Numeric).unwrap();
        assert_eq!(rules.len(), 2);
        assert_eq!(rules[1].line, 2);
        let bad =
            parse_rules("-A -t 10.0.0.1\n-a -t 10.0.0.1:80\n", "ipvsadm", &Numeric).unwrap_err();
        assert_eq!(
            bad[0].to_string(),
            "line 1: Zero port specified for non-persistent service"
        );
        assert_eq!(bad[1].line, 2);
    }

    #[test]
    fn a_restore_inside_a_restore_is_a_bad_line() {
        let bad = parse_rules("-C\n-R\n", "prog", &Numeric).unwrap_err();
        assert_eq!(bad.len(), 1);
        assert_eq!(bad[0].line, 2);
        assert_eq!(bad[0].error, ArgError::try_help("prog"));
    }
}
