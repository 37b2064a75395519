//! `ipvsnl-xtask`: what a packager installs beside the binaries, made
//! from each tool's clap command line (one definition: the flags its
//! `--help` lists are the ones documented and completed). Writes, under
//! `--out DIR` (default `target/assets` of the workspace, or
//! `$CARGO_TARGET_DIR/assets`):
//!
//! - `man/TOOL.1`, and `man/TOOL-COMMAND.1` for each of a tool's
//!   commands (`ipvs-agent-run.1`);
//! - `completions/bash/TOOL.bash`, `completions/zsh/_TOOL`,
//!   `completions/fish/TOOL.fish`;
//!
//! for `ipvs-agent`, `ipvs-exporter` and `ipvs-doctor`. Exit 0 when all
//! are written, 1 on an I/O error (said on stderr), 2 on a bad command
//! line.
//!
//! `cargo run -p ipvsnl-xtask -- --out DIR`. The agent's man page and
//! completions are those of this build's features: without `fleet`,
//! fleet mode's flags are hidden, so they are not documented; build
//! with `--features ipvs-agent/fleet` for a package with fleet mode.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::Parser;
use clap_complete::Shell;

/// The command line.
#[derive(Debug, Parser)]
#[command(
    name = "ipvsnl-xtask",
    version,
    about = "Writes the man pages and shell completions of ipvs-agent, ipvs-exporter \
             and ipvs-doctor."
)]
struct Args {
    /// Where to write them (man/, completions/{bash,zsh,fish}/)
    /// [default: the workspace's target/assets]
    #[arg(long, value_name = "DIR")]
    out: Option<PathBuf>,
}

fn main() -> ExitCode {
    let args = Args::parse();
    let out = args.out.unwrap_or_else(default_out);
    let tools = [
        ipvs_agent::cli::command(),
        ipvsnl_exporter::command(),
        ipvsnl_doctor::cli::command(),
    ];
    for tool in tools {
        if let Err(e) = write_tool(tool, &out) {
            eprintln!("ipvsnl-xtask: {}: {e}", out.display());
            return ExitCode::from(1);
        }
    }
    println!("{}: man pages and completions written", out.display());
    ExitCode::SUCCESS
}

/// `$CARGO_TARGET_DIR/assets`, or the workspace's `target/assets`.
fn default_out() -> PathBuf {
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../../target"));
    target.join("assets")
}

/// One tool's man pages and completions under `out`.
fn write_tool(mut cmd: clap::Command, out: &Path) -> std::io::Result<()> {
    cmd.build();
    let man = out.join("man");
    std::fs::create_dir_all(&man)?;
    write_man(&cmd, &man)?;
    let name = cmd.get_name().to_string();
    for (shell, dir) in [
        (Shell::Bash, "bash"),
        (Shell::Zsh, "zsh"),
        (Shell::Fish, "fish"),
    ] {
        let dir = out.join("completions").join(dir);
        std::fs::create_dir_all(&dir)?;
        clap_complete::generate_to(shell, &mut cmd, &name, &dir)?;
    }
    Ok(())
}

/// The man page of `cmd` as `NAME.1`, and one of each of its visible
/// commands as `NAME-COMMAND.1` (its display name once built).
fn write_man(cmd: &clap::Command, dir: &Path) -> std::io::Result<()> {
    let name = cmd.get_display_name().unwrap_or(cmd.get_name());
    let mut roff = Vec::new();
    clap_mangen::Man::new(cmd.clone()).render(&mut roff)?;
    std::fs::write(dir.join(format!("{name}.1")), roff)?;
    for sub in cmd.get_subcommands() {
        if sub.is_hide_set() || sub.get_name() == "help" {
            continue;
        }
        write_man(sub, dir)?;
    }
    Ok(())
}
