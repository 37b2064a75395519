//! A file and its `include`s read into one list of lines, each word with
//! its FILE:LINE. `include PATTERN` (at any depth, as keepalived reads
//! it) is replaced by the files the glob names, a relative pattern taken
//! from the including file's directory. A pattern that names no file, a
//! file that cannot be read and a file that includes itself (through any
//! chain) are errors at the `include` line. A line starting `@ID` or
//! `@^ID` (keepalived's conditional line, for the instance started with
//! `-i ID`) is left out with a warning; `$NAME` definitions are refused.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::import::files::Files;
use crate::import::lexer::{words, Token};
use crate::import::report::{ImportError, NoteKind, Report};

/// How deep includes may nest (keepalived's own limit is lower).
const MAX_DEPTH: usize = 32;

/// The lines of `path` with its includes in place (none when it cannot
/// be read: the error is in `report`).
pub(crate) fn read_all(files: &dyn Files, path: &Path, report: &mut Report) -> Vec<Vec<Token>> {
    let mut out = Vec::new();
    let mut stack = Vec::new();
    match files.read(path) {
        Ok(text) => file(files, path, &text, &mut stack, &mut out, report),
        Err(e) => report.errors.push(ImportError {
            at: None,
            message: format!("{}: cannot be read: {e}", path.display()),
        }),
    }
    out
}

fn file(
    files: &dyn Files,
    path: &Path,
    text: &str,
    stack: &mut Vec<PathBuf>,
    out: &mut Vec<Vec<Token>>,
    report: &mut Report,
) {
    stack.push(files.identity(path));
    let name: Arc<str> = Arc::from(path.display().to_string());
    for (i, line) in text.lines().enumerate() {
        let n = u32::try_from(i + 1).unwrap_or(u32::MAX);
        let toks = match words(&name, n, line) {
            Ok(t) => t,
            Err(e) => {
                report.errors.push(e);
                continue;
            }
        };
        let Some(first) = toks.first() else { continue };
        if !first.quoted && first.text.starts_with('@') {
            report.note(
                &first.at,
                NoteKind::NotSupported,
                format!(
                    "a conditional line ({}): keepalived reads it only when started with \
                     `-i {}`; left out",
                    first.text,
                    first.text.trim_start_matches(['@', '^'])
                ),
            );
            continue;
        }
        if !first.quoted && first.text.starts_with('$') {
            report.error(
                &first.at,
                format!(
                    "`{}`: keepalived's parameter definitions and substitutions are not \
                     imported; expand them first",
                    first.text
                ),
            );
            continue;
        }
        if first.is("include") {
            report.mapped(&first.at);
            include(files, path, &toks, stack, out, report);
            continue;
        }
        out.push(toks);
    }
    stack.pop();
}

fn include(
    files: &dyn Files,
    from: &Path,
    toks: &[Token],
    stack: &mut Vec<PathBuf>,
    out: &mut Vec<Vec<Token>>,
    report: &mut Report,
) {
    let at = toks[0].at.clone();
    let [_, pattern] = toks else {
        report.error(&at, "`include` takes one file name or glob pattern");
        return;
    };
    let pattern_path = Path::new(&pattern.text);
    let full = if pattern_path.is_absolute() {
        pattern_path.to_path_buf()
    } else {
        from.parent().unwrap_or(Path::new("")).join(pattern_path)
    };
    let found = match files.glob(&full) {
        Ok(f) => f,
        Err(e) => {
            report.error(&at, format!("`include {}`: {e}", pattern.text));
            return;
        }
    };
    if found.is_empty() {
        report.error(
            &at,
            format!(
                "`include {}`: no file matches {}",
                pattern.text,
                full.display()
            ),
        );
    }
    for path in found {
        let id = files.identity(&path);
        if stack.contains(&id) {
            report.error(
                &at,
                format!(
                    "`include {}`: {} includes itself (a circular include)",
                    pattern.text,
                    path.display()
                ),
            );
            continue;
        }
        if stack.len() >= MAX_DEPTH {
            report.error(&at, format!("`include`: more than {MAX_DEPTH} levels deep"));
            continue;
        }
        match files.read(&path) {
            Ok(text) => file(files, &path, &text, stack, out, report),
            Err(e) => report.error(
                &at,
                format!(
                    "`include {}`: {} cannot be read: {e}",
                    pattern.text,
                    path.display()
                ),
            ),
        }
    }
}
