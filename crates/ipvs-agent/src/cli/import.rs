//! `ipvs-agent import keepalived FILE [-o OUT] [--dry-run]`: the
//! conversion ([`crate::import`]) run on the disk's files; its warnings
//! and the fleet mode's summary on stderr, the agent's file on stdout or
//! written to OUT atomically (a temporary file beside it, renamed), exit
//! 1 and nothing written when the input has an error.

use std::io::Write;
use std::path::Path;
use std::process::ExitCode;

use crate::import::{keepalived as convert, DiskFiles};

use super::args::ImportFlags;

/// Runs the import of `flags`.
pub(super) fn keepalived(flags: &ImportFlags) -> ExitCode {
    let input = flags.file.display();
    let import = match convert(&DiskFiles, &flags.file) {
        Ok(i) => i,
        Err(e) => {
            for n in &e.notes {
                eprintln!("warning: {n}");
            }
            for s in &e.summary {
                eprintln!("{s}");
            }
            for err in &e.errors {
                eprintln!("{err}");
            }
            eprintln!(
                "{input}: {} error{}, nothing written",
                e.errors.len(),
                if e.errors.len() == 1 { "" } else { "s" }
            );
            return ExitCode::from(1);
        }
    };
    for n in &import.notes {
        eprintln!("warning: {n}");
    }
    for s in &import.summary {
        eprintln!("{s}");
    }
    let written = match (&flags.output, flags.dry_run) {
        (Some(out), false) => match write_atomically(out, &import.toml) {
            Ok(()) => format!("wrote {}", out.display()),
            Err(e) => {
                eprintln!("ipvs-agent: {}: cannot be written: {e}", out.display());
                return ExitCode::from(1);
            }
        },
        (out, _) => {
            print!("{}", import.toml);
            match (out, flags.dry_run) {
                (Some(out), true) => format!("dry run: would write {}", out.display()),
                _ => "printed".to_string(),
            }
        }
    };
    eprintln!(
        "{input}: imported: {} services, {} warnings; {written}",
        import.services,
        import.notes.len()
    );
    ExitCode::SUCCESS
}

/// Writes `text` to `path` through a temporary file in its directory,
/// renamed over it: a reader sees the old file or the whole new one.
fn write_atomically(path: &Path, text: &str) -> std::io::Result<()> {
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    let name = path.file_name().map_or_else(
        || "ipvs-agent.toml".into(),
        |n| n.to_string_lossy().into_owned(),
    );
    let tmp = dir.join(format!(".{name}.import-{}", std::process::id()));
    let result = (|| {
        let mut f = std::fs::File::create(&tmp)?;
        f.write_all(text.as_bytes())?;
        f.sync_all()?;
        std::fs::rename(&tmp, path)
    })();
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    result
}
