//! Kernel operations through the library, with ipvsadm's error texts.

use std::ffi::CStr;

use ipvsnl::{Client, Error, Request, RequestKind, Scheduler, Service, ServiceKey};

/// libc's `strerror`.
pub(crate) fn strerror(errno: i32) -> String {
    // SAFETY: strerror returns a pointer to a NUL-terminated string that
    // stays valid until the next call; it is copied right away.
    unsafe {
        let p = libc::strerror(errno);
        if p.is_null() {
            return format!("Unknown error {errno}");
        }
        CStr::from_ptr(p).to_string_lossy().into_owned()
    }
}

/// libipvs's `ipvs_strerror`: the message for an errno after an operation.
pub(crate) fn ipvs_strerror(kind: RequestKind, errno: i32) -> String {
    use RequestKind as K;
    let specific = match (kind, errno) {
        (K::AddService, libc::EEXIST) => Some("Service already exists"),
        (K::AddService, libc::ENOENT) => Some("Scheduler or persistence engine not found"),
        (K::EditService, libc::ESRCH) => Some("No such service"),
        (K::EditService, libc::ENOENT) => Some("Scheduler or persistence engine not found"),
        (K::DeleteService, libc::ESRCH) => Some("No such service"),
        (K::Zero, libc::ESRCH) => Some("No such service"),
        (K::AddDestination, libc::ESRCH) => Some("Service not defined"),
        (K::AddDestination, libc::EEXIST) => Some("Destination already exists"),
        (K::EditDestination, libc::ESRCH) => Some("Service not defined"),
        (K::EditDestination, libc::ENOENT) => Some("No such destination"),
        (K::DeleteDestination, libc::ESRCH) => Some("Service not defined"),
        (K::DeleteDestination, libc::ENOENT) => Some("No such destination"),
        (K::StartDaemon, libc::EEXIST) => Some("Daemon has already run"),
        (K::StopDaemon, libc::ESRCH) => Some("No daemon is running"),
        (K::ListServices | K::ListDestinations | K::GetService, libc::ESRCH) => {
            Some("No such service")
        }
        _ => None,
    };
    if let Some(s) = specific {
        return s.to_owned();
    }
    match errno {
        libc::EPERM => "Permission denied (you must be root)".to_owned(),
        libc::EINVAL => {
            "Invalid operation.  Possibly wrong module version, address not unicast, ...".to_owned()
        }
        libc::ENOPROTOOPT => "Protocol not available".to_owned(),
        libc::ENOMEM => "Memory allocation problem".to_owned(),
        libc::EOPNOTSUPP => "Operation not supported with IPv6".to_owned(),
        libc::EAFNOSUPPORT => "Operation not supported with specified address family".to_owned(),
        libc::EMSGSIZE => "Module is wrong version".to_owned(),
        e => strerror(e),
    }
}

/// The errno ipvsadm would have seen for a library error. Netlink-level
/// failures (socket, reply parsing, time-outs) read as EINVAL in libipvs.
pub(crate) fn errno_of(e: &Error) -> i32 {
    match e {
        Error::Refused { errno, .. } => *errno,
        Error::Unavailable => libc::ENOPROTOOPT,
        _ => match e.errno() {
            Some(libc::EPERM) => libc::EPERM,
            Some(libc::ENOMEM) => libc::ENOMEM,
            _ => libc::EINVAL,
        },
    }
}

/// What the kernel answers to a request the library refuses to send
/// because it fails the library's own checks (`Request::validate`): the
/// kernel checks in its own order, so ask it what exists and answer as it
/// would.
fn refused_errno(client: &mut Client, req: &Request) -> i32 {
    let exists = |client: &mut Client, key: &ServiceKey| client.service(key).is_ok();
    match req {
        Request::AddService(s) => {
            if exists(client, &s.key) {
                libc::EEXIST
            } else if names_refused(s) {
                libc::ENOENT
            } else {
                libc::EINVAL
            }
        }
        Request::EditService(s) => {
            if !exists(client, &s.key) {
                libc::ESRCH
            } else if names_refused(s) {
                libc::ENOENT
            } else {
                libc::EINVAL
            }
        }
        Request::AddDestination(k, d) | Request::EditDestination(k, d) => {
            if !exists(client, k) {
                return libc::ESRCH;
            }
            if d.lower_threshold > d.upper_threshold {
                return libc::ERANGE;
            }
            if matches!(req, Request::EditDestination(..)) {
                return libc::ENOENT;
            }
            let present = client
                .destinations(k)
                .map(|ds| {
                    ds.iter()
                        .any(|e| e.destination.addr == d.addr && e.destination.port == d.port)
                })
                .unwrap_or(false);
            if present {
                libc::EEXIST
            } else {
                // Not a unicast address.
                libc::EINVAL
            }
        }
        Request::DeleteService(_) | Request::Zero(Some(_)) => libc::ESRCH,
        _ => libc::EINVAL,
    }
}

/// Whether the library refuses a service for its scheduler or persistence
/// engine name (the kernel would answer ENOENT: no such module).
fn names_refused(s: &Service) -> bool {
    Scheduler::new(s.scheduler.name()).is_err()
        || s.persistence_engine.as_ref().is_some_and(|pe| {
            pe.is_empty()
                || pe.len() > ipvsnl::PE_NAME_MAX
                || !pe.bytes().all(|b| b.is_ascii_graphic())
        })
}

/// Applies requests in order through the library's pipelined batches and
/// returns, per request, `Ok` or the errno ipvsadm would have reported.
pub(crate) fn apply(client: &mut Client, requests: &[Request]) -> Vec<Result<(), i32>> {
    let mut out = Vec::with_capacity(requests.len());
    let mut start = 0;
    while start < requests.len() {
        // The run of requests the library will send.
        let mut end = start;
        while end < requests.len() && requests[end].validate().is_ok() {
            end += 1;
        }
        if end > start {
            for r in client.apply(&requests[start..end]) {
                out.push(r.map_err(|e| errno_of(&e)));
            }
        }
        if end < requests.len() {
            out.push(Err(refused_errno(client, &requests[end])));
            end += 1;
        }
        start = end;
    }
    out
}
