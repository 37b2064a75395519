//! Errno names for counts and messages: the soak counts its failures by
//! name.
//!
//! ```
//! use ipvsnl_test_support::errno::errno_name;
//! assert_eq!(errno_name(Some(libc::EEXIST)), "EEXIST");
//! assert_eq!(errno_name(Some(4095)), "errno 4095");
//! assert_eq!(errno_name(None), "no errno");
//! ```

/// An errno's name (`EEXIST`...) for the errors IPVS and netlink give,
/// `errno N` for the rare ones, `no errno` for an error without one.
pub fn errno_name(errno: Option<i32>) -> String {
    let Some(n) = errno else {
        return "no errno".to_owned();
    };
    match ipvsnl::errno_name(n) {
        Some(name) => name.to_owned(),
        None => format!("errno {n}"),
    }
}
