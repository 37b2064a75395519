//! The columns of ipvsadm's listings appended in place: numbers as `%u`
//! and `%d` print them, and fields left-aligned to a width (`%-10u`),
//! without the formatting machinery (`format!` and `{:<10}` cost a few
//! hundred instructions a field; a listing has 50,000 lines of four).

/// Appends `n` in decimal.
pub(crate) fn push_u64(out: &mut String, mut n: u64) {
    let mut buf = [0u8; 20];
    let mut i = buf.len();
    loop {
        i -= 1;
        buf[i] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    for &d in &buf[i..] {
        out.push(char::from(d));
    }
}

/// Appends `n` in decimal, with its sign.
pub(crate) fn push_i64(out: &mut String, n: i64) {
    if n < 0 {
        out.push('-');
    }
    push_u64(out, n.unsigned_abs());
}

/// Pads what was appended since `start` with spaces to `width` characters
/// (as `{:<width}` does).
pub(crate) fn pad_from(out: &mut String, start: usize, width: usize) {
    let tail = &out[start..];
    let len = if tail.is_ascii() {
        tail.len()
    } else {
        tail.chars().count()
    };
    for _ in len..width {
        out.push(' ');
    }
}

/// Appends `n` left-aligned in `width` characters (`{n:<width}`).
pub(crate) fn push_left(out: &mut String, n: i64, width: usize) {
    let start = out.len();
    push_i64(out, n);
    pad_from(out, start, width);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn columns_like_format() {
        for n in [0i64, 9, 10, 4_294_967_295, -1, -2_147_483_648, i64::MIN] {
            for w in [0, 6, 10] {
                let mut s = String::from("|");
                push_left(&mut s, n, w);
                assert_eq!(s, format!("|{n:<w$}"));
            }
        }
        let mut s = String::from("x\u{e9}");
        pad_from(&mut s, 0, 4);
        assert_eq!(s, format!("{:<4}", "x\u{e9}"));
    }
}
