//! Reading the desired state: `current`, then the generation it names at
//! the same revision, checked against `current`'s count and digest, then
//! parsed. A reader never sees half of a publish: `current` names a
//! generation only once all of it is stored.

use etcd_client::GetOptions;

use crate::config::Config;
use crate::fleet::connect::Etcd;
use crate::fleet::current::Current;
use crate::fleet::errors::FleetError;
use crate::fleet::layout::{verify_with, Layout};
use crate::fleet::values::ParseCache;

/// Keys read per request when a generation is read.
pub const PAGE: i64 = 1000;

/// A complete generation as read.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Snapshot {
    /// Its number.
    pub generation: u64,
    /// The configuration it holds.
    pub config: Config,
    /// The store's revision it was read at: a watch resumes after it.
    pub revision: i64,
    /// The revision `current` was last written at (the publish's flip).
    pub current_revision: i64,
}

/// What a read of `current` found: the record and its own mod revision
/// (`None`: nothing published), and the store's revision read at.
pub type CurrentAt = (Option<(Current, i64)>, i64);

impl Snapshot {
    /// A snapshot of `config`, generation `generation`, read at `revision`.
    pub fn new(generation: u64, config: Config, revision: i64, current_revision: i64) -> Self {
        Snapshot {
            generation,
            config,
            revision,
            current_revision,
        }
    }
}

/// The `current` record at `revision` (`None`: the latest).
pub async fn read_current(
    etcd: &Etcd,
    layout: &Layout,
    revision: Option<i64>,
) -> Result<CurrentAt, FleetError> {
    let mut client = etcd.client();
    let key = layout.current();
    let options = revision.map(|r| GetOptions::new().with_revision(r));
    let response = etcd
        .call("read `current`", client.get(key.clone(), options))
        .await
        .map_err(|e| compacted(e, revision.unwrap_or(0)))?;
    // A response's header has the store's latest revision, also for a
    // read at an older one.
    let at = revision.unwrap_or_else(|| response.header().map_or(0, |h| h.revision()));
    let Some(kv) = response.kvs().first() else {
        return Ok((None, at));
    };
    let text = std::str::from_utf8(kv.value()).map_err(|e| FleetError::BadCurrent {
        key: key.clone(),
        message: format!("not UTF-8: {e}"),
    })?;
    let current = Current::parse(text).map_err(|message| FleetError::BadCurrent {
        key: key.clone(),
        message,
    })?;
    Ok((Some((current, kv.mod_revision())), at))
}

/// The entries of generation `n` at `revision`, keys relative to the
/// generation, in key order (read in pages of [`PAGE`] keys).
pub async fn read_entries(
    etcd: &Etcd,
    layout: &Layout,
    n: u64,
    revision: i64,
) -> Result<Vec<(String, Vec<u8>)>, FleetError> {
    let mut client = etcd.client();
    let base = layout.generation(n);
    let end = Layout::range_end(&base);
    let mut from = base.clone().into_bytes();
    let mut out = Vec::new();
    loop {
        let options = GetOptions::new()
            .with_range(end.clone())
            .with_revision(revision)
            .with_limit(PAGE);
        let response = etcd
            .call("read a generation", client.get(from.clone(), Some(options)))
            .await
            .map_err(|e| compacted(e, revision))?;
        for kv in response.kvs() {
            let key = String::from_utf8_lossy(kv.key());
            let relative = key.strip_prefix(&base).unwrap_or(&key).to_string();
            out.push((relative, kv.value().to_vec()));
        }
        match response.kvs().last() {
            Some(last) if response.more() => {
                from = last.key().to_vec();
                from.push(0);
            }
            _ => return Ok(out),
        }
    }
}

/// The generation `current` names, read at `revision` and verified; the
/// values `cache` has (the last generation's) are not parsed again.
pub async fn read_generation(
    etcd: &Etcd,
    layout: &Layout,
    current: &Current,
    revision: i64,
    cache: &mut ParseCache,
) -> Result<Config, FleetError> {
    let entries = read_entries(etcd, layout, current.generation, revision).await?;
    verify_with(layout, current, &entries, cache)
}

/// The complete generation under the prefix now (or at `revision`).
///
/// Errors: [`FleetError::NothingPublished`], [`FleetError::Incomplete`]
/// (count or digest differ), [`FleetError::Value`] (a key whose value
/// does not parse), [`FleetError::Unreachable`].
pub async fn read(
    etcd: &Etcd,
    layout: &Layout,
    revision: Option<i64>,
) -> Result<Snapshot, FleetError> {
    let (Some((current, current_revision)), at) = read_current(etcd, layout, revision).await?
    else {
        return Err(FleetError::NothingPublished {
            prefix: layout.prefix.clone(),
        });
    };
    let config = read_generation(etcd, layout, &current, at, &mut ParseCache::new()).await?;
    Ok(Snapshot {
        generation: current.generation,
        config,
        revision: at,
        current_revision,
    })
}

/// etcd's "required revision has been compacted" as its own error.
fn compacted(e: FleetError, revision: i64) -> FleetError {
    match e {
        FleetError::Etcd { message, .. } if message.contains("compacted") => {
            FleetError::Compacted { revision }
        }
        other => other,
    }
}
