//! The log lines: `tracing` events to stderr, as logfmt (`ts=... level=...
//! msg="..." key=value`, the default) or JSON, one line each.

use std::fmt::{self, Write as _};
use std::time::{SystemTime, UNIX_EPOCH};

use tracing::field::{Field, Visit};
use tracing::{Event, Subscriber};
use tracing_subscriber::fmt::format::Writer;
use tracing_subscriber::fmt::{FmtContext, FormatEvent, FormatFields};
use tracing_subscriber::registry::LookupSpan;

/// How the log lines are written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum LogFormat {
    /// `key=value` pairs (the default).
    Logfmt,
    /// One JSON object a line.
    Json,
}

/// Installs the process's subscriber (once; a second call changes
/// nothing).
pub fn init_logging(format: LogFormat) {
    let builder = tracing_subscriber::fmt().with_writer(std::io::stderr);
    let _ = match format {
        LogFormat::Json => builder.json().try_init(),
        _ => builder.event_format(Logfmt).try_init(),
    };
}

/// The logfmt formatter.
struct Logfmt;

/// An event's message and fields, as logfmt pairs.
#[derive(Default)]
struct Pairs {
    message: String,
    fields: String,
}

impl Visit for Pairs {
    fn record_str(&mut self, field: &Field, value: &str) {
        if field.name() == "message" {
            self.message = value.to_string();
        } else {
            let _ = write!(self.fields, " {}={}", field.name(), quoted(value));
        }
    }

    fn record_debug(&mut self, field: &Field, value: &dyn fmt::Debug) {
        self.record_str(field, &format!("{value:?}"));
    }
}

/// A value bare when it can be, else quoted with `"` and `\` escaped.
fn quoted(v: &str) -> String {
    let bare =
        !v.is_empty() && !v.contains(|c: char| c == ' ' || c == '"' || c == '=' || c.is_control());
    if bare {
        return v.to_string();
    }
    let mut out = String::from("\"");
    for c in v.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

impl<S, N> FormatEvent<S, N> for Logfmt
where
    S: Subscriber + for<'a> LookupSpan<'a>,
    N: for<'a> FormatFields<'a> + 'static,
{
    fn format_event(
        &self,
        _ctx: &FmtContext<'_, S, N>,
        mut w: Writer<'_>,
        event: &Event<'_>,
    ) -> fmt::Result {
        let mut pairs = Pairs::default();
        event.record(&mut pairs);
        let ts = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .unwrap_or_default();
        let level = event.metadata().level().as_str().to_ascii_lowercase();
        writeln!(
            w,
            "ts={}.{:03} level={level} msg={}{}",
            ts.as_secs(),
            ts.subsec_millis(),
            quoted(&pairs.message),
            pairs.fields
        )
    }
}

#[cfg(test)]
mod tests {
    use super::quoted;

    #[test]
    fn values_are_quoted_only_when_they_must_be() {
        assert_eq!(quoted("10.0.0.1:80"), "10.0.0.1:80");
        assert_eq!(quoted("server down"), "\"server down\"");
        assert_eq!(quoted("a\"b\\c"), "\"a\\\"b\\\\c\"");
        assert_eq!(quoted(""), "\"\"");
    }
}
