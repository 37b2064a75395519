//! The HTTP checks' body test: a substring found across the body's frames,
//! reading at most [`BODY_CAP`] bytes.

/// The most of a body an HTTP check reads looking for its string.
pub(crate) const BODY_CAP: usize = 64 * 1024;

/// Where a search stands after a chunk.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Scan {
    /// The string is in what was read.
    Found,
    /// Not yet; more may follow.
    More,
    /// Not in the first [`BODY_CAP`] bytes (or the cap given): stop reading.
    Exhausted,
}

/// A search for `needle` in a body read chunk by chunk: the last
/// `needle.len() - 1` bytes of what was read are kept, so a needle split
/// across two chunks is found.
pub(crate) struct Scanner<'a> {
    needle: &'a [u8],
    /// The end of what was read, joined to the next chunk.
    window: Vec<u8>,
    /// Bytes read so far.
    read: usize,
    cap: usize,
}

impl<'a> Scanner<'a> {
    /// A search for a non-empty `needle` in the first `cap` bytes.
    pub(crate) fn new(needle: &'a [u8], cap: usize) -> Self {
        Scanner {
            needle,
            window: Vec::new(),
            read: 0,
            cap,
        }
    }

    /// Takes the next chunk of the body.
    pub(crate) fn feed(&mut self, chunk: &[u8]) -> Scan {
        let room = self.cap - self.read;
        let take = &chunk[..chunk.len().min(room)];
        self.read += take.len();
        self.window.extend_from_slice(take);
        if self.needle.is_empty()
            || self
                .window
                .windows(self.needle.len())
                .any(|w| w == self.needle)
        {
            return Scan::Found;
        }
        let keep = self.needle.len() - 1;
        if self.window.len() > keep {
            self.window.drain(..self.window.len() - keep);
        }
        if self.read >= self.cap {
            Scan::Exhausted
        } else {
            Scan::More
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(chunks: &[&str], needle: &str, cap: usize) -> Scan {
        let mut s = Scanner::new(needle.as_bytes(), cap);
        let mut last = Scan::More;
        for c in chunks {
            last = s.feed(c.as_bytes());
            if last != Scan::More {
                break;
            }
        }
        last
    }

    #[test]
    fn a_needle_split_across_chunks_is_found() {
        assert_eq!(run(&["xxhe", "llo"], "hello", 100), Scan::Found);
        assert_eq!(run(&["h", "e", "l", "l", "o"], "hello", 100), Scan::Found);
        assert_eq!(run(&["hel", "xlo"], "hello", 100), Scan::More);
        assert_eq!(run(&["ok"], "ok", 100), Scan::Found);
    }

    #[test]
    fn nothing_past_the_cap_is_searched() {
        // "ok" ends at byte 10: found with a cap of 10, not 9.
        assert_eq!(run(&["xxxx", "xxxxok"], "ok", 10), Scan::Found);
        assert_eq!(run(&["xxxx", "xxxxok"], "ok", 9), Scan::Exhausted);
        assert_eq!(run(&["xxxxxxxxx", "ok"], "ok", 9), Scan::Exhausted);
    }

    #[test]
    fn the_window_stays_short() {
        let mut s = Scanner::new(b"needle", 1 << 20);
        for _ in 0..100 {
            assert_eq!(s.feed(&[b'x'; 1000]), Scan::More);
        }
        assert!(s.window.len() < 6, "{}", s.window.len());
    }
}
