//! `--load`: running `modprobe` and reading its failure.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use crate::report::LoadAttempt;

/// Finds `modprobe`: the first of `PATH`, `/sbin`, `/usr/sbin` that has it.
/// Falls back to the bare name, so a spawn error says it was not found.
pub fn locate_modprobe() -> PathBuf {
    let mut dirs: Vec<PathBuf> = std::env::var_os("PATH")
        .map(|path| std::env::split_paths(&path).collect())
        .unwrap_or_default();
    dirs.push(PathBuf::from("/sbin"));
    dirs.push(PathBuf::from("/usr/sbin"));
    dirs.into_iter()
        .map(|dir| dir.join("modprobe"))
        .find(|candidate| candidate.is_file())
        .unwrap_or_else(|| PathBuf::from("modprobe"))
}

/// Messages modprobe (kmod or busybox) prints, and the errno each names.
const ERRNO_TEXTS: &[(&str, i32)] = &[
    ("exec format error", libc::ENOEXEC),
    ("invalid module format", libc::ENOEXEC),
    ("operation not permitted", libc::EPERM),
    ("permission denied", libc::EACCES),
    ("key was rejected by service", libc::EKEYREJECTED),
    ("required key not available", libc::ENOKEY),
    ("unknown symbol", libc::ENOENT),
    ("no such file or directory", libc::ENOENT),
    ("not found", libc::ENOENT),
    ("function not implemented", libc::ENOSYS),
    ("cannot allocate memory", libc::ENOMEM),
    ("invalid argument", libc::EINVAL),
    ("read-only file system", libc::EROFS),
    ("file exists", libc::EEXIST),
];

/// The errno a modprobe message names, if it names a known one.
pub fn errno_from_message(message: &str) -> Option<i32> {
    let lower = message.to_ascii_lowercase();
    ERRNO_TEXTS
        .iter()
        .find(|(text, _)| lower.contains(text))
        .map(|(_, errno)| *errno)
}

/// The symbolic name of an errno the doctor reports (`ENOEXEC`): the
/// library's table.
pub use ipvsnl::errno_name;

/// Whether a module name is safe to pass to modprobe (no option, no path).
pub fn valid_module_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 64
        && !name.starts_with('-')
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
}

/// Runs `modprobe NAME` and records what happened. `success` is set from
/// the exit status only; the caller checks that the module is now present.
pub fn run_modprobe(modprobe: &Path, module: &str) -> LoadAttempt {
    let command = format!("{} {}", modprobe.display(), module);
    if !valid_module_name(module) {
        return LoadAttempt {
            module: module.to_string(),
            command,
            exit_status: None,
            success: false,
            output: "refused: not a valid module name".to_string(),
            errno: Some(libc::EINVAL),
        };
    }
    let result = Command::new(modprobe)
        .arg(module)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .output();
    match result {
        Ok(output) => {
            let mut text = String::from_utf8_lossy(&output.stderr).trim().to_string();
            let stdout = String::from_utf8_lossy(&output.stdout);
            let stdout = stdout.trim();
            if !stdout.is_empty() {
                if !text.is_empty() {
                    text.push('\n');
                }
                text.push_str(stdout);
            }
            let exit_status = output.status.code();
            let errno = if output.status.success() {
                None
            } else {
                errno_from_message(&text)
            };
            LoadAttempt {
                module: module.to_string(),
                command,
                exit_status,
                success: output.status.success(),
                output: text,
                errno,
            }
        }
        Err(err) => LoadAttempt {
            module: module.to_string(),
            command,
            exit_status: None,
            success: false,
            output: format!("cannot run {}: {err}", modprobe.display()),
            errno: err.raw_os_error(),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn errno_texts() {
        assert_eq!(
            errno_from_message("modprobe: ERROR: could not insert 'ip_vs': Exec format error"),
            Some(libc::ENOEXEC)
        );
        assert_eq!(
            errno_from_message(
                "modprobe: can't load module ip_vs (kernel/net/netfilter/ipvs/ip_vs.ko): invalid module format"
            ),
            Some(libc::ENOEXEC)
        );
        assert_eq!(
            errno_from_message(
                "modprobe: FATAL: Module ip_vs_foo not found in directory /lib/modules/6.1.0"
            ),
            Some(libc::ENOENT)
        );
        assert_eq!(errno_from_message("something else"), None);
        assert_eq!(errno_name(libc::ENOEXEC), Some("ENOEXEC"));
    }

    #[test]
    fn module_names() {
        assert!(valid_module_name("ip_vs_rr"));
        assert!(valid_module_name("nf-conntrack"));
        assert!(!valid_module_name("-r"));
        assert!(!valid_module_name("../x"));
        assert!(!valid_module_name(""));
    }

    #[test]
    fn missing_modprobe_is_reported() {
        let attempt = run_modprobe(Path::new("/nonexistent/modprobe"), "ip_vs");
        assert!(!attempt.success);
        assert_eq!(attempt.exit_status, None);
        assert_eq!(attempt.errno, Some(libc::ENOENT));
    }
}
