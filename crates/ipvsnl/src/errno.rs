//! Errno names: the one table the library's messages, the doctor's report
//! and the tests' counts all print from.

/// The symbolic name (`"EEXIST"`) of an errno the IPVS family, netlink,
/// the socket-option interface or module loading give; `None` for one
/// outside that set (print it as a number).
///
/// ```
/// assert_eq!(ipvsnl::errno_name(libc::EEXIST), Some("EEXIST"));
/// assert_eq!(ipvsnl::errno_name(4095), None);
/// ```
pub fn errno_name(errno: i32) -> Option<&'static str> {
    Some(match errno {
        libc::EPERM => "EPERM",
        libc::ENOENT => "ENOENT",
        libc::ESRCH => "ESRCH",
        libc::ENOEXEC => "ENOEXEC",
        libc::EAGAIN => "EAGAIN",
        libc::ENOMEM => "ENOMEM",
        libc::EACCES => "EACCES",
        libc::EFAULT => "EFAULT",
        libc::EBUSY => "EBUSY",
        libc::EEXIST => "EEXIST",
        libc::ENODEV => "ENODEV",
        libc::EINVAL => "EINVAL",
        libc::EROFS => "EROFS",
        libc::ERANGE => "ERANGE",
        libc::ENOSYS => "ENOSYS",
        libc::EMSGSIZE => "EMSGSIZE",
        libc::ENOPROTOOPT => "ENOPROTOOPT",
        libc::EPROTONOSUPPORT => "EPROTONOSUPPORT",
        libc::EOPNOTSUPP => "EOPNOTSUPP",
        libc::EAFNOSUPPORT => "EAFNOSUPPORT",
        libc::ENOBUFS => "ENOBUFS",
        libc::ETIMEDOUT => "ETIMEDOUT",
        libc::ENOKEY => "ENOKEY",
        libc::EKEYREJECTED => "EKEYREJECTED",
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::errno_name;

    #[test]
    fn every_name_is_its_own_errno() {
        // A name printed for two numbers would be a lie about one of them.
        let mut seen = std::collections::HashMap::new();
        for e in 1..200 {
            if let Some(name) = errno_name(e) {
                assert!(
                    seen.insert(name, e).is_none(),
                    "{name} for {e} and {}",
                    seen[name]
                );
            }
        }
        assert_eq!(seen.len(), 24);
    }
}
