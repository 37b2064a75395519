//! `ipvs-agent check FILE`: the file validated and what it would
//! configure printed (exit 0); each error at its line and column on
//! stderr (exit 1). Nothing is started, nothing reaches the kernel.

use std::path::Path;
use std::process::ExitCode;

use crate::config::{self, LoadError};
use crate::render::render;

/// Checks the configuration `path`: exit 0 when valid (its rendering on
/// stdout), 1 when it cannot be read or has errors.
pub(super) fn check(path: &Path) -> ExitCode {
    match config::load(path) {
        Ok(c) => {
            print!("{}", render(&c));
            let servers: usize = c.services.iter().map(|s| s.servers.len()).sum();
            eprintln!(
                "{}: valid: {} services, {servers} real servers",
                path.display(),
                c.services.len()
            );
            ExitCode::SUCCESS
        }
        Err(LoadError::Invalid(errors)) => {
            for line in errors.lines() {
                eprintln!("{line}");
            }
            eprintln!(
                "{}: {} error{}, nothing accepted",
                path.display(),
                errors.len(),
                if errors.len() == 1 { "" } else { "s" }
            );
            ExitCode::from(1)
        }
        Err(e) => {
            eprintln!("ipvs-agent: {e}");
            ExitCode::from(1)
        }
    }
}
