//! Sequence numbers: every request a session sends has its own, counted up
//! from 1, wrapping past `u32::MAX` back to 1 (0 marks the kernel's own
//! notifications and is never a request's).

/// The sequence number after `s`.
pub(crate) fn next_seq(s: u32) -> u32 {
    s.wrapping_add(1).max(1)
}

/// How many numbers `to` comes after `from`, counting the skipped 0 out;
/// `None` for 0 (never anyone's number).
pub(crate) fn steps(from: u32, to: u32) -> Option<u32> {
    if to == 0 {
        return None;
    }
    let n = to.wrapping_sub(from);
    Some(if to < from { n - 1 } else { n })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_skip_zero_when_they_wrap() {
        assert_eq!(next_seq(u32::MAX), 1);
        assert_eq!(next_seq(0), 1);
        assert_eq!(steps(u32::MAX - 1, 2), Some(3));
        assert_eq!(steps(5, 5), Some(0));
        assert_eq!(steps(5, 0), None);
        let mut s = u32::MAX - 3;
        for k in 0..10 {
            assert_eq!(steps(u32::MAX - 3, s), Some(k));
            s = next_seq(s);
        }
    }
}
