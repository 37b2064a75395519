//! What is wrong with a command line: a [`UsageError`], said on stderr
//! after the command's name, exit status 2: a value or a combination of
//! flags the commands refuse, or clap's words for a line it cannot read.
//! Only the commands layer makes one; the engines ([`crate::daemon`],
//! `crate::fleet`) take options already checked.

use std::fmt;

/// What is wrong with a command line.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct UsageError(pub String);

impl fmt::Display for UsageError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for UsageError {}

impl From<clap::Error> for UsageError {
    /// clap's words for a bad command line (an unknown flag and the
    /// nearest one, a missing value), without its usage lines.
    fn from(e: clap::Error) -> Self {
        let text = e.to_string();
        let text = text.strip_prefix("error: ").unwrap_or(&text);
        let text = text.split("\n\nUsage:").next().unwrap_or(text);
        UsageError(text.trim_end().to_string())
    }
}
