//! `ipvs-exporter`: serves the IPVS table as Prometheus metrics.

use std::process::ExitCode;

use ipvsnl_exporter::{bind, log_line, serve_with, ClientSource, Exporter, Flags, Parsed};

fn main() -> ExitCode {
    let flags = match Flags::parse(std::env::args().skip(1)) {
        Ok(Parsed::Run(flags)) => flags,
        Ok(Parsed::Help) => {
            print!("{}", Flags::usage());
            return ExitCode::SUCCESS;
        }
        Ok(Parsed::Version) => {
            println!("ipvs-exporter {}", env!("CARGO_PKG_VERSION"));
            return ExitCode::SUCCESS;
        }
        // `Parsed` is non-exhaustive: a request this binary does not know.
        Ok(other) => {
            eprintln!("ipvs-exporter: unsupported request {other:?}");
            return ExitCode::from(2);
        }
        Err(e) => {
            eprintln!("ipvs-exporter: {e}");
            eprintln!("try 'ipvs-exporter --help'");
            return ExitCode::from(2);
        }
    };
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
