//! The machinery of the keepalived side by side (keepalived_side.rs): one
//! case run twice, each time in a fresh network namespace with the same
//! real servers up (busybox httpd on addresses of `lo`): once under
//! Debian's keepalived (`keepalived -C`, checkers only), once under
//! `ipvs-agent run` on the file `ipvs-agent import keepalived` wrote.
//! Each side's `ipvsadm -S -n` must reach the table the case states (for
//! the agent: keepalived's, with the case's listed differences), first
//! with every server up, then with one real server killed.
//!
//! The tables are polled (every 100 ms, up to [`LIMIT`]) until they are
//! what the case says: the samples check every 6 s and keepalived retries
//! up to 3 times, so a failure takes tens of seconds to show.

use crate::agent_support::{wait_for, Agent, Scratch};
use crate::common;

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use ipvsnl_test_support::netns::fresh_netns;

/// Where the VM has keepalived's sample configurations (.ci/vm/initramfs.bash,
/// with IPVSNL_VM_PEERS=1, which .ci/kernel-tests sets).
pub const SAMPLES: &str = "/usr/share/doc/keepalived/samples";

/// How long a table may take to become what a case says: a few of the
/// samples' check rounds (6 s, retries 3 s apart), with room for TCG.
pub const LIMIT: Duration = Duration::from_secs(120);

/// A case's configuration: a Debian sample by its suffix, or a text.
pub enum Conf {
    Sample(&'static str),
    Own(&'static str),
}

/// When a difference holds: with every server up, after the kill, or both.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Phase {
    Up,
    Down,
    Both,
}

/// One expected difference: keepalived's line (None: keepalived has no
/// such line) is the agent's line (None: the agent has none), and why.
pub struct Diff {
    pub phase: Phase,
    pub keepalived: Option<String>,
    pub agent: Option<String>,
    pub why: &'static str,
}

impl Diff {
    /// keepalived's `k` is the agent's `a` (`""`: no line on that side).
    pub fn new(phase: Phase, k: &str, a: &str, why: &'static str) -> Diff {
        let some = |s: &str| (!s.is_empty()).then(|| s.to_owned());
        Diff {
            phase,
            keepalived: some(k),
            agent: some(a),
            why,
        }
    }
}

/// Lines as owned strings.
pub fn lines(l: &[&str]) -> Vec<String> {
    l.iter().map(|s| (*s).to_owned()).collect()
}

/// A side-by-side case.
pub struct Case {
    pub conf: Conf,
    /// The real servers that listen (`busybox httpd`), as `ADDR:PORT`
    /// (`[V6]:PORT`); their addresses go on `lo`.
    pub listeners: &'static [&'static str],
    /// The listener killed (an index into `listeners`); None: no kill
    /// (a case whose servers no check of ours can bring up or down).
    pub kill: Option<usize>,
    /// keepalived's `ipvsadm -S -n` with every listener up.
    pub up: Vec<String>,
    /// keepalived's `ipvsadm -S -n` after the kill.
    pub down: Vec<String>,
    /// How the agent's tables differ from keepalived's.
    pub diffs: Vec<Diff>,
}

/// Which program builds the table.
#[derive(Clone, Copy, Debug)]
enum Side {
    Keepalived,
    Agent,
}

/// Runs `case` under keepalived, then under the agent; panics at the first
/// table that is not what the case says.
pub fn side_by_side(name: &str, case: &Case) {
    let scratch = Scratch::new(&format!("ka-{name}"));
    let conf = scratch.path("keepalived.conf");
    match case.conf {
        Conf::Sample(s) => {
            let from = Path::new(SAMPLES).join(format!("keepalived.conf.{s}"));
            fs::copy(&from, &conf).unwrap_or_else(|e| {
                panic!(
                    "{}: {e} (keepalived's samples are in the VM with IPVSNL_VM_PEERS=1)",
                    from.display()
                )
            });
        }
        Conf::Own(text) => fs::write(&conf, text).expect("write the configuration"),
    }
    let toml = scratch.path("agent.toml");
    let out = Command::new(common::tool("ipvs-agent"))
        .args(["import", "keepalived"])
        .arg(&conf)
        .arg("-o")
        .arg(&toml)
        .output()
        .expect("run ipvs-agent import");
    assert!(
        out.status.success(),
        "ipvs-agent import keepalived: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    for side in [Side::Keepalived, Side::Agent] {
        run_side(side, case, &scratch, &conf, &toml);
    }
}

/// One side: a fresh namespace, the listeners, the program, the two tables.
fn run_side(side: Side, case: &Case, scratch: &Scratch, conf: &Path, toml: &Path) {
    fresh_netns();
    let www = scratch.path("www");
    fs::create_dir_all(www.join("testurl3")).expect("the web root");
    fs::write(www.join("index.html"), "up\n").expect("index.html");
    fs::write(www.join("testurl3/test.jsp"), "up\n").expect("test.jsp");
    let mut lines = Vec::new();
    for l in case.listeners {
        let (addr, v6) = host(l);
        let line = if v6 {
            format!("addr add {addr}/128 dev lo nodad")
        } else {
            format!("addr add {addr}/32 dev lo")
        };
        if !lines.contains(&line) {
            lines.push(line);
        }
    }
    ipvsnl_test_support::commands::ip_batch(&lines);
    let mut listeners: Vec<Child> = case.listeners.iter().map(|l| httpd(l, &www)).collect();
    let peer = Peer::start(side, scratch, conf, toml);
    let want_up = expected(side, &case.up, &case.diffs, Phase::Up);
    let took = reach(side, &peer, &want_up, "every server up");
    println!("{side:?}: every server up: the table in {took:?}");
    if let Some(kill) = case.kill {
        let victim = &mut listeners[kill];
        let _ = victim.kill();
        let _ = victim.wait();
        let want_down = expected(side, &case.down, &case.diffs, Phase::Down);
        let took = reach(side, &peer, &want_down, "one killed");
        println!(
            "{side:?}: {} killed: the table in {took:?}",
            case.listeners[kill]
        );
    }
    drop(peer);
    for mut l in listeners {
        let _ = l.kill();
        let _ = l.wait();
    }
}

/// The table `side` must show: keepalived's, with the differences of
/// `phase` applied for the agent. Sorted.
fn expected(side: Side, keepalived: &[String], diffs: &[Diff], phase: Phase) -> Vec<String> {
    let mut want: Vec<String> = keepalived.to_vec();
    if let Side::Agent = side {
        for d in diffs
            .iter()
            .filter(|d| d.phase == phase || d.phase == Phase::Both)
        {
            if let Some(k) = &d.keepalived {
                let at = want.iter().position(|l| l == k).unwrap_or_else(|| {
                    panic!(
                        "the difference {k:?} -> {:?} ({}): keepalived's table has no such line",
                        d.agent, d.why
                    )
                });
                want.remove(at);
            }
            if let Some(a) = &d.agent {
                want.push(a.clone());
            }
        }
    }
    want.sort();
    want
}

/// Polls `ipvsadm -S -n` until it is `want`; the time it took.
fn reach(side: Side, peer: &Peer, want: &[String], what: &str) -> Duration {
    let started = Instant::now();
    let mut last = Vec::new();
    let done = wait_for(LIMIT, || {
        last = table();
        (last == want).then_some(())
    });
    assert!(
        done.is_some(),
        "{side:?}, {what}: after {:?} the table is\n{}\nnot\n{}\nlog:\n{}",
        started.elapsed(),
        last.join("\n"),
        want.join("\n"),
        peer.log()
    );
    started.elapsed()
}

/// `ipvsadm -S -n` of the thread's namespace, its lines sorted.
pub fn table() -> Vec<String> {
    let out = ipvsnl_test_support::commands::run("ipvsadm", &["-S", "-n"]);
    assert!(out.status.success(), "ipvsadm -S -n failed");
    let mut lines: Vec<String> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(str::to_owned)
        .collect();
    lines.sort();
    lines
}

/// The address of `ADDR:PORT` or `[V6]:PORT`, and whether it is IPv6.
fn host(listener: &str) -> (&str, bool) {
    if let Some(rest) = listener.strip_prefix('[') {
        (rest.split(']').next().expect("[V6]:PORT"), true)
    } else {
        (listener.rsplit_once(':').expect("ADDR:PORT").0, false)
    }
}

/// `busybox httpd` in the foreground on `listener`, serving `www`.
fn httpd(listener: &str, www: &Path) -> Child {
    Command::new("busybox")
        .args(["httpd", "-f", "-p", listener, "-h"])
        .arg(www)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn busybox httpd")
}

/// The program building the table, killed when dropped.
enum Peer {
    Keepalived(Child, PathBuf),
    Agent(Agent),
}

impl Peer {
    fn start(side: Side, scratch: &Scratch, conf: &Path, toml: &Path) -> Peer {
        match side {
            Side::Keepalived => {
                let log = scratch.path("keepalived.log");
                let out = fs::File::create(&log).expect("keepalived's log");
                let err = out.try_clone().expect("keepalived's log");
                let child = Command::new("keepalived")
                    .args(["-n", "-l", "-D", "-C", "-f"])
                    .arg(conf)
                    .arg("-p")
                    .arg(scratch.path("keepalived.pid"))
                    .arg("-c")
                    .arg(scratch.path("checkers.pid"))
                    .stdin(Stdio::null())
                    .stdout(out)
                    .stderr(err)
                    .spawn()
                    .expect("spawn keepalived (in the VM with IPVSNL_VM_PEERS=1)");
                Peer::Keepalived(child, log)
            }
            Side::Agent => {
                let mut agent = Agent::start(toml, 9100, scratch.path("agent.log"));
                agent.wait_ready();
                Peer::Agent(agent)
            }
        }
    }

    fn log(&self) -> String {
        match self {
            Peer::Keepalived(_, log) => fs::read_to_string(log).unwrap_or_default(),
            Peer::Agent(a) => a.log(),
        }
    }
}

impl Drop for Peer {
    fn drop(&mut self) {
        if let Peer::Keepalived(child, _) = self {
            // SIGTERM: keepalived's parent stops its checker child too.
            if let Ok(pid) = libc::pid_t::try_from(child.id()) {
                // SAFETY: kill(2) with our own child's pid.
                unsafe { libc::kill(pid, libc::SIGTERM) };
            }
            let stopped = wait_for(Duration::from_secs(10), || child.try_wait().ok().flatten());
            if stopped.is_none() {
                let _ = child.kill();
                let _ = child.wait();
            }
        }
    }
}
