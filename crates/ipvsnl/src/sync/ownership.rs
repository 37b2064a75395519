//! The ownership record: which services this owner created, kept across
//! restarts, so that a service removed from what the owner wants while it
//! was down is still known as its own, and deleted, at its next start.
//!
//! [`Scope::Keys`] is what an owner owns *now*: a service that leaves both
//! the desired table and the key set is out of scope, and no sync ever
//! deletes it. An [`Ownership`] remembers every key the owner claimed
//! until the kernel is seen without it; [`Ownership::scope`] is the keys
//! owned now and those recorded, so the next sync deletes (with its drain)
//! a recorded service no longer desired.
//!
//! # Why a file, not a mark in the kernel
//!
//! An IPVS service has no free-form field to carry an owner: its key
//! (protocol, address, port, or fwmark), scheduler, flags, timeout,
//! netmask and persistence engine all change how it forwards. A spare
//! flag bit is refused or kept by kernels as they please, a `pe_name`
//! loads a module, a netmask or timeout changes persistence: none can be
//! borrowed safely. So the record is a file, written atomically (a
//! temporary file, synced, renamed over the record, the directory
//! synced): a crash leaves the old record or the new one, whole.
//!
//! # The protocol
//!
//! 1. Before a sync, [`Ownership::claim`] the keys it may create (the
//!    desired table's): written, and synced to disk, before the kernel can
//!    hold them. A write that fails leaves the record as it was; the
//!    caller then must not sync (a service it created could leak).
//! 2. Sync with [`Ownership::scope`] as the planner's scope.
//! 3. After the sync, [`Ownership::observe`] the table the kernel was seen
//!    to hold ([`Ownership::after_sync`] takes the [`Syncer`]'s view): a
//!    recorded key the kernel lacks leaves the record. No view, no change.
//!
//! # Failure modes
//!
//! - **A crash between the kernel change and the record's write.** The
//!   record is written *before* a service is created and pruned only
//!   *after* it is seen gone, so it always holds every service of the
//!   owner's the kernel holds: a crash after a create leaves it recorded
//!   (deleted at the next start if no longer wanted), a crash after a
//!   delete leaves a key recorded that the kernel lacks (harmless: the
//!   next sync sees it gone and drops it). Never a leak. (A listing that
//!   misses a service, rarely, see [`Syncer::list`], drops its key: the
//!   safe side, a leak at worst, never a foreign delete.)
//! - **A record from another host, boot or namespace** (a copied disk, a
//!   shared directory). The record names its owner; [`Ownership::open`]
//!   refuses a record of another name ([`OwnershipError::OtherOwner`]).
//!   An owner that puts its host, boot and namespace in its name (as
//!   ipvs-agent does) never takes another's record for its own. Kept on a
//!   tmpfs (`/run`), the record also dies with the kernel's table at a
//!   reboot.
//! - **A corrupt or truncated record.** Its trailer (a count and a
//!   checksum) tells it from a whole one; [`Ownership::open`] refuses it
//!   ([`OwnershipError::Corrupt`]), naming the line. The safe recovery is
//!   [`Ownership::empty`]: the owner then owns what it wants now, and at
//!   worst a service removed while it was down leaks (it never deletes a
//!   service it does not know).
//! - **Two owners with the same record.** The record's lock
//!   (`<record>.lock`, an exclusive `flock` held for the [`Ownership`]'s
//!   life and released by the kernel however the process ends) refuses
//!   the second ([`OwnershipError::Locked`]). A lock on a network file
//!   system may not hold: keep records on local disks.
//! - **A service another tool created with a key in the record.** IPVS
//!   cannot tell whose a service is: a key in the record is taken as the
//!   owner's. Since a key leaves the record once the kernel is seen
//!   without it, this needs another tool to create it between the owner's
//!   delete and its next sync, or while the owner was down after it
//!   stopped wanting it (hand a service over by letting the owner delete
//!   it first, or by removing its key from the record while the owner is
//!   stopped). A key the record does not hold is never in its scope: a
//!   foreign service is never touched otherwise.
//!
//! [`Syncer`]: crate::sync::Syncer

use std::borrow::Borrow;
use std::collections::BTreeSet;
use std::fs::File;
use std::path::{Path, PathBuf};

use crate::sync::ownership_error::OwnershipError;
use crate::sync::ownership_file::{decode, encode, lock, read, write};
use crate::sync::plan::Scope;
use crate::sync::syncer::Syncer;
use crate::sync::table::Table;
use crate::ServiceKey;

/// What one owner created, kept across restarts in a file (see the
/// [module docs](crate::sync::ownership) for the protocol and its failure
/// modes).
///
/// ```
/// # #[cfg(feature = "emulator")]
/// # fn main() -> Result<(), Box<dyn std::error::Error>> {
/// use ipvsnl::emulator::Kernel;
/// use ipvsnl::sync::{Ownership, PlanOptions, Syncer, Table};
/// use ipvsnl::{Client, Destination, Service, ServiceKey};
/// let dir = std::env::temp_dir().join(format!("ipvsnl-doc-own-{}", std::process::id()));
/// std::fs::create_dir_all(&dir).unwrap();
/// let path = dir.join("owned");
/// let kernel = Kernel::new();
/// let mut ipvs = Client::emulated(&kernel);
/// let web = ServiceKey::tcp("192.0.2.1".parse().unwrap(), 80);
/// let dns = ServiceKey::udp("192.0.2.1".parse().unwrap(), 53);
/// let table = |keys: &[ServiceKey]| {
///     let mut t = Table::new();
///     for k in keys {
///         t.insert(Service::new(*k), [Destination::new("10.0.0.1".parse().unwrap(), 8080)]);
///     }
///     t
/// };
/// // One run: both services wanted, claimed before the sync.
/// {
///     let mut owned = Ownership::open(&path, "doc")?;
///     let want = table(&[web, dns]);
///     owned.claim(want.keys())?;
///     let mut syncer = Syncer::new(PlanOptions::new(owned.scope(want.keys())));
///     assert!(syncer.sync(&mut ipvs, &want)?.is_complete());
///     owned.after_sync(&syncer)?;
/// }
/// // The next run wants only `web`: `dns` is still in scope, and deleted.
/// let mut owned = Ownership::open(&path, "doc")?;
/// let want = table(&[web]);
/// owned.claim(want.keys())?;
/// let mut syncer = Syncer::new(PlanOptions::new(owned.scope(want.keys())));
/// assert!(syncer.sync(&mut ipvs, &want)?.is_complete());
/// owned.after_sync(&syncer)?;
/// assert!(kernel.init_netns().service(&dns).is_none());
/// assert_eq!(owned.keys().iter().collect::<Vec<_>>(), [&web]);
/// # std::fs::remove_dir_all(&dir).unwrap();
/// # Ok(())
/// # }
/// # #[cfg(not(feature = "emulator"))]
/// # fn main() {}
/// ```
#[derive(Debug)]
#[non_exhaustive]
pub struct Ownership {
    path: PathBuf,
    owner: String,
    keys: BTreeSet<ServiceKey>,
    /// The record's lock, held while this lives.
    _lock: File,
}

impl Ownership {
    /// Opens the record at `path` for `owner` (locking it): the keys it
    /// holds, or none if there is no record yet. The directory must exist.
    ///
    /// Refused, with nothing taken, when another [`Ownership`] holds the
    /// record, when it is another owner's, or when it is not whole (see
    /// [`OwnershipError`]).
    pub fn open(path: impl AsRef<Path>, owner: &str) -> Result<Self, OwnershipError> {
        let path = path.as_ref();
        let owner = checked_owner(path, owner)?;
        let lock = lock(path)?;
        let keys = match read(path)? {
            None => BTreeSet::new(),
            Some(r) if r.owner == owner => r.keys,
            Some(r) => {
                return Err(OwnershipError::OtherOwner {
                    path: path.to_path_buf(),
                    found: r.owner,
                    expected: owner,
                })
            }
        };
        Ok(Ownership {
            path: path.to_path_buf(),
            owner,
            keys,
            _lock: lock,
        })
    }

    /// Opens the record at `path` for `owner` (locking it) as if it held
    /// nothing, whatever the file holds: the recovery from a record
    /// [`Ownership::open`] refused. The file is replaced at the first
    /// write. What the old record held is not deleted: at worst it leaks.
    ///
    /// ```
    /// use ipvsnl::sync::Ownership;
    /// let dir = std::env::temp_dir().join(format!("ipvsnl-doc-empty-{}", std::process::id()));
    /// std::fs::create_dir_all(&dir).unwrap();
    /// let path = dir.join("owned");
    /// std::fs::write(&path, "ipvsnl ownership record 1\nowner me\nkey TCP 192.0.2.1:80\n").unwrap();
    /// assert!(Ownership::open(&path, "me").is_err()); // cut short
    /// let owned = Ownership::empty(&path, "me").unwrap();
    /// assert!(owned.keys().is_empty());
    /// # std::fs::remove_dir_all(&dir).unwrap();
    /// ```
    pub fn empty(path: impl AsRef<Path>, owner: &str) -> Result<Self, OwnershipError> {
        let path = path.as_ref();
        let owner = checked_owner(path, owner)?;
        let lock = lock(path)?;
        Ok(Ownership {
            path: path.to_path_buf(),
            owner,
            keys: BTreeSet::new(),
            _lock: lock,
        })
    }

    /// The record's file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The owner's name, as the record holds it.
    pub fn owner(&self) -> &str {
        &self.owner
    }

    /// The keys recorded: every service this owner may have created that
    /// the kernel was not seen without since.
    pub fn keys(&self) -> &BTreeSet<ServiceKey> {
        &self.keys
    }

    /// The scope of a sync: the keys owned now (owned or borrowed) and
    /// those recorded (a
    /// recorded service no longer desired is then deleted, with its
    /// drain; a key in neither is someone else's and left alone).
    ///
    /// ```
    /// # use ipvsnl::sync::Ownership;
    /// # use ipvsnl::ServiceKey;
    /// # let dir = std::env::temp_dir().join(format!("ipvsnl-doc-scope-{}", std::process::id()));
    /// # std::fs::create_dir_all(&dir).unwrap();
    /// let mut owned = Ownership::open(dir.join("owned"), "doc").unwrap();
    /// let old = ServiceKey::tcp("192.0.2.1".parse().unwrap(), 80);
    /// let new = ServiceKey::tcp("192.0.2.2".parse().unwrap(), 80);
    /// owned.claim([old]).unwrap();
    /// let scope = owned.scope([new]);
    /// assert!(scope.contains(&old) && scope.contains(&new));
    /// # std::fs::remove_dir_all(&dir).unwrap();
    /// ```
    pub fn scope<K: Borrow<ServiceKey>>(&self, owned_now: impl IntoIterator<Item = K>) -> Scope {
        let mut keys: std::collections::HashSet<ServiceKey> =
            owned_now.into_iter().map(|k| *k.borrow()).collect();
        keys.extend(self.keys.iter().copied());
        Scope::Keys(keys)
    }

    /// Records `keys` (owned or borrowed, as [`Table::keys`] gives them)
    /// as this owner's before a sync may create them:
    /// written and synced to disk if any is new. Whether the record
    /// changed. On `Err` the record (file and memory) is as it was, and
    /// the caller must not create the new keys' services.
    pub fn claim<K: Borrow<ServiceKey>>(
        &mut self,
        keys: impl IntoIterator<Item = K>,
    ) -> Result<bool, OwnershipError> {
        let new: Vec<ServiceKey> = keys
            .into_iter()
            .map(|k| *k.borrow())
            .filter(|k| !self.keys.contains(k))
            .collect();
        if new.is_empty() {
            return Ok(false);
        }
        let mut next = self.keys.clone();
        next.extend(new);
        self.store(next)?;
        Ok(true)
    }

    /// Drops from the record the keys `seen` lacks: `seen` is what the
    /// kernel was seen to hold (every service, as a [`Syncer`] lists it
    /// or leaves its view). Whether the record changed. On `Err` it is as
    /// it was (and still holds every key: the safe side).
    ///
    /// ```
    /// use ipvsnl::sync::{Ownership, Table};
    /// use ipvsnl::{Service, ServiceKey};
    /// # let dir = std::env::temp_dir().join(format!("ipvsnl-doc-observe-{}", std::process::id()));
    /// # std::fs::create_dir_all(&dir).unwrap();
    /// let path = dir.join("owned");
    /// let web = ServiceKey::tcp("192.0.2.1".parse().unwrap(), 80);
    /// let old = ServiceKey::tcp("192.0.2.2".parse().unwrap(), 80);
    /// let mut owned = Ownership::open(&path, "doc").unwrap();
    /// owned.claim([web, old]).unwrap(); // on disk before the sync
    /// // The kernel seen after the sync: `old` is gone.
    /// let mut seen = Table::new();
    /// seen.insert(Service::new(web), []);
    /// assert!(owned.observe(&seen).unwrap());
    /// drop(owned);
    /// let again = Ownership::open(&path, "doc").unwrap();
    /// assert_eq!(again.keys().iter().collect::<Vec<_>>(), [&web]);
    /// # std::fs::remove_dir_all(&dir).unwrap();
    /// ```
    pub fn observe(&mut self, seen: &Table) -> Result<bool, OwnershipError> {
        let next: BTreeSet<ServiceKey> = self
            .keys
            .iter()
            .filter(|k| seen.get(k).is_some())
            .copied()
            .collect();
        if next.len() == self.keys.len() {
            return Ok(false);
        }
        self.store(next)?;
        Ok(true)
    }

    /// [`Ownership::observe`] of the table `syncer` last left, if it kept
    /// a view of it (none after a sync whose outcome was not all known:
    /// the record is then left as it is).
    pub fn after_sync(&mut self, syncer: &Syncer) -> Result<bool, OwnershipError> {
        match syncer.cached() {
            Some(view) => self.observe(view),
            None => Ok(false),
        }
    }

    /// Writes `keys` as the record, and keeps them if it was written.
    fn store(&mut self, keys: BTreeSet<ServiceKey>) -> Result<(), OwnershipError> {
        write(&self.path, &encode(&self.owner, &keys))?;
        self.keys = keys;
        Ok(())
    }
}

/// An owner's name fits on the record's line.
fn checked_owner(path: &Path, owner: &str) -> Result<String, OwnershipError> {
    let text = encode(owner, &BTreeSet::new());
    match decode(path, &text) {
        Ok(r) if r.owner == owner && !owner.contains('\r') => Ok(r.owner),
        _ => Err(OwnershipError::Corrupt {
            path: path.to_path_buf(),
            line: 2,
            why: format!("the owner's name {owner:?} cannot be recorded (one line of text)"),
        }),
    }
}
