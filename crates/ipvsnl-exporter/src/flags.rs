//! The command line, node_exporter style (`--web.listen-address=:PORT`).
//!
//! A hand parser: nine flags with values and two without do not pay for a
//! parser crate's build time and dependency tree.

use std::fmt;
use std::path::PathBuf;

use crate::{format_duration, parse_duration, DurationBounds, Limits, MetricPrefix};

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
/// assert_eq!(flags.metric_prefix.as_str(), "ipvs");
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
    pub metric_prefix: MetricPrefix,
    /// `--web.max-connections`, `--web.header-timeout`,
    /// `--web.idle-timeout`, `--web.response-timeout`,
    /// `--web.max-listings`: what the server grants its clients.
    pub limits: Limits,
}

impl Default for Flags {
    fn default() -> Self {
        Flags {
            listen_address: DEFAULT_LISTEN_ADDRESS.to_owned(),
            telemetry_path: "/metrics".to_owned(),
            netns: None,
            metric_prefix: MetricPrefix::default(),
            limits: Limits::default(),
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

/// A count of 1 or more.
fn count(flag: &str, value: &str) -> Result<usize, FlagError> {
    match value.parse::<usize>() {
        Ok(n) if n > 0 => Ok(n),
        _ => Err(bad(
            flag,
            format!("{value:?} is not a whole number of 1 or more"),
        )),
    }
}

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
                | "--metrics.namespace"
                | "--web.max-connections"
                | "--web.header-timeout"
                | "--web.idle-timeout"
                | "--web.response-timeout"
                | "--web.max-listings" => {}
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
            "--web.max-connections" => {
                self.limits = self.limits.with_max_connections(count(flag, &value)?);
            }
            "--web.max-listings" => {
                self.limits = self.limits.with_max_listings(count(flag, &value)?);
            }
            "--web.header-timeout" => {
                let d = parse_duration(&value, DurationBounds::FLAGS)
                    .map_err(|why| bad(flag, format!("{value:?} {why}")))?;
                self.limits = self.limits.with_header_timeout(d);
            }
            "--web.idle-timeout" => {
                let d = parse_duration(&value, DurationBounds::FLAGS)
                    .map_err(|why| bad(flag, format!("{value:?} {why}")))?;
                self.limits = self.limits.with_idle_timeout(d);
            }
            "--web.response-timeout" => {
                let d = parse_duration(&value, DurationBounds::FLAGS)
                    .map_err(|why| bad(flag, format!("{value:?} {why}")))?;
                self.limits = self.limits.with_response_timeout(d);
            }
            _ => {
                self.metric_prefix =
                    MetricPrefix::new(&value).map_err(|e| bad(flag, e.to_string()))?
            }
        }
        Ok(())
    }

    /// The `--help` text.
    pub fn usage() -> String {
        let limits = Limits::default();
        let (max_connections, max_listings) = (limits.max_connections, limits.max_listings);
        let header = format_duration(limits.header_timeout);
        let idle = format_duration(limits.idle_timeout);
        let response = format_duration(limits.response_timeout);
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
             \x20 --netns PATH                list the IPVS table of that network metric_prefix\n\
             \x20                             (/var/run/netns/NAME, /proc/PID/ns/net)\n\
             \x20 --metrics.namespace=NAME    metric name prefix (default ipvs; node_ipvs gives\n\
             \x20                             node_exporter's names)\n\
             \x20 --web.max-connections=N     connections open at once (default {max_connections},\n\
             \x20                             or the open-files limit less 64 if lower); beyond\n\
             \x20                             it the connection waiting longest for a request is\n\
             \x20                             closed, or the new one refused (503) if all answer\n\
             \x20 --web.header-timeout=DUR    time for a request's headers, from the accept or\n\
             \x20                             from its first byte (default {header})\n\
             \x20 --web.idle-timeout=DUR      time a kept-alive connection may wait for its next\n\
             \x20                             request (default {idle})\n\
             \x20 --web.response-timeout=DUR  time for a response to be taken, from its request's\n\
             \x20                             headers (default {response})\n\
             \x20 --web.max-listings=N        listings of the table held by responses still\n\
             \x20                             being sent (requests arriving together share one);\n\
             \x20                             a newer one closes those sending the oldest\n\
             \x20                             (default {max_listings})\n\
             \x20 --version                   print the version\n\
             \x20 --help                      print this\n\
             \n\
             DUR is a whole number and a unit: ms, s, m, h (500ms, 10s, 2m).\n\
             \n\
             exit status: 0 after a clean stop, 1 when it cannot serve (address in use,\n\
             no such metric_prefix), 2 on a bad command line.\n"
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
        assert_eq!(f.metric_prefix.as_str(), "node_ipvs");
        assert_eq!(f.netns, Some(PathBuf::from("/proc/1/ns/net")));
        assert_eq!(run(&["--netns=a", "--netns=b"]).netns, Some("b".into()));
        assert_eq!(Flags::parse(["-h"]).unwrap(), Parsed::Help);
    }

    #[test]
    fn limits_flags() {
        use std::time::Duration;
        let f = run(&[
            "--web.max-connections=8",
            "--web.header-timeout",
            "500ms",
            "--web.idle-timeout=2m",
            "--web.response-timeout=90s",
            "--web.max-listings=3",
        ]);
        let want = Limits::default()
            .with_max_connections(8)
            .with_header_timeout(Duration::from_millis(500))
            .with_idle_timeout(Duration::from_secs(120))
            .with_response_timeout(Duration::from_secs(90))
            .with_max_listings(3);
        assert_eq!(f.limits, want);
        for (args, says) in [
            (&["--web.max-connections=0"][..], "1 or more"),
            (&["--web.max-listings=x"][..], "1 or more"),
            (&["--web.header-timeout=10"][..], "unit"),
            (&["--web.idle-timeout=0s"][..], "more than zero"),
            (&["--web.response-timeout=1.5s"][..], "not a duration"),
        ] {
            let e = error(args);
            assert!(
                args[0].starts_with(&e.flag) && e.why.contains(says),
                "{args:?}: {e}"
            );
        }
        let usage = Flags::usage();
        for default in [
            "(default 512,",
            "(default 10s)",
            "(default 2m)",
            "(default 1m)",
        ] {
            assert!(usage.contains(default), "{default} in\n{usage}");
        }
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
