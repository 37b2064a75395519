//! ipvsadm 1.31's command-line grammar: popt-style option scanning, the
//! per-command option table, value checks, and the messages and exit
//! statuses ipvsadm gives for each mistake.
//!
//! [`parse_args`] reads one command line; [`crate::restore`] reads a whole
//! `-R` text with it, line by line.

mod build;
mod checks;
mod command;
mod common;
mod entry;
mod options;
mod parse;
mod scanner;
mod values;

pub(crate) use command::{ArgError, Command, ListFormat, ListWhat};
pub(crate) use parse::parse_args;

#[cfg(test)]
mod tests;
