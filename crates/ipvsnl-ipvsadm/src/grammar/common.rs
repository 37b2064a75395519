//! The lines `ipvsadm -S` prints for an address-keyed IPv4 service and its
//! masquerading or direct-routing destinations, recognised whole and read
//! without the general machinery (option scanner, command entry, option
//! matrix): `-A -t|-u A.B.C.D:PORT -s NAME` and
//! `-a -t|-u A.B.C.D:PORT -r A.B.C.D[:PORT] -m|-g -w WEIGHT`, the shape of
//! every line of a saved table of such services. Anything else, and any
//! such line with a value the general reading would refuse or read
//! otherwise, is left to it ([`parse_args`](super::parse_args)): the
//! result is always what the general reading gives (the unit test
//! `common_lines_read_as_the_general_reading_reads_them`).
//!
//! Measured on the host (`scripts/measure/ipvsadm-text-cost`, 10,000 x 5): `-R`'s
//! reading went from 2,400 to 1,560 instructions a line.

use std::net::{IpAddr, Ipv4Addr};

use ipvsnl::{
    Destination, Forward, Netmask, Protocol, Request, Scheduler, Service, ServiceFlags, ServiceKey,
};

use super::command::Command;
use super::values::{dotted_quad_port, Parsed};
use crate::c_text::number_in;

/// The command of a common line (`argv[0]` is the program), or `None`.
pub(super) fn common_line(argv: &[&str]) -> Option<Command> {
    match argv {
        [_, "-A", proto, service, "-s", scheduler] => {
            let key = service_key(proto, service)?;
            // A zero port is refused unless persistent: the general
            // reading says so.
            if matches!(key, ServiceKey::Inet { port: 0, .. }) {
                return None;
            }
            let scheduler = named_scheduler(scheduler)?;
            let mut svc = Service::new(key);
            svc.scheduler = scheduler;
            svc.flags = ServiceFlags::from_bits_retain(0);
            svc.timeout = 0;
            svc.netmask = Netmask::V4(Ipv4Addr::from(u32::MAX));
            svc.persistence_engine = None;
            Some(Command::Apply(Request::add_service(svc)))
        }
        [_, "-a", proto, service, "-r", server, forward, "-w", weight] => {
            let key = service_key(proto, service)?;
            let ServiceKey::Inet { port, .. } = key else {
                return None;
            };
            let Parsed {
                addr: dest_addr,
                port: dest_port,
            } = dotted_quad_port(server.as_bytes())?;
            let (forward, dest_port) = match *forward {
                "-m" => (Forward::Masquerade, dest_port.unwrap_or(port)),
                // Direct routing takes the service's port.
                "-g" => (Forward::Route, port),
                _ => return None,
            };
            let weight = number_in(weight, 0, i64::from(i32::MAX))? as u32;
            let d = Destination::new(dest_addr, dest_port)
                .with_forward(forward)
                .with_weight(weight)
                .with_thresholds(0, 0);
            Some(Command::Apply(Request::AddDestination(key, d)))
        }
        _ => None,
    }
}

/// The key of `-t`/`-u` and an `A.B.C.D:PORT` (a port there: without
/// one, the general reading keeps the port 0 it starts with, which the
/// caller may not want to judge).
fn service_key(proto: &str, service: &str) -> Option<ServiceKey> {
    let protocol = match proto {
        "-t" => 6,
        "-u" => 17,
        _ => return None,
    };
    let Parsed { addr, port } = dotted_quad_port(service.as_bytes())?;
    let port = port?;
    let IpAddr::V4(_) = addr else { return None };
    Some(ServiceKey::Inet {
        protocol: Protocol::from_raw(protocol),
        addr,
        port,
    })
}

/// A scheduler name the general reading takes as it is: at most 15 bytes
/// (it cuts longer ones), printable ASCII (it sends others as `/`), one
/// the library accepts (else the general reading's message).
fn named_scheduler(name: &str) -> Option<Scheduler> {
    if name.is_empty() || name.len() > 15 || !name.bytes().all(|b| b.is_ascii_graphic()) {
        return None;
    }
    Scheduler::new(name).ok()
}

#[cfg(test)]
mod tests {
    use super::super::parse::parse_any;
    use super::*;
    use ipvsnl::rules::Numeric;

    #[test]
    fn common_lines_read_as_the_general_reading_reads_them() {
        let services = [
            "10.0.0.1:80",
            "10.0.0.1:0",
            "10.0.0.1",
            "1.2.3.4:65535",
            "1.2.3.4:65536",
            "01.2.3.4:80",
            "[::1]:80",
            "a.b",
            "10.0.0.1:080",
            "255.255.255.255:1",
            "-m",
        ];
        let protocols = ["-t", "-u", "-f", "--tcp-service", "-x"];
        let schedulers = [
            "rr",
            "wlc",
            "sh",
            "mh",
            "averylongschedulername",
            "fifteen-letters",
            "r\u{e9}",
            "-m",
            "",
            "a b",
        ];
        let servers = [
            "172.16.0.1:80",
            "172.16.0.1",
            "172.16.0.1:0",
            "1.2.3.4:99999",
            "::1",
            "x",
        ];
        let forwards = ["-m", "-g", "-i", "-w", "--masquerading"];
        let weights = [
            "0",
            "1",
            "2147483647",
            "2147483648",
            "-1",
            " 1",
            "01",
            "x",
            "",
        ];
        let mut taken = 0;
        let mut check = |argv: &[&str]| {
            let fast = common_line(argv);
            let general = parse_any(argv, &Numeric);
            if let Some(c) = fast {
                assert_eq!(Ok(c), general, "{argv:?}");
                taken += 1;
            }
        };
        for p in protocols {
            for s in services {
                for sched in schedulers {
                    check(&["ipvsadm", "-A", p, s, "-s", sched]);
                }
                for r in servers {
                    for f in forwards {
                        for w in weights {
                            check(&["ipvsadm", "-a", p, s, "-r", r, f, "-w", w]);
                        }
                    }
                }
            }
        }
        assert!(taken > 100, "the fast reading took {taken} lines");
    }
}
