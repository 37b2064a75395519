//! An HTTP check's response body, unframed from the bytes read as they
//! come: a length, chunks, or everything until the connection's end. No
//! I/O; the check feeds it what each read gave.

use crate::probe::http_head::Framing;

/// The longest chunk-size line read (its extensions included).
const MAX_SIZE_LINE: usize = 1024;

/// What one step over the input gave.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct Step<'a> {
    /// Bytes of the input used.
    pub(crate) used: usize,
    /// Body bytes, if the step reached some.
    pub(crate) data: &'a [u8],
    /// The body is whole.
    pub(crate) end: bool,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum State {
    /// Body bytes left (of the length, or of the chunk).
    Data(u64),
    /// Until the connection's end.
    UntilClose,
    /// A chunk's size line: the size so far, the line's length so far,
    /// and whether the digits ended (an extension, white space).
    Size {
        size: u64,
        len: usize,
        digits_done: bool,
    },
    /// The line end after a chunk's data.
    DataEnd,
    Done,
}

/// The body of one response.
#[derive(Debug)]
pub(crate) struct Body {
    state: State,
    chunked: bool,
}

impl Body {
    pub(crate) fn new(framing: Framing) -> Body {
        let (state, chunked) = match framing {
            Framing::Length(0) => (State::Done, false),
            Framing::Length(n) => (State::Data(n), false),
            Framing::UntilClose => (State::UntilClose, false),
            Framing::Chunked => (
                State::Size {
                    size: 0,
                    len: 0,
                    digits_done: false,
                },
                true,
            ),
        };
        Body { state, chunked }
    }

    /// Whether the body is whole.
    pub(crate) fn is_done(&self) -> bool {
        self.state == State::Done
    }

    /// Whether the connection's end ends the body (rather than cutting it).
    pub(crate) fn ends_at_close(&self) -> bool {
        matches!(self.state, State::UntilClose | State::Done)
    }

    /// One step over `input`: the framing it reads, then at most one run of
    /// body bytes. Call again with what is left until `used` is all of it.
    pub(crate) fn step<'a>(&mut self, input: &'a [u8]) -> Result<Step<'a>, String> {
        let mut used = 0;
        loop {
            let rest = &input[used..];
            match self.state {
                State::Done => {
                    return Ok(Step {
                        used,
                        data: &[],
                        end: true,
                    })
                }
                _ if rest.is_empty() => {
                    return Ok(Step {
                        used,
                        data: &[],
                        end: false,
                    })
                }
                State::UntilClose => {
                    return Ok(Step {
                        used: input.len(),
                        data: rest,
                        end: false,
                    })
                }
                State::Data(left) => {
                    let n = rest.len().min(usize::try_from(left).unwrap_or(usize::MAX));
                    let left = left - n as u64;
                    self.state = match (left, self.chunked) {
                        (0, true) => State::DataEnd,
                        (0, false) => State::Done,
                        _ => State::Data(left),
                    };
                    return Ok(Step {
                        used: used + n,
                        data: &rest[..n],
                        end: self.state == State::Done,
                    });
                }
                State::DataEnd => {
                    // CRLF (a bare LF taken too).
                    match rest[0] {
                        b'\r' if rest.len() == 1 => {
                            return Ok(Step {
                                used,
                                data: &[],
                                end: false,
                            })
                        }
                        b'\r' if rest[1] == b'\n' => used += 2,
                        b'\n' => used += 1,
                        _ => return Err("a chunk's data is not followed by its line end".into()),
                    }
                    self.state = State::Size {
                        size: 0,
                        len: 0,
                        digits_done: false,
                    };
                }
                State::Size {
                    mut size,
                    mut len,
                    mut digits_done,
                } => {
                    let mut line_end = None;
                    for (i, &b) in rest.iter().enumerate() {
                        len += 1;
                        if len > MAX_SIZE_LINE {
                            return Err("a chunk's size line is too long".into());
                        }
                        if b == b'\n' {
                            line_end = Some(i + 1);
                            break;
                        }
                        match (digits_done, (b as char).to_digit(16)) {
                            (false, Some(d)) => {
                                size = size
                                    .checked_mul(16)
                                    .map(|s| s + u64::from(d))
                                    .ok_or("a chunk's size is too large")?;
                            }
                            (false, None) if len == 1 => {
                                return Err(
                                    "a chunk's size line does not start with a hex digit".into()
                                )
                            }
                            _ => digits_done = true,
                        }
                    }
                    let Some(end) = line_end else {
                        self.state = State::Size {
                            size,
                            len,
                            digits_done,
                        };
                        return Ok(Step {
                            used: input.len(),
                            data: &[],
                            end: false,
                        });
                    };
                    used += end;
                    // The last chunk ends the body (its trailers unread).
                    self.state = if size == 0 {
                        State::Done
                    } else {
                        State::Data(size)
                    };
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The body of `input` fed in pieces of `piece` bytes: its bytes, and
    /// whether it ended.
    fn unframe(framing: Framing, input: &[u8], piece: usize) -> Result<(Vec<u8>, bool), String> {
        let mut body = Body::new(framing);
        let mut out = Vec::new();
        let mut held: Vec<u8> = Vec::new();
        for chunk in input.chunks(piece.max(1)) {
            held.extend_from_slice(chunk);
            loop {
                let step = body.step(&held)?;
                out.extend_from_slice(step.data);
                let (used, end) = (step.used, step.end);
                held.drain(..used);
                if end {
                    return Ok((out, true));
                }
                if used == 0 || held.is_empty() {
                    break;
                }
            }
        }
        Ok((out, body.is_done()))
    }

    #[test]
    fn chunks_in_any_pieces_give_the_same_body() {
        let input =
            b"5;name=value\r\nhello\r\n1\r\n \r\nA\r\n0123456789\r\n0\r\nTrailer: x\r\n\r\n";
        for piece in 1..input.len() {
            let (out, end) = unframe(Framing::Chunked, input, piece).unwrap();
            assert_eq!(out, b"hello 0123456789", "pieces of {piece}");
            assert!(end, "pieces of {piece}");
        }
        let (out, end) = unframe(Framing::Chunked, b"3\nabc\n0\n", 2).unwrap();
        assert_eq!((out.as_slice(), end), (&b"abc"[..], true));
    }

    #[test]
    fn a_length_ends_the_body_and_until_close_never_does() {
        assert_eq!(
            unframe(Framing::Length(3), b"abcdef", 2).unwrap(),
            (b"abc".to_vec(), true)
        );
        assert_eq!(
            unframe(Framing::Length(9), b"abc", 1).unwrap(),
            (b"abc".to_vec(), false)
        );
        assert_eq!(
            unframe(Framing::UntilClose, b"abc", 2).unwrap(),
            (b"abc".to_vec(), false)
        );
        assert!(Body::new(Framing::Length(0)).is_done());
        assert!(Body::new(Framing::UntilClose).ends_at_close());
        assert!(!Body::new(Framing::Length(1)).ends_at_close());
        assert!(!Body::new(Framing::Chunked).ends_at_close());
    }

    #[test]
    fn bad_chunks_are_named() {
        let err = |input: &[u8]| unframe(Framing::Chunked, input, 3).unwrap_err();
        assert_eq!(
            err(b"x\r\n"),
            "a chunk's size line does not start with a hex digit"
        );
        assert_eq!(
            err(b"3\r\nabcX"),
            "a chunk's data is not followed by its line end"
        );
        assert_eq!(err(b"11111111111111111\r\n"), "a chunk's size is too large");
        let mut long = b"1;ext=".to_vec();
        long.resize(MAX_SIZE_LINE + 1, b'x');
        assert_eq!(err(&long), "a chunk's size line is too long");
    }
}
