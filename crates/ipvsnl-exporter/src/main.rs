//! `ipvs-exporter`: serves the IPVS table as Prometheus metrics.

use std::process::ExitCode;

use ipvsnl_exporter::{bind, log_line, serve_with, ClientSource, Exporter, Flags};

fn main() -> ExitCode {
    // `--help` and `--version` print and exit 0; a bad command line prints
    // what is wrong (the flag, a similar one) and exits 2.
    let flags = Flags::parse(std::env::args_os().skip(1)).unwrap_or_else(|e| e.exit());
    match run(flags) {
        Ok(()) => ExitCode::SUCCESS,
        Err(why) => {
            eprintln!("{}", log_line("error", "cannot serve", Some(&why)));
            ExitCode::from(1)
        }
    }
}

fn run(flags: Flags) -> Result<(), String> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| format!("cannot start the runtime: {e}"))?;
    runtime.block_on(async {
        let source = ClientSource::new(flags.netns.as_deref());
        if let Err(e) = source.connect().await {
            // A namespace that cannot be entered is a setup error: stop.
            // Any other failure (ip_vs not loaded yet) leaves the exporter
            // serving `up 0` until the kernel answers.
            if let ipvsnl::Error::Namespace { .. } = e {
                return Err(e.to_string());
            }
            eprintln!(
                "{}",
                log_line("warn", "IPVS not reachable yet", Some(&e.to_string()))
            );
        }
        let listener = bind(&flags.listen_address)
            .await
            .map_err(|e| format!("cannot listen on {}: {e}", flags.listen_address))?;
        let local = listener
            .local_addr()
            .map(|a| a.to_string())
            .unwrap_or_else(|_| flags.listen_address.clone());
        eprintln!(
            "{}",
            log_line(
                "info",
                &format!("listening on {local}{}", flags.telemetry_path),
                None
            )
        );
        let exporter = Exporter::new(source, flags.metric_prefix, flags.telemetry_path);
        serve_with(listener, exporter, flags.limits)
            .await
            .map_err(|e| format!("serving failed: {e}"))
    })
}
