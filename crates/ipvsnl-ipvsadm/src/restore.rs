//! `-R`'s reading of a rules text: lines split into words the way
//! ipvsadm's `config_stream.c` splits them, each line parsed with the
//! command-line grammar, and every bad line reported with its number.

use std::fmt;

use ipvsnl::rules::Names;

use crate::grammar::{parse_args, ArgError, Command};

/// One command of a rules text, with its 1-based line number.
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

/// Splits a rules text into lines of tokens the way `ipvsadm -R` does
/// (`config_stream.c`): tokens are separated by spaces, tabs and carriage
/// returns; a token that is exactly `ipvsadm` is dropped; lines without
/// tokens are skipped; a last line without a newline counts (even if it
/// ends in white space). Returns (line number, tokens).
pub(crate) fn tokenize(text: &str) -> Vec<(usize, Vec<&str>)> {
    let mut out = Vec::new();
    let mut lines = text.split('\n').enumerate().peekable();
    while let Some((n, line)) = lines.next() {
        if lines.peek().is_none() && line.is_empty() {
            break;
        }
        let tokens: Vec<&str> = line
            .split([' ', '\t', '\r'])
            .filter(|t| !t.is_empty() && *t != "ipvsadm")
            .collect();
        if !tokens.is_empty() {
            out.push((n + 1, tokens));
        }
    }
    out
}

/// Parses a whole rules text (what `ipvsadm -R` reads) with ipvsadm's
/// grammar. `program` stands for argv\[0\] in messages that name it.
///
/// Returns every command with its line number, or, if any line is bad,
/// every bad line with its number and ipvsadm's message. A restore inside
/// a restore (`-R` on a line) is a bad line, as it is for ipvsadm.
pub(crate) fn parse_rules(
    text: &str,
    program: &str,
    names: &dyn Names,
) -> Result<Vec<Rule>, Vec<RuleError>> {
    let mut rules = Vec::new();
    let mut errors = Vec::new();
    for (line, tokens) in tokenize(text) {
        let mut argv: Vec<&str> = Vec::with_capacity(tokens.len() + 1);
        argv.push(program);
        argv.extend(tokens);
        match parse_args(&argv, names) {
            Ok(Command::Restore) => errors.push(RuleError {
                line,
                error: ArgError::try_help(program),
            }),
            Ok(command) => rules.push(Rule { line, command }),
            Err(error) => errors.push(RuleError { line, error }),
        }
    }
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
