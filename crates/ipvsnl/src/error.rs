//! The one error type of the crate.

use std::io;
use std::path::PathBuf;
use std::time::Duration;

use crate::proto::{Cause, Failure, Outcome};
use crate::reason::{errno_text, kernel_reason};
use crate::{DecodeError, InvalidValue, RequestKind, Target};

/// Everything that can go wrong, told apart by what is known: the kernel
/// refused ([`Error::Refused`], with its errno), the outcome is unknown
/// ([`Error::Unknown`]: sent, never answered), not sent
/// ([`Error::NotSent`]), not applied and not known to be refused
/// ([`Error::FamilyUnconfirmed`]), no reply in time ([`Error::Timeout`]), the socket
/// failed ([`Error::Io`]), the input was refused before sending
/// ([`Error::InvalidInput`]), a reply could not be read
/// ([`Error::Decode`]). Each names its request structurally
/// ([`Error::target`]).
///
/// ```
/// use ipvsnl::{Error, Object, RequestKind, ServiceKey, Target};
/// let key = ServiceKey::tcp("10.0.0.1".parse().unwrap(), 80);
/// let e = Error::refused(Target::new(RequestKind::AddService, Object::Service(key)), libc::EEXIST);
/// assert_eq!(e.errno(), Some(libc::EEXIST));
/// assert!(e.is_refused() && e.is_already_exists() && !e.is_unknown_outcome());
/// assert_eq!(e.target().unwrap().object.service(), Some(&key));
/// assert_eq!(
///     e.to_string(),
///     "add service TCP 10.0.0.1:80: service already exists (EEXIST)"
/// );
/// ```
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The kernel refused a request (it was not applied). One refusal is
    /// made here rather than by the kernel: a destination that
    /// [`Client::set_destination_weight`](crate::Client::set_destination_weight)
    /// does not find in the listing it reads first is refused with
    /// `ENOENT`, the kernel's answer to an edit of it, and the edit is
    /// never sent.
    #[error("{target}: {} ({})", kernel_reason(target, *errno), errno_text(*errno))]
    #[non_exhaustive]
    Refused {
        /// What was asked, of what.
        target: Box<Target>,
        /// The positive errno.
        errno: i32,
    },
    /// The request was sent and its reply never seen: it may or may not
    /// have been applied. Read the state back to know. After a time-out
    /// ([`Cause::TimedOut`]) the client's next call goes out on a fresh
    /// socket, so no late reply to this request is ever read.
    #[error("{target}: outcome unknown: {cause}")]
    #[non_exhaustive]
    Unknown {
        /// What was asked, of what.
        target: Box<Target>,
        /// Why the reply was not seen.
        cause: Cause,
    },
    /// The request was not sent (so not applied): an earlier one of the
    /// same call failed so that nothing more could be sent; or it never
    /// reached IPVS, sent under a family id gone stale: the module
    /// reloaded ([`Cause::FamilyChanged`], [`Error::is_family_changed`],
    /// whatever the request and wherever in the call the reload struck)
    /// or unloaded ([`Error::Unavailable`]).
    #[error("{target}: not sent: {cause}")]
    #[non_exhaustive]
    NotSent {
        /// What was asked, of what.
        target: Box<Target>,
        /// What stopped it.
        cause: Cause,
    },
    /// The request was not applied, and whether IPVS refused it is not
    /// known: the kernel answered `errno` (`ENOENT` or `EOPNOTSUPP`), as it
    /// answers any request under a family id gone stale (the `ip_vs`
    /// module reloaded), and looking the family up again to tell failed
    /// ([`Outcome::FamilyUnconfirmed`]). Not [`Error::Refused`]: the
    /// object may exist.
    #[error(
        "{target}: not applied: answered {} as under a stale IPVS family id, and looking the family up again failed: {lookup}",
        errno_text(*errno)
    )]
    #[non_exhaustive]
    FamilyUnconfirmed {
        /// What was asked, of what.
        target: Box<Target>,
        /// The positive errno the request was answered with.
        errno: i32,
        /// Why the family lookup failed.
        lookup: Cause,
    },
    /// The IPVS generic-netlink family is not registered in this kernel.
    #[error(
        "IPVS is not available in this kernel: ip_vs module not loaded (no \"IPVS\" generic netlink family; try `modprobe ip_vs`)"
    )]
    Unavailable,
    /// Input the kernel would refuse or misread; nothing was sent. The
    /// value names the field at fault and why.
    #[error(transparent)]
    InvalidInput(#[from] InvalidValue),
    /// The socket failed.
    #[error("{target}: netlink socket error: {source}")]
    #[non_exhaustive]
    Io {
        /// What was being done.
        target: Box<Target>,
        /// The system error.
        #[source]
        source: io::Error,
    },
    /// The kernel's reply could not be understood.
    #[error("{target}: malformed reply from the kernel: {detail}")]
    #[non_exhaustive]
    Decode {
        /// What was being done.
        target: Box<Target>,
        /// What was wrong with the reply: which message, attribute or
        /// field, and why.
        #[source]
        detail: DecodeError,
    },
    /// No reply came in time to a request that changes nothing (a get, a
    /// listing, a lookup): nothing changed. A change that timed out is
    /// [`Error::Unknown`]. The client's next call goes out on a fresh
    /// socket.
    #[error("{target}: no reply from the kernel within {timeout:?}")]
    #[non_exhaustive]
    Timeout {
        /// What was being done.
        target: Box<Target>,
        /// The wait that ran out.
        timeout: Duration,
    },
    /// A network namespace could not be entered.
    #[error("cannot enter network namespace {}: {source}", path.display())]
    #[non_exhaustive]
    Namespace {
        /// The namespace file.
        path: PathBuf,
        /// The system error.
        #[source]
        source: io::Error,
    },
}

impl Error {
    /// The kernel refused `target` with `errno` (either sign).
    pub fn refused(target: Target, errno: i32) -> Self {
        Error::Refused {
            target: Box::new(target),
            errno: errno.saturating_abs(),
        }
    }

    /// Bad input, refused before anything was sent.
    pub fn invalid(what: &'static str, why: impl Into<String>) -> Self {
        Error::InvalidInput(InvalidValue::new(what, why))
    }

    /// The socket failed while doing `target`.
    pub fn io(target: Target, source: io::Error) -> Self {
        Error::Io {
            target: Box::new(target),
            source,
        }
    }

    /// A reply to `target` could not be read (`detail` a [`DecodeError`],
    /// or words for [`DecodeError::Other`]).
    pub fn decode(target: Target, detail: impl Into<DecodeError>) -> Self {
        Error::Decode {
            target: Box::new(target),
            detail: detail.into(),
        }
    }

    /// The error of a failed call (a get, a dump, a lookup) about `target`.
    pub fn of_failure(target: Target, failure: Failure) -> Self {
        let target = Box::new(target);
        match failure {
            Failure::Refused(errno) => Error::Refused { target, errno },
            Failure::Unavailable => Error::Unavailable,
            Failure::TimedOut(timeout) => Error::Timeout { target, timeout },
            Failure::Overrun => Error::Io {
                target,
                source: io::Error::from_raw_os_error(libc::ENOBUFS),
            },
            Failure::Socket(source) => Error::Io { target, source },
            Failure::Malformed(detail) => Error::Decode { target, detail },
            Failure::Interrupted => Error::Decode {
                target,
                detail: DecodeError::Interrupted,
            },
            Failure::NotSent(Cause::Unavailable) => Error::Unavailable,
            Failure::NotSent(cause) => Error::NotSent { target, cause },
        }
    }

    /// The error of a request of a pipelined apply that ended with
    /// `outcome` (`None` for [`Outcome::Done`]); `target` names it.
    pub fn of_outcome(target: impl FnOnce() -> Target, outcome: Outcome) -> Option<Self> {
        Some(match outcome {
            Outcome::Done => return None,
            Outcome::Refused(errno) => Error::refused(target(), errno),
            Outcome::Unknown(cause) => Error::Unknown {
                target: Box::new(target()),
                cause,
            },
            Outcome::NotSent(Cause::Unavailable) => Error::Unavailable,
            Outcome::NotSent(cause) => Error::NotSent {
                target: Box::new(target()),
                cause,
            },
            Outcome::FamilyUnconfirmed { errno, lookup } => Error::FamilyUnconfirmed {
                target: Box::new(target()),
                errno,
                lookup,
            },
        })
    }

    /// What the failed request was, of what (none for errors not tied to
    /// one request).
    pub fn target(&self) -> Option<&Target> {
        match self {
            Error::Refused { target, .. }
            | Error::Unknown { target, .. }
            | Error::NotSent { target, .. }
            | Error::FamilyUnconfirmed { target, .. }
            | Error::Io { target, .. }
            | Error::Decode { target, .. }
            | Error::Timeout { target, .. } => Some(target),
            _ => None,
        }
    }

    /// The errno behind this error, if there is one: the kernel's for a
    /// refusal, the system's for a socket error, `ETIMEDOUT` for a time-out
    /// and `ENOBUFS` for dropped replies; for
    /// [`Error::FamilyUnconfirmed`], the failed family lookup's (the
    /// request's answer is in the variant).
    pub fn errno(&self) -> Option<i32> {
        let of_cause = |c: &Cause| match c {
            Cause::RepliesDropped => Some(libc::ENOBUFS),
            Cause::TimedOut(_) => Some(libc::ETIMEDOUT),
            Cause::Socket(e) | Cause::FamilyLookup(e) => Some(*e),
            Cause::Unavailable => Some(libc::ENOENT),
            _ => None,
        };
        match self {
            Error::Refused { errno, .. } => Some(*errno),
            Error::Unknown { cause, .. } | Error::NotSent { cause, .. } => of_cause(cause),
            Error::FamilyUnconfirmed { lookup, .. } => of_cause(lookup),
            Error::Io { source, .. } | Error::Namespace { source, .. } => source.raw_os_error(),
            Error::Unavailable => Some(libc::ENOENT),
            Error::Timeout { .. } => Some(libc::ETIMEDOUT),
            _ => None,
        }
    }

    /// The kernel refused the request (it was not applied).
    pub fn is_refused(&self) -> bool {
        matches!(self, Error::Refused { .. })
    }

    /// Sent and never answered: it may have been applied.
    pub fn is_unknown_outcome(&self) -> bool {
        matches!(self, Error::Unknown { .. })
    }

    /// Not sent (so not applied): an earlier request of the call failed,
    /// or IPVS is not there.
    pub fn is_not_sent(&self) -> bool {
        matches!(self, Error::NotSent { .. } | Error::Unavailable)
    }

    /// The `ip_vs` module was reloaded under the call: the request was
    /// not applied (it was sent under the old family id, or not at all),
    /// and the kernel's tables started empty, so what was planned from
    /// an earlier listing is to be planned again from a new one. The
    /// client uses the new id from its next call. It has no errno
    /// ([`Error::errno`] is `None`): the `ENOENT` generic netlink answers
    /// under an unknown family id is not IPVS's "no such destination" or
    /// "no such scheduler".
    ///
    /// ```
    /// # #[cfg(feature = "emulator")]
    /// # fn main() -> Result<(), ipvsnl::Error> {
    /// use ipvsnl::emulator::{Fault, Kernel, When};
    /// use ipvsnl::{Client, RequestKind, Service, ServiceKey};
    ///
    /// let kernel = Kernel::new();
    /// let mut ipvs = Client::emulated(&kernel);
    /// kernel.inject(When::next(RequestKind::AddService), Fault::Reload);
    /// let key = ServiceKey::tcp("10.0.0.1".parse().unwrap(), 80);
    /// let e = ipvs.add_service(&Service::new(key)).unwrap_err();
    /// assert!(e.is_family_changed() && e.is_not_sent() && !e.is_refused());
    /// assert_eq!(e.errno(), None);
    /// assert_eq!(
    ///     e.to_string(),
    ///     "add service TCP 10.0.0.1:80: not sent: the ip_vs module was reloaded \
    ///      (its IPVS family id changed): its tables started empty"
    /// );
    /// // The next call goes to the reloaded module.
    /// ipvs.add_service(&Service::new(key))?;
    /// # Ok(())
    /// # }
    /// # #[cfg(not(feature = "emulator"))]
    /// # fn main() {}
    /// ```
    pub fn is_family_changed(&self) -> bool {
        matches!(
            self,
            Error::NotSent {
                cause: Cause::FamilyChanged,
                ..
            }
        )
    }

    /// Some wait ran out: a read that got no reply, or a change whose
    /// reply did not come (or that was not sent after one did not).
    pub fn is_timeout(&self) -> bool {
        match self {
            Error::Timeout { .. } => true,
            Error::Unknown { cause, .. } | Error::NotSent { cause, .. } => {
                matches!(cause, Cause::TimedOut(_))
            }
            _ => false,
        }
    }

    /// The socket (or a namespace file) failed.
    pub fn is_io(&self) -> bool {
        matches!(self, Error::Io { .. } | Error::Namespace { .. })
    }

    /// A reply could not be read.
    pub fn is_decode(&self) -> bool {
        matches!(self, Error::Decode { .. })
    }

    /// What was wrong with a reply that could not be read.
    ///
    /// ```
    /// use ipvsnl::{DecodeError, Error, Object, RequestKind, Target};
    /// let target = Target::new(RequestKind::GetInfo, Object::Table);
    /// let e = Error::decode(target, "no reply");
    /// assert!(e.is_decode());
    /// assert_eq!(e.decode_error(), Some(&DecodeError::from("no reply")));
    /// assert_eq!(e.to_string(), "get info: malformed reply from the kernel: no reply");
    /// ```
    pub fn decode_error(&self) -> Option<&DecodeError> {
        match self {
            Error::Decode { detail, .. } => Some(detail),
            _ => None,
        }
    }

    /// IPVS is not there (family not registered).
    pub fn is_unavailable(&self) -> bool {
        matches!(self, Error::Unavailable)
    }

    /// The caller lacks CAP_NET_ADMIN in the initial user namespace.
    pub fn is_permission_denied(&self) -> bool {
        self.errno() == Some(libc::EPERM) && !matches!(self, Error::Unavailable)
    }

    /// What was added exists already.
    pub fn is_already_exists(&self) -> bool {
        matches!(self, Error::Refused { errno, .. } if *errno == libc::EEXIST)
    }

    /// The service, destination or daemon named does not exist.
    pub fn is_not_found(&self) -> bool {
        match self {
            Error::Refused { target, errno } => {
                *errno == libc::ESRCH
                    || (*errno == libc::ENOENT
                        && matches!(
                            target.kind,
                            RequestKind::EditDestination | RequestKind::DeleteDestination
                        ))
            }
            _ => false,
        }
    }

    /// Bad input refused locally.
    pub fn is_invalid_input(&self) -> bool {
        matches!(self, Error::InvalidInput(_))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Object, ServiceKey};

    fn key() -> ServiceKey {
        ServiceKey::tcp("10.0.0.1".parse().unwrap(), 80)
    }

    #[test]
    fn messages_say_what_failed_per_operation() {
        let add = Target::new(RequestKind::AddService, Object::Service(key()));
        let e = Error::refused(add.clone().with_modules("foo", None), -libc::ENOENT);
        assert_eq!(e.errno(), Some(libc::ENOENT));
        assert!(e.to_string().contains("is ip_vs_foo loaded?"), "{e}");
        let e = Error::refused(add.with_modules("rr", None), libc::EEXIST);
        assert_eq!(
            e.to_string(),
            "add service TCP 10.0.0.1:80: service already exists (EEXIST)"
        );
        let del = Target::new(
            RequestKind::DeleteDestination,
            Object::Destination {
                service: key(),
                addr: "10.0.1.1".parse().unwrap(),
                port: 80,
            },
        );
        let e = Error::refused(del, libc::ENOENT);
        assert_eq!(
            e.to_string(),
            "delete destination 10.0.1.1:80 from TCP 10.0.0.1:80: no such destination (ENOENT)"
        );
        assert!(e.is_not_found());
        let e = Error::refused(
            Target::new(RequestKind::ListServices, Object::Table),
            libc::EPERM,
        );
        assert!(e.to_string().contains("CAP_NET_ADMIN"), "{e}");
        assert!(e.is_permission_denied());
        let e = Error::refused(Target::new(RequestKind::Flush, Object::Table), 9999);
        assert!(e.to_string().starts_with("flush: "), "{e}");
        assert!(e.to_string().contains("errno 9999"), "{e}");
        // An errno with no words of ours: the system's, in the style of
        // the others.
        let add = Target::new(
            RequestKind::AddDestination,
            Object::Destination {
                service: key(),
                addr: "10.0.1.1".parse().unwrap(),
                port: 80,
            },
        );
        assert_eq!(
            Error::refused(add, libc::ENOENT).to_string(),
            "add destination 10.0.1.1:80 to TCP 10.0.0.1:80: no such file or directory (ENOENT)"
        );
        assert!(Error::Unavailable
            .to_string()
            .contains("ip_vs module not loaded"));
        assert!(!Error::Unavailable.is_permission_denied());
    }

    #[test]
    fn what_is_known_is_told_apart_without_reading_text() {
        let t = || Target::new(RequestKind::AddService, Object::Service(key()));
        let unknown = Error::of_outcome(t, Outcome::Unknown(Cause::RepliesDropped)).unwrap();
        assert!(unknown.is_unknown_outcome() && !unknown.is_refused());
        assert_eq!(unknown.errno(), Some(libc::ENOBUFS));
        assert_eq!(
            unknown.to_string(),
            "add service TCP 10.0.0.1:80: outcome unknown: the kernel dropped replies (socket receive buffer full, ENOBUFS)"
        );
        let d = Duration::from_secs(30);
        let timed = Error::of_outcome(t, Outcome::Unknown(Cause::TimedOut(d))).unwrap();
        assert!(timed.is_unknown_outcome() && timed.is_timeout());
        let not_sent = Error::of_outcome(t, Outcome::NotSent(Cause::TimedOut(d))).unwrap();
        assert!(not_sent.is_not_sent() && !not_sent.is_unknown_outcome());
        assert!(not_sent.is_timeout());
        assert!(Error::of_outcome(t, Outcome::Done).is_none());
        assert!(Error::of_outcome(t, Outcome::NotSent(Cause::Unavailable))
            .unwrap()
            .is_unavailable());
        let lookup = Cause::TimedOut(d);
        let stale = Outcome::FamilyUnconfirmed {
            errno: libc::ENOENT,
            lookup,
        };
        let e = Error::of_outcome(t, stale).unwrap();
        assert!(!e.is_refused() && !e.is_not_found() && !e.is_unknown_outcome());
        assert_eq!(e.errno(), Some(libc::ETIMEDOUT), "the lookup's");
        assert_eq!(
            e.to_string(),
            "add service TCP 10.0.0.1:80: not applied: answered ENOENT as under a stale IPVS family id, and looking the family up again failed: no reply within 30s"
        );
        let read = Target::new(RequestKind::ListServices, Object::Table);
        let e = Error::of_failure(read.clone(), Failure::TimedOut(d));
        assert!(matches!(e, Error::Timeout { .. }) && e.is_timeout());
        assert!(!e.is_unknown_outcome());
        let e = Error::of_failure(read.clone(), Failure::Malformed("x".into()));
        assert!(e.is_decode());
        let e = Error::of_failure(
            read,
            Failure::Socket(io::Error::from_raw_os_error(libc::EBADF)),
        );
        assert!(e.is_io() && e.errno() == Some(libc::EBADF));
        assert_eq!(e.target().unwrap().kind, RequestKind::ListServices);
    }
}
