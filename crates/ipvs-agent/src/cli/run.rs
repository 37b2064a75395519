//! `ipvs-agent run FILE [OPTIONS]` (or `run --etcd URL [--prefix P]`, the
//! fleet mode): the whole daemon, as `main` calls it. The flags read
//! ([`RunOptions`]), then the engines composed: the daemon's agent, its
//! HTTP endpoint, file watch and signals and, in fleet mode, the
//! configurations followed from etcd and the election beside it (fleet
//! mode's pieces are given the daemon's [`Handle`] and [`Connector`]
//! here, so that neither engine imports the other).

use std::process::ExitCode;
use std::sync::Arc;

use crate::cli::args::RunFlags;
use crate::cli::run_options::RunOptions;
use crate::cli::runtime::command_runtime;
use crate::cli::state::{open_record, DEFAULT_STATE_DIR};
use crate::config::{self, LoadError};
use crate::daemon::{
    abort_on_panic, forward_signals, init_logging, raise_open_files_limit, serve, watch_file,
    Agent, AgentOptions, Connector, FileVersion, Handle, Notifier, Signals,
};
use crate::probe::Prober;

/// Runs the daemon for `run`'s flags, its servers checked by the prober
/// `prober` makes, until SIGTERM or SIGINT. Exit 0 after a stop; 1 when
/// the configuration, the kernel or the HTTP address fails at start; 2
/// on a usage error.
pub(super) fn run(flags: RunFlags, prober: impl FnOnce() -> Arc<dyn Prober>) -> ExitCode {
    let options = match RunOptions::from_flags(flags) {
        Ok(o) => o,
        Err(e) => {
            eprintln!("ipvs-agent run: {e}");
            return ExitCode::from(2);
        }
    };
    init_logging(options.log_format);
    abort_on_panic();
    let runtime = match command_runtime() {
        Ok(r) => r,
        Err(code) => return code,
    };
    // The signals first: a SIGHUP from here on never ends the process.
    let signals = match runtime.block_on(async { Signals::install() }) {
        Ok(s) => s,
        Err(e) => {
            tracing::error!(error = %e, "cannot take signals");
            return ExitCode::from(1);
        }
    };
    // Fleet mode (`--etcd`): the configuration comes from etcd, once the
    // runtime runs.
    // Taken before the file is read: a change made from now on is
    // reloaded by `--watch`.
    let version = FileVersion::of(&options.config);
    let config = match options.etcd {
        Some(_) => None,
        None => Some(config::load(&options.config)),
    };
    let config = match config.transpose() {
        Ok(c) => c,
        Err(LoadError::Invalid(errors)) => {
            for line in errors.lines() {
                eprintln!("{line}");
            }
            return ExitCode::from(1);
        }
        Err(e) => {
            eprintln!("ipvs-agent: {e}");
            return ExitCode::from(1);
        }
    };
    match raise_open_files_limit() {
        Ok((before, after)) if after > before => {
            tracing::info!(before, after, "open files limit raised");
        }
        Ok(_) => {}
        Err(e) => tracing::warn!(error = %e, "cannot raise the open files limit"),
    }
    runtime.block_on(async move {
        let mut signals = signals;
        let (config, following) = match config {
            Some(c) => (c, None),
            None => {
                let started = tokio::select! {
                    started = fleet_start(&options) => started,
                    name = signals.stop_before_start() => {
                        tracing::info!("{name} while waiting for etcd: stopping");
                        return ExitCode::SUCCESS;
                    }
                };
                match started {
                    Ok((c, source)) => (c, Some(source)),
                    Err(code) => return code,
                }
            }
        };
        let connector = match &options.netns {
            Some(path) => Connector::netns(path),
            None => Connector::current(),
        };
        let mut agent_options = AgentOptions::default();
        if following.is_none() {
            agent_options = agent_options.with_config_path(&options.config);
        }
        let agent_options = agent_options
            .with_remove_on_exit(options.remove_on_exit)
            .with_notifier(Notifier::from_env());
        let state_dir = options.state_dir.clone();
        let state_dir = state_dir.unwrap_or_else(|| DEFAULT_STATE_DIR.into());
        let record = match open_record(&state_dir, options.netns.as_deref()) {
            Ok(r) => r,
            Err(e) => {
                tracing::error!(error = %e, "cannot keep the record of the agent's services");
                return ExitCode::from(1);
            }
        };
        let agent =
            Agent::new(config, connector.clone(), prober(), agent_options).with_ownership(record);
        let handle = agent.handle();
        // Fleet mode with VIPs or a sync interface: the election.
        let leading = if following.is_some() {
            fleet_lead(&options, &connector).await
        } else {
            None
        };
        if let Some(address) = &options.listen {
            match ipvsnl_exporter::bind(address).await {
                Ok(listener) => {
                    tracing::info!(address = %address, "serving /metrics, /healthz, /ready");
                    tokio::spawn(serve(listener, handle.clone(), connector));
                }
                Err(e) => {
                    tracing::error!(address = %address, error = %e, "cannot listen");
                    return ExitCode::from(1);
                }
            }
        }
        if let Some(source) = following {
            follow(source, handle.clone());
        }
        if let Some(period) = options.watch {
            let path = options.config.clone();
            tokio::spawn(watch_file(path, period, handle.clone(), version));
        }
        tokio::spawn(forward_signals(handle, signals));
        let code = match agent.run().await {
            Ok(()) => ExitCode::SUCCESS,
            Err(e) => {
                tracing::error!(error = %e, "cannot reach the kernel's IPVS table");
                ExitCode::from(1)
            }
        };
        stop_leading(leading).await;
        code
    })
}

/// What a daemon in fleet mode follows.
#[cfg(feature = "fleet")]
type Following = crate::fleet::Source;
#[cfg(not(feature = "fleet"))]
type Following = std::convert::Infallible;

/// Fleet mode's start: the etcd client and the first configuration
/// (waited for); exit 1 when etcd's endpoints are not usable.
#[cfg(feature = "fleet")]
async fn fleet_start(o: &RunOptions) -> Result<(crate::config::Config, Following), ExitCode> {
    let endpoints = o.etcd.clone().unwrap_or_default();
    let prefix = o
        .prefix
        .as_deref()
        .unwrap_or(crate::fleet::publish::file::DEFAULT_PREFIX);
    tracing::info!(etcd = %endpoints.join(","), prefix, "fleet: following etcd");
    match crate::fleet::Source::connect(&endpoints, prefix).await {
        Ok(mut source) => {
            let config = crate::fleet::follow::reload::first(&mut source).await;
            Ok((config, source))
        }
        Err(e) => {
            tracing::error!(error = %e, "fleet: cannot use etcd");
            Err(ExitCode::from(1))
        }
    }
}

/// Not reached: without the feature, `--etcd` is a usage error.
#[cfg(not(feature = "fleet"))]
async fn fleet_start(_: &RunOptions) -> Result<(crate::config::Config, Following), ExitCode> {
    Err(ExitCode::from(2))
}

/// The election and the task applying its roles.
#[cfg(feature = "fleet")]
type Leading = (
    crate::fleet::leader::election::Election,
    tokio::task::JoinHandle<()>,
);
#[cfg(not(feature = "fleet"))]
type Leading = std::convert::Infallible;

/// With `--vip` or `--sync-interface`: campaigns on `PREFIX/leader` and
/// applies each role (the VIPs, the sync daemon) as it changes.
#[cfg(feature = "fleet")]
async fn fleet_lead(o: &RunOptions, connector: &Connector) -> Option<Leading> {
    use crate::fleet::leader::election::{Election, ElectionOptions};
    use crate::fleet::leader::peer_link::{PeerLink, PeerLinkOptions};
    use crate::fleet::leader::state_machine::{Timing, DEFAULT_TTL};
    use crate::fleet::leader::sync_daemon::SyncRoles;
    use crate::fleet::vip::addresses::{Vip, Vips};
    use crate::fleet::vip::record::{VipState, DEFAULT_DIR as VIP_STATE_DIR};
    if o.vips.is_empty() && o.sync_interface.is_none() {
        return None;
    }
    let endpoints = o.etcd.clone().unwrap_or_default();
    let prefix = o
        .prefix
        .as_deref()
        .unwrap_or(crate::fleet::publish::file::DEFAULT_PREFIX);
    let etcd = match crate::fleet::store::etcd::Etcd::connect(&endpoints).await {
        Ok(e) => e,
        Err(e) => {
            tracing::error!(error = %e, "fleet: no election: cannot use etcd");
            return None;
        }
    };
    let client = match connector.connect().await {
        Ok(c) => c,
        Err(e) => {
            tracing::error!(error = %e, "fleet: no election: cannot reach the kernel");
            return None;
        }
    };
    let host = std::fs::read_to_string("/proc/sys/kernel/hostname").unwrap_or_default();
    let me = format!("{}/{}", host.trim(), std::process::id());
    // Parsed by RunOptions::parse already.
    let vips: Vec<Vip> = o.vips.iter().filter_map(|v| v.parse().ok()).collect();
    let state_dir = o.state_dir.clone().unwrap_or_else(|| VIP_STATE_DIR.into());
    let mut addresses = Vips::new(o.vip_interface.clone().unwrap_or_default(), vips)
        .with_state(VipState::new(state_dir));
    // What a previous run, killed while it led, left: a follower holds none.
    match addresses.remove_recorded() {
        Ok(removed) => {
            for (interface, vip) in removed {
                tracing::info!(%interface, %vip, "fleet: removed a VIP a previous run left");
            }
        }
        Err(e) => {
            tracing::error!(error = %e, "fleet: no election: the VIPs' record");
            return None;
        }
    }
    let roles = o
        .sync_interface
        .as_ref()
        .map(|i| SyncRoles::new(i.clone(), u32::from(o.sync_id)));
    // Checked by RunOptions::parse already.
    let timing = Timing::for_ttl(o.lease_ttl.unwrap_or(DEFAULT_TTL)).unwrap_or_default();
    let options = ElectionOptions::new(format!("{prefix}/leader"), me).with_timing(timing);
    let election = match o.peer_listen {
        None => Election::start(&etcd, options),
        Some(listen) => {
            let key = match &o.peer_key {
                Some(file) => match std::fs::read(file) {
                    Ok(mut k) => {
                        while k.last().is_some_and(u8::is_ascii_whitespace) {
                            k.pop();
                        }
                        k
                    }
                    Err(e) => {
                        tracing::error!(file = %file.display(), error = %e, "fleet: no election: cannot read the peer key");
                        return None;
                    }
                },
                None => prefix.as_bytes().to_vec(),
            };
            let link = PeerLink::bind(PeerLinkOptions::new(listen, o.peers.clone(), key))
                .and_then(|link| Election::start_with_peers(&etcd, options, link));
            match link {
                Ok(e) => {
                    tracing::info!(%listen, peers = o.peers.len(), "fleet: peer link up");
                    e
                }
                Err(e) => {
                    tracing::error!(error = %e, "fleet: no election: the peer link");
                    return None;
                }
            }
        }
    };
    let task = tokio::spawn(crate::fleet::leader::actions::lead(
        election.status(),
        addresses,
        roles,
        client,
    ));
    Some((election, task))
}

#[cfg(not(feature = "fleet"))]
async fn fleet_lead(_: &RunOptions, _: &Connector) -> Option<Leading> {
    None
}

/// At exit: resigns (the VIPs go first), revokes the lease, waits for the
/// roles' task to release what it holds.
#[cfg(feature = "fleet")]
async fn stop_leading(leading: Option<Leading>) {
    if let Some((election, task)) = leading {
        election.stop().await;
        let _ = task.await;
    }
}

#[cfg(not(feature = "fleet"))]
async fn stop_leading(leading: Option<Leading>) {
    if let Some(never) = leading {
        match never {}
    }
}

/// Every new generation handed to the agent.
#[cfg(feature = "fleet")]
fn follow(source: Following, handle: Handle) {
    tokio::spawn(crate::fleet::follow::reload::follow(source, handle));
}

#[cfg(not(feature = "fleet"))]
fn follow(source: Following, _: Handle) {
    match source {}
}

/// The follower hands each generation to the agent as a reload, through
/// its handle.
#[cfg(feature = "fleet")]
impl crate::fleet::follow::reload::Reload for Handle {
    fn apply(
        &self,
        config: crate::config::Config,
    ) -> impl std::future::Future<Output = bool> + Send {
        Handle::apply(self, config)
    }

    fn alive(&self) -> impl std::future::Future<Output = bool> + Send {
        Handle::alive(self)
    }
}
