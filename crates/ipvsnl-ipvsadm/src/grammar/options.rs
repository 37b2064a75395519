//! ipvsadm's option table: every option it knows (long name, short
//! letter, argument), the option bits in the order of its checks, and the
//! per-command matrix of which options a command requires, allows or
//! refuses.

// Option bits, in ipvsadm's index order (the order of its checks).
pub(super) const OPT_NAMES: [&str; 34] = [
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

pub(super) const NUMERIC: usize = 0;
pub(super) const CONNECTION: usize = 1;
pub(super) const SERVICE: usize = 2;
pub(super) const SCHEDULER: usize = 3;
pub(super) const PERSISTENT: usize = 4;
pub(super) const NETMASK: usize = 5;
pub(super) const SERVER: usize = 6;
pub(super) const FORWARD: usize = 7;
pub(super) const WEIGHT: usize = 8;
pub(super) const UTHRESHOLD: usize = 9;
pub(super) const LTHRESHOLD: usize = 10;
pub(super) const MCAST_IFN: usize = 11;
pub(super) const TIMEOUT: usize = 12;
pub(super) const DAEMON: usize = 13;
pub(super) const STATS: usize = 14;
pub(super) const RATE: usize = 15;
pub(super) const THRESHOLDS: usize = 16;
pub(super) const PERSISTENTCONN: usize = 17;
pub(super) const NOSORT: usize = 18;
pub(super) const SYNCID: usize = 19;
pub(super) const EXACT: usize = 20;
pub(super) const ONEPACKET: usize = 21;
pub(super) const PE: usize = 22;
pub(super) const SCHED_FLAGS: usize = 23;
pub(super) const MCAST_GROUP: usize = 24;
pub(super) const MCAST_PORT: usize = 25;
pub(super) const MCAST_TTL: usize = 26;
pub(super) const SYNC_MAXLEN: usize = 27;
pub(super) const TUN_INFO: usize = 28;
pub(super) const TUN_TYPE: usize = 29;
pub(super) const TUN_PORT: usize = 30;
pub(super) const TUN_NOCSUM: usize = 31;
pub(super) const TUN_CSUM: usize = 32;
pub(super) const TUN_REMCSUM: usize = 33;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Cmd {
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
    pub(super) fn name(self) -> &'static str {
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
pub(super) const fn row(marks: &[(usize, u8)]) -> [u8; 34] {
    let mut r = [b'x'; 34];
    let mut i = 0;
    while i < marks.len() {
        r[marks[i].0] = marks[i].1;
        i += 1;
    }
    r
}

pub(super) const ROW_ADD: [u8; 34] = row(&[
    (SERVICE, b'+'),
    (SCHEDULER, b' '),
    (PERSISTENT, b' '),
    (NETMASK, b' '),
    (ONEPACKET, b' '),
    (PE, b' '),
    (SCHED_FLAGS, b' '),
]);
pub(super) const ROW_DEL: [u8; 34] = row(&[(SERVICE, b'+')]);
pub(super) const ROW_FLUSH: [u8; 34] = row(&[]);
pub(super) const ROW_LIST: [u8; 34] = row(&[
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
pub(super) const ROW_ADDDEST: [u8; 34] = row(&[
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
pub(super) const ROW_DELDEST: [u8; 34] = row(&[(SERVICE, b'+'), (SERVER, b'+')]);
pub(super) const ROW_STARTDAEMON: [u8; 34] = row(&[
    (MCAST_IFN, b' '),
    (SYNCID, b' '),
    (MCAST_GROUP, b' '),
    (MCAST_PORT, b' '),
    (MCAST_TTL, b' '),
    (SYNC_MAXLEN, b' '),
]);
pub(super) const ROW_STOPDAEMON: [u8; 34] = row(&[(SYNCID, b' ')]);
pub(super) const ROW_SAVE: [u8; 34] = row(&[(NUMERIC, b' ')]);
pub(super) const ROW_ZERO: [u8; 34] = row(&[(SERVICE, b' ')]);

/// A row of the matrix as bit masks of option bits: those it requires
/// (`+`), refuses (`x`), and of which it takes one at most (`1`).
#[derive(Debug, Clone, Copy)]
pub(super) struct RowMasks {
    pub(super) required: u64,
    pub(super) refused: u64,
    pub(super) one_of: u64,
}

const fn masks(row: &[u8; 34]) -> RowMasks {
    let mut m = RowMasks {
        required: 0,
        refused: 0,
        one_of: 0,
    };
    let mut j = 0;
    while j < 34 {
        match row[j] {
            b'+' => m.required |= 1 << j,
            b'x' => m.refused |= 1 << j,
            b'1' => m.one_of |= 1 << j,
            _ => {}
        }
        j += 1;
    }
    m
}

/// [`table_row`] as masks, made at compile time.
pub(super) fn table_masks(cmd: Cmd) -> RowMasks {
    const ADD: RowMasks = masks(&ROW_ADD);
    const DEL: RowMasks = masks(&ROW_DEL);
    const FLUSH: RowMasks = masks(&ROW_FLUSH);
    const LIST: RowMasks = masks(&ROW_LIST);
    const ADDDEST: RowMasks = masks(&ROW_ADDDEST);
    const DELDEST: RowMasks = masks(&ROW_DELDEST);
    const STARTDAEMON: RowMasks = masks(&ROW_STARTDAEMON);
    const STOPDAEMON: RowMasks = masks(&ROW_STOPDAEMON);
    const SAVE: RowMasks = masks(&ROW_SAVE);
    const ZERO: RowMasks = masks(&ROW_ZERO);
    match cmd {
        Cmd::Add | Cmd::Edit => ADD,
        Cmd::Del => DEL,
        Cmd::Flush | Cmd::Timeout | Cmd::Restore => FLUSH,
        Cmd::List => LIST,
        Cmd::AddDest | Cmd::EditDest => ADDDEST,
        Cmd::DelDest => DELDEST,
        Cmd::StartDaemon => STARTDAEMON,
        Cmd::StopDaemon => STOPDAEMON,
        Cmd::Save => SAVE,
        Cmd::Zero => ZERO,
    }
}

pub(super) fn table_row(cmd: Cmd) -> &'static [u8; 34] {
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
pub(super) enum Arg {
    None,
    Required,
    Optional,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Opt {
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

pub(super) const OPTIONS: &[(&str, Option<u8>, Arg, Opt)] = &[
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

/// For each ASCII letter, 1 + the index in [`OPTIONS`] of the first option
/// with that short letter; 0 for none. A look-up instead of a search of
/// the table (two short options a word of a restore line).
const SHORT: [u8; 128] = {
    let mut t = [0u8; 128];
    let mut i = OPTIONS.len();
    // Backwards, so that the first option of a letter is the one kept.
    while i > 0 {
        i -= 1;
        if let Some(c) = OPTIONS[i].1 {
            t[c as usize] = (i + 1) as u8;
        }
    }
    t
};

/// The option of short letter `c`, as a search of [`OPTIONS`] in order
/// would find it.
pub(super) fn short_option(c: u8) -> Option<&'static (&'static str, Option<u8>, Arg, Opt)> {
    match SHORT.get(usize::from(c)) {
        Some(&n) if n > 0 => Some(&OPTIONS[usize::from(n) - 1]),
        _ => None,
    }
}
