//! Support for the kernel tests (`tests/*.rs` with `mod common;`).
//!
//! Kernel tests need root and a kernel with IPVS. They are marked
//! `#[ignore = "needs IPVS: runs in the VM via .ci/kernel-tests"]`, so a plain
//! `cargo test` on the host skips them; `.ci/kernel-tests` runs them with
//! `--ignored` inside a qemu VM booting Debian's 6.1 and 6.12 cloud kernels.
//!
//! What the soak and the benches use too is in the test-support crate
//! (`crates/ipvsnl-test-support`): namespaces, the table oracle and diff,
//! numbered keys. Here is what only the kernel tests use.
//!
//! Each test calls [`fresh_netns`] first: it moves the *calling thread* into a new
//! network namespace with its own, empty IPVS table. libtest runs every test on a
//! thread of its own (unless `--test-threads=1`, where tests share the main
//! thread; each `fresh_netns` call then still gives a new namespace), so tests run
//! in parallel without seeing each other's services.
//!
//! Things that follow the thread's namespace: sockets created by the thread
//! (netlink included), child processes it spawns ([`ipvsadm`]), `/proc/sys/net/...`
//! opened by it, and `/proc/thread-self/net/...` ([`proc_net`]). `/proc/net` is
//! `/proc/self/net`, i.e. the namespace of the process's *main* thread: do not read
//! it from a test.

#![allow(dead_code)]

pub mod both;
pub mod churn;
pub mod named_netns;
pub mod ops;
pub mod prom;
pub mod reload;

use std::os::unix::process::CommandExt;
use std::path::PathBuf;
use std::process::{Command, Output};

// The namespace a test, from the test-support crate (shared with the soak
// and the benches), under the names every test uses.
#[allow(unused_imports)] // each test binary uses some of them
pub use ipvsnl_test_support::commands::run;
#[allow(unused_imports)]
pub use ipvsnl_test_support::netns::{fresh_netns, link_is_up, require_root, set_link_up};

/// The `#[ignore]` reason every kernel test uses (for reference; attributes need a
/// literal): `#[ignore = "needs IPVS: runs in the VM via .ci/kernel-tests"]`.
pub const IGNORE_REASON: &str = "needs IPVS: runs in the VM via .ci/kernel-tests";

/// uid and gid of the unprivileged user (`nobody` / `nogroup`) present in the VM.
pub const NOBODY: u32 = 65534;

/// True inside the test VM (`.ci/vm/run` sets `IPVSNL_IN_VM=1`).
pub fn in_vm() -> bool {
    std::env::var_os("IPVSNL_IN_VM").is_some_and(|v| !v.is_empty() && v != "0")
}

/// The path of one of the project's programs (`ipvsadm`, `ipvs-doctor`,
/// `demo`...), wherever it was put:
///
/// * in the VM, the tools `.ci/kernel-tests` installed with `cargo install`
///   (crates with a `[[bin]]`) under `IPVSNL_TOOLS`, then the example
///   binaries it staged under `IPVSNL_EXAMPLES`;
/// * on the host, beside the test binary: `target/<profile>/<name>` (a
///   `[[bin]]`, after `cargo build`), then `target/<profile>/examples/<name>`.
///
/// The first of these that exists is returned, so a program is found
/// whether it is a crate's `[[bin]]` or still an example. Panics, naming
/// every place it looked, if none does.
pub fn tool(name: &str) -> PathBuf {
    let mut dirs: Vec<PathBuf> = ["IPVSNL_TOOLS", "IPVSNL_EXAMPLES"]
        .iter()
        .filter_map(std::env::var_os)
        .map(PathBuf::from)
        .collect();
    if dirs.is_empty() {
        let exe = std::env::current_exe().expect("current_exe");
        // target/<profile>/deps/<test> -> target/<profile>
        let profile = exe
            .parent()
            .and_then(|deps| deps.parent())
            .expect("test binary is not under target/<profile>/deps");
        dirs.push(profile.to_path_buf());
        dirs.push(profile.join("examples"));
    }
    let candidates: Vec<PathBuf> = dirs.iter().map(|d| d.join(name)).collect();
    if let Some(found) = candidates.iter().find(|p| p.is_file()) {
        return found.clone();
    }
    panic!(
        "program {name:?} not found; looked at {} (build it: `cargo build --workspace --bins --examples`)",
        candidates
            .iter()
            .map(|p| p.display().to_string())
            .collect::<Vec<_>>()
            .join(", ")
    );
}

/// The running kernel's release (`uname -r`), e.g. `6.1.0-57-cloud-amd64`.
pub fn kernel_release() -> String {
    std::fs::read_to_string("/proc/sys/kernel/osrelease")
        .expect("read /proc/sys/kernel/osrelease")
        .trim()
        .to_owned()
}

/// The running kernel's (major, minor) version, e.g. (6, 12).
pub fn kernel_version() -> (u32, u32) {
    let rel = kernel_release();
    let mut it = rel.split(|c: char| !c.is_ascii_digit());
    let major = it.next().and_then(|s| s.parse().ok()).unwrap_or(0);
    let minor = it.next().and_then(|s| s.parse().ok()).unwrap_or(0);
    (major, minor)
}

/// Path of `/proc/thread-self/net/<name>`: the current *thread's* namespace view
/// (unlike `/proc/net/<name>`, which is the main thread's).
pub fn proc_net(name: &str) -> PathBuf {
    PathBuf::from("/proc/thread-self/net").join(name)
}

/// Reads `/proc/thread-self/net/<name>` (e.g. `ip_vs`, `ip_vs_conn`, `ip_vs_stats`).
pub fn read_proc_net(name: &str) -> String {
    let path = proc_net(name);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("reading {}: {e}", path.display()))
}

/// The name libtest gives the test `name` of the module `module_path`
/// (`module_path!()` there): its path without the binary's crate name,
/// for a test that runs its own binary with `--exact` to make a child.
///
/// ```ignore
/// assert_eq!(test_name("kernel_tools::doctor", "child"), "doctor::child");
/// ```
pub fn test_name(module_path: &str, name: &str) -> String {
    match module_path.split_once("::") {
        Some((_, module)) => format!("{module}::{name}"),
        None => name.to_owned(),
    }
}

/// Runs the reference `ipvsadm` (Debian's, from PATH) in the current thread's
/// network namespace.
pub fn ipvsadm(args: &[&str]) -> Output {
    run("ipvsadm", args)
}

/// Runs `ipvsadm` with `stdin` fed to it (e.g. `-R`).
pub fn ipvsadm_stdin(args: &[&str], stdin: &str) -> Output {
    use std::io::Write;
    use std::process::Stdio;
    let mut child = Command::new("ipvsadm")
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("cannot run ipvsadm: {e}"));
    child
        .stdin
        .take()
        .unwrap()
        .write_all(stdin.as_bytes())
        .expect("write ipvsadm stdin");
    child.wait_with_output().expect("wait for ipvsadm")
}

/// Asserts that an `Output` succeeded (showing the command, status and stderr
/// otherwise) and returns its stdout.
pub fn assert_ok(what: &str, out: Output) -> String {
    assert!(
        out.status.success(),
        "{what} failed ({}):\nstdout: {}\nstderr: {}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).expect("stdout is UTF-8")
}

/// Runs `ipvsadm args`, asserts it succeeded, returns its stdout. A
/// listing of the services (`-S`, `-L`/`-l` without `--stats`, `--rate`,
/// `--timeout` or `--daemon`) is read as [`ipvsadm_listing`] reads it.
pub fn ipvsadm_ok(args: &[&str]) -> String {
    if is_service_listing(args) {
        return ipvsadm_listing(args);
    }
    assert_ok(&format!("ipvsadm {}", args.join(" ")), ipvsadm(args))
}

/// Whether `args` make the reference list the service table, and nothing
/// that changes from one run to the next (counters, rates).
pub fn is_service_listing(args: &[&str]) -> bool {
    let listing = matches!(
        args.first(),
        Some(&("-S" | "-L" | "-l" | "--save" | "--list"))
    );
    let varying = ["--stats", "--rate", "--timeout", "--daemon"];
    listing && !args.iter().any(|a| varying.contains(a))
}

/// How many runs [`ipvsadm_listing`] makes at the most.
const LISTING_RUNS: usize = 8;

/// The reference ipvsadm's listing `args` of this namespace's table, run
/// until two runs in a row print the same.
///
/// The kernel resumes a service dump at the position, counted over the
/// services of *every* namespace, where the previous part ended; the
/// reference reads each part as the kernel makes it (the last, with
/// `NLMSG_DONE`, made at its next read). A service another namespace adds
/// or deletes between two parts shifts the count: this namespace's
/// services come out twice, or not at all. Kernel tests run in parallel,
/// each changing its own table, so the reference's listing of a table
/// nobody changes can repeat a service (seen on 6.12: `-S -n` of one
/// service printed it three times). The library's own listings are whole
/// (`crates/ipvsnl/src/listing/whole.rs`); the reference has no guard, so
/// a test reads it until it says the same twice.
pub fn ipvsadm_listing(args: &[&str]) -> String {
    stable_listing(&format!("ipvsadm {}", args.join(" ")), || ipvsadm(args))
}

/// The stdout of the listing command `run` (named `what`), which must
/// succeed, run until two runs in a row print the same (why:
/// [`ipvsadm_listing`]).
pub fn stable_listing(what: &str, mut run: impl FnMut() -> Output) -> String {
    until_two_agree(what, || assert_ok(what, run()))
}

/// What `run` (named `what`) gives, run until two runs in a row give the
/// same (at most [`LISTING_RUNS`] runs; then it panics with every result).
pub fn until_two_agree<T: PartialEq + std::fmt::Debug>(
    what: &str,
    mut run: impl FnMut() -> T,
) -> T {
    let mut seen: Vec<T> = Vec::new();
    while seen.len() < LISTING_RUNS {
        let out = run();
        if seen.last() == Some(&out) {
            return out;
        }
        seen.push(out);
    }
    panic!("{what}: no two runs in a row agreed in {LISTING_RUNS}: {seen:#?}")
}

/// A `Command` for `program` that runs as the unprivileged user nobody/nogroup
/// (uid/gid 65534, no supplementary groups) in the current thread's namespace.
pub fn command_as_nobody(program: &str) -> Command {
    let mut cmd = Command::new(program);
    // std drops the supplementary groups (setgroups(0)) when root sets a uid.
    cmd.uid(NOBODY).gid(NOBODY);
    cmd
}

/// ipvsadm's arguments for a master sync daemon with every option set (on
/// `lo`, sync id 5, max length 1000, group 224.0.0.99, port 7777, TTL 2).
pub const MASTER_DAEMON_EVERY_OPTION: &[&str] = &[
    "--start-daemon",
    "master",
    "--mcast-interface",
    "lo",
    "--syncid",
    "5",
    "--sync-maxlen",
    "1000",
    "--mcast-group",
    "224.0.0.99",
    "--mcast-port",
    "7777",
    "--mcast-ttl",
    "2",
];

/// A lock that makes tests take turns (a poisoned one is taken anyway: the
/// test that panicked reports its own failure).
pub fn serial(lock: &'static std::sync::Mutex<()>) -> std::sync::MutexGuard<'static, ()> {
    lock.lock().unwrap_or_else(|e| e.into_inner())
}
