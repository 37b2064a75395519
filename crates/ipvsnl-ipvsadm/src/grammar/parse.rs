//! The entry point: one command line, option by option, into an entry,
//! then checked and built ([`parse_args`]).

use std::net::{IpAddr, Ipv4Addr};

use ipvsnl::rules::Names;
use ipvsnl::{AddressFamily, DaemonRole, ServiceFlags, Timeouts, TunnelFlags};

use super::build::finish;
use super::checks::check_options;
use super::command::{ArgError, Command};
use super::common::common_line;
use super::entry::*;
use super::options::*;
use super::scanner::{scan_error, Scan, Scanner};
use super::values::*;
use crate::c_text::{atoi, inet_aton, inet_pton6, number_in};

/// Parses one ipvsadm command line (`argv[0]` is the program name, used in
/// the "Try `...' -h" message) with ipvsadm 1.31's grammar and checks.
///
/// `names` resolves host and service names ([`ipvsnl::rules::Numeric`]
/// for none). The result is the command, or ipvsadm's message and exit
/// status (see the unit tests in `grammar/tests.rs` for both).
pub(crate) fn parse_args(argv: &[&str], names: &dyn Names) -> Result<Command, ArgError> {
    if let Some(command) = common_line(argv) {
        return Ok(command);
    }
    parse_any(argv, names)
}

/// [`parse_args`]'s general reading, of every line.
pub(super) fn parse_any(argv: &[&str], names: &dyn Names) -> Result<Command, ArgError> {
    let program = argv.first().copied().unwrap_or("ipvsadm");
    let mut sc = Scanner::new(argv);
    let cmd = match sc.next_opt() {
        Scan::Opt(opt, arg) => match opt {
            Opt::AddService => Cmd::Add,
            Opt::EditService => Cmd::Edit,
            Opt::DeleteService => Cmd::Del,
            Opt::Clear => Cmd::Flush,
            Opt::List => Cmd::List,
            Opt::Zero => Cmd::Zero,
            Opt::AddServer => Cmd::AddDest,
            Opt::EditServer => Cmd::EditDest,
            Opt::DeleteServer => Cmd::DelDest,
            Opt::Set => Cmd::Timeout,
            Opt::Help => return Ok(Command::Help),
            Opt::Version => return Ok(Command::Version),
            Opt::Restore => Cmd::Restore,
            Opt::Save => Cmd::Save,
            Opt::StartDaemon | Opt::StopDaemon => {
                let start = opt == Opt::StartDaemon;
                let role = match arg.unwrap_or("") {
                    "master" => DaemonRole::Master,
                    "backup" => DaemonRole::Backup,
                    _ if start => {
                        return Err(ArgError::fail("illegal start-daemon parameter specified"))
                    }
                    _ => return Err(ArgError::fail("illegal start_daemon specified")),
                };
                let mut e = Entry::new(if start {
                    Cmd::StartDaemon
                } else {
                    Cmd::StopDaemon
                });
                e.role = role;
                return parse_rest(e, sc, program, names);
            }
            _ => return Err(ArgError::try_help(program)),
        },
        Scan::End | Scan::Error(_) => return Err(ArgError::try_help(program)),
    };
    parse_rest(Entry::new(cmd), sc, program, names)
}

fn parse_rest<'a>(
    mut e: Entry<'a>,
    mut sc: Scanner<'a>,
    _program: &str,
    names: &dyn Names,
) -> Result<Command, ArgError> {
    loop {
        let (opt, arg) = match sc.next_opt() {
            Scan::End => break,
            Scan::Error(what) => return Err(scan_error(&sc, what)),
            Scan::Opt(o, a) => (o, a),
        };
        let val = arg.unwrap_or("");
        match opt {
            Opt::Tcp | Opt::Udp | Opt::Sctp => {
                e.set_option(SERVICE)?;
                e.protocol = match opt {
                    Opt::Tcp => 6,
                    Opt::Udp => 17,
                    _ => 132,
                };
                let p = parse_service(val, e.protocol, names).ok_or_else(|| {
                    ArgError::fail("illegal virtual server address[:port] specified")
                })?;
                e.addr = p.addr;
                e.af = AddressFamily::of(&p.addr);
                if e.af == AddressFamily::Inet6 {
                    e.netmask = 128;
                }
                if let Some(port) = p.port {
                    e.port = port;
                }
            }
            Opt::Fwmark => {
                e.set_option(SERVICE)?;
                e.af = AddressFamily::Inet;
                e.protocol = 6;
                e.fwmark = number_in(val, 1, u32::MAX as i64)
                    .map(|v| v as u32)
                    .ok_or_else(|| {
                        ArgError::fail(format!("invalid fwmark value `{val}' specified"))
                    })?;
            }
            Opt::Scheduler => {
                e.set_option(SCHEDULER)?;
                e.sched = truncate(val, 15);
            }
            Opt::Persistent => {
                e.set_option(PERSISTENT)?;
                e.flags |= ServiceFlags::PERSISTENT.bits();
                e.timeout = parse_timeout(arg, 1)?;
            }
            Opt::Netmask => {
                e.set_option(NETMASK)?;
                if e.af != AddressFamily::Inet6 {
                    let m = inet_aton(val)
                        .or_else(|| names.host_v4(val))
                        .ok_or_else(|| {
                            ArgError::fail("illegal virtual server persistent mask specified")
                        })?;
                    e.netmask = u32::from(m);
                } else {
                    // atoi: leading digits, anything else ignored.
                    let n = atoi(val);
                    if !(1..=128).contains(&n) {
                        return Err(ArgError::fail("illegal ipv6 netmask specified"));
                    }
                    e.netmask = n as u32;
                }
            }
            Opt::RealServer => {
                e.set_option(SERVER)?;
                let p = parse_service(val, e.protocol, names).ok_or_else(|| {
                    ArgError::fail("illegal real server address[:port] specified")
                })?;
                e.dest_addr = p.addr;
                e.dest_af = AddressFamily::of(&p.addr);
                e.dest_port = p.port.unwrap_or(e.port);
            }
            Opt::Ipip | Opt::Gate | Opt::Masq => {
                e.set_option(FORWARD)?;
                e.conn_flags = match opt {
                    Opt::Ipip => FWD_TUNNEL,
                    Opt::Gate => FWD_DROUTE,
                    _ => FWD_MASQ,
                };
            }
            Opt::Weight => {
                e.set_option(WEIGHT)?;
                e.weight = number_in(val, 0, i32::MAX as i64)
                    .ok_or_else(|| ArgError::fail("illegal weight specified"))?
                    as u32;
            }
            Opt::UThreshold => {
                e.set_option(UTHRESHOLD)?;
                e.u_threshold = number_in(val, 0, i32::MAX as i64)
                    .ok_or_else(|| ArgError::fail("illegal u_threshold specified"))?
                    as u32;
            }
            Opt::LThreshold => {
                e.set_option(LTHRESHOLD)?;
                e.l_threshold = number_in(val, 0, i32::MAX as i64)
                    .ok_or_else(|| ArgError::fail("illegal l_threshold specified"))?
                    as u32;
            }
            Opt::Connection => e.set_option(CONNECTION)?,
            Opt::Numeric => {
                e.set_option(NUMERIC)?;
                e.format.numeric = true;
            }
            Opt::McastInterface => {
                e.set_option(MCAST_IFN)?;
                e.mcast_ifn = truncate(val, 15);
            }
            Opt::SyncId => {
                e.set_option(SYNCID)?;
                e.syncid = number_in(val, 0, 255)
                    .ok_or_else(|| ArgError::fail("illegal syncid specified"))?
                    as u32;
            }
            Opt::Timeout => e.set_option(TIMEOUT)?,
            Opt::Daemon => e.set_option(DAEMON)?,
            Opt::Stats => {
                e.set_option(STATS)?;
                e.format.stats = true;
            }
            Opt::Rate => {
                e.set_option(RATE)?;
                e.format.rate = true;
            }
            Opt::Thresholds => {
                e.set_option(THRESHOLDS)?;
                e.format.thresholds = true;
            }
            Opt::PersistentConn => {
                e.set_option(PERSISTENTCONN)?;
                e.format.persistent_conn = true;
            }
            Opt::NoSort => {
                e.set_option(NOSORT)?;
                e.format.nosort = true;
            }
            Opt::Sort => {}
            Opt::Exact => {
                e.set_option(EXACT)?;
                e.format.exact = true;
            }
            Opt::Ipv6 => {
                if e.fwmark != 0 {
                    e.af = AddressFamily::Inet6;
                    e.netmask = 128;
                } else {
                    return Err(ArgError::fail("-6 used before -f\n"));
                }
            }
            Opt::Ops => {
                e.set_option(ONEPACKET)?;
                e.flags |= ServiceFlags::ONE_PACKET.bits();
            }
            Opt::Pe => {
                e.set_option(PE)?;
                e.pe = truncate(val, 16);
            }
            Opt::SchedFlags => {
                e.set_option(SCHED_FLAGS)?;
                e.sched_flags = Some(val);
            }
            Opt::McastGroup => {
                e.set_option(MCAST_GROUP)?;
                if val.contains(':') {
                    match inet_pton6(val) {
                        Some(a) if a.is_multicast() => e.mcast_group = Some(IpAddr::V6(a)),
                        _ => {
                            return Err(ArgError::fail(format!("invalid IPv6 mcast-group `{val}'")))
                        }
                    }
                } else {
                    match val.parse::<Ipv4Addr>() {
                        Ok(a) if a.is_multicast() => e.mcast_group = Some(IpAddr::V4(a)),
                        _ => {
                            return Err(ArgError::fail(format!("invalid IPv4 mcast-group `{val}'")))
                        }
                    }
                }
            }
            Opt::McastPort => {
                e.set_option(MCAST_PORT)?;
                e.mcast_port = number_in(val, 1, 65535)
                    .ok_or_else(|| ArgError::fail("illegal mcast-port specified"))?
                    as u16;
            }
            Opt::McastTtl => {
                e.set_option(MCAST_TTL)?;
                e.mcast_ttl = number_in(val, 1, 255)
                    .ok_or_else(|| ArgError::fail("illegal mcast-ttl specified"))?
                    as u8;
            }
            Opt::SyncMaxlen => {
                e.set_option(SYNC_MAXLEN)?;
                e.sync_maxlen = number_in(val, 1, 65507)
                    .ok_or_else(|| ArgError::fail("illegal sync-maxlen specified"))?
                    as u16;
            }
            Opt::TunInfo => {
                e.set_option(TUN_INFO)?;
                e.format.tun_info = true;
            }
            Opt::TunType => {
                e.set_option(TUN_TYPE)?;
                e.tun_type = match val {
                    "ipip" => 0,
                    "gue" => 1,
                    "gre" => 2,
                    _ => return Err(ArgError::fail("illegal tunnel type specified")),
                };
            }
            Opt::TunPort => {
                e.set_option(TUN_PORT)?;
                e.tun_port = number_in(val, 1, 65535)
                    .ok_or_else(|| ArgError::fail("illegal tunnel port specified"))?
                    as u16;
            }
            Opt::TunNocsum => e.set_option(TUN_NOCSUM)?,
            Opt::TunCsum => {
                e.set_option(TUN_CSUM)?;
                e.tun_flags |= TunnelFlags::CSUM.bits();
            }
            Opt::TunRemcsum => {
                e.set_option(TUN_REMCSUM)?;
                e.tun_flags |= TunnelFlags::REMCSUM.bits();
            }
            // A second command.
            _ => {
                return Err(ArgError::fail(format!(
                    "invalid option `{}'",
                    sc.bad_option()
                )))
            }
        }
    }

    let mut leftovers = sc.leftovers.iter().copied();
    if e.cmd == Cmd::Timeout {
        match (leftovers.next(), leftovers.next(), leftovers.next()) {
            (Some(a), Some(b), Some(c)) => {
                e.timeouts = Timeouts::new(
                    parse_timeout(Some(a), 0)?,
                    parse_timeout(Some(b), 0)?,
                    parse_timeout(Some(c), 0)?,
                );
            }
            _ => return Err(ArgError::fail("--set option requires 3 timeout values")),
        }
    }
    if let Some(extra) = leftovers.next() {
        return Err(ArgError::fail(format!("unexpected argument {extra}")));
    }

    check_options(&e)?;
    finish(e)
}
