//! `ipvs-agent publish FILE --etcd URL[,URL...] [--prefix P] [--cache
//! PATH | --no-cache]`: its flags, as clap read them (`args.rs`), made
//! into the fleet's [`PublishArgs`],
//! then the file published ([`crate::fleet::publish::file`]) on a runtime of
//! its own, and the outcome said: one line on stdout when published
//! (exit 0), each of the file's errors on stderr at its line (exit 1),
//! a usage error (exit 2).

use std::process::ExitCode;
use std::time::Instant;

use crate::cli::args::{parse, AgentCommand, PublishFlags};
use crate::cli::runtime::command_runtime;
use crate::cli::usage::UsageError;
use crate::config::LoadError;
use crate::fleet::errors::FleetError;
use crate::fleet::publish::cache::default_path;
use crate::fleet::publish::file::{publish_ready, read_file, PublishArgs, DEFAULT_PREFIX};
use crate::fleet::publish::write::PublishOptions;

/// Reads the arguments after `publish` into what a publish is given
/// (clap's errors, such as a missing `--etcd`, as a [`UsageError`] of
/// clap's words).
///
/// ```
/// use ipvs_agent::cli::parse_publish;
/// let a = parse_publish(&["a.toml", "--etcd", "http://10.0.0.1:2379,http://10.0.0.2:2379"]).unwrap();
/// assert_eq!(a.endpoints.len(), 2);
/// assert_eq!(a.prefix, "/ipvs-agent");
/// assert!(a.cache.is_some());
/// let b = parse_publish(&["a.toml", "--etcd", "http://e:2379", "--no-cache"]).unwrap();
/// assert_eq!(b.cache, None);
/// let e = parse_publish(&["a.toml"]).unwrap_err().to_string();
/// assert!(e.contains("--etcd <URL[,URL...]>"), "{e}");
/// ```
pub fn parse_publish(args: &[&str]) -> Result<PublishArgs, UsageError> {
    let cli = parse(std::iter::once("publish").chain(args.iter().copied()))?;
    match cli.command {
        AgentCommand::Publish(flags) => publish_flags(flags),
        _ => unreachable!("parsed as `publish`"),
    }
}

/// What a publish is given for `flags`, their values checked.
pub(super) fn publish_flags(f: PublishFlags) -> Result<PublishArgs, UsageError> {
    let prefix = prefix_value(f.prefix)?;
    Ok(PublishArgs {
        file: f.file,
        endpoints: endpoint_list(&f.etcd)?,
        cache: (!f.no_cache).then(|| f.cache.unwrap_or_else(|| default_path(&prefix))),
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

/// Runs `publish` for its flags: exit 0 when published, 1 on an error
/// (each of the file's on its line), 2 on a usage error.
pub(super) fn publish(flags: PublishFlags) -> ExitCode {
    let args = match publish_flags(flags) {
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
