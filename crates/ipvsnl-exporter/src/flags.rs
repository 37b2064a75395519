//! The command line, node_exporter style (`--web.listen-address=:PORT`).
//!
//! A hand parser: four flags with values and two without do not pay for a
//! parser crate's build time and dependency tree.

use std::fmt;
use std::path::PathBuf;

use crate::Namespace;

/// The default `--web.listen-address`: every address, port 19911 (see the
/// README for why this port).
pub const DEFAULT_LISTEN_ADDRESS: &str = ":19911";

/// The exporter's settings.
///
/// ```
/// use ipvsnl_exporter::{Flags, Parsed};
/// let args = ["--web.listen-address=127.0.0.1:9999", "--netns", "/var/run/netns/lb"];
/// let Parsed::Run(flags) = Flags::parse(args).unwrap() else { panic!() };
/// assert_eq!(flags.listen_address, "127.0.0.1:9999");
/// assert_eq!(flags.telemetry_path, "/metrics");
/// assert_eq!(flags.netns.unwrap().to_str(), Some("/var/run/netns/lb"));
/// assert_eq!(flags.namespace.as_str(), "ipvs");
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Flags {
    /// `--web.listen-address`: `HOST:PORT`, `[V6]:PORT`, or `:PORT` for
    /// every address.
    pub listen_address: String,
    /// `--web.telemetry-path`: where the metrics are served.
    pub telemetry_path: String,
    /// `--netns`: the network namespace whose IPVS table is listed
    /// (`/var/run/netns/NAME`, `/proc/PID/ns/net`); the exporter's own when
    /// absent.
    pub netns: Option<PathBuf>,
    /// `--metrics.namespace`: the metric name prefix.
    pub namespace: Namespace,
}

impl Default for Flags {
    fn default() -> Self {
        Flags {
            listen_address: DEFAULT_LISTEN_ADDRESS.to_owned(),
            telemetry_path: "/metrics".to_owned(),
            netns: None,
            namespace: Namespace::default(),
        }
    }
}

/// What the command line asks for.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Parsed {
    /// Serve with these settings.
    Run(Flags),
    /// `--help`: print [`Flags::usage`].
    Help,
    /// `--version`: print the version.
    Version,
}

/// A command line that cannot be run, naming the flag (exit code 2).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct FlagError {
    /// The flag at fault, as given (`--web.listen-addres`).
    pub flag: String,
    /// What is wrong with it.
    pub why: String,
}

impl fmt::Display for FlagError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.flag, self.why)
    }
}

impl std::error::Error for FlagError {}

fn bad(flag: &str, why: impl Into<String>) -> FlagError {
    FlagError {
        flag: flag.to_owned(),
        why: why.into(),
    }
}

impl Flags {
    /// Parses the arguments after the program name. Each flag with a value
    /// takes it as `--flag=VALUE` or `--flag VALUE`; a flag given twice
    /// keeps the last value.
    ///
    /// ```
    /// use ipvsnl_exporter::{Flags, Parsed};
    /// assert_eq!(Flags::parse(["--version"]).unwrap(), Parsed::Version);
    /// let e = Flags::parse(["--web.listen-addres=:1"]).unwrap_err();
    /// assert_eq!(e.flag, "--web.listen-addres");
    /// let e = Flags::parse(["--web.telemetry-path=metrics"]).unwrap_err();
    /// assert!(e.why.contains("start with '/'"), "{e}");
    /// ```
    pub fn parse<I, S>(args: I) -> Result<Parsed, FlagError>
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        let mut flags = Flags::default();
        let mut args = args.into_iter().map(Into::into);
        while let Some(arg) = args.next() {
            let (flag, inline) = match arg.split_once('=') {
                Some((f, v)) if f.starts_with("--") => (f.to_owned(), Some(v.to_owned())),
                _ => (arg.clone(), None),
            };
            match flag.as_str() {
                "--help" | "-h" => return Ok(Parsed::Help),
                "--version" => return Ok(Parsed::Version),
                "--web.listen-address"
                | "--web.telemetry-path"
                | "--netns"
                | "--metrics.namespace" => {}
                _ if flag.starts_with('-') => return Err(bad(&flag, "unknown flag (see --help)")),
                _ => return Err(bad(&flag, "unexpected argument (flags only; see --help)")),
            }
            let value = match inline {
                Some(v) => v,
                None => args.next().ok_or_else(|| bad(&flag, "needs a value"))?,
            };
            flags.set(&flag, value)?;
        }
        Ok(Parsed::Run(flags))
    }

    fn set(&mut self, flag: &str, value: String) -> Result<(), FlagError> {
        if value.is_empty() {
            return Err(bad(flag, "the value is empty"));
        }
        match flag {
            "--web.listen-address" => {
                let port = value.rsplit_once(':').map(|(_, p)| p);
                if port.and_then(|p| p.parse::<u16>().ok()).is_none() {
                    return Err(bad(
                        flag,
                        format!("{value:?} is not HOST:PORT, [ADDR]:PORT or :PORT"),
                    ));
                }
                self.listen_address = value;
            }
            "--web.telemetry-path" => {
                if !value.starts_with('/') || value == "/" {
                    return Err(bad(
                        flag,
                        format!("{value:?} must start with '/' and not be '/' (the index page)"),
                    ));
                }
                self.telemetry_path = value;
            }
            "--netns" => self.netns = Some(PathBuf::from(value)),
            _ => self.namespace = Namespace::new(&value).map_err(|e| bad(flag, e.to_string()))?,
        }
        Ok(())
    }

    /// The `--help` text.
    pub fn usage() -> String {
        format!(
            "usage: ipvs-exporter [flags]\n\
             \n\
             Serves the Linux IPVS table (services, real servers, their counters) and\n\
             the totals as Prometheus metrics, one listing per scrape.\n\
             \n\
             flags:\n\
             \x20 --web.listen-address=ADDR   where to listen: HOST:PORT, [V6]:PORT or :PORT\n\
             \x20                             (default {DEFAULT_LISTEN_ADDRESS})\n\
             \x20 --web.telemetry-path=PATH   where the metrics are served (default /metrics)\n\
             \x20 --netns PATH                list the IPVS table of that network namespace\n\
             \x20                             (/var/run/netns/NAME, /proc/PID/ns/net)\n\
             \x20 --metrics.namespace=NAME    metric name prefix (default ipvs; node_ipvs gives\n\
             \x20                             node_exporter's names)\n\
             \x20 --version                   print the version\n\
             \x20 --help                      print this\n\
             \n\
             exit status: 0 after a clean stop, 1 when it cannot serve (address in use,\n\
             no such namespace), 2 on a bad command line.\n"
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(args: &[&str]) -> Flags {
        match Flags::parse(args.iter().copied()) {
            Ok(Parsed::Run(f)) => f,
            other => panic!("{args:?}: {other:?}"),
        }
    }

    fn error(args: &[&str]) -> FlagError {
        Flags::parse(args.iter().copied()).unwrap_err()
    }

    #[test]
    fn defaults_and_both_value_forms() {
        assert_eq!(run(&[]), Flags::default());
        let f = run(&[
            "--web.listen-address",
            "[::1]:9100",
            "--web.telemetry-path=/m",
            "--metrics.namespace=node_ipvs",
            "--netns=/proc/1/ns/net",
        ]);
        assert_eq!(f.listen_address, "[::1]:9100");
        assert_eq!(f.telemetry_path, "/m");
        assert_eq!(f.namespace.as_str(), "node_ipvs");
        assert_eq!(f.netns, Some(PathBuf::from("/proc/1/ns/net")));
        assert_eq!(run(&["--netns=a", "--netns=b"]).netns, Some("b".into()));
        assert_eq!(Flags::parse(["-h"]).unwrap(), Parsed::Help);
    }

    #[test]
    fn bad_lines_name_the_flag() {
        let e = error(&["--nope"]);
        assert_eq!(
            (e.flag.as_str(), e.why.contains("unknown")),
            ("--nope", true)
        );
        assert_eq!(error(&["stray"]).flag, "stray");
        assert_eq!(error(&["--netns"]).why, "needs a value");
        assert_eq!(error(&["--netns="]).why, "the value is empty");
        for addr in ["9100", ":port", "host:", ":70000"] {
            let e = error(&["--web.listen-address", addr]);
            assert_eq!(e.flag, "--web.listen-address", "{addr}");
        }
        let e = error(&["--metrics.namespace=ipvs-x"]);
        assert!(e.to_string().starts_with("--metrics.namespace: "), "{e}");
        assert_eq!(
            error(&["--web.telemetry-path=/"]).flag,
            "--web.telemetry-path"
        );
    }
}
