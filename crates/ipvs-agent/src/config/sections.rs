//! A configuration file's text cut into its top part and one section per
//! `[[service]]` table, by a scan of its lines that gives up (`None`) on
//! anything it cannot be sure of: then the file is parsed whole.
//!
//! A section starts at a line that is exactly the header `[[service]]`
//! (indentation, trailing blanks and a comment aside) and runs to the
//! next one. After the first, the only headers a section may hold are
//! those of the last service's own tables (`[[service.server]]`,
//! `[service.check]`...: bare keys under `service`). The scan gives up on
//! a carriage return, a byte-order mark, any `"""` or `'''` (a multi-line
//! string, whose lines could look like headers), and a line starting with
//! `[` that is not such a header (another table after the services, a
//! quoted or spaced key, an array's line).
//!
//! Why each section then reads alone as it reads in the file: a header
//! line the scan cuts at is one in the file too, unless the text before it
//! is inside a multi-line array or inline table (strings are refused), and
//! then the section before it ends unterminated, a syntax error of its
//! own, so the caller parses the file whole. A `[service...]` header
//! refers to the last `[[service]]`, the one of its section; keys are
//! unique within a table, so within a section.
//!
//! ```text
//! [agent]                 <- top
//! resync = "10m"
//! [[service]]             <- section 0
//! ...
//! [[service.server]]
//! ...
//! [[service]]             <- section 1
//! ```

use std::ops::Range;

/// The parts of a file's text, as byte ranges.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Sections {
    /// Everything before the first `[[service]]` (may be empty).
    pub(crate) top: Range<usize>,
    /// Each `[[service]]` table, from its header to the next one (or the
    /// end), in the file's order; never empty.
    pub(crate) services: Vec<Range<usize>>,
}

/// What a header line is, as far as the scan is concerned.
#[derive(Debug, PartialEq, Eq)]
enum Header {
    /// `[[service]]`: a new section.
    Service,
    /// A table of the last service (`[service.x]`, `[[service.x.y]]`).
    OfService,
    /// Another table, with bare keys (`[agent]`): only in the top part.
    Other,
}

/// The file's sections, or `None` when the scan cannot be sure of them.
pub(crate) fn sections(text: &str) -> Option<Sections> {
    let bytes = text.as_bytes();
    if memchr::memchr(b'\r', bytes).is_some()
        || text.starts_with('\u{feff}')
        || memchr::memmem::find(bytes, b"\"\"\"").is_some()
        || memchr::memmem::find(bytes, b"'''").is_some()
    {
        return None;
    }
    let mut starts: Vec<usize> = Vec::new();
    // A header's line holds a `[` after nothing but blanks: each `[` of
    // the file (few: headers, arrays) is looked at, not each line.
    for at in memchr::memchr_iter(b'[', bytes) {
        let line = bytes[..at]
            .iter()
            .rposition(|b| *b != b' ' && *b != b'\t')
            .map_or(0, |i| i + 1);
        // (The second `[` of a `[[` has one before it: not a line's.)
        if line > 0 && bytes[line - 1] != b'\n' {
            continue;
        }
        match header(bytes, at)? {
            Header::Service => starts.push(line),
            Header::OfService if !starts.is_empty() => {}
            Header::Other if starts.is_empty() => {}
            // A table of `service` before the first `[[service]]`, or
            // another table after it: the file is parsed whole.
            _ => return None,
        }
    }
    let first = *starts.first()?;
    let ends = starts.iter().skip(1).copied().chain([text.len()]);
    Some(Sections {
        top: 0..first,
        services: starts.iter().zip(ends).map(|(&s, e)| s..e).collect(),
    })
}

/// Reads `[a.b]` or `[[a.b]]` at `i` (its `[`), bare keys only, then
/// nothing but blanks and a comment to the end of the line.
fn header(bytes: &[u8], mut i: usize) -> Option<Header> {
    // The headers of most lines, known at once.
    for (line, header) in [
        (&b"[[service.server]]\n"[..], Header::OfService),
        (b"[[service]]\n", Header::Service),
    ] {
        if bytes[i..].starts_with(line) {
            return Some(header);
        }
    }
    let array = bytes.get(i + 1) == Some(&b'[');
    i += if array { 2 } else { 1 };
    let start = i;
    while i < bytes.len() && (bytes[i].is_ascii_alphanumeric() || b"_-.".contains(&bytes[i])) {
        i += 1;
    }
    let path = &bytes[start..i];
    if path.is_empty() || path.split(|b| *b == b'.').any(<[u8]>::is_empty) {
        return None;
    }
    let close: &[u8] = if array { b"]]" } else { b"]" };
    if !bytes[i..].starts_with(close) {
        return None;
    }
    i += close.len();
    while i < bytes.len() && (bytes[i] == b' ' || bytes[i] == b'\t') {
        i += 1;
    }
    if i < bytes.len() && bytes[i] != b'\n' && bytes[i] != b'#' {
        return None;
    }
    let first = path.split(|b| *b == b'.').next()?;
    Some(match (first == b"service", path.len() == 7, array) {
        (true, true, true) => Header::Service,
        // `[service]` (a table, not an array of tables): the file says
        // something the sections cannot, parsed whole.
        (true, true, false) => return None,
        (true, false, _) => Header::OfService,
        (false, _, _) => Header::Other,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cut(text: &str) -> Option<Vec<&str>> {
        let s = sections(text)?;
        let mut out = vec![&text[s.top]];
        out.extend(s.services.iter().map(|r| &text[r.clone()]));
        Some(out)
    }

    #[test]
    fn a_file_is_cut_at_each_service_header() {
        let text = "[agent]\nresync = \"1m\"\n[[service]]\na = 1\n[[service.server]]\nb = 2\n\
                    [service.check]\nc = 3\n  [[service]]  # two\nd = 4";
        assert_eq!(
            cut(text).unwrap(),
            [
                "[agent]\nresync = \"1m\"\n",
                "[[service]]\na = 1\n[[service.server]]\nb = 2\n[service.check]\nc = 3\n",
                "  [[service]]  # two\nd = 4",
            ]
        );
        assert_eq!(cut("[[service]]\n").unwrap(), ["", "[[service]]\n"]);
    }

    #[test]
    fn anything_unsure_means_no_sections() {
        for text in [
            "a = 1\n",                                          // no service
            "[[service]]\nname = \"\"\"x\n[[service]]\"\"\"\n", // multi-line string
            "[[service]]\nname = '''x'''\n",
            "[[service]]\r\na = 1\r\n",           // CRLF
            "\u{feff}[[service]]\n",              // BOM
            "[[service]]\n[agent]\n",             // a table after the services
            "[service.x]\n[[service]]\n",         // a service table before them
            "[[service]]\n[[ service ]]\n",       // spaced
            "[[service]]\n[[\"service\"]]\n",     // quoted
            "[[service]]\nx = [\n  [1],\n]\n",    // an array's line
            "[[service]]\n[[service]] x\n",       // text after a header
            "[[service]]\n[service]\n",           // not an array of tables
            "[[service]]\n[[service..server]]\n", // an empty key
        ] {
            assert_eq!(cut(text), None, "{text:?}");
        }
    }
}
