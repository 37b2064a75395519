//! Fresh network namespaces for the kernel benches (each measurement gets
//! its own IPVS table: a table deleted in place leaves its destinations in
//! a per-namespace trash list for minutes, which slows later adds).

#![allow(dead_code)]

use std::io;

/// Whether this process can use IPVS here (root and the module loaded).
pub fn ipvs_available() -> bool {
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        return false;
    }
    ipvsnl::Client::new()
        .and_then(|mut c| c.family_id())
        .is_ok()
}

/// Moves the calling thread into a new network namespace with `lo` up.
pub fn fresh() -> io::Result<()> {
    // SAFETY: unshare takes only flags; CLONE_NEWNET affects this thread.
    if unsafe { libc::unshare(libc::CLONE_NEWNET) } != 0 {
        return Err(io::Error::last_os_error());
    }
    lo_up()
}

fn lo_up() -> io::Result<()> {
    // SAFETY: plain socket(2); checked below and closed at the end.
    let fd = unsafe { libc::socket(libc::AF_INET, libc::SOCK_DGRAM | libc::SOCK_CLOEXEC, 0) };
    if fd < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: ifreq is plain data; all-zero is valid.
    let mut ifr: libc::ifreq = unsafe { std::mem::zeroed() };
    for (d, s) in ifr.ifr_name.iter_mut().zip(b"lo\0") {
        *d = *s as libc::c_char;
    }
    // SAFETY: SIOCGIFFLAGS/SIOCSIFFLAGS read and write the ifreq we own.
    let rc = unsafe {
        let mut rc = libc::ioctl(fd, libc::SIOCGIFFLAGS as _, &mut ifr as *mut libc::ifreq);
        if rc == 0 {
            ifr.ifr_ifru.ifru_flags |= libc::IFF_UP as libc::c_short;
            rc = libc::ioctl(fd, libc::SIOCSIFFLAGS as _, &ifr as *const libc::ifreq);
        }
        rc
    };
    let err = io::Error::last_os_error();
    // SAFETY: fd is ours and open.
    unsafe { libc::close(fd) };
    if rc != 0 {
        return Err(err);
    }
    Ok(())
}
