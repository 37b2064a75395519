//! `ipvs-agent publish FILE --etcd URL[,URL...] [--prefix P] [--cache
//! PATH | --no-cache]`: its flags read into the fleet's [`PublishArgs`],
//! then the file published ([`crate::fleet::publish::file`]) on a runtime of
//! its own, and the outcome said: one line on stdout when published
//! (exit 0), each of the file's errors on stderr at its line (exit 1),
//! a usage error (exit 2).

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Instant;

use crate::cli::runtime::command_runtime;
use crate::cli::usage::UsageError;
use crate::config::LoadError;
use crate::fleet::errors::FleetError;
use crate::fleet::publish::cache::default_path;
use crate::fleet::publish::file::{publish_ready, read_file, PublishArgs, DEFAULT_PREFIX};
use crate::fleet::publish::write::PublishOptions;

/// Reads the arguments after `publish` into what a publish is given.
///
/// ```
/// use ipvs_agent::cli::parse_publish;
/// let a = parse_publish(&["a.toml", "--etcd", "http://10.0.0.1:2379,http://10.0.0.2:2379"]).unwrap();
/// assert_eq!(a.endpoints.len(), 2);
/// assert_eq!(a.prefix, "/ipvs-agent");
/// assert!(a.cache.is_some());
/// let b = parse_publish(&["a.toml", "--etcd", "http://e:2379", "--no-cache"]).unwrap();
/// assert_eq!(b.cache, None);
/// assert_eq!(
///     parse_publish(&["a.toml"]).unwrap_err().to_string(),
///     "publish needs --etcd URL[,URL...]"
/// );
/// ```
pub fn parse_publish(args: &[&str]) -> Result<PublishArgs, UsageError> {
    let (mut file, mut endpoints, mut prefix) = (None, None, None);
    let (mut cache, mut no_cache) = (None, false);
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
            "--cache" => cache = Some(PathBuf::from(value("--cache")?)),
            "--no-cache" => no_cache = true,
            flag if flag.starts_with('-') => {
                return Err(UsageError(format!("unknown option {flag}")))
            }
            f if file.is_none() => file = Some(PathBuf::from(f)),
            extra => return Err(UsageError(format!("unexpected argument {extra}"))),
        }
    }
    if no_cache && cache.is_some() {
        return Err(UsageError(
            "--cache and --no-cache exclude each other".into(),
        ));
    }
    let prefix = prefix_value(prefix)?;
    Ok(PublishArgs {
        file: file.ok_or_else(|| UsageError("publish needs a configuration FILE".into()))?,
        endpoints: endpoints
            .ok_or_else(|| UsageError("publish needs --etcd URL[,URL...]".into()))?,
        cache: (!no_cache).then(|| cache.unwrap_or_else(|| default_path(&prefix))),
        prefix,
    })
}

/// `--etcd`'s value as a list (no empty entry).
fn endpoint_list(value: &str) -> Result<Vec<String>, UsageError> {
    let list: Vec<String> = value.split(',').map(|s| s.trim().to_string()).collect();
    if list.iter().any(String::is_empty) {
        return Err(UsageError(format!(
            "--etcd: \"{value}\" has an empty endpoint"
        )));
    }
    Ok(list)
}

/// `--prefix`'s value, or the default; it starts with `/`.
fn prefix_value(prefix: Option<String>) -> Result<String, UsageError> {
    let p = prefix.unwrap_or_else(|| DEFAULT_PREFIX.to_string());
    if !p.starts_with('/') || p.trim_end_matches('/').is_empty() {
        return Err(UsageError(format!(
            "--prefix: \"{p}\" must start with / and name something"
        )));
    }
    Ok(p)
}

/// Runs `publish` for the arguments after it: exit 0 when published, 1 on
/// an error (each of the file's on its line), 2 on a usage error.
pub(super) fn publish_args(args: &[&str]) -> ExitCode {
    let args = match parse_publish(args) {
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
    let ready = read_file(&args);
    let checked = started.elapsed();
    let (mut parsed, mut services) = (0, 0);
    let result = match ready {
        Ok(r) => {
            (parsed, services) = (r.parsed, r.services);
            runtime.block_on(publish_ready(&args, r, PublishOptions::default()))
        }
        Err(e) => Err(e),
    };
    let reused = if parsed == services {
        format!("all {services} services parsed")
    } else {
        format!("{parsed} of {services} services parsed, the others known from the cache")
    };
    match result {
        Ok(p) => {
            println!(
                "{}: generation {} published under {}: {} services ({} entries put, {} deleted), {} transactions, {} bytes, {} ms (the file read and checked in {} ms; {reused})",
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
