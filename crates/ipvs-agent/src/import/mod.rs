//! `ipvs-agent import keepalived`: a keepalived.conf (keepalived 2.2.7's
//! language: blocks, `!` and `#` comments, `include` with globs, quoted
//! strings) converted into the agent's file.
//!
//! Every line is accounted for: mapped; mapped with a changed meaning (a
//! `#` comment in the output and a [`Note`] at its FILE:LINE); not
//! supported (a note saying why); or outside the load balancer (VRRP,
//! `global_defs`: a note, and a summary of the fleet mode's flags). A
//! keyword keepalived does not know, unbalanced braces, a `real_server`
//! outside a `virtual_server`, a missing or circular `include` are
//! [`ImportErrors`], each at its line, and then nothing is produced. The
//! file produced is checked by the agent's own parser
//! ([`crate::config::parse_str`]) before it is returned.
//!
//! ```
//! use std::path::PathBuf;
//! use ipvs_agent::import::{keepalived, MemFiles};
//! let mut files = MemFiles::default();
//! files.files.insert(PathBuf::from("k.conf"), "
//! virtual_server 192.0.2.1 80 {
//!     lb_algo wrr
//!     lb_kind DR
//!     real_server 10.0.0.1 80 {
//!         weight 3
//!         TCP_CHECK { connect_timeout 2 }
//!     }
//! }".to_string());
//! let out = keepalived(&files, "k.conf".as_ref()).unwrap();
//! let config = ipvs_agent::config::parse_str("out.toml", &out.toml).unwrap();
//! assert_eq!(config.services[0].servers[0].destination.weight, 3);
//! ```

mod checker;
mod convert;
mod files;
mod forward;
mod glob;
mod group;
mod includes;
mod keywords;
mod lexer;
mod numbers;
mod output;
mod outside;
mod report;
mod server;
mod service;
mod timing;
mod tree;
mod writer;

use std::path::Path;

pub use files::{DiskFiles, Files, MemFiles};
pub use report::{ImportError, ImportErrors, Note, NoteKind, Place};

/// An import's result.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Import {
    /// The agent's file (accepted by [`crate::config::parse_str`]).
    pub toml: String,
    /// The warnings, in the order of the input's lines.
    pub notes: Vec<Note>,
    /// What to run instead of keepalived's VRRP (the fleet mode's
    /// command line), if the input has any; also in the file's header.
    pub summary: Vec<String>,
    /// How many services the file has.
    pub services: usize,
}

/// Imports the keepalived configuration `path`, its includes read through
/// `files` ([`DiskFiles`] for the disk).
pub fn keepalived(files: &dyn Files, path: &Path) -> Result<Import, ImportErrors> {
    convert::import(files, path)
}
