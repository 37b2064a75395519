//! The peer link's datagram: one director's report to another, as text
//! lines, authenticated with HMAC-SHA256 under the fleet's peer key.
//!
//! ```text
//! ipvs-agent-peer 1
//! from 10.0.0.1:7946
//! boot 1765072800000000000
//! stamp 1250
//! state blind=1 elected=0 holding=0 on-peers=0 lease=7587884523 names=7587884519
//! echo 10.0.0.2:7946 1765072799000000000 980
//! mac 5f1c...(64 hex digits)
//! ```
//!
//! `from` is the sender's `--peer-listen` address (its id), `boot` its
//! run (nanoseconds since the epoch at its start: a restarted sender's
//! are larger), `stamp` milliseconds since its start; each `echo` line
//! gives the last `boot` and `stamp` it received from that peer. The
//! `state` line's first three words are required; then `on-peers` (it
//! holds the VIPs on its peers' word), `lease` (its lease in the
//! election) and `names` (the leader's lease it names) when set. Words a
//! version does not know are ignored (a director of the first version
//! reads the three flags and skips the rest), and so are lines after
//! `state` of a kind it does not know (an `echo` line must be whole), so
//! a fleet can be upgraded one director at a time. The MAC covers every byte before the `mac`
//! line.
//!
//! ```
//! use ipvs_agent::fleet::peers::datagram::Datagram;
//! let mut d = Datagram::new("10.0.0.1:7946".parse().unwrap(), 7, 1250);
//! d.blind = true;
//! d.names = Some(7587884519);
//! d.echo.push(("10.0.0.2:7946".parse().unwrap(), 9, 980));
//! let bytes = d.encode(b"secret");
//! assert_eq!(Datagram::decode(&bytes, b"secret").unwrap(), d);
//! assert_eq!(
//!     Datagram::decode(&bytes, b"other").unwrap_err(),
//!     "peer datagram: its MAC does not match (another fleet, or another key)"
//! );
//! ```

use std::fmt::Write as _;
use std::net::SocketAddr;

use hmac::{Hmac, Mac};
use sha2::Sha256;

const MAGIC: &str = "ipvs-agent-peer 1";
/// The largest datagram read (a report with a few dozen echoes fits).
pub const MAX_LEN: usize = 4096;

/// One director's report to its peers.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct Datagram {
    /// The sender's `--peer-listen` address: its id.
    pub from: SocketAddr,
    /// The sender's run (nanoseconds since the epoch at its start).
    pub boot: u64,
    /// Milliseconds since the sender's start, when it sent this.
    pub stamp: u64,
    /// The sender cannot reach etcd.
    pub blind: bool,
    /// The sender believes it was elected.
    pub elected: bool,
    /// The sender holds the VIPs.
    pub holding: bool,
    /// The sender holds them on its peers' word (its renewal overdue).
    pub on_peers: bool,
    /// The sender's lease in the election.
    pub lease: Option<i64>,
    /// The lease of the leader the sender names (supports).
    pub names: Option<i64>,
    /// For each peer heard: its id, and the last boot and stamp received
    /// from it.
    pub echo: Vec<(SocketAddr, u64, u64)>,
}

fn mac(key: &[u8], body: &[u8]) -> Hmac<Sha256> {
    // HMAC takes a key of any length.
    let mut m = <Hmac<Sha256> as Mac>::new_from_slice(key).expect("HMAC takes any key length");
    m.update(body);
    m
}

fn flag(b: bool) -> u8 {
    u8::from(b)
}

impl Datagram {
    /// A report from `from` of run `boot` at `stamp`: every flag off, no
    /// echo.
    pub fn new(from: SocketAddr, boot: u64, stamp: u64) -> Datagram {
        Datagram {
            from,
            boot,
            stamp,
            blind: false,
            elected: false,
            holding: false,
            on_peers: false,
            lease: None,
            names: None,
            echo: Vec::new(),
        }
    }

    /// The datagram's bytes, its MAC under `key` last.
    pub fn encode(&self, key: &[u8]) -> Vec<u8> {
        let mut s = format!(
            "{MAGIC}\nfrom {}\nboot {}\nstamp {}\nstate blind={} elected={} holding={}\n",
            self.from,
            self.boot,
            self.stamp,
            flag(self.blind),
            flag(self.elected),
            flag(self.holding)
        );
        // Inserted before the line's newline.
        s.pop();
        if self.on_peers {
            s.push_str(" on-peers=1");
        }
        if let Some(lease) = self.lease {
            let _ = write!(s, " lease={lease}");
        }
        if let Some(names) = self.names {
            let _ = write!(s, " names={names}");
        }
        s.push('\n');
        for (peer, boot, stamp) in &self.echo {
            let _ = writeln!(s, "echo {peer} {boot} {stamp}");
        }
        let tag = mac(key, s.as_bytes()).finalize().into_bytes();
        s.push_str("mac ");
        for b in tag {
            let _ = write!(s, "{b:02x}");
        }
        s.push('\n');
        s.into_bytes()
    }

    /// The datagram in `bytes`, its MAC checked under `key` before
    /// anything else is read; an error naming what is wrong.
    pub fn decode(bytes: &[u8], key: &[u8]) -> Result<Datagram, String> {
        let bad = |why: String| format!("peer datagram: {why}");
        let text = std::str::from_utf8(bytes).map_err(|_| bad("not UTF-8".into()))?;
        let at = text
            .rfind("\nmac ")
            .ok_or_else(|| bad("no `mac` line".into()))?;
        let (body, tail) = text.split_at(at + 1);
        let hex = tail["mac ".len()..].trim_end_matches('\n');
        let tag = decode_hex(hex).ok_or_else(|| bad("its `mac` is not 64 hex digits".into()))?;
        mac(key, body.as_bytes())
            .verify_slice(&tag)
            .map_err(|_| bad("its MAC does not match (another fleet, or another key)".into()))?;
        let mut lines = body.lines();
        if lines.next() != Some(MAGIC) {
            return Err(bad(format!("not starting with `{MAGIC}`")));
        }
        let mut field = |name: &str| -> Result<String, String> {
            let line = lines.next().unwrap_or_default();
            line.strip_prefix(name)
                .and_then(|v| v.strip_prefix(' '))
                .map(str::to_owned)
                .ok_or_else(|| bad(format!("expected `{name} ...`, got `{line}`")))
        };
        let number = |name: &str, v: String| {
            v.parse::<u64>()
                .map_err(|_| bad(format!("`{name} {v}`: not a number")))
        };
        let from = field("from")?;
        let from: SocketAddr = from
            .parse()
            .map_err(|_| bad(format!("`from {from}`: not an address and port")))?;
        let boot = number("boot", field("boot")?)?;
        let stamp = number("stamp", field("stamp")?)?;
        let state = field("state")?;
        let flags: Vec<Option<bool>> = ["blind", "elected", "holding"]
            .iter()
            .zip(state.split(' ').chain(std::iter::repeat("")))
            .map(
                |(name, word)| match word.strip_prefix(name)?.strip_prefix('=')? {
                    "0" => Some(false),
                    "1" => Some(true),
                    _ => None,
                },
            )
            .collect();
        let [Some(blind), Some(elected), Some(holding)] = flags[..] else {
            return Err(bad(format!(
                "`state {state}`: expected blind=0|1 elected=0|1 holding=0|1"
            )));
        };
        let (mut on_peers, mut lease, mut names) = (false, None, None);
        for word in state.split(' ').skip(3) {
            let Some((name, value)) = word.split_once('=') else {
                continue;
            };
            let wrong = || bad(format!("`state {state}`: `{word}` is not a valid {name}"));
            match name {
                "on-peers" => {
                    on_peers = match value {
                        "0" => false,
                        "1" => true,
                        _ => return Err(wrong()),
                    }
                }
                "lease" => lease = Some(value.parse::<i64>().map_err(|_| wrong())?),
                "names" => names = Some(value.parse::<i64>().map_err(|_| wrong())?),
                _ => {}
            }
        }
        let mut echo = Vec::new();
        for line in lines {
            let words: Vec<&str> = line.split(' ').collect();
            let parsed = match words[..] {
                ["echo", peer, boot, stamp] => match (peer.parse(), boot.parse(), stamp.parse()) {
                    (Ok(p), Ok(b), Ok(s)) => Some((p, b, s)),
                    _ => None,
                },
                ["echo", ..] => None,
                // A kind of line a later version added.
                _ => continue,
            };
            echo.push(
                parsed.ok_or_else(|| bad(format!("`{line}`: expected `echo ADDR BOOT STAMP`")))?,
            );
        }
        Ok(Datagram {
            from,
            boot,
            stamp,
            blind,
            elected,
            holding,
            on_peers,
            lease,
            names,
            echo,
        })
    }
}

fn decode_hex(hex: &str) -> Option<Vec<u8>> {
    if hex.len() != 64 || !hex.is_ascii() {
        return None;
    }
    (0..hex.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&hex[i..i + 2], 16).ok())
        .collect()
}
