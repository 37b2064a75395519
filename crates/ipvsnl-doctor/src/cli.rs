//! The command line of the `ipvs-doctor` binary (src/main.rs), declared
//! with clap's derive and kept in the library so it is tested with the
//! rest of the crate: `--help`, `--version`, and usage errors (exit 2)
//! that name the argument and suggest the nearest flag.

use std::path::PathBuf;

use clap::Parser;

use crate::Options;

/// What follows the options in `--help`.
const EXIT_STATUS: &str = "\
Exit status: 0 IPVS is usable with the required schedulers, 1 it is not,
2 bad arguments.";

/// Longest scheduler name the kernel accepts (`IP_VS_SCHEDNAME_MAXLEN` less
/// its NUL).
const SCHEDNAME_MAX: usize = 15;

/// The command line: what to inspect and how to print it.
///
/// ```
/// use clap::Parser;
/// use ipvsnl_doctor::cli::Args;
/// let args = Args::try_parse_from(["ipvs-doctor", "--scheduler", "mh", "--json"]).unwrap();
/// assert!(args.json);
/// assert!(args.options().schedulers.contains(&"ip_vs_mh".to_string()));
/// let err = Args::try_parse_from(["ipvs-doctor", "--jsn"]).unwrap_err();
/// assert_eq!(err.exit_code(), 2);
/// assert!(err.to_string().contains("--json"), "a suggestion: {err}");
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Parser)]
#[command(
    name = "ipvs-doctor",
    version,
    about = "Tells whether this host (or a network namespace) can use IPVS, and what to \
             do when it cannot.",
    after_help = EXIT_STATUS
)]
#[non_exhaustive]
pub struct Args {
    /// Also require this scheduler (rr, wrr, sh, mh, ... or ip_vs_NAME);
    /// repeatable. ip_vs_rr, ip_vs_wrr and ip_vs_sh (what kube-proxy
    /// needs) are always checked
    #[arg(long, value_name = "NAME", value_parser = scheduler_name)]
    pub scheduler: Vec<String>,
    /// Run modprobe for what is not loaded and report failures
    #[arg(long)]
    pub load: bool,
    /// Inspect the network namespace bound at PATH (/var/run/netns/NAME,
    /// /proc/PID/ns/net)
    #[arg(long, value_name = "PATH", value_parser = existing_path)]
    pub netns: Option<PathBuf>,
    /// Do not ask the kernel over netlink (the probe may load ip_vs, since
    /// resolving the IPVS family auto-loads it)
    #[arg(long)]
    pub no_probe: bool,
    /// Print the report as JSON
    #[arg(long)]
    pub json: bool,
}

/// `ipvs-doctor`'s command line as a [`clap::Command`]: every flag with
/// its help, what [`Args`] reads. For the man page and the shell
/// completions (packagers: `cargo run -p ipvsnl-xtask`).
///
/// ```
/// let cmd = ipvsnl_doctor::cli::command();
/// assert_eq!(cmd.get_name(), "ipvs-doctor");
/// assert!(cmd.get_arguments().any(|a| a.get_long() == Some("scheduler")));
/// ```
pub fn command() -> clap::Command {
    <Args as clap::CommandFactory>::command()
}

impl Args {
    /// What the diagnosis inspects: the host's roots, the default
    /// schedulers and these.
    pub fn options(&self) -> Options {
        let mut options = Options::new()
            .with_load(self.load)
            .with_probe(!self.no_probe);
        for name in &self.scheduler {
            options = options.with_scheduler(name);
        }
        if let Some(path) = &self.netns {
            options = options.with_netns(path.clone());
        }
        options
    }
}

/// A `--scheduler` value: a name that can be a module's
/// (`ip_vs_` + up to 15 letters, digits, `_` and `-`).
fn scheduler_name(name: &str) -> Result<String, String> {
    let short = name
        .strip_prefix("ip_vs_")
        .or_else(|| name.strip_prefix("ip-vs-"))
        .unwrap_or(name);
    let valid = !short.is_empty()
        && short.len() <= SCHEDNAME_MAX
        && !name.starts_with('-')
        && short
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-');
    if valid {
        Ok(name.to_string())
    } else {
        Err(format!(
            "not a scheduler name (letters, digits, '_' and '-', at most \
             {SCHEDNAME_MAX} characters after ip_vs_)"
        ))
    }
}

/// A `--netns` value: a path that exists.
fn existing_path(path: &str) -> Result<PathBuf, String> {
    let path = PathBuf::from(path);
    if path.exists() {
        Ok(path)
    } else {
        Err("no such file".to_string())
    }
}

#[cfg(test)]
mod tests {
    use clap::error::ErrorKind;

    use super::*;

    fn run(args: &[&str]) -> Result<Args, clap::Error> {
        Args::try_parse_from(std::iter::once("ipvs-doctor").chain(args.iter().copied()))
    }

    #[test]
    fn defaults() {
        let args = run(&[]).unwrap();
        assert!(!args.json);
        let options = args.options();
        assert!(options.probe);
        assert!(!options.load);
        assert_eq!(options.schedulers, ["ip_vs_rr", "ip_vs_wrr", "ip_vs_sh"]);
    }

    #[test]
    fn all_options() {
        let args = run(&[
            "--json",
            "--load",
            "--no-probe",
            "--scheduler",
            "mh",
            "--scheduler=ip_vs_lc",
            "--scheduler",
            "rr",
            "--netns",
            "/proc/self/ns/net",
        ])
        .unwrap();
        let options = args.options();
        assert!(args.json && options.load && !options.probe);
        assert_eq!(
            options.schedulers,
            ["ip_vs_rr", "ip_vs_wrr", "ip_vs_sh", "ip_vs_mh", "ip_vs_lc"]
        );
        assert_eq!(
            options.netns.as_deref(),
            Some(std::path::Path::new("/proc/self/ns/net"))
        );
    }

    #[test]
    fn help_and_version_exit_0() {
        for (flag, kind) in [
            ("-h", ErrorKind::DisplayHelp),
            ("--help", ErrorKind::DisplayHelp),
            ("--version", ErrorKind::DisplayVersion),
        ] {
            let shown = run(&["--json", flag]).unwrap_err();
            assert_eq!((shown.kind(), shown.exit_code()), (kind, 0), "{flag}");
        }
        let help = run(&["--help"]).unwrap_err().to_string();
        for line in [
            "--scheduler <NAME>",
            "--netns <PATH>",
            "--no-probe",
            "Exit status: 0",
        ] {
            assert!(help.contains(line), "{line:?} in\n{help}");
        }
    }

    #[test]
    fn errors_name_the_problem_and_exit_2() {
        let err = |args: &[&str]| {
            let e = run(args).unwrap_err();
            assert_eq!(e.exit_code(), 2, "{args:?}");
            e.to_string()
        };
        let unknown = err(&["--bogus"]);
        assert!(
            unknown.contains("unexpected argument '--bogus'"),
            "{unknown}"
        );
        assert!(err(&["--jsn"]).contains("similar argument exists: '--json'"));
        for missing in [
            &["--scheduler"][..],
            &["--scheduler", "--json"],
            &["--netns"],
        ] {
            let e = err(missing);
            assert!(e.contains("a value is required"), "{missing:?}: {e}");
        }
        assert!(err(&["--scheduler="]).contains("not a scheduler name"));
        let bad = err(&["--scheduler", "../x"]);
        assert!(
            bad.contains("'../x'") && bad.contains("not a scheduler name"),
            "{bad}"
        );
        assert!(err(&["--scheduler", "averyveryverylongname"]).contains("not a scheduler name"));
        let missing = err(&["--netns", "/nonexistent/ns"]);
        assert!(missing.contains("'/nonexistent/ns'") && missing.contains("no such file"));
        let twice = err(&[
            "--netns",
            "/proc/self/ns/net",
            "--netns",
            "/proc/self/ns/net",
        ]);
        assert!(twice.contains("cannot be used multiple times"), "{twice}");
        assert!(err(&["--json=yes"]).contains("unexpected value 'yes'"));
        assert!(err(&["extra"]).contains("unexpected argument 'extra'"));
    }
}
