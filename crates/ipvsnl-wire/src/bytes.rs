//! Fixed-width reads and writes for attribute payloads.
//!
//! Every attribute of the IPVS family is either host byte order ("native":
//! the kernel and user space share a CPU) or network byte order. The
//! functions here are the only place that decides how many bytes a value
//! takes; each read names the attribute it decodes so that a malformed
//! message says exactly what was wrong.

use netlink_packet_core::DecodeError;

/// A payload of exactly `N` bytes, if it is one: the width check every
/// fixed-width reader makes, without building an error (the one-pass
/// readers call it directly and ask the named readers for the error only
/// when it fails).
#[inline(always)]
pub(crate) fn array<const N: usize>(value: &[u8]) -> Option<[u8; N]> {
    value.try_into().ok()
}

#[inline]
fn exact<const N: usize>(value: &[u8], what: &str) -> Result<[u8; N], DecodeError> {
    array(value).ok_or_else(|| width_error(what, N, value.len()))
}

/// The error of a payload of the wrong width. Out of line and cold, so that
/// the readers' fast path carries nothing of it (not even the name's
/// address: a listing reads hundreds of thousands of attributes).
#[cold]
#[inline(never)]
fn width_error(what: &str, want: usize, got: usize) -> DecodeError {
    DecodeError::from(format!("invalid {what}: expected {want} bytes, got {got}"))
}

/// Reads a host-order `u8`.
#[inline]
pub(crate) fn u8_of(value: &[u8], what: &str) -> Result<u8, DecodeError> {
    Ok(exact::<1>(value, what)?[0])
}

/// Reads a host-order `u16`.
#[inline]
pub(crate) fn u16_ne(value: &[u8], what: &str) -> Result<u16, DecodeError> {
    Ok(u16::from_ne_bytes(exact(value, what)?))
}

/// Reads a network-order `u16` (ports).
#[inline]
pub(crate) fn u16_be(value: &[u8], what: &str) -> Result<u16, DecodeError> {
    Ok(u16::from_be_bytes(exact(value, what)?))
}

/// Reads a host-order `u32`.
#[inline]
pub(crate) fn u32_ne(value: &[u8], what: &str) -> Result<u32, DecodeError> {
    Ok(u32::from_ne_bytes(exact(value, what)?))
}

/// Reads a host-order `u64`.
#[inline]
pub(crate) fn u64_ne(value: &[u8], what: &str) -> Result<u64, DecodeError> {
    Ok(u64::from_ne_bytes(exact(value, what)?))
}

/// Reads four raw bytes (an IPv4 address or the raw netmask word).
#[inline]
pub(crate) fn raw4(value: &[u8], what: &str) -> Result<[u8; 4], DecodeError> {
    exact(value, what)
}

/// Reads an address union (`union nf_inet_addr`): up to 16 bytes, shorter
/// input zero-filled as the kernel itself does.
#[inline]
pub(crate) fn addr16(value: &[u8], what: &str) -> Result<[u8; 16], DecodeError> {
    address(value).ok_or_else(|| address_error(what, value.len()))
}

/// An address union's 16 bytes, if `value` fits in it (the check of
/// [`addr16`], without building an error).
#[inline(always)]
pub(crate) fn address(value: &[u8]) -> Option<[u8; 16]> {
    let mut out = [0u8; 16];
    // The two lengths the kernel sends, as fixed-size copies (no call to
    // a general copy for four or sixteen bytes); any other length too.
    match *value {
        [a, b, c, d] => out[..4].copy_from_slice(&[a, b, c, d]),
        _ => match <&[u8; 16]>::try_from(value) {
            Ok(all) => out = *all,
            Err(_) => out.get_mut(..value.len())?.copy_from_slice(value),
        },
    }
    Some(out)
}

/// The error of an address longer than the union (cold, as
/// [`width_error`]).
#[cold]
#[inline(never)]
fn address_error(what: &str, got: usize) -> DecodeError {
    DecodeError::from(format!("invalid {what}: at most 16 bytes, got {got}"))
}

/// Reads a string that may or may not carry its NUL terminator, borrowed.
#[inline]
pub(crate) fn str_of<'a>(value: &'a [u8], what: &str) -> Result<&'a str, DecodeError> {
    let end = value.iter().position(|&b| b == 0).unwrap_or(value.len());
    std::str::from_utf8(&value[..end])
        .map_err(|_| DecodeError::from(format!("invalid {what}: not UTF-8")))
}

/// Reads a string that may or may not carry its NUL terminator.
pub(crate) fn string(value: &[u8], what: &str) -> Result<String, DecodeError> {
    str_of(value, what).map(str::to_owned)
}

/// Length of a string attribute's payload: the bytes plus the NUL.
#[inline]
pub(crate) fn string_len(s: &str) -> usize {
    s.len() + 1
}

/// Writes a string and its NUL terminator.
#[inline]
pub(crate) fn emit_string(s: &str, buf: &mut [u8]) {
    buf[..s.len()].copy_from_slice(s.as_bytes());
    buf[s.len()] = 0;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn integer_reads_check_length_and_name_the_attribute() {
        assert_eq!(u16_be(&[0x00, 0x50], "PORT").unwrap(), 80);
        let err = u32_ne(&[1, 2], "IPVS_SVC_ATTR_TIMEOUT").unwrap_err();
        let text = err.to_string();
        assert!(text.contains("IPVS_SVC_ATTR_TIMEOUT"), "{text}");
        assert!(text.contains("got 2"), "{text}");
    }

    #[test]
    fn address_is_zero_filled_and_bounded() {
        assert_eq!(
            addr16(&[10, 0, 0, 1], "ADDR").unwrap()[..5],
            [10, 0, 0, 1, 0]
        );
        assert!(addr16(&[0; 17], "ADDR").is_err());
    }

    #[test]
    fn strings_stop_at_the_first_nul() {
        assert_eq!(string(b"wlc\0", "S").unwrap(), "wlc");
        assert_eq!(string(b"rr", "S").unwrap(), "rr");
        assert_eq!(string(b"", "S").unwrap(), "");
        assert!(string(&[0xff, 0xfe], "S").is_err());
    }
}
