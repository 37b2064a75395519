//! `ipvs-agent`'s command line as clap reads it (derive): the commands
//! `check`, `import`, `publish` and `run` and every flag of each, the one
//! definition `--help` (per command), `--version`, usage errors with
//! suggestions, and the packagers' man page and shell completions
//! ([`command`]) are made from. Values are taken as given; what they
//! mean together is checked by the commands (`RunOptions`, the
//! publish), each wrong one a usage error (exit 2).
//!
//! Fleet mode's flags (`--etcd`, `--vip`, `--peers`, ...) and `publish`
//! are declared in every build, hidden from `--help` without the `fleet`
//! feature, so that giving one says the build has no fleet mode.

use std::ffi::OsString;
use std::path::PathBuf;

use clap::{Args, CommandFactory, Parser, Subcommand};

/// The default address of `run`'s HTTP endpoint (`--listen`).
pub const DEFAULT_LISTEN: &str = "127.0.0.1:9102";

/// Whether this build has fleet mode: its flags are shown in `--help`.
const FLEET: bool = cfg!(feature = "fleet");

/// What follows the commands in `ipvs-agent --help`.
const AFTER_HELP: &str = "\
Exit status: 0 on success, 1 on an error the command reports (a file's
errors each at its line and column), 2 on a bad command line.
`ipvs-agent COMMAND --help` lists the flags of a command.";

/// What follows `ipvs-agent run --help`'s flags.
const RUN_AFTER_HELP: &str = "\
SIGHUP reloads the file, SIGTERM or SIGINT stops. With --etcd (fleet mode)
the configuration is what `publish` put there, each new generation applied
as a reload; with --vip or --sync-interface the agent campaigns to lead:
the leader holds the VIPs and runs the sync daemon as master, the others
as backup.
Exit status: 0 after a stop, 1 when the configuration, the kernel or the
HTTP address fails at start, 2 on a bad command line.";

/// What follows `ipvs-agent publish --help`'s flags.
const PUBLISH_AFTER_HELP: &str = "\
Only the services changed since the last publish are parsed, the others
known from the cache (default under $XDG_CACHE_HOME or ~/.cache).
Exit status: 0 published, 1 on an error (the file's, each at its line;
etcd's), nothing published, 2 on a bad command line.";

/// `ipvs-agent`'s command line.
#[derive(Debug, Parser)]
#[command(
    name = "ipvs-agent",
    version,
    about = "A director daemon for the Linux IPVS load balancer: virtual services from \
             a TOML file, real servers health-checked, failing ones drained.",
    after_help = AFTER_HELP,
    subcommand_required = true,
    arg_required_else_help = true
)]
pub(super) struct Cli {
    /// The command.
    #[command(subcommand)]
    pub(super) command: AgentCommand,
}

/// One of `ipvs-agent`'s commands.
#[derive(Debug, Subcommand)]
pub(super) enum AgentCommand {
    /// Validate a configuration file and print what it would configure
    #[command(
        after_help = "Exit status: 0 valid, 1 errors (each as FILE:LINE:COLUMN: \
                            message), 2 on a bad command line."
    )]
    Check {
        /// The configuration file
        #[arg(value_name = "FILE")]
        file: PathBuf,
    },
    /// Convert another load balancer's configuration into the agent's
    /// file
    #[command(subcommand)]
    Import(ImportFrom),
    /// Validate a file, then publish it to etcd as the fleet's desired
    /// state (fleet mode)
    #[command(hide = !FLEET, after_help = PUBLISH_AFTER_HELP)]
    Publish(PublishFlags),
    /// Keep the services of a file (or of etcd) in the kernel, their
    /// servers checked
    #[command(after_help = RUN_AFTER_HELP, args_override_self = true)]
    Run(Box<RunFlags>),
}

/// What `ipvs-agent import` converts.
#[derive(Debug, Subcommand)]
pub(super) enum ImportFrom {
    /// Convert a keepalived.conf (its virtual servers and checkers) into
    /// the agent's file; every line it cannot map is a warning at its line
    #[command(after_help = IMPORT_AFTER_HELP)]
    Keepalived(ImportFlags),
}

/// What follows `ipvs-agent import keepalived --help`'s flags.
const IMPORT_AFTER_HELP: &str = "\
Warnings (FILE:LINE: changed meaning, not supported, outside the load
balancer) and the fleet mode's flags for keepalived's VRRP go to stderr.
Exit status: 0 converted, 1 on an error of the input (each at its
FILE:LINE), nothing written, 2 on a bad command line.";

/// `ipvs-agent import keepalived`'s flags.
#[derive(Debug, Args)]
pub(crate) struct ImportFlags {
    /// keepalived's configuration file (its includes are read too)
    #[arg(value_name = "FILE")]
    pub(crate) file: PathBuf,
    /// Write the agent's file there (atomically) instead of to stdout
    #[arg(short, long, value_name = "OUT")]
    pub(crate) output: Option<PathBuf>,
    /// Print what would be written, write nothing
    #[arg(long)]
    pub(crate) dry_run: bool,
}

/// `ipvs-agent publish`'s flags.
#[cfg(feature = "fleet")]
#[derive(Debug, Args)]
#[command(args_override_self = true)]
pub(crate) struct PublishFlags {
    /// The configuration file
    #[arg(value_name = "FILE")]
    pub(crate) file: PathBuf,
    /// etcd's endpoints, comma-separated
    #[arg(long, value_name = "URL[,URL...]", required = true)]
    pub(crate) etcd: String,
    /// Where in etcd the fleet's state is kept [default: /ipvs-agent]
    #[arg(long, value_name = "P")]
    pub(crate) prefix: Option<String>,
    /// The publisher's cache of the services last published
    #[arg(long, value_name = "PATH")]
    pub(crate) cache: Option<PathBuf>,
    /// Parse every service, keep no cache
    #[arg(long, conflicts_with = "cache")]
    pub(crate) no_cache: bool,
}

/// `ipvs-agent publish` in a build without fleet mode: whatever follows
/// it, refused.
#[cfg(not(feature = "fleet"))]
#[derive(Debug, Args)]
pub(crate) struct PublishFlags {
    /// Anything.
    #[arg(trailing_var_arg = true, allow_hyphen_values = true, hide = true)]
    pub(crate) rest: Vec<String>,
}

/// `ipvs-agent run`'s flags, as given (their values checked by
/// `RunOptions`).
#[derive(Debug, Args)]
pub(crate) struct RunFlags {
    /// The configuration file (or --etcd)
    #[arg(value_name = "FILE")]
    pub(crate) file: Option<PathBuf>,
    /// The HTTP endpoint's address (/metrics, /healthz, /ready)
    #[arg(long, value_name = "ADDR", default_value = DEFAULT_LISTEN,
          conflicts_with = "no_http")]
    pub(crate) listen: String,
    /// No HTTP endpoint
    #[arg(long)]
    pub(crate) no_http: bool,
    /// Keep the IPVS table of that network namespace (/var/run/netns/NAME,
    /// /proc/PID/ns/net)
    #[arg(long, value_name = "PATH")]
    pub(crate) netns: Option<PathBuf>,
    /// Remove the agent's services at exit
    #[arg(long)]
    pub(crate) remove_on_exit: bool,
    /// The log lines' format
    #[arg(long, value_name = "FORMAT", default_value = "logfmt",
          value_parser = ["logfmt", "json"])]
    pub(crate) log_format: String,
    /// Reload the file when it changes, checked this often (500ms, 2s);
    /// without it only SIGHUP reloads
    #[arg(long, value_name = "PERIOD")]
    pub(crate) watch: Option<String>,
    /// Fleet mode, instead of a FILE: follow the configuration published
    /// to etcd at these endpoints (comma-separated)
    #[arg(long, value_name = "URL[,URL...]", hide = !FLEET, help_heading = "Fleet mode (--etcd)")]
    pub(crate) etcd: Option<String>,
    /// Where in etcd the fleet's state is kept [default: /ipvs-agent]
    #[arg(long, value_name = "P", hide = !FLEET, help_heading = "Fleet mode (--etcd)")]
    pub(crate) prefix: Option<String>,
    /// An address the fleet's leader holds; repeatable
    #[arg(long = "vip", value_name = "ADDR/PREFIX", hide = !FLEET,
          help_heading = "Fleet mode (--etcd)")]
    pub(crate) vips: Vec<String>,
    /// Where the leader adds the --vip addresses
    #[arg(long, value_name = "IF", hide = !FLEET, help_heading = "Fleet mode (--etcd)")]
    pub(crate) vip_interface: Option<String>,
    /// The kernel's sync daemon on this interface: master on the leader,
    /// backup on the others
    #[arg(long, value_name = "IF", hide = !FLEET, help_heading = "Fleet mode (--etcd)")]
    pub(crate) sync_interface: Option<String>,
    /// The sync daemon's id, 0 to 255, the same on every director of a
    /// fleet (with --sync-interface) [default: 0]
    #[arg(long, value_name = "N", allow_hyphen_values = true, hide = !FLEET,
          help_heading = "Fleet mode (--etcd)")]
    pub(crate) sync_id: Option<String>,
    /// The election lease's TTL, whole seconds from 2 to 300 [default: 5]
    #[arg(long, value_name = "SECONDS", allow_hyphen_values = true, hide = !FLEET,
          help_heading = "Fleet mode (--etcd)")]
    pub(crate) lease_ttl: Option<String>,
    /// This director on the peer link (UDP): its own address, not 0.0.0.0
    #[arg(long, value_name = "ADDR:PORT", hide = !FLEET, help_heading = "Fleet mode (--etcd)")]
    pub(crate) peer_listen: Option<String>,
    /// The other directors' --peer-listen, comma-separated
    #[arg(long, value_name = "ADDR:PORT[,...]", hide = !FLEET,
          help_heading = "Fleet mode (--etcd)")]
    pub(crate) peers: Option<String>,
    /// The peer link's HMAC key (the file's content); without it, the
    /// prefix (no secret)
    #[arg(long, value_name = "FILE", hide = !FLEET, help_heading = "Fleet mode (--etcd)")]
    pub(crate) peer_key: Option<PathBuf>,
    /// Where the records of the services this agent created and (fleet
    /// mode) of the VIPs it added are kept [default: /run/ipvs-agent]
    #[arg(long, value_name = "DIR")]
    pub(crate) state_dir: Option<PathBuf>,
}

/// `ipvs-agent`'s command line as a [`clap::Command`]: every command and
/// flag, with its help. What the man page and the shell completions are
/// made from (packagers: `cargo run -p ipvsnl-xtask`).
///
/// ```
/// let cmd = ipvs_agent::cli::command();
/// assert_eq!(cmd.get_name(), "ipvs-agent");
/// let run = cmd.find_subcommand("run").unwrap();
/// assert!(run.get_arguments().any(|a| a.get_long() == Some("watch")));
/// ```
pub fn command() -> clap::Command {
    Cli::command()
}

/// Parses a whole command line (the arguments after the program's name).
pub(super) fn parse<I, S>(args: I) -> Result<Cli, clap::Error>
where
    I: IntoIterator<Item = S>,
    S: Into<OsString>,
{
    let argv =
        std::iter::once(OsString::from("ipvs-agent")).chain(args.into_iter().map(Into::into));
    Cli::try_parse_from(argv)
}
