//! The configuration file: TOML read into the model ([`Config`]), every
//! error of a file at its line and column ([`ConfigErrors`]), nothing
//! accepted from a file with any error.
//!
//! ```
//! let text = r#"
//! [[service]]
//! protocol = "tcp"
//! address = "192.0.2.1"
//! port = 80
//! [[service.server]]
//! address = "10.0.0.2"
//! "#;
//! let config = ipvs_agent::config::parse_str("agent.toml", text).unwrap();
//! assert_eq!(config.services[0].servers.len(), 1);
//!
//! let bad = "[[service]]\nprotocol = \"tcp\"\naddress = \"192.0.2.1\"\nport = 70000\n\
//!            [[service.server]]\naddress = \"10.0.0.2\"\nweight = -1\n";
//! let e = ipvs_agent::config::parse_str("agent.toml", bad).unwrap_err();
//! assert_eq!(
//!     e.to_string(),
//!     "agent.toml:4:8: `port` must be an integer from 0 to 65535, found 70000\n\
//!      agent.toml:7:10: `weight` must be an integer from 0 to 2147483647, found -1"
//! );
//! ```

pub(crate) mod check_parse;
mod duration;
mod errors;
mod file;
mod model;
mod parse;
#[cfg(feature = "fleet")]
pub(crate) mod pieces;
mod read;
#[cfg(feature = "fleet")]
pub(crate) mod sections;
mod server_parse;
mod source;
mod validate;

use std::path::Path;

pub use check_parse::RISE_FALL_MAX;
pub use duration::{parse_duration, FILE_DURATIONS};
pub use errors::{ConfigError, ConfigErrors, LoadError};
pub use file::MAX_FILE_BYTES;
pub use model::{
    AgentSettings, Below, CheckKind, Config, DnsCheck, HealthCheck, HttpCheck, Quorum, RealServer,
    StartState, Tls, VirtualService,
};

use source::Diagnostics;

/// Reads a configuration from `text`; `file` is the name errors give.
///
/// Syntax errors are all reported (the TOML parser recovers after each);
/// the meaning of the file is checked only when its syntax is sound, and
/// then every error is reported too. Either way nothing is returned but
/// the errors.
pub fn parse_str(file: &str, text: &str) -> Result<Config, ConfigErrors> {
    let mut d = Diagnostics::new(file, text);
    let (root, syntax) = toml::de::DeTable::parse_recoverable(text);
    let mut parsed = None;
    if syntax.is_empty() {
        let root = toml::Spanned::new(root.span(), toml::de::DeValue::Table(root.into_inner()));
        parsed = parse::document(&mut d, &root);
        if let Some((config, spans)) = &parsed {
            validate::cross_checks(&mut d, text, config, spans);
        }
    }
    for e in &syntax {
        let span = e.span().unwrap_or(0..0);
        d.error(&span, format!("TOML syntax: {}", e.message().trim_end()));
    }
    d.finish()?;
    match parsed {
        Some((config, _)) => Ok(config),
        // Not reached: a document that could not be read recorded why.
        None => Err(ConfigErrors {
            errors: vec![ConfigError {
                file: file.to_string(),
                line: 1,
                column: 1,
                message: "the file could not be read".to_string(),
            }],
        }),
    }
}

/// Reads and checks the configuration file at `path`: a regular file
/// (a FIFO, a device or a directory is refused at once, never waited on)
/// of at most [`MAX_FILE_BYTES`].
pub fn load(path: &Path) -> Result<Config, LoadError> {
    let file = path.display().to_string();
    let text = file::read_text(path).map_err(|source| LoadError::Read {
        file: file.clone(),
        source,
    })?;
    parse_str(&file, &text).map_err(LoadError::Invalid)
}
