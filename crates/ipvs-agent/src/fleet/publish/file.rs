//! A file published (`ipvs-agent publish FILE --etcd URL[,URL...]
//! [--prefix P]`, whose flags the command layer reads into
//! [`PublishArgs`]): the file validated whole (nothing is written from a
//! file with any error), then written as the next generation under the
//! prefix.

use std::path::PathBuf;

use crate::config::{Config, LoadError};
use crate::fleet::errors::FleetError;
use crate::fleet::publish::cache::Cache;
use crate::fleet::publish::incremental::{prepare, Prepared};
use crate::fleet::publish::write::{publish, publish_staged, PublishOptions, Published};
use crate::fleet::store::etcd::Etcd;
use crate::fleet::store::layout::Layout;

/// The prefix when `--prefix` is not given.
pub const DEFAULT_PREFIX: &str = "/ipvs-agent";

/// What a publish of a file is given (the command layer fills it from
/// `publish`'s command line).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct PublishArgs {
    /// The configuration file.
    pub file: PathBuf,
    /// The etcd endpoints (`--etcd`, comma-separated).
    pub endpoints: Vec<String>,
    /// The prefix (`--prefix`, default [`DEFAULT_PREFIX`]).
    pub prefix: String,
    /// Where the publisher's cache is kept (`--cache PATH`, default
    /// [`default_path`](crate::fleet::publish::cache::default_path) of the prefix); `None` with `--no-cache` (every
    /// service read).
    pub cache: Option<PathBuf>,
}

/// Validates the file, then publishes it; [`FleetError::File`] when the
/// file cannot be read or has errors (then nothing is written). The cache
/// at `args.cache` spares the services it knows their parse, and is
/// updated.
pub async fn publish_file(
    args: &PublishArgs,
    options: PublishOptions,
) -> Result<Published, FleetError> {
    let ready = read_file(args)?;
    publish_ready(args, ready, options).await
}

/// The file of `args` read and made ready ([`prepare`]), with the cache
/// at `args.cache`.
pub fn read_file(args: &PublishArgs) -> Result<Prepared, FleetError> {
    let file = args.file.display().to_string();
    let text = std::fs::read_to_string(&args.file).map_err(|source| {
        FleetError::File(LoadError::Read {
            file: file.clone(),
            source,
        })
    })?;
    let cache = args
        .cache
        .as_deref()
        .and_then(|path| std::fs::read_to_string(path).ok())
        .and_then(|text| Cache::parse(&text));
    prepare(&file, text.into(), cache).map_err(|e| FleetError::File(LoadError::Invalid(e)))
}

/// Publishes a file made ready by [`read_file`], then keeps its cache at
/// `args.cache` (removes it when it proved wrong: [`FleetError::Stale`]).
pub async fn publish_ready(
    args: &PublishArgs,
    ready: Prepared,
    options: PublishOptions,
) -> Result<Published, FleetError> {
    let Prepared {
        mut staged,
        cache,
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
    let keep = match (&result, cache) {
        (Err(FleetError::Stale { .. }), _) => {
            let _ = std::fs::remove_file(path);
            None
        }
        // What this publish stored, for the next.
        (Ok(p), Some(mut cache)) => {
            cache.stored = Some((p.revision, args.prefix.clone()));
            Some(cache)
        }
        // Nothing known stored: the sections read, if any.
        (Err(_), Some(cache)) if parsed > 0 => Some(cache),
        _ => None,
    };
    if let Some(cache) = keep {
        if let Err(e) = cache.save(path) {
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
