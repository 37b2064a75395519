//! keepalived's numeric forms: whole numbers (decimal, or hexadecimal
//! after `0x` where keepalived reads with base 0, as a firewall mark), and
//! timers in seconds with up to six decimals (`delay_loop 1.5`); and a
//! duration written back as the agent's file takes it.

use std::time::Duration;

use crate::import::report::Report;
use crate::import::tree::Node;

/// The whole number of argument `i` of `node`, from `min` to `max`, or an
/// error at its line.
pub(crate) fn uint(node: &Node, i: usize, min: u64, max: u64, report: &mut Report) -> Option<u64> {
    let Some(s) = node.arg(i) else {
        report.error(node.at(), format!("`{}` needs a number", node.name()));
        return None;
    };
    let n = match s.strip_prefix("0x").or_else(|| s.strip_prefix("0X")) {
        Some(hex) => u64::from_str_radix(hex, 16).ok(),
        None => s.parse::<u64>().ok(),
    };
    match n {
        Some(n) if (min..=max).contains(&n) => Some(n),
        _ => {
            report.error(
                node.at(),
                format!(
                    "`{}`: \"{s}\" is not a whole number from {min} to {max}",
                    node.name()
                ),
            );
            None
        }
    }
}

/// A timer in seconds (`6`, `1.5`, up to six decimals), at least a
/// millisecond, at most a week; an error at its line otherwise.
pub(crate) fn timer(node: &Node, report: &mut Report) -> Option<Duration> {
    let s = node.arg(0).unwrap_or("");
    let (whole, frac) = s.split_once('.').unwrap_or((s, ""));
    let ok = !whole.is_empty()
        && whole.bytes().all(|b| b.is_ascii_digit())
        && frac.len() <= 6
        && frac.bytes().all(|b| b.is_ascii_digit());
    let secs: Option<u64> = if ok { whole.parse().ok() } else { None };
    let micros = format!("{frac:0<6}").parse::<u64>().unwrap_or(0);
    match secs {
        Some(secs) if secs <= 7 * 24 * 3600 => {
            let d = Duration::from_secs(secs) + Duration::from_micros(micros);
            if d < Duration::from_millis(1) {
                report.error(node.at(), format!("`{}` must be at least 1ms", node.name()));
                return None;
            }
            Some(d)
        }
        _ => {
            report.error(
                node.at(),
                format!(
                    "`{}`: \"{s}\" is not a time in seconds (such as 6 or 1.5)",
                    node.name()
                ),
            );
            None
        }
    }
}

/// `d` as the agent's file writes a duration (`"6s"`, `"1500ms"`), rounded
/// down to the millisecond.
pub(crate) fn show(d: Duration) -> String {
    let ms = d.as_millis();
    if ms % 1000 == 0 {
        format!("{}s", ms / 1000)
    } else {
        format!("{ms}ms")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shown() {
        assert_eq!(show(Duration::from_secs(6)), "6s");
        assert_eq!(show(Duration::from_millis(1500)), "1500ms");
    }
}
