//! `public-api-lister RUSTDOC_JSON`: prints the public items of the crate
//! that rustdoc's JSON output describes, one a line, sorted, blanket and
//! auto-trait impls left out (cargo-public-api's `-ss`).

use std::io::Write;
use std::process::ExitCode;

fn main() -> ExitCode {
    let mut args = std::env::args_os().skip(1);
    let (Some(json), None) = (args.next(), args.next()) else {
        eprintln!("usage: public-api-lister RUSTDOC_JSON");
        return ExitCode::from(2);
    };
    let api = match public_api::Builder::from_rustdoc_json(&json)
        .omit_blanket_impls(true)
        .omit_auto_trait_impls(true)
        .build()
    {
        Ok(api) => api,
        Err(e) => {
            eprintln!("public-api-lister: {}: {e}", json.to_string_lossy());
            return ExitCode::FAILURE;
        }
    };
    let mut out = std::io::stdout().lock();
    for item in api.items() {
        if writeln!(out, "{item}").is_err() {
            return ExitCode::FAILURE;
        }
    }
    ExitCode::SUCCESS
}
