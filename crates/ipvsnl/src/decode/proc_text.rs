//! `/proc/net` text to the model: the totals of `ip_vs_stats` (netlink has
//! no command for them).

use super::detail::DecodeResult;
use crate::{DecodeError, Stats};

/// `/proc/net/ip_vs_stats`: two rows of five upper-case hex numbers (the
/// counters, then the rates) under their column titles.
pub(crate) fn proc_stats(text: &str) -> DecodeResult<Stats> {
    let mut rows = text.lines().filter_map(|line| {
        let fields: Vec<u64> = line
            .split_whitespace()
            .map(|w| u64::from_str_radix(w, 16).ok())
            .collect::<Option<_>>()?;
        (fields.len() == 5).then_some(fields)
    });
    let (Some(counts), Some(rates)) = (rows.next(), rows.next()) else {
        return Err(DecodeError::ProcText {
            file: "ip_vs_stats",
            text: text.into(),
        });
    };
    Ok(Stats {
        conns: counts[0],
        in_packets: counts[1],
        out_packets: counts[2],
        in_bytes: counts[3],
        out_bytes: counts[4],
        cps: rates[0],
        in_pps: rates[1],
        out_pps: rates[2],
        in_bps: rates[3],
        out_bps: rates[4],
    })
}
