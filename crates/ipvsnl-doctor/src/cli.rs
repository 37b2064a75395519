//! Command-line parsing for the `ipvs-doctor` binary (src/main.rs), kept in
//! the library so it is tested with the rest of the crate.

use std::ffi::OsString;
use std::path::PathBuf;

use thiserror::Error;

use crate::Options;

/// The usage text `-h` prints.
pub const USAGE: &str = "\
Usage: ipvs-doctor [OPTIONS]

Tells whether this host (or a network namespace) can use IPVS, and what to
do when it cannot.

Options:
  --scheduler NAME  also require this scheduler (rr, wrr, sh, mh, ... or
                    ip_vs_NAME); repeatable. ip_vs_rr, ip_vs_wrr and
                    ip_vs_sh (what kube-proxy needs) are always checked
  --load            run modprobe for what is not loaded and report failures
  --netns PATH      inspect the network namespace bound at PATH
                    (/var/run/netns/NAME, /proc/PID/ns/net)
  --no-probe        do not ask the kernel over netlink (the probe may load
                    ip_vs, since resolving the IPVS family auto-loads it)
  --json            print the report as JSON
  -h, --help        print this help

Exit status: 0 IPVS is usable with the required schedulers, 1 it is not,
2 bad arguments.
";

/// Longest scheduler name the kernel accepts (`IP_VS_SCHEDNAME_MAXLEN` less
/// its NUL).
const SCHEDNAME_MAX: usize = 15;

/// What the command line asks for.
#[non_exhaustive]
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Cli {
    /// Print the usage text and exit 0.
    Help,
    /// Run the doctor.
    Run {
        /// What to inspect.
        options: Box<Options>,
        /// Print JSON instead of text.
        json: bool,
    },
}

/// A bad command line; the message names what is wrong.
#[non_exhaustive]
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum UsageError {
    /// An option this program does not know.
    #[error("unknown option '{0}'")]
    UnknownOption(String),
    /// An argument that is not an option.
    #[error("unexpected argument '{0}' (this program takes options only)")]
    UnexpectedArgument(String),
    /// An option given without its value.
    #[error("{option} needs a value: {what}")]
    MissingValue {
        /// The option.
        option: &'static str,
        /// What value it wants.
        what: &'static str,
    },
    /// A flag given a value (`--json=1`).
    #[error("{0} takes no value")]
    UnexpectedValue(&'static str),
    /// A scheduler name that cannot be a module name.
    #[error("--scheduler '{0}' is not a scheduler name (letters, digits, '_' and '-', at most 15 characters after ip_vs_)")]
    BadScheduler(String),
    /// `--netns` given twice.
    #[error("--netns given more than once")]
    RepeatedNetns,
    /// `--netns` names a path that does not exist.
    #[error("--netns {0}: no such file")]
    NetnsMissing(String),
    /// An argument that is not valid UTF-8.
    #[error("argument {0:?} is not valid UTF-8")]
    NotUtf8(OsString),
}

fn valid_scheduler(name: &str) -> bool {
    let short = name
        .strip_prefix("ip_vs_")
        .or_else(|| name.strip_prefix("ip-vs-"))
        .unwrap_or(name);
    !short.is_empty()
        && short.len() <= SCHEDNAME_MAX
        && !name.starts_with('-')
        && short
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
}

/// Parses the arguments after the program name.
pub fn parse_args<I>(args: I) -> Result<Cli, UsageError>
where
    I: IntoIterator,
    I::Item: Into<OsString>,
{
    let mut options = Options::new();
    let mut json = false;
    let mut netns_seen = false;
    let mut args = args.into_iter().map(Into::into);
    while let Some(arg) = args.next() {
        let arg = arg.into_string().map_err(UsageError::NotUtf8)?;
        let (flag, inline) = match arg.split_once('=') {
            Some((flag, value)) if flag.starts_with("--") => {
                (flag.to_string(), Some(value.to_string()))
            }
            _ => (arg.clone(), None),
        };
        let mut value = |option: &'static str, what: &'static str| -> Result<String, UsageError> {
            if let Some(v) = inline.clone() {
                return if v.is_empty() {
                    Err(UsageError::MissingValue { option, what })
                } else {
                    Ok(v)
                };
            }
            match args.next() {
                Some(v) => {
                    let v = v.into_string().map_err(UsageError::NotUtf8)?;
                    if v.is_empty() || v.starts_with("--") {
                        Err(UsageError::MissingValue { option, what })
                    } else {
                        Ok(v)
                    }
                }
                None => Err(UsageError::MissingValue { option, what }),
            }
        };
        match flag.as_str() {
            "-h" | "--help" => return Ok(Cli::Help),
            "--json" | "--load" | "--no-probe" if inline.is_some() => {
                let name = match flag.as_str() {
                    "--json" => "--json",
                    "--load" => "--load",
                    _ => "--no-probe",
                };
                return Err(UsageError::UnexpectedValue(name));
            }
            "--json" => json = true,
            "--load" => options = options.with_load(true),
            "--no-probe" => options = options.with_probe(false),
            "--scheduler" => {
                let name = value("--scheduler", "a scheduler name such as mh or ip_vs_mh")?;
                if !valid_scheduler(&name) {
                    return Err(UsageError::BadScheduler(name));
                }
                options = options.with_scheduler(&name);
            }
            "--netns" => {
                let path = value(
                    "--netns",
                    "the path of a network namespace, such as /var/run/netns/NAME",
                )?;
                if netns_seen {
                    return Err(UsageError::RepeatedNetns);
                }
                netns_seen = true;
                let path = PathBuf::from(path);
                if !path.exists() {
                    return Err(UsageError::NetnsMissing(path.display().to_string()));
                }
                options = options.with_netns(path);
            }
            other if other.starts_with('-') && other != "-" => {
                return Err(UsageError::UnknownOption(arg));
            }
            _ => return Err(UsageError::UnexpectedArgument(arg)),
        }
    }
    Ok(Cli::Run {
        options: Box::new(options),
        json,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(args: &[&str]) -> Result<(Options, bool), UsageError> {
        match parse_args(args.iter().copied())? {
            Cli::Run { options, json } => Ok((*options, json)),
            Cli::Help => panic!("unexpected help"),
        }
    }

    #[test]
    fn defaults() {
        let (options, json) = run(&[]).unwrap();
        assert!(!json);
        assert!(options.probe);
        assert!(!options.load);
        assert_eq!(options.schedulers, ["ip_vs_rr", "ip_vs_wrr", "ip_vs_sh"]);
    }

    #[test]
    fn all_options() {
        let (options, json) = run(&[
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
        assert!(json && options.load && !options.probe);
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
    fn help() {
        assert_eq!(parse_args(["-h"]).unwrap(), Cli::Help);
        assert_eq!(parse_args(["--json", "--help"]).unwrap(), Cli::Help);
    }

    #[test]
    fn errors_name_the_problem() {
        let err = |args: &[&str]| run(args).unwrap_err().to_string();
        assert_eq!(err(&["--bogus"]), "unknown option '--bogus'");
        assert!(err(&["--scheduler"]).starts_with("--scheduler needs a value"));
        assert!(err(&["--scheduler", "--json"]).starts_with("--scheduler needs a value"));
        assert!(err(&["--scheduler="]).starts_with("--scheduler needs a value"));
        assert!(err(&["--scheduler", "../x"]).contains("'../x' is not a scheduler name"));
        assert!(err(&["--scheduler", "averyveryverylongname"]).contains("not a scheduler name"));
        assert!(err(&["--netns"]).starts_with("--netns needs a value"));
        assert_eq!(
            err(&["--netns", "/nonexistent/ns"]),
            "--netns /nonexistent/ns: no such file"
        );
        assert_eq!(
            err(&[
                "--netns",
                "/proc/self/ns/net",
                "--netns",
                "/proc/self/ns/net"
            ]),
            "--netns given more than once"
        );
        assert_eq!(err(&["--json=yes"]), "--json takes no value");
        assert!(err(&["extra"]).starts_with("unexpected argument 'extra'"));
    }
}
