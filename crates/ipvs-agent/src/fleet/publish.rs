//! `ipvs-agent publish FILE --etcd URL[,URL...] [--prefix P]`: the file
//! validated whole (nothing is written from a file with any error), then
//! written as the next generation under the prefix.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Instant;

use crate::config::{self, Config, LoadError};
use crate::daemon::runtime::command_runtime;
use crate::daemon::UsageError;
use crate::fleet::connect::Etcd;
use crate::fleet::errors::FleetError;
use crate::fleet::layout::Layout;
use crate::fleet::write::{publish, PublishOptions, Published};

/// The prefix when `--prefix` is not given.
pub const DEFAULT_PREFIX: &str = "/ipvs-agent";

/// `publish`'s command line.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct PublishArgs {
    /// The configuration file.
    pub file: PathBuf,
    /// The etcd endpoints (`--etcd`, comma-separated).
    pub endpoints: Vec<String>,
    /// The prefix (`--prefix`, default [`DEFAULT_PREFIX`]).
    pub prefix: String,
}

impl PublishArgs {
    /// Parses the arguments after `publish`.
    ///
    /// ```
    /// use ipvs_agent::fleet::publish::PublishArgs;
    /// let a = PublishArgs::parse(&["a.toml", "--etcd", "http://10.0.0.1:2379,http://10.0.0.2:2379"]).unwrap();
    /// assert_eq!(a.endpoints.len(), 2);
    /// assert_eq!(a.prefix, "/ipvs-agent");
    /// assert_eq!(
    ///     PublishArgs::parse(&["a.toml"]).unwrap_err().to_string(),
    ///     "publish needs --etcd URL[,URL...]"
    /// );
    /// ```
    pub fn parse(args: &[&str]) -> Result<Self, UsageError> {
        let (mut file, mut endpoints, mut prefix) = (None, None, None);
        let mut it = args.iter();
        while let Some(arg) = it.next() {
            let mut value = |name: &str| {
                it.next()
                    .map(|v| (*v).to_string())
                    .ok_or_else(|| UsageError(format!("{name} needs a value")))
            };
            match *arg {
                "--etcd" => endpoints = Some(endpoint_list(&value("--etcd")?)?),
                "--prefix" => prefix = Some(value("--prefix")?),
                flag if flag.starts_with('-') => {
                    return Err(UsageError(format!("unknown option {flag}")))
                }
                f if file.is_none() => file = Some(PathBuf::from(f)),
                extra => return Err(UsageError(format!("unexpected argument {extra}"))),
            }
        }
        Ok(PublishArgs {
            file: file.ok_or_else(|| UsageError("publish needs a configuration FILE".into()))?,
            endpoints: endpoints
                .ok_or_else(|| UsageError("publish needs --etcd URL[,URL...]".into()))?,
            prefix: prefix_value(prefix)?,
        })
    }
}

/// `--etcd`'s value as a list (no empty entry).
pub fn endpoint_list(value: &str) -> Result<Vec<String>, UsageError> {
    let list: Vec<String> = value.split(',').map(|s| s.trim().to_string()).collect();
    if list.iter().any(String::is_empty) {
        return Err(UsageError(format!(
            "--etcd: \"{value}\" has an empty endpoint"
        )));
    }
    Ok(list)
}

/// `--prefix`'s value, or the default; it starts with `/`.
pub fn prefix_value(prefix: Option<String>) -> Result<String, UsageError> {
    let p = prefix.unwrap_or_else(|| DEFAULT_PREFIX.to_string());
    if !p.starts_with('/') || p.trim_end_matches('/').is_empty() {
        return Err(UsageError(format!(
            "--prefix: \"{p}\" must start with / and name something"
        )));
    }
    Ok(p)
}

/// Validates the file, then publishes it; [`FleetError::File`] when the
/// file cannot be read or has errors (then nothing is written).
pub async fn publish_file(
    args: &PublishArgs,
    options: PublishOptions,
) -> Result<Published, FleetError> {
    let config = config::load(&args.file).map_err(FleetError::File)?;
    publish_config(args, &config, options).await
}

/// Publishes `config` (validated already) to the cluster and prefix of
/// `args`.
pub async fn publish_config(
    args: &PublishArgs,
    config: &Config,
    options: PublishOptions,
) -> Result<Published, FleetError> {
    let etcd = Etcd::connect(&args.endpoints).await?;
    publish(&etcd, &Layout::new(&args.prefix), config, options).await
}

/// Runs `publish` for the arguments after it: exit 0 when published, 1 on
/// an error (each of the file's on its line), 2 on a usage error.
pub fn publish_args(args: &[&str]) -> ExitCode {
    let args = match PublishArgs::parse(args) {
        Ok(a) => a,
        Err(e) => {
            eprintln!("ipvs-agent publish: {e}");
            return ExitCode::from(2);
        }
    };
    let runtime = match command_runtime() {
        Ok(r) => r,
        Err(code) => return code,
    };
    let started = Instant::now();
    let result = config::load(&args.file).map_err(FleetError::File);
    let checked = started.elapsed();
    let result = match result {
        Ok(c) => runtime.block_on(publish_config(&args, &c, PublishOptions::default())),
        Err(e) => Err(e),
    };
    match result {
        Ok(p) => {
            println!(
                "{}: generation {} published under {}: {} services ({} entries put, {} deleted), {} transactions, {} bytes, {} ms (the file read and checked in {} ms)",
                args.file.display(),
                p.generation,
                args.prefix,
                p.services,
                p.puts,
                p.deletes,
                p.transactions,
                p.bytes,
                started.elapsed().as_millis(),
                checked.as_millis()
            );
            ExitCode::SUCCESS
        }
        Err(FleetError::File(LoadError::Invalid(errors))) => {
            for line in errors.lines() {
                eprintln!("{line}");
            }
            eprintln!(
                "{}: {} error{}, nothing published",
                args.file.display(),
                errors.len(),
                if errors.len() == 1 { "" } else { "s" }
            );
            ExitCode::from(1)
        }
        Err(e) => {
            eprintln!("ipvs-agent publish: {e}");
            ExitCode::from(1)
        }
    }
}
