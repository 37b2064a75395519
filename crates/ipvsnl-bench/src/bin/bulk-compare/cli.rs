//! The whole-process rows: `ipvsadm -R` and `ipvsadm -S -n` as processes
//! (ours and Debian's) against the plain client as a process of its own
//! (`plain-client restore` / `save`), each timed from spawn to exit,
//! start-up included. Every restore runs in a fresh namespace and must
//! leave the desired table; every save runs in a namespace holding it and
//! must print the same bytes as the others. A row that fails either is
//! invalid: the check says MISMATCH and `bulk-compare` exits non-zero.

use std::path::{Path, PathBuf};

use super::*;

/// The whole-process contestants, in their rotation order: the plain
/// client, our ipvsadm, Debian's.
pub(crate) const CLI: [&str; 3] = ["plain-client", "ours, ipvsadm", "Debian ipvsadm"];

/// Where the three programs are.
#[derive(Debug, Clone)]
pub(crate) struct Programs {
    /// `plain-client`.
    pub(crate) plain: PathBuf,
    /// Our ipvsadm.
    pub(crate) ours: PathBuf,
    /// Debian's ipvsadm.
    pub(crate) debian: PathBuf,
}

impl Programs {
    /// From the options, the environment and the usual places:
    /// `--ours-ipvsadm` or `IPVSNL_OURS_IPVSADM` (default `ipvsnl-ipvsadm`
    /// next to this program), `--plain-client` (default next to this
    /// program), Debian's in `/usr/sbin` or `/sbin`.
    pub(crate) fn find(ours: Option<PathBuf>, plain: Option<PathBuf>) -> Self {
        let here = std::env::current_exe()
            .ok()
            .and_then(|p| p.parent().map(Path::to_path_buf))
            .unwrap_or_default();
        let ours = ours
            .or_else(|| std::env::var_os("IPVSNL_OURS_IPVSADM").map(PathBuf::from))
            .unwrap_or_else(|| here.join("ipvsnl-ipvsadm"));
        let debian = ["/usr/sbin/ipvsadm", "/sbin/ipvsadm"]
            .iter()
            .map(PathBuf::from)
            .find(|p| p.exists())
            .unwrap_or_else(|| PathBuf::from("/usr/sbin/ipvsadm"));
        Programs {
            plain: plain.unwrap_or_else(|| here.join("plain-client")),
            ours,
            debian,
        }
    }

    /// The program and arguments of contestant `which` for `save` or not.
    fn command(&self, which: usize, save: bool) -> (&Path, &'static [&'static str]) {
        match (which, save) {
            (0, false) => (&self.plain, &["restore"]),
            (0, true) => (&self.plain, &["save"]),
            (1, false) => (&self.ours, &["-R"]),
            (1, true) => (&self.ours, &["-S", "-n"]),
            (_, false) => (&self.debian, &["-R"]),
            (_, true) => (&self.debian, &["-S", "-n"]),
        }
    }

    /// The programs missing.
    pub(crate) fn missing(&self) -> Vec<String> {
        [&self.plain, &self.ours, &self.debian]
            .iter()
            .filter(|p| !p.exists())
            .map(|p| p.display().to_string())
            .collect()
    }
}

/// Runs `program` with `args` (and `stdin`), timed from spawn to exit as
/// a child: (its stdout, the times, whether it exited 0 and its stderr).
pub(crate) fn run_process(
    program: &Path,
    args: &[&str],
    stdin: Option<&str>,
) -> (String, Times, Result<(), String>) {
    let (u0, s0) = timing::rusage(libc::RUSAGE_CHILDREN);
    let t = Instant::now();
    let mut child = Command::new(program)
        .args(args)
        .stdin(if stdin.is_some() {
            Stdio::piped()
        } else {
            Stdio::null()
        })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("run {}: {e}", program.display()));
    if let (Some(text), Some(mut pipe)) = (stdin, child.stdin.take()) {
        pipe.write_all(text.as_bytes())
            .unwrap_or_else(|e| panic!("feed {}: {e}", program.display()));
    }
    let out = child.wait_with_output().expect("wait for the child");
    let wall = t.elapsed().as_secs_f64();
    let (u1, s1) = timing::rusage(libc::RUSAGE_CHILDREN);
    let status = if out.status.success() {
        Ok(())
    } else {
        Err(format!(
            "{} {args:?}: {}: {}",
            program.display(),
            out.status,
            String::from_utf8_lossy(&out.stderr).trim()
        ))
    };
    (
        String::from_utf8_lossy(&out.stdout).into_owned(),
        Times {
            wall,
            user: u1 - u0,
            sys: s1 - s0,
        },
        status,
    )
}

impl Bench {
    /// Whether the whole-process rows can run; says why not otherwise.
    fn cli_ready(&mut self, name: &str) -> bool {
        let missing = self.programs.missing();
        if !missing.is_empty() {
            self.invalid = true;
            self.check(
                format!(
                    "{name}: whole-process rows not run, missing: {}",
                    missing.join(", ")
                ),
                false,
            );
        }
        missing.is_empty()
    }

    /// `-S -n` of the three, over the rounds (rotated), in the caller's
    /// namespace, which holds `want`. Returns their runs in [`CLI`] order.
    pub(crate) fn cli_save(&mut self, name: &str, want: &Table, rows: &mut Vec<Row>) -> Vec<Runs> {
        if !self.cli_ready(name) {
            return Vec::new();
        }
        let mut runs: Vec<Runs> = vec![Runs::default(); 3];
        let mut outputs: [Option<String>; 3] = Default::default();
        let mut same = true;
        let mut failures = Vec::new();
        std::thread::sleep(self.opts.pause);
        for r in 0..self.opts.cli_rounds {
            for k in 0..3 {
                let which = (r + k) % 3;
                let (program, args) = self.programs.command(which, true);
                let (text, t, status) = run_process(program, args, None);
                if let Err(e) = status {
                    failures.push(e);
                }
                progress(format_args!(
                    "{name}: round {} save {}: {:.3} s",
                    r + 1,
                    CLI[which],
                    t.wall
                ));
                runs[which].0.push(t);
                match &outputs[which] {
                    Some(first) => same &= *first == text,
                    None => outputs[which] = Some(text),
                }
            }
        }
        let plain = outputs[0].clone().unwrap_or_default();
        for (which, out) in outputs.iter().enumerate().skip(1) {
            let out = out.as_deref().unwrap_or_default();
            if out != plain {
                same = false;
                let at = plain.lines().zip(out.lines()).position(|(a, b)| a != b);
                progress(format_args!(
                    "{name}: {} -S -n differs from plain-client save (first differing line {at:?}; {} vs {} bytes)",
                    CLI[which],
                    out.len(),
                    plain.len()
                ));
            }
        }
        let adds = plain.lines().filter(|l| l.starts_with("-A")).count();
        let dadds = plain.lines().filter(|l| l.starts_with("-a")).count();
        let counts = adds == want.len() && dadds == want.destination_count();
        let valid = same && counts && failures.is_empty();
        self.invalid |= !valid;
        for f in &failures {
            self.check(format!("{name}: {f}"), false);
        }
        self.check(
            format!(
                "{name}: the -S -n outputs of {} are byte-identical in every round ({} bytes, {adds} services / {dadds} destinations)",
                CLI.join(", "),
                plain.len()
            ),
            same && counts,
        );
        let label = |who: &str| {
            let what = if who == CLI[0] {
                "plain-client save"
            } else {
                "-S -n"
            };
            let who = if who == CLI[0] {
                String::new()
            } else {
                format!("{who} ")
            };
            format!(
                "{who}{what} (process){}",
                if valid { "" } else { " INVALID" }
            )
        };
        rows.push(row("whole-process save", label(CLI[0]), &runs[0]));
        for which in 1..3 {
            rows.push(
                row("whole-process save", label(CLI[which]), &runs[which]).vs("plain", &runs[0]),
            );
        }
        runs
    }

    /// `-R` of `rules` by the three, over the rounds (rotated), each in a
    /// fresh namespace, each checked to leave `want`. Returns their runs in
    /// [`CLI`] order.
    pub(crate) fn cli_restore(
        &mut self,
        name: &str,
        want: &Table,
        rules: &str,
        rows: &mut Vec<Row>,
    ) -> Vec<Runs> {
        if !self.cli_ready(name) {
            return Vec::new();
        }
        let mut runs: Vec<Runs> = vec![Runs::default(); 3];
        let mut tables: [Option<Table>; 3] = Default::default();
        let mut ok = [true; 3];
        let mut failures = Vec::new();
        for r in 0..self.opts.cli_rounds {
            for k in 0..3 {
                let which = (r + k) % 3;
                self.next_namespace();
                let (program, args) = self.programs.command(which, false);
                let (_, t, status) = run_process(program, args, Some(rules));
                if let Err(e) = status {
                    failures.push(e);
                    ok[which] = false;
                }
                progress(format_args!(
                    "{name}: round {} restore {}: {:.3} s",
                    r + 1,
                    CLI[which],
                    t.wall
                ));
                runs[which].0.push(t);
                let mut c = ready_client();
                let left = listed(&mut c);
                ok[which] &= left.same_settings(want);
                if tables[which].is_none() {
                    tables[which] = Some(left);
                }
                self.leave(c);
            }
        }
        let identical = match &tables {
            [Some(a), Some(b), Some(c)] => a.same_settings(b) && a.same_settings(c),
            _ => false,
        };
        for f in &failures {
            self.check(format!("{name}: {f}"), false);
        }
        for (which, good) in ok.iter().enumerate() {
            self.check(
                format!(
                    "{name}: {} restore left the desired table in every round",
                    CLI[which]
                ),
                *good,
            );
        }
        self.check(
            format!("{name}: the -R contestants left identical tables"),
            identical,
        );
        let valid = ok.iter().all(|&g| g) && identical;
        self.invalid |= !valid;
        let label = |which: usize| {
            let what = match which {
                0 => "plain-client restore".to_owned(),
                w => format!("{} -R", CLI[w]),
            };
            format!("{what} (process){}", if valid { "" } else { " INVALID" })
        };
        rows.push(row("whole-process restore", label(0), &runs[0]));
        for which in 1..3 {
            rows.push(
                row("whole-process restore", label(which), &runs[which]).vs("plain", &runs[0]),
            );
        }
        runs
    }
}
