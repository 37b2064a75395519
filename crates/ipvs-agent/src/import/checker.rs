//! A `real_server`'s checker converted into the agent's check: TCP_CHECK
//! as `tcp`, HTTP_GET and SSL_GET as `http` and `https` (the first `url`),
//! DNS_CHECK as `dns`, MISC_CHECK as `command`, SMTP_CHECK as a `tcp`
//! connection (changed meaning); PING_CHECK, UDP_CHECK, FILE_CHECK and
//! BFD_CHECK are not supported. Every keyword is checked against
//! keepalived's, every line mapped or noted.

use std::time::Duration;

use crate::config::check_parse::QTYPES;
use crate::import::keywords::{of_checker, of_smtp_host, URL};
use crate::import::numbers::{timer, uint};
use crate::import::output::{Table, Val};
use crate::import::report::{NoteKind, Place, Report};
use crate::import::timing::Timing;
use crate::import::tree::Node;

/// The check of checker `node` (a keyword of [`crate::import::keywords::CHECKERS`]),
/// its settings over `inherited`; `None` when the agent has no such check.
pub(crate) fn checker(node: &Node, inherited: &Timing, report: &mut Report) -> Option<Table> {
    let kind = node.name();
    if matches!(
        kind,
        "PING_CHECK" | "UDP_CHECK" | "FILE_CHECK" | "BFD_CHECK"
    ) {
        for c in node.children() {
            if !of_checker(kind, c.name()) {
                report.error(
                    c.at(),
                    format!(
                        "`{}` is not a keyword of {kind} (keepalived 2.2.7)",
                        c.name()
                    ),
                );
            }
        }
        report.note(
            node.at(),
            NoteKind::NotSupported,
            format!(
                "{kind}: the agent has no such check (tcp, http, https, dns, command); \
                 its lines are left out, a `command` check can do it"
            ),
        );
        node.inner(&mut report.mapped);
        return None;
    }
    let mut timing = inherited.clone();
    let mut t = Table::default();
    let mut port = None;
    let mut misc_timeout = None;
    let mut argv: Option<Vec<String>> = None;
    let mut urls: Vec<&Node> = Vec::new();
    let mut dns_type = None;
    let mut dns_name = None;
    for c in node.children() {
        let at = c.at();
        if !of_checker(kind, c.name()) {
            report.error(
                at,
                format!(
                    "`{}` is not a keyword of {kind} (keepalived 2.2.7)",
                    c.name()
                ),
            );
            continue;
        }
        if timing.take(c, report) {
            continue;
        }
        if matches!(
            c.name(),
            "connect_port" | "type" | "name" | "misc_path" | "misc_timeout"
        ) {
            report.mapped(at);
        }
        match c.name() {
            "connect_port" => port = uint(c, 0, 1, 65535, report),
            "url" => urls.push(c),
            "type" => dns_type = c.arg(0).map(str::to_ascii_uppercase),
            "name" if kind == "DNS_CHECK" => dns_name = c.arg(0).map(str::to_string),
            "misc_path" => match c.arg(0) {
                Some(p) => argv = Some(split_words(p)),
                None => report.error(at, "`misc_path` needs a program"),
            },
            "misc_timeout" => misc_timeout = timer(c, report).map(|d| (d, at.clone())),
            "misc_dynamic" => report.note(
                at,
                NoteKind::Changed,
                "`misc_dynamic`: keepalived sets the weight from exit statuses 2 to 255; the \
                 agent takes any status but 0 as a failure",
            ),
            "host" if kind == "SMTP_CHECK" => {
                for h in c.children() {
                    if !of_smtp_host(h.name()) {
                        report.error(
                            h.at(),
                            format!("`{}` is not a keyword of an SMTP_CHECK `host`", h.name()),
                        );
                    }
                }
                report.note(
                    at,
                    NoteKind::NotSupported,
                    "an SMTP_CHECK `host` block (deprecated in keepalived): the agent checks \
                     the server's own address; its lines are left out",
                );
                c.inner(&mut report.mapped);
            }
            "connect_ip" | "bindto" | "bind_port" | "bind_if" | "fwmark" => report.note(
                at,
                NoteKind::NotSupported,
                format!(
                    "`{}`: a check goes to the server's address from the agent's default \
                     source; no setting for the check's socket",
                    c.name()
                ),
            ),
            other => report.note(at, NoteKind::NotSupported, unsupported(other)),
        }
    }
    let at = node.at();
    report.mapped(at);
    let default_retry = match kind {
        "DNS_CHECK" => 3,
        "MISC_CHECK" => 0,
        _ => 1,
    };
    t.origin = Some(at.clone());
    t.comment(format!("{kind}, {at}"));
    match kind {
        "TCP_CHECK" | "SMTP_CHECK" => {
            t.set("kind", Val::Str("tcp".into()));
            if kind == "SMTP_CHECK" {
                report.note(
                    at,
                    NoteKind::Changed,
                    "SMTP_CHECK becomes a `tcp` check: a connection that opens, no SMTP \
                     greeting or HELO",
                );
                t.comment("changed meaning: a TCP connection only, no SMTP dialogue");
            }
            if let Some(p) = port {
                t.set("port", Val::Int(p));
            }
        }
        "HTTP_GET" | "SSL_GET" => {
            let tls = kind == "SSL_GET";
            t.set("kind", Val::Str(if tls { "https" } else { "http" }.into()));
            if let Some(p) = port {
                t.set("port", Val::Int(p));
            }
            http(&mut t, &urls, &timing, at, report);
            if tls {
                t.set_noted(
                    "tls_verify",
                    Val::Bool(false),
                    "keepalived does not verify the certificate either",
                );
            }
        }
        "DNS_CHECK" => {
            t.set("kind", Val::Str("dns".into()));
            if let Some(p) = port {
                t.set("port", Val::Int(p));
            }
            let name = dns_name.unwrap_or_default();
            let name = name.trim_end_matches('.');
            if name.is_empty() {
                report.note(
                    at,
                    NoteKind::NotSupported,
                    "a DNS_CHECK of the root (keepalived's default `name`): the agent \
                     queries a name; the server is left without a check",
                );
                return None;
            }
            t.set("query", Val::Str(name.to_string()));
            let qtype = dns_type.unwrap_or_else(|| "SOA".to_string());
            if !QTYPES.iter().any(|(n, _)| *n == qtype) {
                report.error(at, format!("DNS_CHECK: unknown `type` {qtype}"));
                return None;
            }
            t.set("type", Val::Str(qtype));
        }
        "MISC_CHECK" => {
            t.set("kind", Val::Str("command".into()));
            let Some(argv) = argv.filter(|a| !a.is_empty()) else {
                report.error(at, "MISC_CHECK needs `misc_path`");
                return None;
            };
            t.set_noted(
                "command",
                Val::Strs(argv),
                "run without a shell, as keepalived does",
            );
            // keepalived's script timeout defaults to the delay_loop.
            let own = misc_timeout.or_else(|| {
                let d = timing
                    .delay_loop
                    .as_ref()
                    .map_or(Duration::from_secs(60), |d| d.0);
                Some((d, at.clone()))
            });
            timing.connect_timeout = None;
            timing.write(&mut t, own, default_retry, at, report);
            return Some(t);
        }
        _ => return None,
    }
    timing.write(&mut t, None, default_retry, at, report);
    Some(t)
}

/// An HTTP check's `path`, `host` and `status` from the first `url`.
fn http(t: &mut Table, urls: &[&Node], timing: &Timing, at: &Place, report: &mut Report) {
    let mut host = timing.virtualhost.clone();
    let mut path = None;
    let mut status: Option<(u64, Place)> = None;
    for (i, url) in urls.iter().enumerate() {
        for c in url.children() {
            if !URL.contains(&c.name()) {
                report.error(
                    c.at(),
                    format!(
                        "`{}` is not a keyword of a `url` (keepalived 2.2.7)",
                        c.name()
                    ),
                );
            }
        }
        if i > 0 {
            report.note(
                url.at(),
                NoteKind::NotSupported,
                format!(
                    "a second `url`: the agent's check gets one URL, the first ({}); this \
                     one's lines are left out",
                    urls[0].at()
                ),
            );
            url.inner(&mut report.mapped);
            continue;
        }
        report.mapped(url.at());
        for c in url.children() {
            let at = c.at();
            if matches!(c.name(), "path" | "status_code" | "virtualhost") {
                report.mapped(at);
            }
            match c.name() {
                "path" => match c.arg(0) {
                    Some(p) if p.starts_with('/') && !p.contains(char::is_whitespace) => {
                        path = Some(p.to_string());
                    }
                    Some(p) => {
                        report.error(at, format!("`path` {p:?}: the agent's path starts with /"))
                    }
                    None => report.error(at, "`path` needs a path"),
                },
                "digest" => {
                    report.note(
                        at,
                        NoteKind::Changed,
                        "`digest`: keepalived compares the MD5 of the whole body; the agent \
                         checks the status only (`body_contains` takes a substring)",
                    );
                    t.comment(format!(
                        "changed meaning: keepalived's digest {} ({at}) is not checked",
                        c.arg(0).unwrap_or("")
                    ));
                }
                "status_code" => status = status_code(c, report).map(|s| (s, at.clone())),
                "virtualhost" => host = c.arg(0).map(|h| (h.to_string(), at.clone())),
                other => report.note(at, NoteKind::NotSupported, unsupported(other)),
            }
        }
    }
    if urls.is_empty() {
        report.note(
            at,
            NoteKind::Changed,
            "no `url`: keepalived checks nothing but the connection; the agent GETs /",
        );
    }
    if let Some(p) = path {
        t.set("path", Val::Str(p));
    }
    if let Some((h, p)) = host {
        t.set_noted("host", Val::Str(h), format!("virtualhost, {p}"));
    }
    match status {
        Some((s, p)) => t.set_noted("status", Val::Int(s), format!("status_code, {p}")),
        None => {
            if let Some(u) = urls.first() {
                report.note(
                    u.at(),
                    NoteKind::Changed,
                    "no `status_code`: keepalived accepts any of 200-299, the agent 200",
                );
            }
            t.set_noted(
                "status",
                Val::Int(200),
                "changed meaning: keepalived accepts 200-299 without status_code",
            );
        }
    }
}

/// The one status of a `status_code` line; a list or a range becomes its
/// first code, with a note.
fn status_code(c: &Node, report: &mut Report) -> Option<u64> {
    let mut first = None;
    let mut many = c.args.len() > 1;
    for a in &c.args {
        let (lo, hi) = a.text.split_once('-').unwrap_or((&a.text, &a.text));
        match (lo.parse::<u64>(), hi.parse::<u64>()) {
            (Ok(lo), Ok(hi)) if (100..=599).contains(&lo) && (lo..=599).contains(&hi) => {
                many |= hi != lo;
                first.get_or_insert(lo);
            }
            _ => {
                report.error(c.at(), format!("`status_code`: \"{}\" is not a status from 100 to 599, nor a range of them", a.text));
                return None;
            }
        }
    }
    let Some(first) = first else {
        report.error(c.at(), "`status_code` needs a status");
        return None;
    };
    if many {
        report.note(
            c.at(),
            NoteKind::Changed,
            format!(
                "`status_code {}`: the agent expects one status; {first} is taken",
                c.args
                    .iter()
                    .map(|a| a.text.as_str())
                    .collect::<Vec<_>>()
                    .join(" ")
            ),
        );
    }
    Some(first)
}

/// Why a keyword the agent lacks is left out.
fn unsupported(word: &str) -> String {
    let why = match word {
        "helo_name" => "the agent's SMTP check is a TCP connection, no HELO",
        "user" => "the agent runs a command as itself",
        "log_all_failures" => "the agent logs each change of a server's health",
        "http_protocol" => "the agent sends HTTP/1.1 (or 1.0 as its check writes it)",
        "enable_sni" => "the agent's HTTPS check has no SNI setting",
        "fast_recovery" => "one success brings a server back anyway (`rise = 1`)",
        w if w.starts_with("regex") => "the agent checks the status, or a substring of the body",
        _ => "the agent has no such setting",
    };
    format!("`{word}`: {why}; left out")
}

/// `misc_path`'s command line cut into words (blanks separate, `'` and `"`
/// quote), as keepalived runs it without a shell.
fn split_words(s: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut word = String::new();
    let mut quote = None;
    let mut any = false;
    for ch in s.chars() {
        match (quote, ch) {
            (Some(q), c) if c == q => quote = None,
            (Some(_), c) => word.push(c),
            (None, '\'' | '"') => {
                quote = Some(ch);
                any = true;
            }
            (None, c) if c.is_whitespace() => {
                if any || !word.is_empty() {
                    out.push(std::mem::take(&mut word));
                }
                any = false;
            }
            (None, c) => word.push(c),
        }
    }
    if any || !word.is_empty() {
        out.push(word);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::split_words;

    #[test]
    fn command_words() {
        assert_eq!(split_words("/bin/x a  'b c'"), ["/bin/x", "a", "b c"]);
    }
}
