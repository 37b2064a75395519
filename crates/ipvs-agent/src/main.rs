//! `ipvs-agent`: the director daemon's command line: `check FILE`
//! validates a configuration file and prints what it would configure;
//! `publish FILE --etcd URL` publishes it to a fleet; `run FILE
//! [OPTIONS]` (or `run --etcd URL`) runs the daemon. The commands are
//! the library's [`ipvs_agent::cli`]; this gives them the real checkers.

use std::process::ExitCode;
use std::sync::Arc;

use ipvs_agent::probe::NetProber;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    ipvs_agent::cli::main(&args, || Arc::new(NetProber::new()))
}
