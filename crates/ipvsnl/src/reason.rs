//! The words for a kernel refusal: what an errno means for the request
//! that got it, and the errno's symbolic name.

use std::io;

use crate::{RequestKind, Target};

/// The human reason for a kernel errno, as precise as the operation allows.
pub(crate) fn kernel_reason(target: &Target, errno: i32) -> String {
    use RequestKind as K;
    let kind = target.kind;
    let service_op = matches!(
        kind,
        K::AddService | K::EditService | K::DeleteService | K::GetService | K::Zero
    );
    let dest_op = matches!(
        kind,
        K::AddDestination | K::EditDestination | K::DeleteDestination | K::ListDestinations
    );
    match errno {
        libc::EPERM if matches!(kind, K::CountServices | K::SnapshotServices) => {
            "permission denied: needs CAP_NET_ADMIN over the network namespace".into()
        }
        libc::EPERM => "permission denied: needs CAP_NET_ADMIN in the initial user namespace".into(),
        libc::EEXIST if kind == K::AddService => "service already exists".into(),
        libc::EEXIST if kind == K::AddDestination => "destination already exists".into(),
        libc::EEXIST if kind == K::StartDaemon => "a sync daemon already runs in that role".into(),
        libc::ESRCH if kind == K::StopDaemon => "no sync daemon runs in that role".into(),
        libc::ESRCH if service_op || dest_op => "no such service".into(),
        libc::ENOENT if matches!(kind, K::AddService | K::EditService) => scheduler_hint(target),
        libc::ENOENT if matches!(kind, K::EditDestination | K::DeleteDestination) => {
            "no such destination".into()
        }
        libc::ERANGE if dest_op => {
            "weight out of range, or lower threshold above upper threshold".into()
        }
        libc::EINVAL if kind == K::AddDestination => {
            "invalid destination: address not unicast (is lo up in this namespace?), family differs from the service's without tunnelling, or GUE without a port".into()
        }
        libc::EINVAL if dest_op => {
            "invalid destination: family differs from the service's without tunnelling, or GUE without a port".into()
        }
        libc::EINVAL if kind == K::StartDaemon => {
            "invalid sync daemon settings: bad multicast group, or a destination of another address family exists".into()
        }
        libc::EINVAL => "invalid request (a malformed attribute, or a module of another version)".into(),
        libc::EBUSY if matches!(kind, K::ListServices | K::ListDestinations | K::ListDaemons) => {
            "another dump is still in progress on this socket".into()
        }
        libc::ENODEV => "no such network interface".into(),
        libc::EAFNOSUPPORT => "address family not supported (is IPv6 enabled?)".into(),
        libc::EOPNOTSUPP => "operation not supported by this kernel".into(),
        libc::ENOMEM => "the kernel is out of memory".into(),
        libc::ENOPROTOOPT if matches!(kind, K::CountServices | K::SnapshotServices) => {
            "no IPVS socket options: the ip_vs module is not loaded".into()
        }
        libc::ENOPROTOOPT => "protocol not available".into(),
        _ => system_text(errno),
    }
}

/// The system's words for `errno` in the style of the others: lower case,
/// without the standard library's "(os error N)" (the symbolic name
/// follows in every refusal's text).
fn system_text(errno: i32) -> String {
    let text = io::Error::from_raw_os_error(errno).to_string();
    let text = match text.rfind(" (os error ") {
        Some(at) => &text[..at],
        None => &text[..],
    };
    let mut chars = text.chars();
    match chars.next() {
        Some(first) => first.to_lowercase().chain(chars).collect(),
        None => format!("errno {errno}"),
    }
}

/// ENOENT on a service add or edit: the scheduler (or engine) is missing.
fn scheduler_hint(target: &Target) -> String {
    match (&target.scheduler, &target.engine) {
        (Some(s), Some(pe)) => format!(
            "scheduler {s} or persistence engine {pe} not found: are ip_vs_{s} and ip_vs_pe_{pe} loaded?"
        ),
        (Some(s), None) => format!("scheduler not found: is ip_vs_{s} loaded?"),
        _ => "scheduler or persistence engine not found".into(),
    }
}

/// The symbolic name of an errno, or its number.
pub(crate) fn errno_text(errno: i32) -> String {
    match crate::errno_name(errno) {
        Some(name) => name.to_owned(),
        None => format!("errno {errno}"),
    }
}
