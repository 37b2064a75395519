//! Why a reply could not be read: the typed error of every decoder (the
//! framing of datagrams, the attributes of a message, the model made of
//! them, the `/proc` text and the socket-option replies).

use std::fmt;

/// What was wrong with something the kernel sent, and where: the message
/// (with its byte offset in the datagram), the attribute (by its kernel
/// name) or the field, and why. Carried by [`Error::Decode`](crate::Error::Decode)
/// and [`Failure::Malformed`](crate::proto::Failure::Malformed), and
/// returned by [`Replies::message`](crate::proto::Replies::message).
///
/// Bad bytes are always this error, never a panic.
///
/// ```
/// use ipvsnl::DecodeError;
/// /// What to tell an operator about a reply that could not be read.
/// fn advice(e: &DecodeError) -> String {
///     match e {
///         DecodeError::Missing { attr, .. } => format!("the kernel sent no {attr}"),
///         DecodeError::BadLength { offset, .. } => format!("bad message at byte {offset}"),
///         other => other.to_string(),
///     }
/// }
/// // What a driver or a `Replies` of your own has to say, in words:
/// let e = DecodeError::from("no reply");
/// assert_eq!((e.attribute(), e.offset()), (None, None));
/// assert_eq!(advice(&e), "no reply");
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum DecodeError {
    /// Fewer bytes than a netlink message header (16) left at `offset`.
    #[non_exhaustive]
    ShortHeader {
        /// Where the header starts in the datagram.
        offset: usize,
        /// The bytes left from there.
        left: usize,
    },
    /// A message header whose length runs past the datagram or is shorter
    /// than the header itself.
    #[non_exhaustive]
    BadLength {
        /// Where the message starts in the datagram.
        offset: usize,
        /// The length its header says.
        len: usize,
        /// The bytes left from there.
        left: usize,
    },
    /// An IPVS message too short for its generic-netlink header.
    #[non_exhaustive]
    ShortMessage {
        /// Where the message starts in the datagram.
        offset: usize,
        /// Its length.
        len: usize,
    },
    /// An `NLMSG_ERROR` message whose payload cannot be read.
    #[non_exhaustive]
    BadErrorMessage {
        /// Where the message starts in the datagram.
        offset: usize,
        /// Why, in the netlink crate's words.
        why: Box<str>,
    },
    /// A datagram larger than the receive buffer: its end was lost.
    #[non_exhaustive]
    Truncated {
        /// Its full length.
        len: usize,
    },
    /// A required attribute is not there.
    #[non_exhaustive]
    Missing {
        /// What lacks it (`"service"`, `"destination"`, a reply).
        object: &'static str,
        /// The attribute's kernel name.
        attr: &'static str,
    },
    /// An attribute's value is none this library knows (an address family,
    /// a daemon state).
    #[non_exhaustive]
    UnexpectedValue {
        /// The attribute's kernel name.
        attr: &'static str,
        /// The value sent.
        value: u32,
    },
    /// An attribute (or nest) whose bytes do not read: `why` is the wire
    /// crate's reason, which names the attribute inside it that was bad.
    #[non_exhaustive]
    Attribute {
        /// The attribute (or nest) being read, by its kernel name.
        attr: &'static str,
        /// What was wrong with it.
        why: Box<str>,
    },
    /// The attributes of a message of `command` do not parse into owned
    /// attributes.
    #[non_exhaustive]
    Message {
        /// The generic-netlink command of the message.
        command: u8,
        /// What was wrong, naming the attribute.
        why: Box<str>,
    },
    /// A `/proc` text file not in the form the kernel writes it in.
    #[non_exhaustive]
    ProcText {
        /// The file (under `/proc/net`).
        file: &'static str,
        /// What the file held.
        text: Box<str>,
    },
    /// A socket-option reply that cannot be read.
    #[non_exhaustive]
    Sockopt {
        /// The socket option.
        option: &'static str,
        /// What was wrong.
        why: Box<str>,
    },
    /// A dump was interrupted (`NLM_F_DUMP_INTR`: the table changed while
    /// it was read) every time it was taken.
    Interrupted,
    /// Anything else, in words (a reply missing altogether, or what an
    /// implementation of [`Replies`](crate::proto::Replies) has to say).
    #[non_exhaustive]
    Other {
        /// What was wrong.
        why: Box<str>,
    },
}

impl DecodeError {
    /// The attribute that was bad or missing, by its kernel name, where
    /// one is known.
    pub fn attribute(&self) -> Option<&'static str> {
        match self {
            DecodeError::Missing { attr, .. }
            | DecodeError::UnexpectedValue { attr, .. }
            | DecodeError::Attribute { attr, .. } => Some(attr),
            _ => None,
        }
    }

    /// Where in its datagram the bad message starts, where known.
    pub fn offset(&self) -> Option<usize> {
        match self {
            DecodeError::ShortHeader { offset, .. }
            | DecodeError::BadLength { offset, .. }
            | DecodeError::ShortMessage { offset, .. }
            | DecodeError::BadErrorMessage { offset, .. } => Some(*offset),
            _ => None,
        }
    }

    /// The reading of attribute `attr` failed for the wire crate's `why`.
    #[cold]
    pub(crate) fn attribute_of(attr: &'static str, why: impl fmt::Display) -> Self {
        DecodeError::Attribute {
            attr,
            why: why.to_string().into(),
        }
    }
}

impl fmt::Display for DecodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        use DecodeError::*;
        match self {
            ShortHeader { offset, left } => write!(
                f,
                "bad netlink header at byte {offset}: {left} bytes left, a header takes 16"
            ),
            BadLength { offset, len, left } => write!(
                f,
                "bad netlink header at byte {offset}: length {len}, with {left} bytes left"
            ),
            ShortMessage { offset, len } => write!(
                f,
                "IPVS message at byte {offset} too short ({len} bytes, no generic-netlink header)"
            ),
            BadErrorMessage { offset, why } => write!(f, "bad NLMSG_ERROR at byte {offset}: {why}"),
            Truncated { len } => write!(f, "a {len}-byte datagram did not fit the receive buffer"),
            Missing { object, attr } => write!(f, "{object} without {attr}"),
            UnexpectedValue { attr, value } => write!(f, "unexpected {attr} {value}"),
            Attribute { attr, why } => write!(f, "bad {attr}: {why}"),
            Message { command, why } => {
                write!(f, "bad attributes of IPVS command {command}: {why}")
            }
            ProcText { file, text } => {
                write!(
                    f,
                    "{file}: not the rows of hex numbers the kernel writes, got {text:?}"
                )
            }
            Sockopt { option, why } => write!(f, "{option}: {why}"),
            Interrupted => {
                f.write_str("the dump was interrupted (the table changed) every time it was taken")
            }
            Other { why } => f.write_str(why),
        }
    }
}

impl std::error::Error for DecodeError {}

impl From<String> for DecodeError {
    /// [`DecodeError::Other`], in these words.
    fn from(why: String) -> Self {
        DecodeError::Other { why: why.into() }
    }
}

impl From<&str> for DecodeError {
    /// [`DecodeError::Other`], in these words.
    fn from(why: &str) -> Self {
        DecodeError::Other { why: why.into() }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn it_stays_as_small_as_a_frame() {
        // Every frame the framing yields and every listed entry's decode
        // returns a Result of it: boxed strings keep it at 40 bytes (56
        // with `String`s), no more than a `Result<Frame, _>` takes anyway.
        assert!(std::mem::size_of::<DecodeError>() <= 40);
    }

    #[test]
    fn each_error_names_what_was_bad() {
        let e = DecodeError::BadLength {
            offset: 40,
            len: 200,
            left: 36,
        };
        assert_eq!(e.offset(), Some(40));
        assert_eq!(e.attribute(), None);
        assert_eq!(
            e.to_string(),
            "bad netlink header at byte 40: length 200, with 36 bytes left"
        );
        let e = DecodeError::UnexpectedValue {
            attr: "IPVS_SVC_ATTR_AF",
            value: 7,
        };
        assert_eq!(e.attribute(), Some("IPVS_SVC_ATTR_AF"));
        assert_eq!(e.to_string(), "unexpected IPVS_SVC_ATTR_AF 7");
        let e = DecodeError::attribute_of("IPVS_CMD_ATTR_DEST", "invalid IPVS_DEST_ATTR_PORT");
        assert_eq!(e.attribute(), Some("IPVS_CMD_ATTR_DEST"));
        assert_eq!(
            e.to_string(),
            "bad IPVS_CMD_ATTR_DEST: invalid IPVS_DEST_ATTR_PORT"
        );
    }
}
