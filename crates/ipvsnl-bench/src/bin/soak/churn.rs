//! The co-writer: a child process (this binary, `soak churn ...`) that
//! runs Debian's ipvsadm in a loop and, at random, deletes, edits and adds
//! services and destinations, ours and the co-tenant's alike, picking its
//! victims from `ipvsadm -S -n`.
//!
//! Control is a pipe, one byte a command: `B` asks for a burst of deletes
//! now (answered `b` when done); the parent writes `P` (pause),
//! the child finishes the ipvsadm it is running (waits for it), answers
//! `p` and blocks until `R` (resume) or `Q` (quit; it then prints its
//! figures and exits). So when `pause` returns, no ipvsadm is running: the
//! quiet sync and the check after it see a table no one else writes.

use std::io::{Read, Write};
use std::net::IpAddr;
use std::path::Path;
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::time::Duration;

use ipvsnl::{AddressFamily, ServiceKey};

use crate::rng::Rng;
use crate::saved::{parse_saved, spec_of, Listed};
use crate::tables::{our_key, COTENANT_MARKS};

/// What the churner did, as it reports on quitting.
#[derive(Debug, Default, Clone, Copy)]
pub(crate) struct ChurnFigures {
    /// ipvsadm commands that change the table, run.
    pub(crate) commands: u64,
    /// Of those, how many ipvsadm refused (non-zero exit: no such service,
    /// already exists, ...).
    pub(crate) refused: u64,
    /// `ipvsadm -S -n` listings it took to pick victims.
    pub(crate) listings: u64,
}

/// The parent's handle on the churner child.
pub(crate) struct Churner {
    child: Child,
    control: ChildStdin,
    acks: ChildStdout,
}

impl Churner {
    /// Starts `exe churn --seed S --ipvsadm PATH --schedulers a,b,c` (it
    /// inherits this process's network namespace).
    pub(crate) fn spawn(
        exe: &Path,
        seed: u64,
        ipvsadm: &Path,
        schedulers: &[String],
    ) -> Result<Self, String> {
        let mut child = Command::new(exe)
            .arg("churn")
            .arg("--seed")
            .arg(seed.to_string())
            .arg("--ipvsadm")
            .arg(ipvsadm)
            .arg("--schedulers")
            .arg(schedulers.join(","))
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .map_err(|e| format!("starting the churner {}: {e}", exe.display()))?;
        let control = child
            .stdin
            .take()
            .ok_or("the churner has no control pipe")?;
        let acks = child
            .stdout
            .take()
            .ok_or("the churner has no answer pipe")?;
        Ok(Churner {
            child,
            control,
            acks,
        })
    }

    /// Stops the churner between two ipvsadm runs; returns once it says so.
    pub(crate) fn pause(&mut self) -> Result<(), String> {
        self.control
            .write_all(b"P")
            .map_err(|e| format!("pausing the churner: {e}"))?;
        let mut b = [0u8; 1];
        self.acks
            .read_exact(&mut b)
            .map_err(|e| format!("the churner did not answer a pause: {e}"))?;
        if b[0] != b'p' {
            return Err(format!(
                "the churner answered {:?} to a pause",
                b[0] as char
            ));
        }
        Ok(())
    }

    /// Has the churner delete many services at once (ours and the
    /// co-tenant's) now; returns when it is done.
    pub(crate) fn burst(&mut self) -> Result<(), String> {
        self.control
            .write_all(b"B")
            .map_err(|e| format!("asking the churner for a burst: {e}"))?;
        let mut b = [0u8; 1];
        self.acks
            .read_exact(&mut b)
            .map_err(|e| format!("the churner did not answer a burst: {e}"))?;
        if b[0] != b'b' {
            return Err(format!(
                "the churner answered {:?} to a burst",
                b[0] as char
            ));
        }
        Ok(())
    }

    /// Lets a paused churner go on.
    pub(crate) fn resume(&mut self) -> Result<(), String> {
        self.control
            .write_all(b"R")
            .map_err(|e| format!("resuming the churner: {e}"))
    }

    /// Stops the churner for good and reads its figures.
    pub(crate) fn finish(mut self) -> Result<ChurnFigures, String> {
        self.control
            .write_all(b"Q")
            .map_err(|e| format!("stopping the churner: {e}"))?;
        drop(self.control);
        let mut text = String::new();
        self.acks
            .read_to_string(&mut text)
            .map_err(|e| format!("reading the churner's figures: {e}"))?;
        let status = self
            .child
            .wait()
            .map_err(|e| format!("waiting for the churner: {e}"))?;
        if !status.success() {
            return Err(format!("the churner exited with {status}"));
        }
        let line = text
            .lines()
            .find(|l| l.starts_with("CHURN "))
            .ok_or_else(|| format!("the churner printed no figures: {text:?}"))?;
        let mut f = ChurnFigures::default();
        for word in line.split_whitespace().skip(1) {
            let (name, value) = word.split_once('=').unwrap_or((word, ""));
            let v: u64 = value
                .parse()
                .map_err(|_| format!("bad churner figure {word:?} in {line:?}"))?;
            match name {
                "commands" => f.commands = v,
                "refused" => f.refused = v,
                "listings" => f.listings = v,
                _ => {}
            }
        }
        Ok(f)
    }
}

/// A key of the co-tenant's ranges.
fn their_key(rng: &mut Rng) -> ServiceKey {
    match rng.below(4) {
        0 => ServiceKey::tcp(
            format!("192.168.50.{}", rng.range(1, 60))
                .parse()
                .unwrap_or(IpAddr::from([192, 168, 50, 1])),
            80,
        ),
        1 => ServiceKey::udp(
            format!("fd00:50::{:x}", rng.range(1, 60))
                .parse()
                .unwrap_or(IpAddr::from([0xfd00, 0x50, 0, 0, 0, 0, 0, 1])),
            53,
        ),
        2 => ServiceKey::fwmark(COTENANT_MARKS + rng.below(100) as u32, AddressFamily::Inet),
        _ => ServiceKey::fwmark(COTENANT_MARKS + rng.below(100) as u32, AddressFamily::Inet6),
    }
}

/// A real server's `-r` value of a family.
fn server(rng: &mut Rng, v6: bool) -> String {
    if v6 {
        format!(
            "[2001:db8:20::{:x}]:{}",
            rng.range(1, 4000),
            rng.range(1, 9000)
        )
    } else {
        format!(
            "10.20.{}.{}:{}",
            rng.below(8),
            rng.range(1, 250),
            rng.range(1, 9000)
        )
    }
}

/// The arguments of one random change, given the table as last listed.
fn random_command(rng: &mut Rng, listed: &[Listed], schedulers: &[String]) -> Vec<String> {
    let owned = |v: &[&str]| v.iter().map(|s| (*s).to_owned()).collect::<Vec<_>>();
    let victim = rng.pick(listed).cloned();
    let mut args: Vec<String>;
    match (rng.below(100), victim) {
        (0..=14, Some(v)) => {
            args = owned(&["-D"]);
            args.extend(v.spec);
        }
        (15..=34, Some(v)) => {
            args = owned(&["-E"]);
            args.extend(v.spec);
            args.extend(owned(&["-s", sched(rng, schedulers)]));
            if rng.chance(0.3) {
                args.extend(owned(&["-p", &rng.range(1, 900).to_string()]));
            }
        }
        (35..=49, Some(v)) if !v.servers.is_empty() => {
            args = owned(&["-d"]);
            args.extend(v.spec);
            args.extend(owned(&["-r", rng.pick(&v.servers).map_or("", |s| s)]));
        }
        (50..=69, Some(v)) if !v.servers.is_empty() => {
            args = owned(&["-e"]);
            args.extend(v.spec.iter().cloned());
            args.extend(owned(&["-r", rng.pick(&v.servers).map_or("", |s| s)]));
            args.push(
                rng.pick(&["-m", "-g", "-i"])
                    .copied()
                    .unwrap_or("-m")
                    .to_owned(),
            );
            args.extend(owned(&["-w", &rng.below(50).to_string()]));
            if rng.chance(0.2) {
                args.extend(owned(&["-x", "500", "-y", "100"]));
            }
        }
        (70..=84, Some(v)) => {
            args = owned(&["-a"]);
            args.extend(v.spec);
            args.extend(owned(&[
                "-r",
                &server(rng, v.v6),
                "-m",
                "-w",
                &rng.range(1, 9).to_string(),
            ]));
        }
        _ => {
            let key = if rng.chance(0.5) {
                our_key(rng)
            } else {
                their_key(rng)
            };
            args = owned(&["-A"]);
            args.extend(spec_of(&key));
            args.extend(owned(&["-s", sched(rng, schedulers)]));
        }
    }
    args
}

/// A scheduler name of the list (`wlc` when it is empty).
fn sched<'a>(rng: &mut Rng, schedulers: &'a [String]) -> &'a str {
    rng.pick(schedulers).map_or("wlc", |s| s.as_str())
}

/// Deletes many listed services at once (`ipvsadm -R` of `-D` lines: 10
/// to 80 of them, ours and the co-tenant's): what makes a plan from a
/// stale cached view fail by the dozen, and a tiny buffer drop replies.
fn burst(
    rng: &mut Rng,
    ipvsadm: &str,
    listed: &[Listed],
) -> std::io::Result<std::process::ExitStatus> {
    let mut rules = String::new();
    for _ in 0..rng.range(10, 80) {
        if let Some(v) = rng.pick(listed) {
            rules.push_str("-D ");
            rules.push_str(&v.spec.join(" "));
            rules.push('\n');
        }
    }
    let mut child = Command::new(ipvsadm)
        .arg("-R")
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()?;
    if let Some(mut input) = child.stdin.take() {
        // A refused line makes ipvsadm stop reading: a broken pipe then.
        let _ = input.write_all(rules.as_bytes());
    }
    child.wait()
}

/// A control byte if one is waiting (`wait`: block until one comes);
/// `None` when none is waiting, `Some(b'Q')` when the pipe closed.
fn control(wait: bool) -> Option<u8> {
    let mut pfd = libc::pollfd {
        fd: 0,
        events: libc::POLLIN,
        revents: 0,
    };
    // SAFETY: one pollfd that lives across the call.
    let n = unsafe { libc::poll(&mut pfd, 1, if wait { -1 } else { 0 }) };
    if n <= 0 {
        return if n < 0 && wait { Some(b'Q') } else { None };
    }
    let mut b = 0u8;
    // SAFETY: reads at most one byte into `b`, which we own. Raw read:
    // a buffered stdin would hide bytes from poll.
    let r = unsafe { libc::read(0, (&mut b as *mut u8).cast(), 1) };
    if r == 1 {
        Some(b)
    } else {
        Some(b'Q')
    }
}

/// Writes bytes to the answer pipe (fd 1), unbuffered.
fn answer(bytes: &[u8]) {
    let mut out = std::io::stdout().lock();
    let _ = out.write_all(bytes);
    let _ = out.flush();
}

/// The churner's main loop (`soak churn ...`); returns the exit status.
pub(crate) fn run_child(args: &[String]) -> i32 {
    let mut seed = 1u64;
    let mut ipvsadm = String::from("/usr/sbin/ipvsadm");
    let mut schedulers: Vec<String> = Vec::new();
    let mut it = args.iter();
    while let Some(a) = it.next() {
        let v = it.next().cloned().unwrap_or_default();
        match a.as_str() {
            "--seed" => seed = v.parse().unwrap_or(1),
            "--ipvsadm" => ipvsadm = v,
            "--schedulers" => {
                schedulers = v
                    .split(',')
                    .filter(|s| !s.is_empty())
                    .map(str::to_owned)
                    .collect()
            }
            other => {
                eprintln!("soak churn: unknown argument {other:?}");
                return 2;
            }
        }
    }
    let mut rng = Rng::new(seed);
    let mut f = ChurnFigures::default();
    let mut listed: Vec<Listed> = Vec::new();
    loop {
        match control(false) {
            Some(b'P') => {
                answer(b"p");
                match control(true) {
                    Some(b'R') => {}
                    _ => break,
                }
            }
            Some(b'B') => {
                // A burst asked for: from a fresh listing, answered when done.
                if let Ok(out) = Command::new(&ipvsadm)
                    .args(["-S", "-n"])
                    .stderr(Stdio::null())
                    .output()
                {
                    listed = parse_saved(&String::from_utf8_lossy(&out.stdout));
                    f.listings += 1;
                }
                if !listed.is_empty() && burst(&mut rng, &ipvsadm, &listed).is_ok() {
                    f.commands += 1;
                }
                answer(b"b");
                continue;
            }
            Some(b'R') | None => {}
            Some(_) => break,
        }
        if listed.is_empty() || rng.chance(0.15) {
            match Command::new(&ipvsadm)
                .args(["-S", "-n"])
                .stderr(Stdio::null())
                .output()
            {
                Ok(out) => {
                    listed = parse_saved(&String::from_utf8_lossy(&out.stdout));
                    f.listings += 1;
                }
                Err(e) => {
                    eprintln!("soak churn: running {ipvsadm} -S -n: {e}");
                    return 1;
                }
            }
        }
        let status = if rng.chance(0.12) && !listed.is_empty() {
            burst(&mut rng, &ipvsadm, &listed)
        } else {
            let cmd = random_command(&mut rng, &listed, &schedulers);
            Command::new(&ipvsadm)
                .args(&cmd)
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .status()
        };
        match status {
            Ok(s) => {
                f.commands += 1;
                if !s.success() {
                    f.refused += 1;
                }
            }
            Err(e) => {
                eprintln!("soak churn: running {ipvsadm}: {e}");
                return 1;
            }
        }
        std::thread::sleep(Duration::from_millis(rng.below(20)));
    }
    answer(
        format!(
            "CHURN commands={} refused={} listings={}\n",
            f.commands, f.refused, f.listings
        )
        .as_bytes(),
    );
    0
}
