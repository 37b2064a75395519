//! ipvsadm's checks of a whole command line: the option matrix
//! (`generic_opt_check`) and the tunnel options (`tunnel_opt_check`).

use super::command::ArgError;
use super::entry::Entry;
use super::options::*;

/// ipvsadm's `generic_opt_check`.
///
/// A line that passes is found so by three mask tests; only a line that
/// fails walks the row, column by column in ipvsadm's order, for the
/// message of its first fault. (Measured on the host with
/// `scripts/measure/ipvsadm-text-cost`: the walk was 465 instructions a line of a
/// restore.)
pub(super) fn check_options(e: &Entry) -> Result<(), ArgError> {
    let m = table_masks(e.cmd);
    if e.options & m.required == m.required
        && e.options & m.refused == 0
        && (e.options & m.one_of).count_ones() <= 1
    {
        return Ok(());
    }
    let row = table_row(e.cmd);
    let cmd = e.cmd.name();
    let mut last = None;
    for (j, &mark) in row.iter().enumerate() {
        if !e.has(j) {
            if mark == b'+' {
                return Err(ArgError::fail(format!(
                    "You need to supply the '{}' option for the '{cmd}' command",
                    OPT_NAMES[j]
                )));
            }
            continue;
        }
        if mark == b'x' {
            return Err(ArgError::fail(format!(
                "Illegal '{}' option with the '{cmd}' command",
                OPT_NAMES[j]
            )));
        }
        if mark == b'1' {
            match last {
                None => last = Some(j),
                Some(l) => {
                    return Err(ArgError::fail(format!(
                        "The option '{}' conflicts with the '{}' option in the '{cmd}' command",
                        OPT_NAMES[j], OPT_NAMES[l]
                    )))
                }
            }
        }
    }
    Ok(())
}

/// ipvsadm's `tunnel_opt_check`.
pub(super) fn check_tunnel(e: &Entry) -> Result<(), ArgError> {
    const OPTS: [usize; 4] = [TUN_PORT, TUN_NOCSUM, TUN_CSUM, TUN_REMCSUM];
    // No tunnel option and a type that requires none (not gue): nothing
    // to walk (every destination line of a restore).
    let any = OPTS.iter().fold(0u64, |m, &o| m | 1 << o);
    if e.options & any == 0 && e.tun_type != 1 {
        return Ok(());
    }
    let (name, row): (&str, &[u8; 4]) = match e.tun_type {
        0 => ("ipip", b"xxxx"),
        1 => ("gue", b"+111"),
        _ => ("gre", b"x11x"),
    };
    let mut last = None;
    for (j, &opt) in OPTS.iter().enumerate() {
        if !e.has(opt) {
            if row[j] == b'+' {
                return Err(ArgError::fail(format!(
                    "You need to supply the '{}' option for the '{name}' tunnel type",
                    OPT_NAMES[opt]
                )));
            }
            continue;
        }
        if row[j] == b'x' {
            return Err(ArgError::fail(format!(
                "Illegal '{}' option with the '{name}' tunnel type",
                OPT_NAMES[opt]
            )));
        }
        if row[j] == b'1' {
            match last {
                None => last = Some(opt),
                Some(l) => {
                    return Err(ArgError::fail(format!(
                    "The option '{}' conflicts with the '{}' option in the '{name}' tunnel type",
                    OPT_NAMES[opt], OPT_NAMES[l]
                )))
                }
            }
        }
    }
    Ok(())
}
