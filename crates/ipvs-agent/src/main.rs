//! `ipvs-agent`: the director daemon's command line: `check FILE`
//! validates a configuration file and prints what it would configure;
//! `run FILE [OPTIONS]` runs the daemon.

use std::path::Path;
use std::process::ExitCode;
use std::sync::Arc;

use ipvs_agent::probe::NetProber;

use ipvs_agent::config::{self, LoadError};
use ipvs_agent::render::render;

const USAGE: &str = concat!(
    "usage: ipvs-agent check FILE\n",
    "       ipvs-agent publish FILE --etcd URL[,URL...] [--prefix P] [--cache PATH | --no-cache]\n",
    "       ipvs-agent run FILE [--listen ADDR | --no-http] [--netns PATH] [--remove-on-exit]\n",
    "                           [--log-format logfmt|json] [--watch PERIOD]\n",
    "       ipvs-agent run --etcd URL[,URL...] [--prefix P] [OPTIONS]\n",
    "                      [--vip ADDR/PREFIX ... --vip-interface IF] [--sync-interface IF [--sync-id N]]\n",
    "  check FILE   validate the configuration FILE and print what it would configure\n",
    "               (exit 0: valid; 1: errors, each as FILE:LINE:COLUMN: message; 2: usage)\n",
    "  publish FILE validate FILE, then publish it to etcd as the fleet's desired state\n",
    "               (needs the `fleet` feature; exit 0: published; 1: errors; 2: usage);\n",
    "               only the services changed since the last publish are parsed, the\n",
    "               others known from its cache (default under $XDG_CACHE_HOME or ~/.cache)\n",
    "  run FILE     keep the services of FILE in the kernel, their servers checked\n",
    "               (SIGHUP reloads, SIGTERM stops; HTTP on 127.0.0.1:9102 by default)\n",
    "  run --etcd   the same, its configuration what `publish` put in etcd, each new\n",
    "               generation applied as a reload (needs the `fleet` feature); with\n",
    "               --vip/--sync-interface it campaigns to lead: the leader holds the VIPs\n",
    "               and runs the sync daemon as master, the others as backup"
);

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args
        .iter()
        .map(String::as_str)
        .collect::<Vec<_>>()
        .as_slice()
    {
        ["check", file] => check(Path::new(file)),
        ["publish", rest @ ..] => publish(rest),
        ["run", rest @ ..] => ipvs_agent::daemon::run_args(rest, Arc::new(NetProber::new())),
        ["-h" | "--help"] => {
            println!("{USAGE}");
            ExitCode::SUCCESS
        }
        ["-V" | "--version"] => {
            println!("ipvs-agent {}", env!("CARGO_PKG_VERSION"));
            ExitCode::SUCCESS
        }
        _ => {
            eprintln!("{USAGE}");
            ExitCode::from(2)
        }
    }
}

#[cfg(feature = "fleet")]
fn publish(args: &[&str]) -> ExitCode {
    ipvs_agent::fleet::publish::publish_args(args)
}

#[cfg(not(feature = "fleet"))]
fn publish(_args: &[&str]) -> ExitCode {
    eprintln!("ipvs-agent publish: this build has no fleet mode (build with the `fleet` feature)");
    ExitCode::from(2)
}

fn check(path: &Path) -> ExitCode {
    match config::load(path) {
        Ok(c) => {
            print!("{}", render(&c));
            let servers: usize = c.services.iter().map(|s| s.servers.len()).sum();
            eprintln!(
                "{}: valid: {} services, {servers} real servers",
                path.display(),
                c.services.len()
            );
            ExitCode::SUCCESS
        }
        Err(LoadError::Invalid(errors)) => {
            for line in errors.lines() {
                eprintln!("{line}");
            }
            eprintln!(
                "{}: {} error{}, nothing accepted",
                path.display(),
                errors.len(),
                if errors.len() == 1 { "" } else { "s" }
            );
            ExitCode::from(1)
        }
        Err(e) => {
            eprintln!("ipvs-agent: {e}");
            ExitCode::from(1)
        }
    }
}
