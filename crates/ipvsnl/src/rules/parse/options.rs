//! The options of the rules format and the scan of one line's tokens into
//! the options it gives (spelling, value), before any value is read.

use super::error::LineError;

/// Every option (and command) the scanner knows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Opt {
    AddService,
    EditService,
    DeleteService,
    AddServer,
    EditServer,
    DeleteServer,
    Clear,
    Zero,
    SetTimeouts,
    StartDaemon,
    StopDaemon,
    /// `-L`, `-S`, `-R`, `-h`, `-v` and their long forms.
    NotInRules,
    Tcp,
    Udp,
    Sctp,
    Fwmark,
    Ipv6,
    Scheduler,
    Persistent,
    Netmask,
    SchedFlags,
    OnePacket,
    Pe,
    RealServer,
    Gatewaying,
    Ipip,
    Masquerading,
    Weight,
    UpperThreshold,
    LowerThreshold,
    TunType,
    TunPort,
    TunNocsum,
    TunCsum,
    TunRemcsum,
    McastInterface,
    SyncId,
    McastGroup,
    McastPort,
    McastTtl,
    SyncMaxlen,
    /// Options of ipvsadm's listing (`-n`, `--stats`, ...): never legal.
    Listing,
}

/// Whether an option takes a value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Arity {
    /// None.
    Flag,
    /// Always: `--opt=value`, or the next token unless it is an option
    /// (a negative number is a value).
    Value(&'static str),
    /// `-p`: the next token only when it does not start with `-`.
    Optional,
}

/// Options sharing a slot: a line gives at most one of each slot.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Slot {
    Own(Opt),
    Command,
    Service,
    Forward,
    Checksum,
}

impl Opt {
    pub(super) fn is_command(self) -> bool {
        use Opt::*;
        matches!(
            self,
            AddService
                | EditService
                | DeleteService
                | AddServer
                | EditServer
                | DeleteServer
                | Clear
                | Zero
                | SetTimeouts
                | StartDaemon
                | StopDaemon
                | NotInRules
        )
    }

    fn slot(self) -> Slot {
        use Opt::*;
        match self {
            o if o.is_command() => Slot::Command,
            Tcp | Udp | Sctp | Fwmark => Slot::Service,
            Gatewaying | Ipip | Masquerading => Slot::Forward,
            TunNocsum | TunCsum | TunRemcsum => Slot::Checksum,
            o => Slot::Own(o),
        }
    }

    fn arity(self) -> Arity {
        use Opt::*;
        match self {
            Tcp | Udp | Sctp => Arity::Value("ADDRESS:PORT"),
            Fwmark => Arity::Value("a firewall mark"),
            Scheduler => Arity::Value("a scheduler name"),
            Persistent => Arity::Optional,
            Netmask => Arity::Value("a netmask or IPv6 prefix length"),
            SchedFlags => Arity::Value("a comma-separated list of scheduler flags"),
            Pe => Arity::Value("a persistence engine name"),
            RealServer => Arity::Value("ADDRESS[:PORT]"),
            Weight | UpperThreshold | LowerThreshold => Arity::Value("a number"),
            TunType => Arity::Value("ipip, gue or gre"),
            TunPort | McastPort => Arity::Value("a port"),
            StartDaemon | StopDaemon => Arity::Value("master or backup"),
            McastInterface => Arity::Value("an interface name"),
            SyncId | McastTtl | SyncMaxlen => Arity::Value("a number"),
            McastGroup => Arity::Value("a multicast address"),
            _ => Arity::Flag,
        }
    }
}

/// (short spelling, long spelling, option); `""` for none.
const TABLE: &[(&str, &str, Opt)] = &[
    ("-A", "--add-service", Opt::AddService),
    ("-E", "--edit-service", Opt::EditService),
    ("-D", "--delete-service", Opt::DeleteService),
    ("-a", "--add-server", Opt::AddServer),
    ("-e", "--edit-server", Opt::EditServer),
    ("-d", "--delete-server", Opt::DeleteServer),
    ("-C", "--clear", Opt::Clear),
    ("-Z", "--zero", Opt::Zero),
    ("", "--set", Opt::SetTimeouts),
    ("", "--start-daemon", Opt::StartDaemon),
    ("", "--stop-daemon", Opt::StopDaemon),
    ("-L", "--list", Opt::NotInRules),
    ("-l", "", Opt::NotInRules),
    ("-S", "--save", Opt::NotInRules),
    ("-R", "--restore", Opt::NotInRules),
    ("-h", "--help", Opt::NotInRules),
    ("-v", "--version", Opt::NotInRules),
    ("-t", "--tcp-service", Opt::Tcp),
    ("-u", "--udp-service", Opt::Udp),
    ("", "--sctp-service", Opt::Sctp),
    ("-f", "--fwmark-service", Opt::Fwmark),
    ("-6", "--ipv6", Opt::Ipv6),
    ("-s", "--scheduler", Opt::Scheduler),
    ("-p", "--persistent", Opt::Persistent),
    ("-M", "--netmask", Opt::Netmask),
    ("-b", "--sched-flags", Opt::SchedFlags),
    ("-o", "--ops", Opt::OnePacket),
    ("", "--pe", Opt::Pe),
    ("-r", "--real-server", Opt::RealServer),
    ("-g", "--gatewaying", Opt::Gatewaying),
    ("-i", "--ipip", Opt::Ipip),
    ("-m", "--masquerading", Opt::Masquerading),
    ("-w", "--weight", Opt::Weight),
    ("-x", "--u-threshold", Opt::UpperThreshold),
    ("-y", "--l-threshold", Opt::LowerThreshold),
    ("", "--tun-type", Opt::TunType),
    ("", "--tun-port", Opt::TunPort),
    ("", "--tun-nocsum", Opt::TunNocsum),
    ("", "--tun-csum", Opt::TunCsum),
    ("", "--tun-remcsum", Opt::TunRemcsum),
    ("", "--mcast-interface", Opt::McastInterface),
    ("", "--syncid", Opt::SyncId),
    ("", "--mcast-group", Opt::McastGroup),
    ("", "--mcast-port", Opt::McastPort),
    ("", "--mcast-ttl", Opt::McastTtl),
    ("", "--sync-maxlen", Opt::SyncMaxlen),
    ("-n", "--numeric", Opt::Listing),
    ("-c", "--connection", Opt::Listing),
    ("-X", "--exact", Opt::Listing),
    ("", "--timeout", Opt::Listing),
    ("", "--daemon", Opt::Listing),
    ("", "--stats", Opt::Listing),
    ("", "--rate", Opt::Listing),
    ("", "--thresholds", Opt::Listing),
    ("", "--persistent-conn", Opt::Listing),
    ("", "--tun-info", Opt::Listing),
    ("", "--nosort", Opt::Listing),
    ("", "--sort", Opt::Listing),
];

fn lookup(spelling: &str) -> Option<Opt> {
    // One column by the spelling's form: half the comparisons (a restore
    // of a million lines looks up some five million options).
    let long = spelling.starts_with("--");
    TABLE
        .iter()
        .find(|(short, long_name, _)| {
            let name = if long { long_name } else { short };
            !name.is_empty() && *name == spelling
        })
        .map(|(_, _, opt)| *opt)
}

/// One option given on a line.
#[derive(Debug, Clone)]
pub(super) struct Given<'a> {
    pub(super) opt: Opt,
    /// As written (without `=value`).
    pub(super) spelling: &'a str,
    pub(super) value: Option<&'a str>,
}

/// A line's tokens, scanned: its command, its options (in order) and its
/// positional words.
#[derive(Debug, Clone)]
pub(super) struct Scanned<'a> {
    pub(super) command: Given<'a>,
    pub(super) options: Vec<Given<'a>>,
    pub(super) positional: Vec<&'a str>,
}

impl<'a> Scanned<'a> {
    /// The option of `opt` given on the line, if any.
    pub(super) fn get(&self, opt: Opt) -> Option<&Given<'a>> {
        self.options.iter().find(|g| g.opt == opt)
    }

    /// Whether `opt` is on the line.
    pub(super) fn has(&self, opt: Opt) -> bool {
        self.get(opt).is_some()
    }
}

/// A token that names an option (rather than being a value): it starts
/// with `-` followed by something that is not a digit (a negative number
/// is a value), or it is `-6`.
fn looks_like_option(token: &str) -> bool {
    let mut chars = token.chars();
    token == "-6"
        || (chars.next() == Some('-') && chars.next().is_some_and(|c| !c.is_ascii_digit()))
}

/// Scans a line's tokens. The first must be a command; every option is
/// known, given once per slot, with a value when it needs one.
pub(super) fn scan<'a>(tokens: &[&'a str]) -> Result<Scanned<'a>, LineError> {
    let mut given: Vec<Given<'a>> = Vec::new();
    let mut positional = Vec::new();
    let mut i = 0;
    while i < tokens.len() {
        let token = tokens[i];
        i += 1;
        if !looks_like_option(token) {
            if given.is_empty() {
                return Err(LineError::NoCommand {
                    first: token.to_owned(),
                });
            }
            positional.push(token);
            continue;
        }
        let (spelling, inline) = match token.split_once('=') {
            Some((name, value)) if token.starts_with("--") => (name, Some(value)),
            _ => (token, None),
        };
        let opt = lookup(spelling).ok_or_else(|| LineError::NoSuchOption {
            option: spelling.to_owned(),
        })?;
        let value = match (opt.arity(), inline) {
            (Arity::Flag, Some(_)) => {
                return Err(LineError::UnwantedValue {
                    option: spelling.to_owned(),
                })
            }
            (Arity::Flag, None) => None,
            (_, Some(v)) => Some(v),
            (Arity::Value(expects), None) => match tokens.get(i) {
                Some(v) if !looks_like_option(v) => {
                    i += 1;
                    Some(*v)
                }
                // `-b` with an empty list: `ipvsadm -S` prints `-b ` for
                // scheduler flags it has no name for.
                _ if opt == Opt::SchedFlags => Some(""),
                _ => {
                    return Err(LineError::MissingValue {
                        option: spelling.to_owned(),
                        expects,
                    })
                }
            },
            (Arity::Optional, None) => match tokens.get(i) {
                Some(v) if !v.starts_with('-') => {
                    i += 1;
                    Some(*v)
                }
                _ => None,
            },
        };
        let this = Given {
            opt,
            spelling,
            value,
        };
        check_slot(&given, &this)?;
        given.push(this);
    }
    let mut options = given.into_iter();
    let command = options.next().ok_or(LineError::Empty)?;
    Ok(Scanned {
        command,
        options: options.collect(),
        positional,
    })
}

/// The first token must be a command, later ones must not; a slot takes
/// one option.
fn check_slot(earlier: &[Given<'_>], this: &Given<'_>) -> Result<(), LineError> {
    match earlier.first() {
        None if this.opt == Opt::NotInRules => {
            return Err(LineError::NotARulesCommand {
                command: this.spelling.to_owned(),
            })
        }
        None if !this.opt.is_command() => {
            return Err(LineError::NoCommand {
                first: this.spelling.to_owned(),
            })
        }
        Some(first) if this.opt.is_command() => {
            return Err(LineError::SecondCommand {
                first: first.spelling.to_owned(),
                second: this.spelling.to_owned(),
            })
        }
        _ => {}
    }
    let clash = earlier.iter().find(|g| g.opt.slot() == this.opt.slot());
    match clash {
        Some(g) if g.opt == this.opt => Err(LineError::Repeated {
            option: this.spelling.to_owned(),
        }),
        Some(g) => Err(LineError::Conflict {
            option: this.spelling.to_owned(),
            earlier: g.spelling.to_owned(),
        }),
        None => Ok(()),
    }
}
