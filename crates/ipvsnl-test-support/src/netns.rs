//! Fresh network namespaces: each kernel test, soak round and bench
//! measurement gets an IPVS table of its own.
//!
//! [`fresh_netns`] moves the *calling thread* into a new network namespace
//! (`unshare(CLONE_NEWNET)` changes only the caller's namespace, which a
//! multi-threaded process may do) and brings `lo` up there. libtest runs
//! every test on a thread of its own, so tests run in parallel without
//! seeing each other's services.
//!
//! Things that follow the thread's namespace: sockets it creates (netlink
//! included), child processes it spawns, `/proc/sys/net/...` opened by it
//! and `/proc/thread-self/net/...`. `/proc/net` is the namespace of the
//! process's *main* thread: do not read it from a test.
//!
//! ```no_run
//! // A test (root, a kernel with IPVS): an empty table of its own.
//! ipvsnl_test_support::netns::fresh_netns();
//! let mut c = ipvsnl::Client::new().unwrap();
//! assert!(c.services().unwrap().is_empty());
//! ```

use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::panic::{catch_unwind, resume_unwind, AssertUnwindSafe};
use std::sync::mpsc;
use std::thread::{self, JoinHandle};
use std::time::Duration;

/// Whether this process can use IPVS here: it runs as root and the kernel
/// answers for the IPVS generic netlink family (the benches skip their
/// kernel rows otherwise).
pub fn ipvs_available() -> bool {
    // SAFETY: geteuid has no preconditions and cannot fail.
    if unsafe { libc::geteuid() } != 0 {
        return false;
    }
    ipvsnl::Client::new()
        .and_then(|mut c| c.family_id())
        .is_ok()
}

/// Panics with a clear message unless the process runs as root.
pub fn require_root() {
    // SAFETY: geteuid has no preconditions and cannot fail.
    let euid = unsafe { libc::geteuid() };
    assert!(
        euid == 0,
        "kernel tests need root (euid is {euid}) and a kernel with IPVS; \
         run them in the VM with .ci/kernel-tests"
    );
}

/// Moves the calling thread into a new network namespace and brings `lo`
/// up there; the error of `unshare` or of the ioctl otherwise. For the
/// benches, which report it; tests call [`fresh_netns`].
pub fn enter_fresh_netns() -> io::Result<()> {
    // SAFETY: unshare only takes flags. CLONE_NEWNET changes the network
    // namespace of the calling thread only (the other threads keep theirs),
    // which is allowed in a multi-threaded process.
    if unsafe { libc::unshare(libc::CLONE_NEWNET) } != 0 {
        return Err(io::Error::last_os_error());
    }
    set_link_up("lo")
}

/// Moves the current thread into a brand-new network namespace (own IPVS
/// table, nothing configured) and brings `lo` up there.
///
/// A fresh namespace has `lo` down and no routes, and then the kernel
/// refuses every IPVS destination with EINVAL; with `lo` up it accepts them.
///
/// Panics if not root or if the namespace cannot be created.
pub fn fresh_netns() {
    require_root();
    if let Err(e) = enter_fresh_netns() {
        panic!("a fresh network namespace: {e} (kernel tests need root; run them with .ci/kernel-tests)");
    }
    assert!(
        link_is_up("lo").expect("read lo flags"),
        "lo still down after SIOCSIFFLAGS"
    );
}

/// An AF_INET datagram socket in the current thread's namespace, for
/// interface ioctls.
fn ioctl_socket() -> io::Result<OwnedFd> {
    // SAFETY: plain socket(2) call; the result is checked before use.
    let fd = unsafe { libc::socket(libc::AF_INET, libc::SOCK_DGRAM | libc::SOCK_CLOEXEC, 0) };
    if fd < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: fd is a freshly created descriptor that nothing else owns.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

fn ifreq_for(name: &str) -> io::Result<libc::ifreq> {
    // SAFETY: ifreq is plain old data; all-zero is a valid value.
    let mut ifr: libc::ifreq = unsafe { std::mem::zeroed() };
    let bytes = name.as_bytes();
    if bytes.is_empty() || bytes.len() >= ifr.ifr_name.len() || bytes.contains(&0) {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("bad interface name {name:?}"),
        ));
    }
    for (dst, &src) in ifr.ifr_name.iter_mut().zip(bytes) {
        *dst = src as libc::c_char;
    }
    Ok(ifr)
}

fn get_flags(sock: &OwnedFd, ifr: &mut libc::ifreq) -> io::Result<()> {
    // SAFETY: SIOCGIFFLAGS reads ifr_name and writes ifr_flags of the ifreq
    // we pass, which lives for the whole call.
    let rc = unsafe {
        libc::ioctl(
            sock.as_raw_fd(),
            libc::SIOCGIFFLAGS as _,
            ifr as *mut libc::ifreq,
        )
    };
    if rc < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// Sets IFF_UP on interface `name` in the current thread's namespace
/// (SIOCGIFFLAGS + SIOCSIFFLAGS, like `ip link set NAME up`).
pub fn set_link_up(name: &str) -> io::Result<()> {
    let sock = ioctl_socket()?;
    let mut ifr = ifreq_for(name)?;
    get_flags(&sock, &mut ifr)?;
    // SAFETY: after SIOCGIFFLAGS the flags member of the union is the active one.
    unsafe { ifr.ifr_ifru.ifru_flags |= libc::IFF_UP as libc::c_short };
    // SAFETY: SIOCSIFFLAGS reads ifr_name and ifr_flags from the ifreq we pass.
    let rc = unsafe {
        libc::ioctl(
            sock.as_raw_fd(),
            libc::SIOCSIFFLAGS as _,
            &ifr as *const libc::ifreq,
        )
    };
    if rc < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// Whether interface `name` has IFF_UP in the current thread's namespace.
pub fn link_is_up(name: &str) -> io::Result<bool> {
    let sock = ioctl_socket()?;
    let mut ifr = ifreq_for(name)?;
    get_flags(&sock, &mut ifr)?;
    // SAFETY: after SIOCGIFFLAGS the flags member of the union is the active one.
    let flags = unsafe { ifr.ifr_ifru.ifru_flags };
    Ok(flags & libc::IFF_UP as libc::c_short != 0)
}

/// The calling thread's id (for `ip link set DEV netns TID`, which moves
/// a device into the namespace of that thread).
pub fn gettid() -> i64 {
    // SAFETY: gettid has no preconditions.
    unsafe { libc::syscall(libc::SYS_gettid) }
}

type Job = Box<dyn FnOnce() + Send>;

/// A network namespace held by a thread of its own, which runs jobs in it:
/// a host of a lab (a client, a director, a real server). Dropping it ends
/// the thread (and the namespace, once nothing else in it lives).
///
/// ```no_run
/// use ipvsnl_test_support::netns::Netns;
/// let host = Netns::new("client");
/// // Runs in the host's namespace: its own `lo`, no IPVS services.
/// let n = host.exec(|| ipvsnl::Client::new().unwrap().services().unwrap().len());
/// assert_eq!(n, 0);
/// ```
pub struct Netns {
    name: String,
    tid: i64,
    jobs: Option<mpsc::Sender<Job>>,
    thread: Option<JoinHandle<()>>,
}

impl Netns {
    /// A new, empty namespace (`lo` up, IPv6 duplicate address detection off
    /// so addresses are usable at once).
    pub fn new(name: &str) -> Netns {
        let (tid_tx, tid_rx) = mpsc::channel();
        let (jobs, queue) = mpsc::channel::<Job>();
        let thread = thread::Builder::new()
            .name(format!("netns-{name}"))
            .spawn(move || {
                fresh_netns();
                sysctl("net.ipv6.conf.default.accept_dad", "0");
                tid_tx.send(gettid()).expect("send tid");
                // Ends when the Netns (holding the sender) is dropped.
                for job in queue {
                    job();
                }
            })
            .expect("spawn a namespace thread");
        let tid = tid_rx
            .recv_timeout(Duration::from_secs(30))
            .unwrap_or_else(|e| panic!("namespace {name} did not start: {e}"));
        Netns {
            name: name.to_string(),
            tid,
            jobs: Some(jobs),
            thread: Some(thread),
        }
    }

    /// The name it was given.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The thread id, for `ip link set DEV netns TID`.
    pub fn tid(&self) -> i64 {
        self.tid
    }

    /// Runs `job` on the namespace's thread and returns what it returns; a
    /// panic in it is resumed here. Jobs are bounded by their own timeouts;
    /// this gives up waiting after 60 s.
    pub fn exec<R: Send + 'static>(&self, job: impl FnOnce() -> R + Send + 'static) -> R {
        let (done_tx, done_rx) = mpsc::channel();
        let job: Job = Box::new(move || {
            let _ = done_tx.send(catch_unwind(AssertUnwindSafe(job)));
        });
        self.jobs
            .as_ref()
            .expect("namespace open")
            .send(job)
            .unwrap_or_else(|_| panic!("namespace {} has stopped", self.name));
        match done_rx.recv_timeout(Duration::from_secs(60)) {
            Ok(Ok(r)) => r,
            Ok(Err(panic)) => resume_unwind(panic),
            Err(e) => panic!("a job in namespace {} did not finish: {e}", self.name),
        }
    }
}

impl Drop for Netns {
    fn drop(&mut self) {
        drop(self.jobs.take());
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// Writes `value` to the sysctl `name` (dotted) of the calling thread's
/// namespace; panics naming both if it cannot.
pub fn sysctl(name: &str, value: &str) {
    let path = format!("/proc/sys/{}", name.replace('.', "/"));
    std::fs::write(&path, value).unwrap_or_else(|e| panic!("{path} = {value}: {e}"));
}

/// Loads kernel module `name` unless it is loaded (or built in), and waits
/// until it is live; panics with modprobe's words if it cannot be loaded.
/// Tests run in parallel: another one's modprobe of the same module may be
/// under way (this one's then fails with "File exists" while the module
/// initialises), and a device type is unknown until the module is live.
pub fn load_module(name: &str) {
    let dir = std::path::Path::new("/sys/module").join(name);
    if !dir.exists() {
        let out = crate::commands::run("modprobe", &[name]);
        assert!(
            out.status.success() || dir.exists(),
            "modprobe {name}: {} (is it in .ci/vm/run's EXTRA_MODULES?)",
            String::from_utf8_lossy(&out.stderr).trim()
        );
    }
    // Built-in modules have no initstate.
    let state = dir.join("initstate");
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    while state.exists() && std::fs::read_to_string(&state).unwrap_or_default().trim() != "live" {
        assert!(
            std::time::Instant::now() < deadline,
            "module {name} not live after 10 s"
        );
        thread::sleep(Duration::from_millis(20));
    }
}
