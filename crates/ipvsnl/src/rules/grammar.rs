//! ipvsadm 1.31's command-line grammar: popt-style option scanning, the
//! per-command option table, value checks, and the messages and exit
//! statuses ipvsadm gives for each mistake.

use std::fmt;
use std::net::{IpAddr, Ipv4Addr};

use super::text::{inet_aton, inet_pton6, number_in, strtol_full};
use super::Names;
use crate::{
    AddressFamily, DaemonRole, Destination, Forward, Netmask, Protocol, Request, Scheduler,
    Service, ServiceFlags, ServiceKey, SyncDaemon, Timeouts, Tunnel, TunnelFlags, TunnelKind,
};

/// A command line ipvsadm refuses: the message it prints on stderr (without
/// the newline) and its exit status (2 for a bad value or combination, 255
/// for an option it does not know).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ArgError {
    /// The message, exactly as ipvsadm prints it.
    pub message: String,
    /// ipvsadm's exit status.
    pub status: i32,
}

impl ArgError {
    fn fail(message: impl Into<String>) -> Self {
        ArgError {
            message: message.into(),
            status: 2,
        }
    }

    fn popt(message: impl Into<String>) -> Self {
        ArgError {
            message: message.into(),
            status: 255,
        }
    }

    /// The "Try `ipvsadm -h'..." error, for a line that does not start with
    /// a command.
    pub fn try_help(program: &str) -> Self {
        ArgError::popt(format!(
            "Try `{program} -h' or '{program} --help' for more information."
        ))
    }
}

impl fmt::Display for ArgError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for ArgError {}

/// What `-L` lists.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum ListWhat {
    /// Every service (`-L`).
    All,
    /// One service (`-L -t ...`).
    Service(ServiceKey),
    /// Connections from /proc (`-L -c`).
    Connections,
    /// Timeouts (`-L --timeout`).
    Timeouts,
    /// Sync daemons (`-L --daemon`).
    Daemons,
}

/// The listing options of `-L` (and `-S`'s `-n`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub struct ListFormat {
    /// `-n`: numeric addresses and ports.
    pub numeric: bool,
    /// `--stats`.
    pub stats: bool,
    /// `--rate`.
    pub rate: bool,
    /// `--thresholds`.
    pub thresholds: bool,
    /// `--persistent-conn`.
    pub persistent_conn: bool,
    /// `--tun-info`.
    pub tun_info: bool,
    /// `--nosort`: keep the kernel's order.
    pub nosort: bool,
    /// `--exact`: unabbreviated numbers.
    pub exact: bool,
}

/// One parsed ipvsadm command line.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Command {
    /// A change to the kernel's state (-A -E -D -C -a -e -d -Z --set
    /// --start-daemon --stop-daemon).
    Apply(Request),
    /// `-L`/`-l`.
    List(ListWhat, ListFormat),
    /// `-S`.
    Save(ListFormat),
    /// `-R`.
    Restore,
    /// `-h`.
    Help,
    /// `-v`.
    Version,
}

// Option bits, in ipvsadm's index order (the order of its checks).
const OPT_NAMES: [&str; 34] = [
    "numeric",
    "connection",
    "service-address",
    "scheduler",
    "persistent",
    "netmask",
    "real-server",
    "forwarding-method",
    "weight",
    "u-threshold",
    "l-threshold",
    "mcast-interface",
    "timeout",
    "daemon",
    "stats",
    "rate",
    "thresholds",
    "persistent-conn",
    "nosort",
    "syncid",
    "exact",
    "ops",
    "pe",
    "sched-flags",
    "mcast-group",
    "mcast-port",
    "mcast-ttl",
    "sync-maxlen",
    "tun-info",
    "tun-type",
    "tun-port",
    "tun-nocsum",
    "tun-csum",
    "tun-remcsum",
];

const NUMERIC: usize = 0;
const CONNECTION: usize = 1;
const SERVICE: usize = 2;
const SCHEDULER: usize = 3;
const PERSISTENT: usize = 4;
const NETMASK: usize = 5;
const SERVER: usize = 6;
const FORWARD: usize = 7;
const WEIGHT: usize = 8;
const UTHRESHOLD: usize = 9;
const LTHRESHOLD: usize = 10;
const MCAST_IFN: usize = 11;
const TIMEOUT: usize = 12;
const DAEMON: usize = 13;
const STATS: usize = 14;
const RATE: usize = 15;
const THRESHOLDS: usize = 16;
const PERSISTENTCONN: usize = 17;
const NOSORT: usize = 18;
const SYNCID: usize = 19;
const EXACT: usize = 20;
const ONEPACKET: usize = 21;
const PE: usize = 22;
const SCHED_FLAGS: usize = 23;
const MCAST_GROUP: usize = 24;
const MCAST_PORT: usize = 25;
const MCAST_TTL: usize = 26;
const SYNC_MAXLEN: usize = 27;
const TUN_INFO: usize = 28;
const TUN_TYPE: usize = 29;
const TUN_PORT: usize = 30;
const TUN_NOCSUM: usize = 31;
const TUN_CSUM: usize = 32;
const TUN_REMCSUM: usize = 33;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Cmd {
    Add,
    Edit,
    Del,
    Flush,
    List,
    AddDest,
    DelDest,
    EditDest,
    Timeout,
    StartDaemon,
    StopDaemon,
    Restore,
    Save,
    Zero,
}

impl Cmd {
    fn name(self) -> &'static str {
        match self {
            Cmd::Add => "add-service",
            Cmd::Edit => "edit-service",
            Cmd::Del => "delete-service",
            Cmd::Flush => "flush",
            Cmd::List => "list",
            Cmd::AddDest => "add-server",
            Cmd::DelDest => "delete-server",
            Cmd::EditDest => "edit-server",
            Cmd::Timeout => "set",
            Cmd::StartDaemon => "start-daemon",
            Cmd::StopDaemon => "stop-daemon",
            Cmd::Restore => "restore",
            Cmd::Save => "save",
            Cmd::Zero => "zero",
        }
    }
}

/// Builds a table row from (option, mark) pairs; everything else is 'x'.
const fn row(marks: &[(usize, u8)]) -> [u8; 34] {
    let mut r = [b'x'; 34];
    let mut i = 0;
    while i < marks.len() {
        r[marks[i].0] = marks[i].1;
        i += 1;
    }
    r
}

const ROW_ADD: [u8; 34] = row(&[
    (SERVICE, b'+'),
    (SCHEDULER, b' '),
    (PERSISTENT, b' '),
    (NETMASK, b' '),
    (ONEPACKET, b' '),
    (PE, b' '),
    (SCHED_FLAGS, b' '),
]);
const ROW_DEL: [u8; 34] = row(&[(SERVICE, b'+')]);
const ROW_FLUSH: [u8; 34] = row(&[]);
const ROW_LIST: [u8; 34] = row(&[
    (NUMERIC, b' '),
    (CONNECTION, b'1'),
    (SERVICE, b'1'),
    (TIMEOUT, b'1'),
    (DAEMON, b'1'),
    (STATS, b' '),
    (RATE, b' '),
    (THRESHOLDS, b' '),
    (PERSISTENTCONN, b' '),
    (NOSORT, b' '),
    (SYNCID, b' '),
    (EXACT, b' '),
    (TUN_INFO, b' '),
]);
const ROW_ADDDEST: [u8; 34] = row(&[
    (SERVICE, b'+'),
    (SERVER, b'+'),
    (FORWARD, b' '),
    (WEIGHT, b' '),
    (UTHRESHOLD, b' '),
    (LTHRESHOLD, b' '),
    (TUN_TYPE, b' '),
    (TUN_PORT, b' '),
    (TUN_NOCSUM, b' '),
    (TUN_CSUM, b' '),
    (TUN_REMCSUM, b' '),
]);
const ROW_DELDEST: [u8; 34] = row(&[(SERVICE, b'+'), (SERVER, b'+')]);
const ROW_STARTDAEMON: [u8; 34] = row(&[
    (MCAST_IFN, b' '),
    (SYNCID, b' '),
    (MCAST_GROUP, b' '),
    (MCAST_PORT, b' '),
    (MCAST_TTL, b' '),
    (SYNC_MAXLEN, b' '),
]);
const ROW_STOPDAEMON: [u8; 34] = row(&[(SYNCID, b' ')]);
const ROW_SAVE: [u8; 34] = row(&[(NUMERIC, b' ')]);
const ROW_ZERO: [u8; 34] = row(&[(SERVICE, b' ')]);

fn table_row(cmd: Cmd) -> &'static [u8; 34] {
    match cmd {
        Cmd::Add | Cmd::Edit => &ROW_ADD,
        Cmd::Del => &ROW_DEL,
        Cmd::Flush | Cmd::Timeout | Cmd::Restore => &ROW_FLUSH,
        Cmd::List => &ROW_LIST,
        Cmd::AddDest | Cmd::EditDest => &ROW_ADDDEST,
        Cmd::DelDest => &ROW_DELDEST,
        Cmd::StartDaemon => &ROW_STARTDAEMON,
        Cmd::StopDaemon => &ROW_STOPDAEMON,
        Cmd::Save => &ROW_SAVE,
        Cmd::Zero => &ROW_ZERO,
    }
}

/// Every option ipvsadm knows: long name, short letter, whether it takes
/// an argument.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Arg {
    None,
    Required,
    Optional,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Opt {
    AddService,
    EditService,
    DeleteService,
    Clear,
    List,
    Zero,
    AddServer,
    EditServer,
    DeleteServer,
    Set,
    Help,
    Version,
    Restore,
    Save,
    StartDaemon,
    StopDaemon,
    Tcp,
    Udp,
    Sctp,
    Fwmark,
    Scheduler,
    Persistent,
    Netmask,
    RealServer,
    Masq,
    Ipip,
    Gate,
    Weight,
    UThreshold,
    LThreshold,
    Numeric,
    Connection,
    McastInterface,
    SyncId,
    Timeout,
    Daemon,
    Stats,
    Rate,
    Thresholds,
    PersistentConn,
    NoSort,
    Sort,
    Exact,
    Ipv6,
    Ops,
    Pe,
    SchedFlags,
    McastGroup,
    McastPort,
    McastTtl,
    SyncMaxlen,
    TunInfo,
    TunType,
    TunPort,
    TunNocsum,
    TunCsum,
    TunRemcsum,
}

const OPTIONS: &[(&str, Option<u8>, Arg, Opt)] = &[
    ("add-service", Some(b'A'), Arg::None, Opt::AddService),
    ("edit-service", Some(b'E'), Arg::None, Opt::EditService),
    ("delete-service", Some(b'D'), Arg::None, Opt::DeleteService),
    ("clear", Some(b'C'), Arg::None, Opt::Clear),
    ("list", Some(b'L'), Arg::None, Opt::List),
    ("list", Some(b'l'), Arg::None, Opt::List),
    ("zero", Some(b'Z'), Arg::None, Opt::Zero),
    ("add-server", Some(b'a'), Arg::None, Opt::AddServer),
    ("edit-server", Some(b'e'), Arg::None, Opt::EditServer),
    ("delete-server", Some(b'd'), Arg::None, Opt::DeleteServer),
    ("set", None, Arg::None, Opt::Set),
    ("help", Some(b'h'), Arg::None, Opt::Help),
    ("version", Some(b'v'), Arg::None, Opt::Version),
    ("restore", Some(b'R'), Arg::None, Opt::Restore),
    ("save", Some(b'S'), Arg::None, Opt::Save),
    ("start-daemon", None, Arg::Required, Opt::StartDaemon),
    ("stop-daemon", None, Arg::Required, Opt::StopDaemon),
    ("tcp-service", Some(b't'), Arg::Required, Opt::Tcp),
    ("udp-service", Some(b'u'), Arg::Required, Opt::Udp),
    ("sctp-service", None, Arg::Required, Opt::Sctp),
    ("fwmark-service", Some(b'f'), Arg::Required, Opt::Fwmark),
    ("scheduler", Some(b's'), Arg::Required, Opt::Scheduler),
    ("persistent", Some(b'p'), Arg::Optional, Opt::Persistent),
    ("netmask", Some(b'M'), Arg::Required, Opt::Netmask),
    ("real-server", Some(b'r'), Arg::Required, Opt::RealServer),
    ("masquerading", Some(b'm'), Arg::None, Opt::Masq),
    ("ipip", Some(b'i'), Arg::None, Opt::Ipip),
    ("gatewaying", Some(b'g'), Arg::None, Opt::Gate),
    ("weight", Some(b'w'), Arg::Required, Opt::Weight),
    ("u-threshold", Some(b'x'), Arg::Required, Opt::UThreshold),
    ("l-threshold", Some(b'y'), Arg::Required, Opt::LThreshold),
    ("numeric", Some(b'n'), Arg::None, Opt::Numeric),
    ("connection", Some(b'c'), Arg::None, Opt::Connection),
    ("mcast-interface", None, Arg::Required, Opt::McastInterface),
    ("syncid", None, Arg::Required, Opt::SyncId),
    ("timeout", None, Arg::None, Opt::Timeout),
    ("daemon", None, Arg::None, Opt::Daemon),
    ("stats", None, Arg::None, Opt::Stats),
    ("rate", None, Arg::None, Opt::Rate),
    ("thresholds", None, Arg::None, Opt::Thresholds),
    ("persistent-conn", None, Arg::None, Opt::PersistentConn),
    ("nosort", None, Arg::None, Opt::NoSort),
    ("sort", None, Arg::None, Opt::Sort),
    ("exact", Some(b'X'), Arg::None, Opt::Exact),
    ("ipv6", Some(b'6'), Arg::None, Opt::Ipv6),
    ("ops", Some(b'o'), Arg::None, Opt::Ops),
    ("pe", None, Arg::Required, Opt::Pe),
    ("sched-flags", Some(b'b'), Arg::Required, Opt::SchedFlags),
    ("mcast-group", None, Arg::Required, Opt::McastGroup),
    ("mcast-port", None, Arg::Required, Opt::McastPort),
    ("mcast-ttl", None, Arg::Required, Opt::McastTtl),
    ("sync-maxlen", None, Arg::Required, Opt::SyncMaxlen),
    ("tun-info", None, Arg::None, Opt::TunInfo),
    ("tun-type", None, Arg::Required, Opt::TunType),
    ("tun-port", None, Arg::Required, Opt::TunPort),
    ("tun-nocsum", None, Arg::None, Opt::TunNocsum),
    ("tun-csum", None, Arg::None, Opt::TunCsum),
    ("tun-remcsum", None, Arg::None, Opt::TunRemcsum),
];

/// What the popt-like scanner yields.
enum Scan<'a> {
    Opt(Opt, Option<&'a str>),
    End,
    Error(&'static str),
}

/// A popt-compatible option scanner: bundled short options (`-Ln`,
/// `-Lnt10.0.0.1:80`), `--long value` and `--long=value`, no
/// abbreviations, non-option words collected as leftovers, `--` ends the
/// options.
struct Scanner<'a> {
    argv: &'a [&'a str],
    next: usize,
    /// The rest of a bundle of short options being read.
    chars: Option<&'a str>,
    leftovers: Vec<&'a str>,
    rest_are_args: bool,
}

impl<'a> Scanner<'a> {
    fn new(argv: &'a [&'a str]) -> Self {
        Scanner {
            argv,
            next: 1,
            chars: None,
            leftovers: Vec::new(),
            rest_are_args: false,
        }
    }

    /// The argv word popt names in its messages (the last one consumed).
    fn bad_option(&self) -> &'a str {
        if self.next > 0 && self.next <= self.argv.len() {
            self.argv[self.next - 1]
        } else {
            ""
        }
    }

    fn take_arg(&mut self, arg: Arg) -> Result<Option<&'a str>, &'static str> {
        match arg {
            Arg::None => Ok(None),
            Arg::Required => {
                if self.next >= self.argv.len() {
                    return Err("missing argument");
                }
                self.next += 1;
                Ok(Some(self.argv[self.next - 1]))
            }
            Arg::Optional => {
                if self.next >= self.argv.len() || self.argv[self.next].starts_with('-') {
                    return Ok(None);
                }
                self.next += 1;
                Ok(Some(self.argv[self.next - 1]))
            }
        }
    }

    fn next_opt(&mut self) -> Scan<'a> {
        if let Some(rest) = self.chars.take() {
            return self.short(rest);
        }
        loop {
            if self.next >= self.argv.len() {
                return Scan::End;
            }
            let word = self.argv[self.next];
            self.next += 1;
            if self.rest_are_args {
                self.leftovers.push(word);
                continue;
            }
            if word == "--" {
                self.rest_are_args = true;
                continue;
            }
            if let Some(long) = word.strip_prefix("--") {
                let (name, value) = match long.find('=') {
                    Some(i) => (&long[..i], Some(&long[i + 1..])),
                    None => (long, None),
                };
                let Some(&(_, _, arg, opt)) = OPTIONS.iter().find(|o| o.0 == name) else {
                    return Scan::Error("unknown option");
                };
                return match (arg, value) {
                    (Arg::None, Some(_)) => Scan::Error("option does not take an argument"),
                    (_, Some(v)) => Scan::Opt(opt, Some(v)),
                    (arg, None) => match self.take_arg(arg) {
                        Ok(v) => Scan::Opt(opt, v),
                        Err(e) => Scan::Error(e),
                    },
                };
            }
            if word.len() > 1 && word.starts_with('-') {
                return self.short(&word[1..]);
            }
            self.leftovers.push(word);
        }
    }

    fn short(&mut self, chars: &'a str) -> Scan<'a> {
        let c = chars.as_bytes()[0];
        let Some(&(_, _, arg, opt)) = OPTIONS.iter().find(|o| o.1 == Some(c)) else {
            return Scan::Error("unknown option");
        };
        // The rest of the bundle (c may be a multi-byte char only if it was
        // not found, so slicing at 1 is safe here).
        let rest = &chars[1..];
        if arg == Arg::None {
            if !rest.is_empty() {
                self.chars = Some(rest);
            }
            return Scan::Opt(opt, None);
        }
        if !rest.is_empty() {
            let v = rest.strip_prefix('=').unwrap_or(rest);
            return Scan::Opt(opt, Some(v));
        }
        match self.take_arg(arg) {
            Ok(v) => Scan::Opt(opt, v),
            Err(e) => Scan::Error(e),
        }
    }
}

/// ipvsadm's command entry while options are read, field for field.
struct Entry {
    cmd: Cmd,
    options: u64,
    // service
    af: AddressFamily,
    protocol: u16,
    addr: IpAddr,
    port: u16,
    fwmark: u32,
    sched: String,
    flags: u32,
    timeout: u32,
    /// The netmask as ipvsadm keeps it: the IPv4 mask, or an IPv6 prefix
    /// length stored in the same 32 bits.
    netmask: u32,
    pe: String,
    sched_flags: Option<String>,
    // destination
    dest_af: AddressFamily,
    dest_addr: IpAddr,
    dest_port: u16,
    conn_flags: u32,
    weight: u32,
    u_threshold: u32,
    l_threshold: u32,
    tun_type: u8,
    tun_port: u16,
    tun_flags: u16,
    // daemon
    role: DaemonRole,
    mcast_ifn: String,
    syncid: u32,
    mcast_group: Option<IpAddr>,
    mcast_port: u16,
    mcast_ttl: u8,
    sync_maxlen: u16,
    format: ListFormat,
    timeouts: Timeouts,
}

const FWD_MASQ: u32 = 0;
const FWD_TUNNEL: u32 = 2;
const FWD_DROUTE: u32 = 3;

impl Entry {
    fn new(cmd: Cmd) -> Self {
        Entry {
            cmd,
            options: 0,
            af: AddressFamily::Inet,
            protocol: 0,
            addr: IpAddr::V4(Ipv4Addr::UNSPECIFIED),
            port: 0,
            fwmark: 0,
            sched: String::new(),
            flags: 0,
            timeout: 0,
            netmask: 0xffff_ffff,
            pe: String::new(),
            sched_flags: None,
            dest_af: AddressFamily::Inet,
            dest_addr: IpAddr::V4(Ipv4Addr::UNSPECIFIED),
            dest_port: 0,
            conn_flags: FWD_DROUTE,
            weight: 1,
            u_threshold: 0,
            l_threshold: 0,
            tun_type: 0,
            tun_port: 0,
            tun_flags: 0,
            role: DaemonRole::Master,
            mcast_ifn: String::new(),
            syncid: 0,
            mcast_group: None,
            mcast_port: 0,
            mcast_ttl: 0,
            sync_maxlen: 0,
            format: ListFormat::default(),
            timeouts: Timeouts::default(),
        }
    }

    fn set_option(&mut self, opt: usize) -> Result<(), ArgError> {
        if self.options & (1 << opt) != 0 {
            return Err(ArgError::fail(format!(
                "multiple '{}' options specified",
                OPT_NAMES[opt]
            )));
        }
        self.options |= 1 << opt;
        Ok(())
    }

    fn has(&self, opt: usize) -> bool {
        self.options & (1 << opt) != 0
    }

    fn key(&self) -> ServiceKey {
        if self.fwmark != 0 {
            ServiceKey::Fwmark {
                mark: self.fwmark,
                family: self.af,
            }
        } else {
            ServiceKey::Inet {
                protocol: Protocol::from_raw(self.protocol),
                addr: self.addr,
                port: self.port,
            }
        }
    }
}

/// Copies at most `max` bytes of `s` (C's strncpy into a fixed buffer),
/// never splitting a character.
fn truncate(s: &str, max: usize) -> String {
    if s.len() <= max {
        return s.to_owned();
    }
    let mut end = max;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    s[..end].to_owned()
}

/// Parsed address of `parse_service`: address, family, and the port if the
/// text had one.
struct Parsed {
    addr: IpAddr,
    port: Option<u16>,
}

fn protocol_name(protocol: u16) -> Option<&'static str> {
    match protocol {
        6 => Some("tcp"),
        17 => Some("udp"),
        132 => Some("sctp"),
        _ => None,
    }
}

/// ipvsadm's `parse_service`: `host[:port]`, `[ipv6]:port`, or a bare IPv6
/// literal (which never carries a port).
fn parse_service(text: &str, protocol: u16, names: &dyn Names) -> Option<Parsed> {
    if text.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let mut host = text;
    let mut port_text: Option<&str> = None;
    if let Some(inner) = text.strip_prefix('[') {
        let close = inner.find(']')?;
        let after = &inner[close + 1..];
        let p = after.strip_prefix(':')?;
        host = &inner[..close];
        port_text = Some(p);
    }
    let addr = if let Some(a6) = inet_pton6(host) {
        IpAddr::V6(a6)
    } else {
        // A bracketed non-IPv6 text loses its port here, as in ipvsadm.
        port_text = None;
        if let Some(i) = host.rfind(':') {
            port_text = Some(&host[i + 1..]);
            host = &host[..i];
        }
        let a4 = inet_aton(host).or_else(|| names.host_v4(host))?;
        IpAddr::V4(a4)
    };
    let port = match port_text {
        None => None,
        Some(p) => {
            if let Some(n) = number_in(p, 0, 65535) {
                Some(n as u16)
            } else {
                let proto = protocol_name(protocol)?;
                Some(names.port(p, proto)?)
            }
        }
    };
    Some(Parsed { addr, port })
}

fn parse_timeout(text: Option<&str>, min: i64) -> Result<u32, ArgError> {
    match text {
        None => Ok(360),
        Some(t) => number_in(t, min, 2_678_400)
            .map(|v| v as u32)
            .ok_or_else(|| ArgError::fail(format!("invalid timeout value `{t}' specified"))),
    }
}

fn parse_sched_flags(sched: &str, arg: &str) -> Result<u32, ArgError> {
    let mut flags = 0u32;
    for flag in arg.split(',').filter(|f| !f.is_empty()) {
        let (bit, needs) = match flag {
            "flag-1" => (ServiceFlags::SCHED1, None),
            "flag-2" => (ServiceFlags::SCHED2, None),
            "flag-3" => (ServiceFlags::SCHED3, None),
            "sh-fallback" => (ServiceFlags::SH_FALLBACK, Some("sh")),
            "sh-port" => (ServiceFlags::SH_PORT, Some("sh")),
            "mh-fallback" => (ServiceFlags::MH_FALLBACK, Some("mh")),
            "mh-port" => (ServiceFlags::MH_PORT, Some("mh")),
            _ => return Err(ArgError::fail(format!("invalid scheduler flag `{flag}'"))),
        };
        flags |= bit.bits();
        if let Some(s) = needs {
            if sched != s {
                return Err(ArgError::fail(format!(
                    "incompatible scheduler flag `{flag}'"
                )));
            }
        }
    }
    Ok(flags)
}

fn scan_error(scanner: &Scanner<'_>, what: &str) -> ArgError {
    ArgError::popt(format!("{}: {what}", scanner.bad_option()))
}

/// Parses one ipvsadm command line (`argv[0]` is the program name, used in
/// the "Try `...' -h" message) with ipvsadm 1.31's grammar and checks.
///
/// `names` resolves host and service names (use [`super::Numeric`] for
/// none). The result is the command, or ipvsadm's message and exit status.
///
/// ```
/// use ipvsnl::rules::{parse_args, Command, Numeric};
/// use ipvsnl::Request;
/// let c = parse_args(&["ipvsadm", "-A", "-t", "10.0.0.1:80", "-s", "rr"], &Numeric).unwrap();
/// assert!(matches!(c, Command::Apply(Request::AddService(_))));
/// let e = parse_args(&["ipvsadm", "-A", "-t", "10.0.0.1:80", "-o"], &Numeric).unwrap_err();
/// assert_eq!(e.message, "One-Packet Scheduling is only for UDP virtual services");
/// assert_eq!(e.status, 2);
/// ```
pub fn parse_args(argv: &[&str], names: &dyn Names) -> Result<Command, ArgError> {
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

fn parse_rest(
    mut e: Entry,
    mut sc: Scanner<'_>,
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
                e.sched_flags = Some(val.to_owned());
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

/// C's `atoi`: optional white space and sign, then leading digits.
fn atoi(s: &str) -> i64 {
    let t = s.trim_start_matches(|c: char| c.is_ascii() && super::text::c_space(c as u8));
    let (neg, digits) = match t.as_bytes().first() {
        Some(b'-') => (true, &t[1..]),
        Some(b'+') => (false, &t[1..]),
        _ => (false, t),
    };
    let end = digits
        .bytes()
        .position(|b| !b.is_ascii_digit())
        .unwrap_or(digits.len());
    let v = strtol_full(&digits[..end]).unwrap_or(0);
    if neg {
        -v
    } else {
        v
    }
}

/// ipvsadm's `generic_opt_check`.
fn check_options(e: &Entry) -> Result<(), ArgError> {
    let row = table_row(e.cmd);
    let cmd = e.cmd.name();
    let mut last = None;
    for (j, &mark) in row.iter().enumerate() {
        if !e.has(j) {
            if mark == b'+' {
                return Err(ArgError::fail(format!(
                    "You need to supply the '{}' option for the '{cmd}' command",
                    OPT_NAMES[j]
                )));
            }
            continue;
        }
        if mark == b'x' {
            return Err(ArgError::fail(format!(
                "Illegal '{}' option with the '{cmd}' command",
                OPT_NAMES[j]
            )));
        }
        if mark == b'1' {
            match last {
                None => last = Some(j),
                Some(l) => {
                    return Err(ArgError::fail(format!(
                        "The option '{}' conflicts with the '{}' option in the '{cmd}' command",
                        OPT_NAMES[j], OPT_NAMES[l]
                    )))
                }
            }
        }
    }
    Ok(())
}

/// ipvsadm's `tunnel_opt_check`.
fn check_tunnel(e: &Entry) -> Result<(), ArgError> {
    const OPTS: [usize; 4] = [TUN_PORT, TUN_NOCSUM, TUN_CSUM, TUN_REMCSUM];
    let (name, row): (&str, &[u8; 4]) = match e.tun_type {
        0 => ("ipip", b"xxxx"),
        1 => ("gue", b"+111"),
        _ => ("gre", b"x11x"),
    };
    let mut last = None;
    for (j, &opt) in OPTS.iter().enumerate() {
        if !e.has(opt) {
            if row[j] == b'+' {
                return Err(ArgError::fail(format!(
                    "You need to supply the '{}' option for the '{name}' tunnel type",
                    OPT_NAMES[opt]
                )));
            }
            continue;
        }
        if row[j] == b'x' {
            return Err(ArgError::fail(format!(
                "Illegal '{}' option with the '{name}' tunnel type",
                OPT_NAMES[opt]
            )));
        }
        if row[j] == b'1' {
            match last {
                None => last = Some(opt),
                Some(l) => {
                    return Err(ArgError::fail(format!(
                    "The option '{}' conflicts with the '{}' option in the '{name}' tunnel type",
                    OPT_NAMES[opt], OPT_NAMES[l]
                )))
                }
            }
        }
    }
    Ok(())
}

fn netmask_of(e: &Entry) -> Netmask {
    match e.af {
        AddressFamily::Inet => Netmask::V4(Ipv4Addr::from(e.netmask)),
        AddressFamily::Inet6 => Netmask::V6(u8::try_from(e.netmask).unwrap_or(u8::MAX)),
    }
}

fn finish(mut e: Entry) -> Result<Command, ArgError> {
    match e.cmd {
        Cmd::Add | Cmd::Edit => {
            if e.fwmark == 0 && e.port == 0 && e.flags & ServiceFlags::PERSISTENT.bits() == 0 {
                return Err(ArgError::fail(
                    "Zero port specified for non-persistent service",
                ));
            }
            if e.flags & ServiceFlags::ONE_PACKET.bits() != 0 && e.fwmark == 0 && e.protocol != 17 {
                return Err(ArgError::fail(
                    "One-Packet Scheduling is only for UDP virtual services",
                ));
            }
            if e.sched.is_empty() {
                e.sched = "wlc".to_owned();
            }
            if let Some(arg) = &e.sched_flags {
                e.flags |= parse_sched_flags(&e.sched, arg)?;
            }
            // Unchecked, as ipvsadm leaves the name to the kernel; a known
            // name is its named value.
            let scheduler = Scheduler::from_kernel(&e.sched);
            let mut svc = Service::new(e.key());
            svc.scheduler = scheduler;
            svc.flags = ServiceFlags::from_bits_retain(e.flags);
            svc.timeout = e.timeout;
            svc.netmask = netmask_of(&e);
            svc.persistence_engine = if e.pe.is_empty() {
                None
            } else {
                Some(e.pe.clone())
            };
            Ok(Command::Apply(if e.cmd == Cmd::Add {
                Request::AddService(svc)
            } else {
                Request::EditService(svc)
            }))
        }
        Cmd::AddDest | Cmd::EditDest => {
            if e.fwmark == 0 && (e.conn_flags == FWD_TUNNEL || e.conn_flags == FWD_DROUTE) {
                e.dest_port = e.port;
            }
            if e.dest_af != e.af && e.conn_flags != FWD_TUNNEL {
                return Err(ArgError::fail(
                    "Different address family is allowed only for tunneling servers",
                ));
            }
            let tun_opts = [TUN_TYPE, TUN_PORT, TUN_NOCSUM, TUN_CSUM, TUN_REMCSUM];
            if tun_opts.iter().any(|&o| e.has(o)) && e.conn_flags != FWD_TUNNEL {
                return Err(ArgError::fail(
                    "Tunnel options conflict with forward method",
                ));
            }
            check_tunnel(&e)?;
            let forward = match e.conn_flags {
                FWD_MASQ => Forward::Masquerade,
                FWD_TUNNEL => Forward::Tunnel(Tunnel {
                    kind: TunnelKind::from_raw(e.tun_type),
                    port: e.tun_port,
                    flags: TunnelFlags::from_bits_retain(e.tun_flags),
                }),
                _ => Forward::Route,
            };
            let d = Destination::new(e.dest_addr, e.dest_port)
                .with_forward(forward)
                .with_weight(e.weight)
                .with_thresholds(e.u_threshold, e.l_threshold);
            Ok(Command::Apply(if e.cmd == Cmd::AddDest {
                Request::AddDestination(e.key(), d)
            } else {
                Request::EditDestination(e.key(), d)
            }))
        }
        Cmd::DelDest => Ok(Command::Apply(Request::DeleteDestination(
            e.key(),
            e.dest_addr,
            e.dest_port,
        ))),
        Cmd::Del => Ok(Command::Apply(Request::DeleteService(e.key()))),
        Cmd::Flush => Ok(Command::Apply(Request::Flush)),
        Cmd::Zero => Ok(Command::Apply(Request::Zero(
            e.has(SERVICE).then(|| e.key()),
        ))),
        Cmd::Timeout => Ok(Command::Apply(Request::SetTimeouts(e.timeouts))),
        Cmd::StartDaemon => {
            let ifn = if e.mcast_ifn.is_empty() {
                "eth0".to_owned()
            } else {
                e.mcast_ifn.clone()
            };
            let mut d = SyncDaemon::new(e.role, ifn).with_sync_id(e.syncid);
            d.max_len = (e.sync_maxlen != 0).then_some(e.sync_maxlen);
            d.group = e.mcast_group;
            d.port = (e.mcast_port != 0).then_some(e.mcast_port);
            d.ttl = (e.mcast_ttl != 0).then_some(e.mcast_ttl);
            Ok(Command::Apply(Request::StartDaemon(d)))
        }
        Cmd::StopDaemon => Ok(Command::Apply(Request::StopDaemon(e.role))),
        Cmd::List => {
            let conflict = (e.has(CONNECTION) || e.has(TIMEOUT) || e.has(DAEMON))
                && (e.has(STATS) || e.has(RATE) || e.has(THRESHOLDS))
                || (e.has(TIMEOUT) || e.has(DAEMON)) && e.has(PERSISTENTCONN);
            if conflict {
                return Err(ArgError::fail("options conflicts in the list command"));
            }
            let what = if e.has(CONNECTION) {
                ListWhat::Connections
            } else if e.has(SERVICE) {
                ListWhat::Service(e.key())
            } else if e.has(TIMEOUT) {
                ListWhat::Timeouts
            } else if e.has(DAEMON) {
                ListWhat::Daemons
            } else {
                ListWhat::All
            };
            Ok(Command::List(what, e.format))
        }
        Cmd::Restore => Ok(Command::Restore),
        Cmd::Save => Ok(Command::Save(e.format)),
    }
}
