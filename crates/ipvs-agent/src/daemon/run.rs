//! `ipvs-agent run FILE [OPTIONS]`: the whole daemon, as `main` calls it.

use std::process::ExitCode;
use std::sync::Arc;

use crate::config::{self, LoadError};
use crate::daemon::agent::{Agent, AgentOptions};
use crate::daemon::connect::Connector;
use crate::daemon::file_watch::watch_file;
use crate::daemon::http::serve;
use crate::daemon::logging::init_logging;
use crate::daemon::notify::Notifier;
use crate::daemon::options::RunOptions;
use crate::daemon::signals::forward_signals;
use crate::probe::Prober;

/// Runs the daemon for the arguments after `run`, its servers checked by
/// `prober`, until SIGTERM or SIGINT. Exit 0 after a stop; 1 when the
/// configuration, the kernel or the HTTP address fails at start; 2 on a
/// usage error.
pub fn run_args(args: &[&str], prober: Arc<dyn Prober>) -> ExitCode {
    let options = match RunOptions::parse(args) {
        Ok(o) => o,
        Err(e) => {
            eprintln!("ipvs-agent run: {e}");
            return ExitCode::from(2);
        }
    };
    init_logging(options.log_format);
    let config = match config::load(&options.config) {
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
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(r) => r,
        Err(e) => {
            eprintln!("ipvs-agent: cannot start the runtime: {e}");
            return ExitCode::from(1);
        }
    };
    runtime.block_on(async move {
        let connector = match &options.netns {
            Some(path) => Connector::netns(path),
            None => Connector::current(),
        };
        let agent_options = AgentOptions::default()
            .with_config_path(&options.config)
            .with_remove_on_exit(options.remove_on_exit)
            .with_notifier(Notifier::from_env());
        let agent = Agent::new(config, connector.clone(), prober, agent_options);
        let handle = agent.handle();
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
        if let Some(period) = options.watch {
            tokio::spawn(watch_file(options.config.clone(), period, handle.clone()));
        }
        tokio::spawn(async move {
            if let Err(e) = forward_signals(handle).await {
                tracing::error!(error = %e, "cannot take signals");
            }
        });
        match agent.run().await {
            Ok(()) => ExitCode::SUCCESS,
            Err(e) => {
                tracing::error!(error = %e, "cannot reach the kernel's IPVS table");
                ExitCode::from(1)
            }
        }
    })
}
