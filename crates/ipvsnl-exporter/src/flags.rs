//! The command line, node_exporter style (`--web.listen-address=:PORT`),
//! declared with clap's derive: `--help`, `--version`, and usage errors
//! that name the flag and suggest the nearest one (exit code 2). Each flag
//! with a value takes it as `--flag=VALUE` or `--flag VALUE`; a flag given
//! twice keeps the last value.

use std::ffi::OsString;
use std::fmt;
use std::path::PathBuf;
use std::time::Duration;

use clap::Parser;

use crate::{parse_duration, DurationBounds, Limits, MetricPrefix};

/// The default `--web.listen-address`: every address, port 19911 (see the
/// README for why this port).
pub const DEFAULT_LISTEN_ADDRESS: &str = ":19911";

/// What follows the flags in `--help`.
const AFTER_HELP: &str = "\
DUR is a whole number and a unit: ms, s, m, h (500ms, 10s, 2m).

Exit status: 0 after a clean stop, 1 when it cannot serve (address in use,
no such namespace), 2 on a bad command line.";

/// The command line as clap reads it; [`Flags`] is what it sets.
#[derive(Debug, Parser)]
#[command(
    name = "ipvs-exporter",
    version,
    about = "Serves the Linux IPVS table (services, real servers, their counters) and \
             the totals as Prometheus metrics, one listing per scrape.",
    after_help = AFTER_HELP,
    args_override_self = true
)]
struct Args {
    /// Where to listen: HOST:PORT, [V6]:PORT or :PORT
    #[arg(long = "web.listen-address", value_name = "ADDR",
          default_value = DEFAULT_LISTEN_ADDRESS, value_parser = listen_address)]
    listen_address: String,
    /// Where the metrics are served
    #[arg(long = "web.telemetry-path", value_name = "PATH", default_value = "/metrics",
          value_parser = telemetry_path)]
    telemetry_path: String,
    /// List the IPVS table of that network namespace (/var/run/netns/NAME,
    /// /proc/PID/ns/net)
    #[arg(long, value_name = "PATH")]
    netns: Option<PathBuf>,
    /// Metric name prefix (node_ipvs gives node_exporter's names)
    #[arg(long = "metrics.namespace", value_name = "NAME", default_value = "ipvs",
          value_parser = metric_prefix)]
    metric_prefix: MetricPrefix,
    /// Connections open at once (default 512, or the open-files limit less
    /// 64 if lower); beyond it the connection waiting longest for a
    /// request is closed, or the new one refused (503) if all answer
    #[arg(long = "web.max-connections", value_name = "N", value_parser = count)]
    max_connections: Option<usize>,
    /// Time for a request's headers, from the accept or from its first
    /// byte (default 10s)
    #[arg(long = "web.header-timeout", value_name = "DUR", value_parser = duration)]
    header_timeout: Option<Duration>,
    /// Time a kept-alive connection may wait for its next request
    /// (default 2m)
    #[arg(long = "web.idle-timeout", value_name = "DUR", value_parser = duration)]
    idle_timeout: Option<Duration>,
    /// Time for a response to be taken, from its request's headers
    /// (default 1m)
    #[arg(long = "web.response-timeout", value_name = "DUR", value_parser = duration)]
    response_timeout: Option<Duration>,
    /// Listings of the table held by responses still being sent (requests
    /// arriving together share one); a newer one closes those sending the
    /// oldest (default 2)
    #[arg(long = "web.max-listings", value_name = "N", value_parser = count)]
    max_listings: Option<usize>,
}

/// The exporter's settings.
///
/// ```
/// use ipvsnl_exporter::Flags;
/// let args = ["--web.listen-address=127.0.0.1:9999", "--netns", "/var/run/netns/lb"];
/// let flags = Flags::parse(args).unwrap();
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

/// A command line that is not run: a usage error (exit code 2; its text
/// names the flag and what is wrong), or `--help` or `--version` (exit
/// code 0; its text is what they print).
#[derive(Debug)]
#[non_exhaustive]
pub struct FlagError {
    error: clap::Error,
}

impl FlagError {
    /// The exit code: 0 for `--help` and `--version`, 2 for a bad
    /// command line.
    pub fn exit_code(&self) -> i32 {
        self.error.exit_code()
    }

    /// Prints the text (to stdout for `--help` and `--version`, to stderr
    /// otherwise) and exits with [`exit_code`](Self::exit_code).
    pub fn exit(&self) -> ! {
        self.error.exit()
    }
}

impl fmt::Display for FlagError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.error)
    }
}

impl std::error::Error for FlagError {}

impl Flags {
    /// Parses the arguments after the program name.
    ///
    /// ```
    /// use ipvsnl_exporter::Flags;
    /// let e = Flags::parse(["--web.listen-addres=:1"]).unwrap_err();
    /// assert_eq!(e.exit_code(), 2);
    /// assert!(e.to_string().contains("'--web.listen-address'"), "a suggestion: {e}");
    /// let e = Flags::parse(["--web.telemetry-path=metrics"]).unwrap_err();
    /// assert!(e.to_string().contains("start with '/'"), "{e}");
    /// assert_eq!(Flags::parse(["--version"]).unwrap_err().exit_code(), 0);
    /// ```
    pub fn parse<I, S>(args: I) -> Result<Flags, FlagError>
    where
        I: IntoIterator<Item = S>,
        S: Into<OsString>,
    {
        let argv = std::iter::once(OsString::from("ipvs-exporter"))
            .chain(args.into_iter().map(Into::into));
        let args = Args::try_parse_from(argv).map_err(|error| FlagError { error })?;
        let mut limits = Limits::default();
        if let Some(n) = args.max_connections {
            limits = limits.with_max_connections(n);
        }
        if let Some(d) = args.header_timeout {
            limits = limits.with_header_timeout(d);
        }
        if let Some(d) = args.idle_timeout {
            limits = limits.with_idle_timeout(d);
        }
        if let Some(d) = args.response_timeout {
            limits = limits.with_response_timeout(d);
        }
        if let Some(n) = args.max_listings {
            limits = limits.with_max_listings(n);
        }
        Ok(Flags {
            listen_address: args.listen_address,
            telemetry_path: args.telemetry_path,
            netns: args.netns,
            metric_prefix: args.metric_prefix,
            limits,
        })
    }
}

/// `ipvs-exporter`'s command line as a [`clap::Command`]: every flag with
/// its help, what [`Flags::parse`] reads. For the man page and the shell
/// completions (packagers: `cargo run -p ipvsnl-xtask`).
///
/// ```
/// let cmd = ipvsnl_exporter::command();
/// assert_eq!(cmd.get_name(), "ipvs-exporter");
/// assert!(cmd.get_arguments().any(|a| a.get_long() == Some("web.listen-address")));
/// ```
pub fn command() -> clap::Command {
    <Args as clap::CommandFactory>::command()
}

/// A `--web.listen-address`: something, a colon, a port.
fn listen_address(value: &str) -> Result<String, String> {
    let port = value.rsplit_once(':').map(|(_, p)| p);
    match port.and_then(|p| p.parse::<u16>().ok()) {
        Some(_) => Ok(value.to_owned()),
        None => Err("not HOST:PORT, [ADDR]:PORT or :PORT".to_owned()),
    }
}

/// A `--web.telemetry-path`: absolute, and not the index page.
fn telemetry_path(value: &str) -> Result<String, String> {
    if value.starts_with('/') && value != "/" {
        Ok(value.to_owned())
    } else {
        Err("must start with '/' and not be '/' (the index page)".to_owned())
    }
}

/// A `--metrics.namespace`.
fn metric_prefix(value: &str) -> Result<MetricPrefix, String> {
    MetricPrefix::new(value).map_err(|e| e.to_string())
}

/// A count of 1 or more.
fn count(value: &str) -> Result<usize, String> {
    match value.parse::<usize>() {
        Ok(n) if n > 0 => Ok(n),
        _ => Err("not a whole number of 1 or more".to_owned()),
    }
}

/// A `DUR` (the error completes "'VALUE' ...": clap names the value).
fn duration(value: &str) -> Result<Duration, String> {
    parse_duration(value, DurationBounds::FLAGS).map_err(|e| e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::format_duration;

    fn run(args: &[&str]) -> Flags {
        Flags::parse(args.iter().copied()).unwrap_or_else(|e| panic!("{args:?}: {e}"))
    }

    fn error(args: &[&str]) -> String {
        let e = Flags::parse(args.iter().copied()).unwrap_err();
        assert_eq!(e.exit_code(), 2, "{args:?}: {e}");
        e.to_string()
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
        for shown in ["-h", "--help", "--version"] {
            assert_eq!(Flags::parse([shown]).unwrap_err().exit_code(), 0);
        }
    }

    #[test]
    fn limits_flags() {
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
            let flag = args[0].split_once('=').unwrap().0;
            assert!(e.contains(flag) && e.contains(says), "{args:?}: {e}");
        }
    }

    #[test]
    fn the_help_gives_the_limits_defaults() {
        let help = Flags::parse(["--help"]).unwrap_err().to_string();
        let limits = Limits::default();
        for default in [
            format!("(default {},", limits.max_connections),
            format!("(default {})", format_duration(limits.header_timeout)),
            format!("(default {})", format_duration(limits.idle_timeout)),
            format!("(default {})", format_duration(limits.response_timeout)),
            format!("(default {})", limits.max_listings),
            format!("[default: {DEFAULT_LISTEN_ADDRESS}]"),
        ] {
            let one_line = help.split_whitespace().collect::<Vec<_>>().join(" ");
            assert!(one_line.contains(&default), "{default} in\n{help}");
        }
    }

    #[test]
    fn bad_lines_name_the_flag() {
        let e = error(&["--nope"]);
        assert!(e.contains("unexpected argument '--nope'"), "{e}");
        assert!(error(&["stray"]).contains("'stray'"));
        assert!(error(&["--netns"]).contains("a value is required for '--netns <PATH>'"));
        assert!(error(&["--netns="]).contains("--netns"));
        for addr in ["9100", ":port", "host:", ":70000"] {
            let e = error(&["--web.listen-address", addr]);
            assert!(e.contains("--web.listen-address"), "{addr}: {e}");
        }
        let e = error(&["--metrics.namespace=ipvs-x"]);
        assert!(e.contains("for '--metrics.namespace <NAME>'"), "{e}");
        assert!(error(&["--web.telemetry-path=/"]).contains("--web.telemetry-path"));
    }
}
