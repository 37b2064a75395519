//! `ipvs-agent publish FILE --etcd URL[,URL...] [--prefix P]`: the file
//! validated whole (nothing is written from a file with any error), then
//! written as the next generation under the prefix.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Instant;

use crate::config::{Config, LoadError};
use crate::daemon::runtime::command_runtime;
use crate::daemon::UsageError;
use crate::fleet::connect::Etcd;
use crate::fleet::errors::FleetError;
use crate::fleet::layout::Layout;
use crate::fleet::memo::{default_path, Memo};
use crate::fleet::prepare::{prepare, Prepared};
use crate::fleet::write::{publish, publish_staged, PublishOptions, Published};

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
    /// Where the publisher's memo is kept (`--cache PATH`, default
    /// [`default_path`] of the prefix); `None` with `--no-cache` (every
    /// service read).
    pub cache: Option<PathBuf>,
}

impl PublishArgs {
    /// Parses the arguments after `publish`.
    ///
    /// ```
    /// use ipvs_agent::fleet::publish::PublishArgs;
    /// let a = PublishArgs::parse(&["a.toml", "--etcd", "http://10.0.0.1:2379,http://10.0.0.2:2379"]).unwrap();
    /// assert_eq!(a.endpoints.len(), 2);
    /// assert_eq!(a.prefix, "/ipvs-agent");
    /// assert!(a.cache.is_some());
    /// let b = PublishArgs::parse(&["a.toml", "--etcd", "http://e:2379", "--no-cache"]).unwrap();
    /// assert_eq!(b.cache, None);
    /// assert_eq!(
    ///     PublishArgs::parse(&["a.toml"]).unwrap_err().to_string(),
    ///     "publish needs --etcd URL[,URL...]"
    /// );
    /// ```
    pub fn parse(args: &[&str]) -> Result<Self, UsageError> {
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
/// file cannot be read or has errors (then nothing is written). The memo
/// at `args.cache` spares the services it knows their parse, and is
/// updated.
pub async fn publish_file(
    args: &PublishArgs,
    options: PublishOptions,
) -> Result<Published, FleetError> {
    let ready = read_file(args)?;
    publish_ready(args, ready, options).await
}

/// The file of `args` read and made ready ([`prepare`]), with the memo
/// at `args.cache`.
pub fn read_file(args: &PublishArgs) -> Result<Prepared, FleetError> {
    let file = args.file.display().to_string();
    let text = std::fs::read_to_string(&args.file).map_err(|source| {
        FleetError::File(LoadError::Read {
            file: file.clone(),
            source,
        })
    })?;
    let memo = args
        .cache
        .as_deref()
        .and_then(|path| std::fs::read_to_string(path).ok())
        .and_then(|text| Memo::parse(&text));
    prepare(&file, text.into(), memo).map_err(|e| FleetError::File(LoadError::Invalid(e)))
}

/// Publishes a file made ready by [`read_file`], then keeps its memo at
/// `args.cache` (removes it when it proved wrong: [`FleetError::Stale`]).
pub async fn publish_ready(
    args: &PublishArgs,
    ready: Prepared,
    options: PublishOptions,
) -> Result<Published, FleetError> {
    let Prepared {
        mut staged,
        memo,
        parsed,
        stored,
        ..
    } = ready;
    if let Some((revision, prefix, keys)) = stored {
        if prefix == args.prefix {
            staged = staged.presuming(revision, keys);
        }
    }
    let etcd = Etcd::connect(&args.endpoints).await;
    let result = match etcd {
        Ok(etcd) => publish_staged(&etcd, &Layout::new(&args.prefix), &staged, options).await,
        Err(e) => Err(e),
    };
    let Some(path) = &args.cache else {
        return result;
    };
    let keep = match (&result, memo) {
        (Err(FleetError::Stale { .. }), _) => {
            let _ = std::fs::remove_file(path);
            None
        }
        // What this publish stored, for the next.
        (Ok(p), Some(mut memo)) => {
            memo.stored = Some((p.revision, args.prefix.clone()));
            Some(memo)
        }
        // Nothing known stored: the sections read, if any.
        (Err(_), Some(memo)) if parsed > 0 => Some(memo),
        _ => None,
    };
    if let Some(memo) = keep {
        if let Err(e) = memo.save(path) {
            eprintln!(
                "ipvs-agent publish: cannot keep the cache {}: {e} (the next publish reads every service)",
                path.display()
            );
        }
    }
    result
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
