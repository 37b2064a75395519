//! The popt-compatible scanner that reads options off a command line.

use super::command::ArgError;
use super::options::{short_option, Arg, Opt, OPTIONS};

/// What the popt-like scanner yields.
pub(super) enum Scan<'a> {
    Opt(Opt, Option<&'a str>),
    End,
    Error(&'static str),
}

/// A popt-compatible option scanner: bundled short options (`-Ln`,
/// `-Lnt10.0.0.1:80`), `--long value` and `--long=value`, no
/// abbreviations, non-option words collected as leftovers, `--` ends the
/// options.
pub(super) struct Scanner<'a> {
    pub(super) argv: &'a [&'a str],
    pub(super) next: usize,
    /// The rest of a bundle of short options being read.
    pub(super) chars: Option<&'a str>,
    pub(super) leftovers: Vec<&'a str>,
    pub(super) rest_are_args: bool,
}

impl<'a> Scanner<'a> {
    pub(super) fn new(argv: &'a [&'a str]) -> Self {
        Scanner {
            argv,
            next: 1,
            chars: None,
            leftovers: Vec::new(),
            rest_are_args: false,
        }
    }

    /// The argv word popt names in its messages (the last one consumed).
    pub(super) fn bad_option(&self) -> &'a str {
        if self.next > 0 && self.next <= self.argv.len() {
            self.argv[self.next - 1]
        } else {
            ""
        }
    }

    pub(super) fn take_arg(&mut self, arg: Arg) -> Result<Option<&'a str>, &'static str> {
        match arg {
            Arg::None => Ok(None),
            Arg::Required => {
                if self.next >= self.argv.len() {
                    return Err("missing argument");
                }
                self.next += 1;
                Ok(Some(self.argv[self.next - 1]))
            }
            Arg::Optional => {
                if self.next >= self.argv.len() || self.argv[self.next].starts_with('-') {
                    return Ok(None);
                }
                self.next += 1;
                Ok(Some(self.argv[self.next - 1]))
            }
        }
    }

    pub(super) fn next_opt(&mut self) -> Scan<'a> {
        if let Some(rest) = self.chars.take() {
            return self.short(rest);
        }
        loop {
            if self.next >= self.argv.len() {
                return Scan::End;
            }
            let word = self.argv[self.next];
            self.next += 1;
            // The usual word first: a short option (`-a`, `-t`), not after
            // `--`.
            let b = word.as_bytes();
            if b.len() > 1 && b[0] == b'-' && b[1] != b'-' && !self.rest_are_args {
                return self.short(&word[1..]);
            }
            if self.rest_are_args {
                self.leftovers.push(word);
                continue;
            }
            if word == "--" {
                self.rest_are_args = true;
                continue;
            }
            if let Some(long) = word.strip_prefix("--") {
                let (name, value) = match long.find('=') {
                    Some(i) => (&long[..i], Some(&long[i + 1..])),
                    None => (long, None),
                };
                let Some(&(_, _, arg, opt)) = OPTIONS.iter().find(|o| o.0 == name) else {
                    return Scan::Error("unknown option");
                };
                return match (arg, value) {
                    (Arg::None, Some(_)) => Scan::Error("option does not take an argument"),
                    (_, Some(v)) => Scan::Opt(opt, Some(v)),
                    (arg, None) => match self.take_arg(arg) {
                        Ok(v) => Scan::Opt(opt, v),
                        Err(e) => Scan::Error(e),
                    },
                };
            }
            if word.len() > 1 && word.starts_with('-') {
                return self.short(&word[1..]);
            }
            self.leftovers.push(word);
        }
    }

    pub(super) fn short(&mut self, chars: &'a str) -> Scan<'a> {
        let c = chars.as_bytes()[0];
        let Some(&(_, _, arg, opt)) = short_option(c) else {
            return Scan::Error("unknown option");
        };
        // The rest of the bundle (c may be a multi-byte char only if it was
        // not found, so slicing at 1 is safe here).
        let rest = &chars[1..];
        if arg == Arg::None {
            if !rest.is_empty() {
                self.chars = Some(rest);
            }
            return Scan::Opt(opt, None);
        }
        if !rest.is_empty() {
            let v = rest.strip_prefix('=').unwrap_or(rest);
            return Scan::Opt(opt, Some(v));
        }
        match self.take_arg(arg) {
            Ok(v) => Scan::Opt(opt, v),
            Err(e) => Scan::Error(e),
        }
    }
}

pub(super) fn scan_error(scanner: &Scanner<'_>, what: &str) -> ArgError {
    ArgError::popt(format!("{}: {what}", scanner.bad_option()))
}
