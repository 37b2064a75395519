//! Writing a configuration as a new generation: a claim, then the entries
//! that changed ([`Delta`](crate::fleet::publish::delta::Delta): only those, so one service changed in 10,000
//! is one delete and one put) in transactions within etcd's limits
//! ([`transactions`](crate::fleet::publish::transactions)), then `current` flipped to it in a
//! final transaction.
//!
//! Every transaction compares `current`'s mod revision with the one read
//! at the start; the first creates the publisher's claim
//! (`PREFIX/publishing`, on a lease) if no one holds it, each after it
//! compares the claim: two publishers cannot interleave,
//! the second gets [`FleetError::Conflict`] and nothing of its publish is
//! in effect.

use std::future::Future;
use std::pin::Pin;
use std::time::{SystemTime, UNIX_EPOCH};

use etcd_client::{Compare, CompareOp, PutOptions, Txn, TxnOp, TxnOpResponse};

use crate::config::Config;
use crate::fleet::errors::FleetError;
use crate::fleet::publish::entries::Staged;
use crate::fleet::publish::transactions::{batches_by, delete_bytes, put_bytes, Limits};
use crate::fleet::store::current::digest;
use crate::fleet::store::etcd::Etcd;
use crate::fleet::store::layout::services_in;
use crate::fleet::store::layout::Layout;
use crate::fleet::store::read::{keys_since, read_current, read_keys};

/// How long a publisher's claim lives if the publisher dies (seconds).
pub const CLAIM_TTL: i64 = 60;

/// A future a [`Pause`] returns.
pub type PauseFuture = Pin<Box<dyn Future<Output = ()> + Send>>;
/// Called after each transaction of a generation's entries with its index
/// and the number of transactions, in order, once the window of
/// transactions in flight with it is written; the publish goes on when
/// its future ends (tests hold a publish between transactions with it).
pub type Pause = Box<dyn FnMut(usize, usize) -> PauseFuture + Send>;

/// How a publish is written.
#[non_exhaustive]
pub struct PublishOptions {
    /// etcd's limits on one transaction (its defaults unless the cluster
    /// runs with others).
    pub limits: Limits,
    /// Called between transactions.
    pub pause: Option<Pause>,
    /// Transactions of entries in flight at once (0 counts as 1; default
    /// [`IN_FLIGHT`]).
    pub in_flight: usize,
    /// Seconds the claim outlives a publisher that dies (default
    /// [`CLAIM_TTL`]; a publish that takes longer loses its claim).
    pub claim_ttl: i64,
}

/// Transactions of entries a publish has in flight at once by default.
pub const IN_FLIGHT: usize = 8;

impl Default for PublishOptions {
    fn default() -> Self {
        PublishOptions {
            limits: Limits::default(),
            pause: None,
            in_flight: IN_FLIGHT,
            claim_ttl: CLAIM_TTL,
        }
    }
}

impl std::fmt::Debug for PublishOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PublishOptions")
            .field("limits", &self.limits)
            .field("pause", &self.pause.is_some())
            .field("in_flight", &self.in_flight)
            .field("claim_ttl", &self.claim_ttl)
            .finish()
    }
}

impl PublishOptions {
    /// With other limits.
    #[must_use]
    pub fn with_limits(mut self, limits: Limits) -> Self {
        self.limits = limits;
        self
    }

    /// With `n` transactions of entries in flight at once (1: one after
    /// the other).
    #[must_use]
    pub fn with_in_flight(mut self, n: usize) -> Self {
        self.in_flight = n;
        self
    }

    /// With a claim that outlives a dead publisher `seconds` (etcd raises
    /// a lease shorter than its minimum, 1.5 s with default timings).
    #[must_use]
    pub fn with_claim_ttl(mut self, seconds: i64) -> Self {
        self.claim_ttl = seconds;
        self
    }

    /// With a pause between transactions.
    #[must_use]
    pub fn with_pause(mut self, pause: Pause) -> Self {
        self.pause = Some(pause);
        self
    }
}

/// What a publish wrote.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct Published {
    /// The new generation.
    pub generation: u64,
    /// Its services.
    pub services: usize,
    /// Transactions written: the claim, the entries', the flip of `current`.
    pub transactions: usize,
    /// Bytes of the keys and values written (deletes count their keys).
    pub bytes: usize,
    /// Entries put (new or changed services and settings).
    pub puts: usize,
    /// Entries deleted (services gone or changed).
    pub deletes: usize,
    /// The revision of the flip: readers at or after it get this generation.
    pub revision: i64,
    /// Whether the keys stored were read from etcd (not known from what
    /// the publisher's cache presumed: [`Staged::presuming`]).
    pub keys_read: bool,
}

/// One operation on an entry: its full key, and its value for a put.
type Op = (String, Option<Vec<u8>>);

/// Publishes `config` under `layout` as the next generation: a claim, then
/// only the entries that differ from what is stored (keys named by
/// content: compared without reading a value), then `current`.
pub async fn publish(
    etcd: &Etcd,
    layout: &Layout,
    config: &Config,
    options: PublishOptions,
) -> Result<Published, FleetError> {
    publish_staged(etcd, layout, &Staged::of(config), options).await
}

/// [`publish`] of entries made ready ([`Staged`]: the values of those not
/// held are made only for the entries put).
pub async fn publish_staged(
    etcd: &Etcd,
    layout: &Layout,
    staged: &Staged,
    mut options: PublishOptions,
) -> Result<Published, FleetError> {
    let mut client = etcd.client();
    let (previous, base) = match read_current(etcd, layout, None).await?.0 {
        Some((c, mod_revision)) => (Some(c), mod_revision),
        None => (None, 0),
    };
    // The keys the cache presumes stored, when they are those of the
    // `current` read (written at the revision the cache names, its count
    // and digest those of these keys).
    let presumed = match (&staged.presumed, &previous) {
        (Some((revision, keys)), Some(c))
            if *revision == base
                && c.services == services_in(keys.iter().map(String::as_str))
                && c.digest == digest(keys.iter().map(String::as_str)) =>
        {
            Some(keys)
        }
        _ => None,
    };
    let previous = previous.map_or(0, |c| c.generation);
    let n = previous + 1;
    let current = staged.record(n);
    let prefix = layout.entries();
    // Every entry fits in a transaction, checked before anything is written.
    batches_by(
        staged
            .keys()
            .zip(&staged.lens)
            .map(|(k, len)| (k, put_bytes(&prefix, &[]) + len + k.len())),
        options.limits,
    )
    .map_err(|(key, bytes, room)| FleetError::TooLarge {
        key: format!("{prefix}{key}"),
        bytes,
        room,
    })?;
    let lease = etcd
        .call(
            "grant the claim's lease",
            client.lease_grant(options.claim_ttl, None),
        )
        .await?
        .id();
    let token = claim_token(n);
    let (current_key, claim_key) = (layout.current(), layout.publishing());
    let unchanged = Compare::mod_revision(current_key.as_str(), CompareOp::Equal, base);
    let held = Compare::value(claim_key.as_str(), CompareOp::Equal, token.as_str());
    let on_failure = vec![
        TxnOp::get(current_key.as_str(), None),
        TxnOp::get(claim_key.as_str(), None),
    ];
    let mut bytes = 0;
    let (mut puts, mut deletes, mut written) = (0, 0, 0);
    let mut keys_read = true;
    let result = async {
        let on_lease = PutOptions::new().with_lease(lease);
        let free = Compare::create_revision(claim_key.as_str(), CompareOp::Equal, 0);
        let claim = Txn::new()
            .when(vec![unchanged.clone(), free])
            .and_then(vec![TxnOp::put(
                claim_key.as_str(),
                token.as_str(),
                Some(on_lease),
            )])
            .or_else(on_failure.clone());
        bytes += put_bytes(&claim_key, token.as_bytes());
        let response = etcd.call("claim a generation", client.txn(claim)).await?;
        if !response.succeeded() {
            return Err(conflict(layout, base, &token, &response.op_responses()));
        }
        // What is stored, read once the claim is held (what a publisher
        // that died left is in it too): its keys only.
        // Presumed, checked by a count (entries deleted since `current`)
        // and a read of the keys written since (a publish that died):
        // read whole only when the count says otherwise.
        let stored = match presumed {
            Some(keys) => keys_since(etcd, layout, keys, base).await?,
            None => None,
        };
        keys_read = stored.is_none();
        let stored = match stored {
            Some(keys) => keys,
            None => read_keys(etcd, layout).await?.0,
        };
        let delta = staged.delta(&stored);
        (puts, deletes) = (delta.puts.len(), delta.deletes.len());
        let mut ops: Vec<Op> = delta
            .deletes
            .iter()
            .map(|k| (format!("{prefix}{k}"), None))
            .collect();
        for &i in &delta.puts {
            let k = &staged.entries[i].0;
            ops.push((format!("{prefix}{k}"), Some(staged.value(i)?)));
        }
        let sized = ops.iter().map(|(k, v)| {
            let b = v
                .as_ref()
                .map_or_else(|| delete_bytes(k), |v| put_bytes(k, v));
            (k.as_str(), b)
        });
        let parts = batches_by(sized, options.limits)
            .map_err(|(key, bytes, room)| FleetError::TooLarge { key, bytes, room })?;
        written = parts.len();
        let count = parts.len().max(1);
        // A window of transactions in flight at once (their order does not
        // matter: nothing is in force before the flip); the pause is
        // called after each, in order, once its window is written.
        let window = options.in_flight.max(1);
        for (w, chunk) in parts.chunks(window).enumerate() {
            let mut set = tokio::task::JoinSet::new();
            for (j, range) in chunk.iter().enumerate() {
                let mut txn_ops = Vec::with_capacity(range.len());
                for (k, v) in &ops[range.clone()] {
                    match v {
                        Some(v) => {
                            bytes += put_bytes(k, v);
                            txn_ops.push(TxnOp::put(k.as_str(), v.clone(), None));
                        }
                        None => {
                            bytes += delete_bytes(k);
                            txn_ops.push(TxnOp::delete(k.as_str(), None));
                        }
                    }
                }
                let txn = Txn::new()
                    .when(vec![unchanged.clone(), held.clone()])
                    .and_then(txn_ops)
                    .or_else(on_failure.clone());
                let etcd = etcd.clone();
                set.spawn(async move {
                    let mut client = etcd.client();
                    let r = etcd.call("write the entries", client.txn(txn)).await;
                    (w * window + j, r)
                });
            }
            let mut done = Vec::with_capacity(chunk.len());
            while let Some(joined) = set.join_next().await {
                done.push(joined.map_err(|e| FleetError::Etcd {
                    operation: "write the entries",
                    message: e.to_string(),
                })?);
            }
            done.sort_by_key(|(i, _)| *i);
            for (i, response) in done {
                let response = response?;
                if !response.succeeded() {
                    return Err(conflict(layout, base, &token, &response.op_responses()));
                }
                if let Some(pause) = options.pause.as_mut() {
                    pause(i, count).await;
                }
            }
        }
        let text = current.to_text();
        bytes += put_bytes(&current_key, text.as_bytes());
        let flip = Txn::new()
            .when(vec![unchanged.clone(), held.clone()])
            .and_then(vec![
                TxnOp::put(current_key.as_str(), text, None),
                TxnOp::delete(claim_key.as_str(), None),
            ])
            .or_else(on_failure.clone());
        let response = etcd.call("flip `current`", client.txn(flip)).await?;
        if !response.succeeded() {
            return Err(conflict(layout, base, &token, &response.op_responses()));
        }
        Ok(response.header().map_or(0, |h| h.revision()))
    }
    .await;
    // The claim goes with its lease (already deleted after a flip).
    let _ = etcd
        .call("revoke the claim's lease", client.lease_revoke(lease))
        .await;
    let revision = result?;
    Ok(Published {
        generation: n,
        services: current.services,
        transactions: written + 2,
        bytes,
        puts,
        deletes,
        revision,
        keys_read,
    })
}

/// A token no other publisher has: the host, the process, the time.
fn claim_token(n: u64) -> String {
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    let host = std::fs::read_to_string("/proc/sys/kernel/hostname").unwrap_or_default();
    format!(
        "generation {n} by {} pid {} at {nanos}",
        host.trim(),
        std::process::id()
    )
}

/// Why a transaction's compares failed, from its `or_else` reads of
/// `current` and the claim.
fn conflict(layout: &Layout, base: i64, token: &str, responses: &[TxnOpResponse]) -> FleetError {
    let got = |i: usize| match responses.get(i) {
        Some(TxnOpResponse::Get(g)) => g
            .kvs()
            .first()
            .map(|kv| (kv.mod_revision(), kv.value().to_vec())),
        _ => None,
    };
    let reason = match (got(0), got(1)) {
        (Some((r, _)), _) if r != base => format!(
            "`{}` changed since it was read (revision {base}, now {r})",
            layout.current()
        ),
        (None, _) if base != 0 => format!("`{}` was deleted", layout.current()),
        (_, Some((_, v))) if v != token.as_bytes() => format!(
            "`{}` is held by another: {}",
            layout.publishing(),
            String::from_utf8_lossy(&v)
        ),
        (_, None) => format!(
            "this publisher's claim `{}` is gone (its lease expired)",
            layout.publishing()
        ),
        _ => "the transaction's compares failed".to_string(),
    };
    FleetError::Conflict {
        prefix: layout.prefix.clone(),
        reason,
    }
}
