//! The emulated kernel: its IPVS module (loaded or not, its family id),
//! one table per network namespace, the faults armed and the requests
//! taken. [`Kernel`] is a shareable handle (clones share one kernel);
//! [`Netns`] names one of its namespaces.

use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use super::faults::{Armed, Fault, Taken, When};
use super::table::NsTable;

/// The name of the namespace [`Kernel::init_netns`] returns.
pub const INIT_NETNS: &str = "init";

/// The first family id the emulated controller gives IPVS (the real one
/// gives the next free id from `0x13`; a reload takes the next one).
const FIRST_FAMILY: u16 = 0x23;

/// What the handles share.
pub(crate) struct State {
    /// The family id while the module is loaded.
    pub(crate) family: Option<u16>,
    next_family: u16,
    /// Whether a family lookup loads a module that is not loaded.
    pub(crate) autoload: bool,
    pub(crate) namespaces: Vec<(String, NsTable)>,
    pub(crate) conn_tab_size: u32,
    pub(crate) faults: Vec<Armed>,
    pub(crate) log: Vec<Taken>,
    pub(crate) logging: bool,
    /// How long clients waited for replies that never came.
    pub(crate) waited: Duration,
    /// Whether callers have `CAP_NET_ADMIN` (else every IPVS command is
    /// `EPERM`).
    pub(crate) privileged: bool,
    next_pid: u32,
}

impl State {
    /// The namespace `name`, made on first use.
    pub(crate) fn ns(&mut self, name: &str) -> &mut NsTable {
        let at = self.ns_index(name);
        &mut self.namespaces[at].1
    }

    /// Where the namespace `name` is in `namespaces`, made on first use.
    pub(crate) fn ns_index(&mut self, name: &str) -> usize {
        // A test has a few namespaces: a look along a list, no hashing
        // or allocation per request.
        match self.namespaces.iter().position(|(n, _)| n == name) {
            Some(at) => at,
            None => {
                self.namespaces.push((name.to_string(), NsTable::new()));
                self.namespaces.len() - 1
            }
        }
    }

    /// Loads the module with a new family id (if not loaded).
    pub(crate) fn load(&mut self) {
        if self.family.is_none() {
            self.family = Some(self.next_family);
            self.next_family = self.next_family.wrapping_add(1).max(0x13);
        }
    }

    /// Unloads the module: every namespace's IPVS state goes with it.
    pub(crate) fn unload(&mut self) {
        self.family = None;
        for (_, ns) in &mut self.namespaces {
            ns.reset();
        }
    }

    /// A port id for a new socket.
    pub(crate) fn new_pid(&mut self) -> u32 {
        self.next_pid += 1;
        self.next_pid
    }

    /// The first armed request fault whose condition holds for `t`.
    pub(crate) fn fault_for(&mut self, t: &Taken) -> Option<Fault> {
        // Every condition sees the request (a counting one counts it),
        // the first that holds strikes.
        let mut first = None;
        for (at, a) in self.faults.iter_mut().enumerate() {
            if let When::Request(cond) = &mut a.when {
                if cond(t) && first.is_none() {
                    first = Some(at);
                }
            }
        }
        Some(self.faults.remove(first?).fault)
    }

    /// The armed fault for dump part `n`, if any.
    pub(crate) fn fault_at_part(&mut self, n: usize) -> Option<Fault> {
        let at = self
            .faults
            .iter()
            .position(|a| matches!(a.when, When::DumpPart(p) if p == n))?;
        Some(self.faults.remove(at).fault)
    }
}

/// An emulated Linux kernel's IPVS: a handle, cheap to clone, `Send` and
/// `Sync`; every clone is the same kernel. Clients connect to one of its
/// network namespaces with [`Client::emulated`](crate::Client::emulated)
/// (the initial one) or [`Client::emulated_in`](crate::Client::emulated_in).
///
/// It starts with the module loaded and the initial namespace empty.
///
/// ```
/// use ipvsnl::emulator::Kernel;
/// use ipvsnl::{Client, Service, ServiceKey};
///
/// let kernel = Kernel::new();
/// let mut ipvs = Client::emulated(&kernel);
/// let key = ServiceKey::tcp("10.0.0.1".parse().unwrap(), 80);
/// ipvs.add_service(&Service::new(key))?;
/// // The kernel's refusal, with its errno.
/// let again = ipvs.add_service(&Service::new(key)).unwrap_err();
/// assert_eq!(again.errno(), Some(libc::EEXIST));
/// assert_eq!(kernel.init_netns().table().len(), 1);
/// # Ok::<(), ipvsnl::Error>(())
/// ```
#[derive(Clone)]
#[non_exhaustive]
pub struct Kernel {
    pub(crate) state: Arc<Mutex<State>>,
}

impl std::fmt::Debug for Kernel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let s = self.lock();
        f.debug_struct("Kernel")
            .field("family", &s.family)
            .field("namespaces", &s.namespaces.len())
            .field("faults_armed", &s.faults.len())
            .finish_non_exhaustive()
    }
}

impl Default for Kernel {
    fn default() -> Self {
        Kernel::new()
    }
}

impl Kernel {
    /// A kernel with the IPVS module loaded and an empty initial namespace.
    pub fn new() -> Self {
        let mut state = State {
            family: None,
            next_family: FIRST_FAMILY,
            autoload: true,
            namespaces: Vec::new(),
            conn_tab_size: 4096,
            faults: Vec::new(),
            log: Vec::new(),
            logging: true,
            waited: Duration::ZERO,
            privileged: true,
            next_pid: 0,
        };
        state.load();
        state.ns(INIT_NETNS);
        Kernel {
            state: Arc::new(Mutex::new(state)),
        }
    }

    pub(crate) fn lock(&self) -> MutexGuard<'_, State> {
        // A test that panicked while holding it leaves a usable state.
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The initial network namespace.
    pub fn init_netns(&self) -> Netns {
        self.netns(INIT_NETNS)
    }

    /// The network namespace `name` (made empty on first use): its own
    /// table, timeouts and daemons.
    pub fn netns(&self, name: &str) -> Netns {
        self.lock().ns(name);
        Netns {
            kernel: self.clone(),
            name: name.to_string(),
        }
    }

    /// The IPVS family id, `None` while the module is not loaded.
    pub fn family_id(&self) -> Option<u16> {
        self.lock().family
    }

    /// Unloads the module: the family is gone (a lookup loads it again,
    /// with a new id, unless [`set_autoload`](Self::set_autoload) said
    /// not to), and every namespace's services, timeouts and daemons with
    /// it.
    pub fn unload_module(&self) {
        self.lock().unload();
    }

    /// Loads the module if it is not loaded (a new family id).
    pub fn load_module(&self) {
        self.lock().load();
    }

    /// Unloads and loads the module: a new family id, empty tables.
    pub fn reload_module(&self) {
        let mut s = self.lock();
        s.unload();
        s.load();
    }

    /// Whether a family lookup loads the module when it is not loaded (as
    /// the kernel does when `ip_vs.ko` is installed; default true). With
    /// false, an unloaded module stays unloaded: lookups fail with
    /// `ENOENT`, and clients report IPVS unavailable.
    pub fn set_autoload(&self, on: bool) {
        self.lock().autoload = on;
    }

    /// Whether callers have `CAP_NET_ADMIN` (default true): without it,
    /// every IPVS command is refused with `EPERM`, listings included.
    pub fn set_privileged(&self, on: bool) {
        self.lock().privileged = on;
    }

    /// The connection table size `GET_INFO` reports (default 4096).
    pub fn set_conn_tab_size(&self, size: u32) {
        self.lock().conn_tab_size = size;
    }

    /// Arms `fault`, to strike once, `when` says.
    pub fn inject(&self, when: When, fault: Fault) {
        self.lock().faults.push(Armed { when, fault });
    }

    /// Disarms every fault that has not struck yet.
    pub fn disarm(&self) {
        self.lock().faults.clear();
    }

    /// How many armed faults have not struck yet.
    pub fn faults_armed(&self) -> usize {
        self.lock().faults.len()
    }

    /// Every request taken so far, in order, in every namespace.
    pub fn requests(&self) -> Vec<Taken> {
        self.lock().log.clone()
    }

    /// Forgets the requests taken so far.
    pub fn clear_requests(&self) {
        self.lock().log.clear();
    }

    /// Whether requests are recorded (default true; a benchmark may turn
    /// it off).
    pub fn set_recording(&self, on: bool) {
        self.lock().logging = on;
    }

    /// How long clients waited, in all, for replies that never came. Time
    /// is not real here: such a wait ends at once and is counted.
    pub fn waited(&self) -> Duration {
        self.lock().waited
    }
}

/// One network namespace of a [`Kernel`].
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct Netns {
    pub(crate) kernel: Kernel,
    pub(crate) name: String,
}

impl Netns {
    /// Its name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The kernel it belongs to.
    pub fn kernel(&self) -> &Kernel {
        &self.kernel
    }
}
