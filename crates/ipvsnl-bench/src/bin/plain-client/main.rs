//! The plain netlink client as a process of its own, for the whole-process
//! rows of `bulk-compare`: what a hand-written C client does for the same
//! kernel work as `ipvsadm -R` and `ipvsadm -S -n`, start-up included.
//!
//! * `plain-client restore`: reads the rules `ipvsadm -S -n` prints for the
//!   bench's tables (`-A` with `-t`/`-u` and `-s`; `-a` with `-r`, a
//!   forwarding switch and `-w`; IPv4 only: nothing more general) from
//!   stdin, looks the family id up, encodes every request by hand and
//!   sends them in datagrams of up to 64 KiB, one ACK asked for per
//!   datagram.
//! * `plain-client save`: the kernel work of our `ipvsadm -S -n` (one
//!   netlink service dump, one `IP_VS_SO_GET_SERVICES`, one
//!   `IP_VS_SO_GET_DESTS` per IPv4 service), printed as `ipvsadm -S -n`
//!   does (services and destinations sorted the way ipvsadm sorts them)
//!   with hand-written number formatting, written out every 64 KiB
//!   (`save.rs`).
//!
//! Exit status 1 on a refusal or a socket error, 2 on a usage or input
//! error.

mod restore;
mod save;

use std::io::{self, Read, Write};
use std::process::ExitCode;

use ipvsnl_bench::plain::{family, socket};

fn main() -> ExitCode {
    let command = std::env::args().nth(1).unwrap_or_default();
    match command.as_str() {
        "restore" => {
            let mut text = String::new();
            if let Err(e) = io::stdin().lock().read_to_string(&mut text) {
                eprintln!("plain-client: reading stdin: {e}");
                return ExitCode::from(2);
            }
            let rules = match restore::parse(&text) {
                Ok(r) => r,
                Err(e) => {
                    eprintln!("plain-client: {e}");
                    return ExitCode::from(2);
                }
            };
            match connect().and_then(|(sock, fam)| restore::send(&sock, fam, &rules)) {
                Ok(0) => ExitCode::SUCCESS,
                Ok(refused) => {
                    eprintln!("plain-client: {refused} requests refused");
                    ExitCode::FAILURE
                }
                Err(e) => {
                    eprintln!("plain-client: {e}");
                    ExitCode::FAILURE
                }
            }
        }
        "save" => {
            let out = io::stdout();
            let mut out = io::BufWriter::with_capacity(64 << 10, out.lock());
            let done = connect()
                .and_then(|(sock, fam)| save::save(sock, fam, &mut out))
                .and_then(|()| out.flush());
            match done {
                Ok(()) => ExitCode::SUCCESS,
                Err(e) => {
                    eprintln!("plain-client: {e}");
                    ExitCode::FAILURE
                }
            }
        }
        _ => {
            eprintln!("usage: plain-client restore|save");
            ExitCode::from(2)
        }
    }
}

/// A socket and the IPVS family id.
fn connect() -> io::Result<(netlink_sys::Socket, u16)> {
    let sock = socket::open()?;
    let fam = family::resolve(&sock)?;
    Ok((sock, fam))
}
