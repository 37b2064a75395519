//! The command line of `ipvs-agent run`: its flags, as clap read them
//! (`args.rs`), made into [`RunOptions`], a plain struct of what the
//! daemon and, with `--etcd`, fleet mode are given, every value checked
//! here (a wrong one is a [`UsageError`], exit 2, before anything
//! starts).

use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

use crate::cli::args::{parse, AgentCommand, RunFlags};
use crate::cli::usage::UsageError;
use crate::config::parse_duration;
use crate::daemon::LogFormat;

/// `ipvs-agent run`'s options.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct RunOptions {
    /// The configuration file.
    pub config: PathBuf,
    /// The HTTP endpoint's address (`--listen`), `None` with `--no-http`.
    pub listen: Option<String>,
    /// The network namespace to keep (`--netns PATH`); the current one
    /// without.
    pub netns: Option<PathBuf>,
    /// Remove the agent's services at exit (`--remove-on-exit`).
    pub remove_on_exit: bool,
    /// `--log-format logfmt|json`.
    pub log_format: LogFormat,
    /// `--watch PERIOD`: reload the file when it changes, checked this
    /// often; `None`: only SIGHUP reloads.
    pub watch: Option<Duration>,
    /// `--etcd URL[,URL...]` (fleet mode, instead of a FILE): follow the
    /// configuration published there; `config` is then empty.
    pub etcd: Option<Vec<String>>,
    /// `--prefix P` with `--etcd` (default `/ipvs-agent`).
    pub prefix: Option<String>,
    /// `--vip ADDR/PREFIX` (repeatable, with `--etcd`): the addresses the
    /// fleet's leader holds.
    pub vips: Vec<String>,
    /// `--vip-interface IF`: where the leader adds them.
    pub vip_interface: Option<String>,
    /// `--sync-interface IF`: the kernel's sync daemon on it, master on
    /// the leader, backup on the followers.
    pub sync_interface: Option<String>,
    /// `--sync-id N` with `--sync-interface`: the sync daemon's id, 0 to
    /// 255 (the kernel keeps 8 bits; a backup takes only its master's
    /// id), the same on every director of a fleet; 0 without.
    pub sync_id: u8,
    /// `--lease-ttl SECONDS`: the election lease's TTL (default 5); the
    /// keepalive period (a third) and the step-down margin (a fifth)
    /// follow from it.
    pub lease_ttl: Option<Duration>,
    /// `--peer-listen ADDR:PORT`: this director on the peer link (UDP),
    /// and its id there.
    pub peer_listen: Option<SocketAddr>,
    /// `--peers ADDR:PORT[,...]`: the other directors' `--peer-listen`.
    pub peers: Vec<SocketAddr>,
    /// `--peer-key FILE`: the peer link's HMAC key (the file's content);
    /// without it, the prefix (no secret).
    pub peer_key: Option<PathBuf>,
    /// `--state-dir DIR`: where the records of the services this agent
    /// created (`services`) and, in fleet mode, of the VIPs it added
    /// (`vips`) are kept (default `/run/ipvs-agent`).
    pub state_dir: Option<PathBuf>,
}

impl RunOptions {
    /// Parses the arguments after `run` (clap's errors, such as an
    /// unknown flag, as a [`UsageError`] of clap's words).
    ///
    /// ```
    /// use ipvs_agent::cli::RunOptions;
    /// use ipvs_agent::daemon::LogFormat;
    /// let o = RunOptions::parse(&["agent.toml", "--log-format", "json", "--remove-on-exit"]).unwrap();
    /// assert_eq!(o.listen.as_deref(), Some("127.0.0.1:9102"));
    /// assert_eq!(o.log_format, LogFormat::Json);
    /// assert!(o.remove_on_exit);
    /// assert_eq!(o.watch, None);
    /// // A flag given twice: the last value.
    /// let o = RunOptions::parse(&["agent.toml", "--watch", "1s", "--watch", "2s"]).unwrap();
    /// assert_eq!(o.watch, Some(std::time::Duration::from_secs(2)));
    /// let e = RunOptions::parse(&["a.toml", "--log-format", "xml"]).unwrap_err().to_string();
    /// assert!(e.contains("'xml' for '--log-format <FORMAT>'"), "{e}");
    /// assert!(e.contains("[possible values: logfmt, json]"), "{e}");
    /// ```
    pub fn parse(args: &[&str]) -> Result<Self, UsageError> {
        let cli = parse(std::iter::once("run").chain(args.iter().copied()))?;
        match cli.command {
            AgentCommand::Run(flags) => Self::from_flags(*flags),
            _ => unreachable!("parsed as `run`"),
        }
    }

    /// The options `flags` give, each value checked and what goes
    /// together checked together.
    pub(super) fn from_flags(f: RunFlags) -> Result<Self, UsageError> {
        let mut o = RunOptions {
            config: PathBuf::new(),
            listen: (!f.no_http).then_some(f.listen),
            netns: f.netns,
            remove_on_exit: f.remove_on_exit,
            log_format: match f.log_format.as_str() {
                "json" => LogFormat::Json,
                _ => LogFormat::Logfmt,
            },
            watch: None,
            etcd: None,
            prefix: f.prefix,
            vips: f.vips,
            vip_interface: f.vip_interface,
            sync_interface: f.sync_interface,
            sync_id: 0,
            lease_ttl: None,
            peer_listen: None,
            peers: Vec::new(),
            peer_key: f.peer_key,
            state_dir: f.state_dir,
        };
        let config = f.file;
        if let Some(period) = f.watch {
            o.watch = Some(
                parse_duration(&period)
                    .map_err(|why| UsageError(format!("--watch: \"{period}\" {why}")))?,
            );
        }
        if let Some(list) = f.etcd {
            let endpoints: Vec<String> = list.split(',').map(|e| e.trim().to_string()).collect();
            if endpoints.iter().any(String::is_empty) {
                return Err(UsageError(format!(
                    "--etcd: \"{list}\" has an empty endpoint"
                )));
            }
            o.etcd = Some(endpoints);
        }
        let sync_id_given = f.sync_id.is_some();
        if let Some(v) = f.sync_id {
            // A byte: the kernel keeps no more (ipvsnl::SYNC_ID_MAX).
            o.sync_id = v.parse().map_err(|_| {
                UsageError(format!(
                    "--sync-id: \"{v}\" is not a sync id (a whole number from 0 to 255: \
                     the kernel keeps 8 bits)"
                ))
            })?;
        }
        if let Some(v) = f.lease_ttl {
            let secs: u64 = v.parse().map_err(|_| {
                UsageError(format!("--lease-ttl: \"{v}\" is not a number of seconds"))
            })?;
            o.lease_ttl = Some(Duration::from_secs(secs));
        }
        if let Some(v) = f.peer_listen {
            let listen: SocketAddr = v
                .parse()
                .map_err(|_| UsageError(format!("--peer-listen: \"{v}\" is not ADDRESS:PORT")))?;
            if listen.ip().is_unspecified() {
                return Err(UsageError(format!(
                    "--peer-listen: {listen}: give this director's own address \
                     on the link (its peers know it by it)"
                )));
            }
            o.peer_listen = Some(listen);
        }
        if let Some(list) = f.peers {
            for p in list.split(',') {
                let peer: SocketAddr = p
                    .trim()
                    .parse()
                    .map_err(|_| UsageError(format!("--peers: \"{p}\" is not ADDRESS:PORT")))?;
                if o.peers.contains(&peer) {
                    return Err(UsageError(format!("--peers: {peer} twice")));
                }
                o.peers.push(peer);
            }
        }
        if o.etcd.is_some() {
            if let Some(file) = config {
                return Err(UsageError(format!(
                    "run takes a FILE or --etcd, not both ({})",
                    file.display()
                )));
            }
            if o.watch.is_some() {
                return Err(UsageError("--watch is for a FILE, not --etcd".into()));
            }
            if !cfg!(feature = "fleet") {
                return Err(UsageError(
                    "--etcd: this build has no fleet mode (build with the `fleet` feature)".into(),
                ));
            }
            match (o.vips.is_empty(), o.vip_interface.is_some()) {
                (false, false) => return Err(UsageError("--vip needs --vip-interface".into())),
                (true, true) => return Err(UsageError("--vip-interface needs --vip".into())),
                _ => {}
            }
            #[cfg(feature = "fleet")]
            for vip in &o.vips {
                vip.parse::<crate::fleet::vip::addresses::Vip>()
                    .map_err(|e| UsageError(format!("--vip: {e}")))?;
            }
            #[cfg(feature = "fleet")]
            if let Some(ttl) = o.lease_ttl {
                crate::fleet::leader::state_machine::Timing::for_ttl(ttl)
                    .map_err(|e| UsageError(format!("--lease-ttl: {e}")))?;
            }
            if sync_id_given && o.sync_interface.is_none() {
                return Err(UsageError("--sync-id needs --sync-interface".into()));
            }
            o.check_peers()?;
            return Ok(o);
        }
        if o.prefix.is_some() {
            return Err(UsageError("--prefix goes with --etcd".into()));
        }
        if !o.vips.is_empty() || o.vip_interface.is_some() || o.sync_interface.is_some() {
            return Err(UsageError(
                "--vip, --vip-interface and --sync-interface go with --etcd".into(),
            ));
        }
        if sync_id_given {
            return Err(UsageError(
                "--sync-id goes with --etcd and --sync-interface".into(),
            ));
        }
        if o.lease_ttl.is_some()
            || o.peer_listen.is_some()
            || !o.peers.is_empty()
            || o.peer_key.is_some()
        {
            return Err(UsageError(
                "--lease-ttl, --peers, --peer-listen and --peer-key go with --etcd".into(),
            ));
        }
        o.config = config
            .ok_or_else(|| UsageError("run needs a configuration FILE (or --etcd URL)".into()))?;
        Ok(o)
    }

    /// The peer link's options go together, and with an election.
    fn check_peers(&self) -> Result<(), UsageError> {
        match (self.peer_listen, self.peers.is_empty()) {
            (Some(_), true) => return Err(UsageError("--peer-listen needs --peers".into())),
            (None, false) => return Err(UsageError("--peers needs --peer-listen".into())),
            (None, true) if self.peer_key.is_some() => {
                return Err(UsageError("--peer-key goes with --peers".into()))
            }
            (None, true) => return Ok(()),
            (Some(me), false) if self.peers.contains(&me) => {
                return Err(UsageError(format!(
                    "--peers: {me} is this director's --peer-listen"
                )))
            }
            _ => {}
        }
        if self.vips.is_empty() && self.sync_interface.is_none() {
            return Err(UsageError(
                "--peers: no election without --vip or --sync-interface".into(),
            ));
        }
        Ok(())
    }
}
