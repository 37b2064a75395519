//! Reading the desired state: `current`, then the entries at the same
//! revision, checked against `current`'s count and digest (or, when a
//! publish has written entries since `current`, the entries at
//! `current`'s own revision), then parsed. A reader never sees half of a
//! publish: `current` is written only once all of its entries are.

use std::borrow::Cow;
use std::collections::HashSet;

use etcd_client::GetOptions;

use crate::config::Config;
use crate::fleet::errors::FleetError;
use crate::fleet::store::current::Current;
use crate::fleet::store::current::Digests;
use crate::fleet::store::etcd::Etcd;
use crate::fleet::store::layout::{verify_with, Layout};
use crate::fleet::store::values::ParseCache;

/// Keys read per request when a generation is read.
pub const PAGE: i64 = 1000;
/// Keys read per request when only keys are read (a publisher's; about
/// 80 bytes each).
pub const KEYS_PAGE: i64 = 20_000;
/// The largest response this client takes from etcd (a page of values, a
/// watch response with a whole publish in it): 256 MiB.
pub const MAX_MESSAGE: usize = 256 << 20;

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

/// The keys and values (`keys_only`: empty values) in `[from, end)` at
/// `revision` (`None`: the latest), read in pages of [`PAGE`] keys
/// ([`KEYS_PAGE`] keys only) all at one revision; with the revision read at.
async fn range(
    etcd: &Etcd,
    from: &str,
    end: &str,
    revision: Option<i64>,
    keys_only: bool,
) -> Result<(Vec<(String, Vec<u8>)>, i64), FleetError> {
    let page = if keys_only { KEYS_PAGE } else { PAGE };
    let mut client = etcd
        .client()
        .kv_client()
        .max_decoding_message_size(MAX_MESSAGE);
    let mut at = revision;
    let mut key = from.as_bytes().to_vec();
    let mut out = Vec::new();
    loop {
        let mut options = GetOptions::new().with_range(end).with_limit(page);
        if let Some(r) = at {
            options = options.with_revision(r);
        }
        if keys_only {
            options = options.with_keys_only();
        }
        let response = etcd
            .call("read the entries", client.get(key.clone(), Some(options)))
            .await
            .map_err(|e| compacted(e, at.unwrap_or(0)))?;
        let r = *at.get_or_insert_with(|| response.header().map_or(0, |h| h.revision()));
        for kv in response.kvs() {
            // (`from_utf8` first: its ASCII path is many times faster than
            // `from_utf8_lossy`'s, which a key rarely needs.)
            let k = std::str::from_utf8(kv.key())
                .map_or_else(|_| String::from_utf8_lossy(kv.key()), Cow::Borrowed);
            let relative = k.strip_prefix(from).unwrap_or(&k).to_string();
            out.push((relative, kv.value().to_vec()));
        }
        match response.kvs().last() {
            Some(last) if response.more() => {
                key = last.key().to_vec();
                key.push(0);
            }
            _ => return Ok((out, r)),
        }
    }
}

/// The entries under `PREFIX/entries/` at `revision`, keys relative to it,
/// in key order (read in pages of [`PAGE`] keys).
pub async fn read_entries(
    etcd: &Etcd,
    layout: &Layout,
    revision: i64,
) -> Result<Vec<(String, Vec<u8>)>, FleetError> {
    let start = layout.entries();
    let end = Layout::range_end(&start);
    Ok(range(etcd, &start, &end, Some(revision), false).await?.0)
}

/// The keys under `PREFIX/entries/` now (relative to it, in key order),
/// without their values: what a publisher compares its entries with; with
/// the revision read at.
pub async fn read_keys(etcd: &Etcd, layout: &Layout) -> Result<(Vec<String>, i64), FleetError> {
    let start = layout.entries();
    let end = Layout::range_end(&start);
    let (kvs, at) = range(etcd, &start, &end, None, true).await?;
    Ok((kvs.into_iter().map(|(k, _)| k).collect(), at))
}

/// Entries written since `current` (a publish that died) a publisher
/// takes on its own, before it reads every key.
pub const LEFTOVERS_PAGE: i64 = 1000;

/// The keys under `PREFIX/entries/` now, when they are `presumed` (the
/// entries `current` names, last written at `since`) and those written
/// after `since`: the entries counted, and only those written since read
/// (keys only). `None` when the count is not theirs (an entry deleted
/// since) or more than [`LEFTOVERS_PAGE`] were written since: then the
/// caller reads every key ([`read_keys`]).
pub async fn keys_since(
    etcd: &Etcd,
    layout: &Layout,
    presumed: &[String],
    since: i64,
) -> Result<Option<Vec<String>>, FleetError> {
    let start = layout.entries();
    let end = Layout::range_end(&start);
    let mut client = etcd.client();
    let counted = etcd
        .call(
            "count the entries",
            client.get(
                start.as_str(),
                Some(GetOptions::new().with_range(end.as_str()).with_count_only()),
            ),
        )
        .await?;
    let at = counted.header().map_or(0, |h| h.revision());
    let later = etcd
        .call(
            "read the entries written since `current`",
            client.get(
                start.as_str(),
                Some(
                    GetOptions::new()
                        .with_range(end.as_str())
                        .with_keys_only()
                        .with_min_mod_revision(since + 1)
                        .with_revision(at)
                        .with_limit(LEFTOVERS_PAGE),
                ),
            ),
        )
        .await?;
    if later.more() {
        return Ok(None);
    }
    let mut keys = presumed.to_vec();
    if !later.kvs().is_empty() {
        let known: HashSet<&str, Digests> = presumed.iter().map(String::as_str).collect();
        let extra: Vec<String> = later
            .kvs()
            .iter()
            .filter_map(|kv| std::str::from_utf8(kv.key()).ok())
            .filter_map(|k| k.strip_prefix(start.as_str()))
            .filter(|k| !known.contains(k))
            .map(str::to_string)
            .collect();
        keys.extend(extra);
    }
    Ok((usize::try_from(counted.count()).ok() == Some(keys.len())).then_some(keys))
}

/// A generation as read: its configuration, its entries' keys and the
/// revision they were read at.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct Generation {
    /// The configuration.
    pub config: Config,
    /// Its entries' keys, relative to `PREFIX/entries/`, in key order.
    pub keys: Vec<String>,
    /// The revision the entries were read at.
    pub revision: i64,
}

/// The generation `current` names (`current` last written at
/// `current_revision`), verified: the entries at `at` if nothing was
/// written since `current`, else (a publish under way, or one that died)
/// at `current_revision`. The values `cache` has (the last generation's)
/// are not parsed again.
pub async fn read_generation(
    etcd: &Etcd,
    layout: &Layout,
    current: &Current,
    current_revision: i64,
    at: i64,
    cache: &mut ParseCache,
) -> Result<Generation, FleetError> {
    let mut revision = at;
    loop {
        let entries = read_entries(etcd, layout, revision).await?;
        match verify_with(layout, current, &entries, cache) {
            Ok(config) => {
                return Ok(Generation {
                    config,
                    keys: entries.into_iter().map(|(k, _)| k).collect(),
                    revision,
                })
            }
            Err(FleetError::Incomplete { .. }) if revision != current_revision => {
                revision = current_revision;
            }
            Err(e) => return Err(e),
        }
    }
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
    let g = read_generation(
        etcd,
        layout,
        &current,
        current_revision,
        at,
        &mut ParseCache::new(),
    )
    .await?;
    Ok(Snapshot {
        generation: current.generation,
        config: g.config,
        revision: g.revision,
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
