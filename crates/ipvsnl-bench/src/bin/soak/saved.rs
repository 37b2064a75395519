//! ipvsadm's saved rules (`ipvsadm -S -n`) as the churner reads them to
//! pick its victims, and a key as ipvsadm's command line names it.

use std::net::IpAddr;

use ipvsnl::{AddressFamily, Protocol, ServiceKey};

/// A service as `ipvsadm -S -n` printed it: its spec (`-t 10.10.0.1:80`,
/// `-f 5 -6`) and its real servers' `-r` values.
#[derive(Debug, Clone)]
pub(crate) struct Listed {
    /// ipvsadm's words for the service.
    pub(crate) spec: Vec<String>,
    /// Whether it is an IPv6 service.
    pub(crate) v6: bool,
    /// Its real servers, as `-r` takes them.
    pub(crate) servers: Vec<String>,
}

/// Reads `ipvsadm -S -n`: `-A SPEC options` and `-a SPEC -r RS options`.
pub(crate) fn parse_saved(text: &str) -> Vec<Listed> {
    let mut out: Vec<Listed> = Vec::new();
    for line in text.lines() {
        let t: Vec<&str> = line.split_whitespace().collect();
        if t.len() < 3 {
            continue;
        }
        let mut spec: Vec<String> = vec![t[1].to_owned(), t[2].to_owned()];
        if t.get(3) == Some(&"-6") {
            spec.push("-6".to_owned());
        }
        let v6 = spec.iter().any(|s| s == "-6" || s.contains('['));
        match t[0] {
            "-A" => out.push(Listed {
                spec,
                v6,
                servers: Vec::new(),
            }),
            "-a" => {
                let rs = t.iter().position(|w| *w == "-r").and_then(|i| t.get(i + 1));
                if let (Some(rs), Some(svc)) = (rs, out.iter_mut().rev().find(|s| s.spec == spec)) {
                    svc.servers.push((*rs).to_owned());
                }
            }
            _ => {}
        }
    }
    out
}

/// ipvsadm's spec of a key: `-t ADDR:PORT`, `-u`, `--sctp-service`, or
/// `-f MARK` (`-6` for IPv6).
pub(crate) fn spec_of(key: &ServiceKey) -> Vec<String> {
    let endpoint = |addr: &IpAddr, port: u16| match addr {
        IpAddr::V4(a) => format!("{a}:{port}"),
        IpAddr::V6(a) => format!("[{a}]:{port}"),
    };
    match key {
        ServiceKey::Inet {
            protocol,
            addr,
            port,
        } => {
            let flag = match protocol {
                Protocol::Udp => "-u",
                Protocol::Sctp => "--sctp-service",
                _ => "-t",
            };
            vec![flag.to_owned(), endpoint(addr, *port)]
        }
        ServiceKey::Fwmark { mark, family } => {
            let mut v = vec!["-f".to_owned(), mark.to_string()];
            if *family == AddressFamily::Inet6 {
                v.push("-6".to_owned());
            }
            v
        }
        #[allow(unreachable_patterns)]
        _ => vec!["-f".to_owned(), "1".to_owned()],
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn saved_rules_give_each_service_its_spec_and_servers() {
        let text = "-A -t 10.10.0.1:80 -s rr\n\
                    -a -t 10.10.0.1:80 -r 10.20.0.1:80 -m -w 1\n\
                    -A -f 7 -6 -s wlc\n\
                    -a -f 7 -6 -r [2001:db8:20::1]:0 -i -w 1\n\
                    -A -u [2001:db8:10::5]:53 -s sh\n";
        let l = parse_saved(text);
        assert_eq!(l.len(), 3);
        assert_eq!(l[0].spec, ["-t", "10.10.0.1:80"]);
        assert_eq!(l[0].servers, ["10.20.0.1:80"]);
        assert!(!l[0].v6);
        assert_eq!(l[1].spec, ["-f", "7", "-6"]);
        assert_eq!(l[1].servers, ["[2001:db8:20::1]:0"]);
        assert!(l[1].v6 && l[2].v6);
        assert_eq!(
            spec_of(&ServiceKey::fwmark(7, AddressFamily::Inet6)),
            ["-f", "7", "-6"]
        );
    }
}
