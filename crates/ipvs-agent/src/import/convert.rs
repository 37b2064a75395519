//! The whole import: the files read with their includes, built into a
//! tree, each top-level block converted (groups first, since a
//! `virtual_server group` may come before its group), the agent's file
//! written and then checked by the agent's own parser.

use std::path::Path;

use crate::config;
use crate::import::files::Files;
use crate::import::group::{group, Groups};
use crate::import::includes::read_all;
use crate::import::keywords::{ROOT_OUTSIDE, SSL};
use crate::import::outside::Outside;
use crate::import::report::{ImportError, ImportErrors, NoteKind, Report};
use crate::import::service::virtual_server;
use crate::import::tree::build;
use crate::import::writer::write;
use crate::import::Import;

/// Imports the keepalived configuration `path` read through `files`.
pub(crate) fn import(files: &dyn Files, path: &Path) -> Result<Import, ImportErrors> {
    let mut report = Report::default();
    let lines = read_all(files, path, &mut report);
    let nodes = build(lines, &mut report);
    if !report.errors.is_empty() {
        return Err(fail(report));
    }
    let mut groups = Groups::new();
    for n in nodes.iter().filter(|n| n.name() == "virtual_server_group") {
        group(n, &mut groups, &mut report);
    }
    let mut outside = Outside::default();
    let mut used = std::collections::BTreeSet::new();
    let mut services = Vec::new();
    for n in &nodes {
        match n.name() {
            "virtual_server_group" => {}
            "virtual_server" => {
                if let (Some("group"), Some(g)) = (n.arg(0), n.arg(1)) {
                    used.insert(g.to_string());
                }
                services.extend(virtual_server(n, &groups, &mut report));
            }
            "SSL" => {
                for c in n.children() {
                    if !SSL.contains(&c.name()) {
                        report.error(
                            c.at(),
                            format!(
                                "`{}` is not a keyword of `SSL` (keepalived 2.2.7)",
                                c.name()
                            ),
                        );
                    }
                }
                report.note(
                    n.at(),
                    NoteKind::NotSupported,
                    "`SSL`: the agent's HTTPS checks present no client certificate; left out",
                );
                n.inner(&mut report.mapped);
            }
            "real_server" => report.error(n.at(), "a `real_server` outside a `virtual_server`"),
            name if ROOT_OUTSIDE.contains(&name) => outside.take(n, &mut report),
            name => report.error(
                n.at(),
                format!("`{name}` is not a top-level keyword of keepalived 2.2.7"),
            ),
        }
    }
    for n in nodes.iter().filter(|n| n.name() == "virtual_server_group") {
        if n.arg(0).is_some_and(|g| !used.contains(g)) {
            report.note(
                n.at(),
                NoteKind::NotSupported,
                "a group no `virtual_server group` uses: keepalived configures nothing for it; left out",
            );
        } else {
            report.mapped(n.at());
        }
        n.inner(&mut report.mapped);
    }
    let mut seen: Vec<(String, &crate::import::report::Place)> = Vec::new();
    for s in &services {
        let key = s
            .table
            .fields
            .iter()
            .filter(|f| matches!(f.0, "protocol" | "address" | "port" | "fwmark" | "family"))
            .map(|f| format!("{}={:?}", f.0, f.1))
            .collect::<Vec<_>>()
            .join(" ");
        match seen.iter().find(|(k, _)| *k == key) {
            Some((_, first)) => report.error(
                &s.at,
                format!("this virtual service is configured twice (first at {first})"),
            ),
            None => seen.push((key, &s.at)),
        }
    }
    // (With errors the input is refused: the lines after an error are not
    // all read, and the errors say what to fix.)
    if report.errors.is_empty() {
        account(&nodes, &mut report);
    }
    if report.errors.is_empty() && services.is_empty() {
        report.errors.push(ImportError {
            at: None,
            message: format!(
                "{}: no `virtual_server` with a real server: nothing for the agent's file",
                path.display()
            ),
        });
    }
    if !report.errors.is_empty() {
        let mut e = fail(report);
        e.summary = outside.summary();
        return Err(e);
    }
    report
        .notes
        .sort_by(|a, b| (&a.at.file, a.at.line).cmp(&(&b.at.file, b.at.line)));
    let summary = outside.summary();
    let mut header = vec![
        format!("The agent's configuration, imported from {} (`ipvs-agent import keepalived`).", path.display()),
        format!(
            "{} warnings (each FILE:LINE: the import prints them); \"changed meaning\" below marks a setting that differs.",
            report.notes.len()
        ),
    ];
    if !summary.is_empty() {
        header.push(String::new());
        header.extend(summary.iter().cloned());
    }
    let (toml, origins) = write(&header, &services);
    let name = path.display().to_string();
    if let Err(e) = config::parse_str(&name, &toml) {
        // Said at the keepalived line of the table the error is in.
        let errors = e
            .errors
            .iter()
            .map(|err| {
                let line = err.line;
                let at = origins
                    .iter()
                    .rev()
                    .find(|(l, _)| *l <= line)
                    .map(|(_, p)| p.clone());
                ImportError {
                    at,
                    message: format!("the agent refuses this: {}", err.message),
                }
            })
            .collect();
        return Err(ImportErrors {
            errors,
            notes: report.notes,
            summary,
        });
    }
    Ok(Import {
        toml,
        notes: report.notes,
        summary,
        services: services.len(),
    })
}

fn fail(mut report: Report) -> ImportErrors {
    report
        .notes
        .sort_by(|a, b| (&a.at.file, a.at.line).cmp(&(&b.at.file, b.at.line)));
    report.errors.sort_by(|a, b| {
        let key = |e: &ImportError| e.at.as_ref().map(|p| (p.file.clone(), p.line));
        key(a).cmp(&key(b))
    });
    // One error of a virtual server said once, not once per group member.
    report.errors.dedup();
    ImportErrors {
        errors: report.errors,
        notes: report.notes,
        summary: Vec::new(),
    }
}

/// Every statement neither mapped nor noted (nor in error) gets a note:
/// no line of the input passes unsaid. (None should: the tests of the
/// samples check that this note never appears.)
fn account(nodes: &[crate::import::tree::Node], report: &mut Report) {
    let mut all = Vec::new();
    for n in nodes {
        all.push(n.at().clone());
        n.inner(&mut all);
    }
    let said: std::collections::HashSet<_> = report
        .mapped
        .iter()
        .chain(report.notes.iter().map(|n| &n.at))
        .chain(report.errors.iter().filter_map(|e| e.at.as_ref()))
        .cloned()
        .collect();
    for at in all {
        if !said.contains(&at) {
            report.note(&at, NoteKind::NotSupported, UNACCOUNTED);
        }
    }
}

/// The note of a line no rule of the import took.
pub(crate) const UNACCOUNTED: &str = "left out: the import has no rule for this line";

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;
    use crate::import::lexer::words;

    #[test]
    fn a_line_no_rule_took_gets_a_note() {
        let file: Arc<str> = Arc::from("k.conf");
        let lines = ["a {", "  b 1", "  c", "}"]
            .iter()
            .enumerate()
            .map(|(i, l)| words(&file, u32::try_from(i + 1).unwrap(), l).unwrap())
            .collect();
        let mut report = Report::default();
        let nodes = build(lines, &mut report);
        report.mapped(nodes[0].at());
        report.note(nodes[0].children()[1].at(), NoteKind::Changed, "c");
        account(&nodes, &mut report);
        let left: Vec<String> = report
            .notes
            .iter()
            .filter(|n| n.message == UNACCOUNTED)
            .map(|n| n.at.to_string())
            .collect();
        assert_eq!(left, ["k.conf:2"]);
    }
}
