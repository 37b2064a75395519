//! `ipvsadm`, byte for byte: a drop-in for Debian's ipvsadm 1.31 built on
//! the ipvsnl library.
//!
//! The command-line grammar is this crate's (`grammar`, `restore`, with the
//! C library's text conventions in `c_text`); rules printing comes from
//! `ipvsnl::rules`, connections from `ipvsnl::connections`. This file runs
//! commands and owns error texts and exit statuses. `-R` checks the whole
//! input before changing anything, then applies it in pipelined batches.
//!
//!     cargo install --path crates/ipvsnl-ipvsadm

use std::io::{Read, Write};
use std::process::exit;

use ipvsnl::rules::{self, Names, Numeric};
use ipvsnl::{Client, Info, Request, RequestKind};

mod c_text;
mod columns;
mod conn;
mod grammar;
mod kernel;
mod list;
mod names;
mod restore;
mod save;
mod sort;

use grammar::{ArgError, Command, ListFormat, ListWhat};
use names::LibcNames;

/// `eprintln!` that never panics (a closed or broken stderr is ignored).
macro_rules! errln {
    ($($arg:tt)*) => {{
        let mut text = format!($($arg)*);
        text.push('\n');
        let _ = std::io::stderr().lock().write_all(text.as_bytes());
    }};
}

const VERSION: &str = "ipvsadm v1.31 2019/12/24 (compiled with popt and IPVS v1.2.1)\n";

/// Output collected for stdout, written once (or before an early exit).
struct Out {
    buf: String,
}

impl Out {
    fn flush(&mut self) {
        let mut so = std::io::stdout().lock();
        let _ = so.write_all(self.buf.as_bytes());
        let _ = so.flush();
        self.buf.clear();
    }

    /// Writes what was printed, then `bytes`.
    fn write_bytes(&mut self, bytes: &[u8]) {
        self.flush();
        let mut so = std::io::stdout().lock();
        let _ = so.write_all(bytes);
        let _ = so.flush();
    }

    /// Writes what was printed, the message on stderr, and exits.
    fn die(&mut self, message: &str, status: i32) -> ! {
        self.flush();
        errln!("{message}");
        exit(status);
    }

    fn exit(&mut self, status: i32) -> ! {
        self.flush();
        exit(status);
    }
}

fn usage(program: &str) -> String {
    include_str!("usage.txt").replace("{PROGRAM}", program)
}

/// Connects and reads the IPVS info, as `ipvs_init` does (loading the
/// module with modprobe and retrying once).
fn init() -> (Client, Info) {
    let attempt = || -> Result<(Client, Info), ipvsnl::Error> {
        let mut c = Client::new()?;
        let info = c.info()?;
        Ok((c, info))
    };
    match attempt() {
        Ok(v) => v,
        Err(_) => {
            let _ = std::process::Command::new("/sbin/modprobe")
                .args(["--", "ip_vs"])
                .status();
            match attempt() {
                Ok(v) => v,
                Err(e) => {
                    let msg = kernel::ipvs_strerror(RequestKind::GetInfo, kernel::errno_of(&e));
                    errln!("Can't initialize ipvs: {msg}");
                    errln!(
                        "Are you sure that IP Virtual Server is built in the kernel or as module?"
                    );
                    exit(2);
                }
            }
        }
    }
}

struct Ctx {
    client: Client,
    info: Info,
    program: String,
    out: Out,
}

impl Ctx {
    fn names(&self, numeric: bool) -> &'static dyn Names {
        if numeric {
            &Numeric
        } else {
            &LibcNames
        }
    }

    fn header(&mut self) {
        let v = self.info.version;
        self.out.buf.push_str(&format!(
            "IP Virtual Server version {}.{}.{} (size={})\n",
            (v >> 16) & 0xff,
            (v >> 8) & 0xff,
            v & 0xff,
            self.info.conn_tab_size
        ));
    }

    fn list_error(&mut self, kind: RequestKind, e: &ipvsnl::Error) -> ! {
        let msg = kernel::ipvs_strerror(kind, kernel::errno_of(e));
        self.out.die(&msg, 1)
    }

    /// The whole table for `-L` and `-S`: its settings and connection
    /// counts only (the library's cheaper listing, which reads the
    /// destinations of IPv4 services through the socket-option interface
    /// where that gives every field) unless the listing shows counters.
    fn listed_table(&mut self, f: &ListFormat) -> Vec<ipvsnl::ServiceEntry> {
        let listed = if f.stats || f.rate {
            self.client.table()
        } else {
            self.client.table_settings()
        };
        match listed {
            Ok(t) => t,
            Err(e) => self.list_error(RequestKind::ListServices, &e),
        }
    }

    /// Room for a listing of `table` (about 60 bytes a line).
    fn reserve(&mut self, table: &[ipvsnl::ServiceEntry]) {
        let lines: usize = table.iter().map(|s| 1 + s.destinations.len()).sum();
        self.out.buf.reserve(lines * 60);
    }

    fn print_service(&mut self, se: &ipvsnl::ServiceEntry, f: &ListFormat) {
        let names = self.names(f.numeric);
        list::service_line(&mut self.out.buf, se, f, names);
        let dests = match self.client.destinations(&se.service.key) {
            Ok(d) => d,
            Err(e) => self.list_error(RequestKind::ListDestinations, &e),
        };
        let mut sorter = sort::DestSorter::default();
        for &j in sorter.order(&dests, f.nosort) {
            list::dest_line(
                &mut self.out.buf,
                &se.service.key,
                &dests[j as usize],
                f,
                names,
            );
        }
    }

    fn list_all(&mut self, f: &ListFormat) {
        self.header();
        list::title(&mut self.out.buf, f);
        let table = self.listed_table(f);
        self.reserve(&table);
        let names = self.names(f.numeric);
        list::list_table(&mut self.out.buf, &table, f, names);
    }

    fn save(&mut self, f: &ListFormat) {
        if !(f.stats || f.rate) {
            // The settings listing, row by row (save.rs).
            self.out.flush();
            let names = self.names(f.numeric);
            if let Err(e) = save::save_to_stdout(&mut self.client, f.nosort, names) {
                self.list_error(RequestKind::ListServices, &e);
            }
            return;
        }
        let table = self.listed_table(f);
        let lines: usize = table.iter().map(|s| 1 + s.destinations.len()).sum();
        let mut text = Vec::with_capacity(lines * 60);
        let names = self.names(f.numeric);
        list::save_table(&mut text, &table, f, names);
        self.out.write_bytes(&text);
    }

    fn list(&mut self, what: ListWhat, f: &ListFormat) {
        match what {
            ListWhat::All => self.list_all(f),
            ListWhat::Service(key) => {
                let se = match self.client.service(&key) {
                    Ok(s) => s,
                    Err(e) => self.list_error(RequestKind::GetService, &e),
                };
                list::title(&mut self.out.buf, f);
                self.print_service(&se, f);
            }
            ListWhat::Connections => {
                let names = self.names(f.numeric);
                if let Err((msg, status)) = conn::list(&mut self.out.buf, f, names) {
                    self.out.die(&msg, status);
                }
            }
            ListWhat::Timeouts => match self.client.timeouts() {
                Ok(t) => self.out.buf.push_str(&format!(
                    "Timeout (tcp tcpfin udp): {} {} {}\n",
                    t.tcp as i32, t.tcp_fin as i32, t.udp as i32
                )),
                Err(_) => self.out.exit(1),
            },
            ListWhat::Daemons => match self.client.sync_daemons() {
                Ok(ds) => {
                    for d in ds {
                        let role = d.role;
                        let mut s = format!(
                            "{role} sync daemon (mcast={}, syncid={}",
                            d.interface, d.sync_id as i32
                        );
                        if let Some(n) = d.max_len.filter(|n| *n != 0) {
                            s.push_str(&format!(", maxlen={n}"));
                        }
                        if let Some(g) = d.group {
                            s.push_str(&format!(", group={}", rules::style::ntop(&g)));
                        }
                        if let Some(n) = d.port.filter(|n| *n != 0) {
                            s.push_str(&format!(", port={n}"));
                        }
                        if let Some(n) = d.ttl.filter(|n| *n != 0) {
                            s.push_str(&format!(", ttl={n}"));
                        }
                        s.push_str(")\n");
                        self.out.buf.push_str(&s);
                    }
                }
                Err(_) => self.out.exit(1),
            },
        }
    }

    /// Runs one command that is not a restore; returns ipvsadm's result
    /// (0 or 255) for a change, 0 for a listing.
    fn run(&mut self, cmd: Command) -> i32 {
        match cmd {
            Command::Apply(req) => {
                let kind = req.kind();
                match kernel::apply(&mut self.client, &[req]).pop() {
                    Some(Err(errno)) => {
                        self.out.flush();
                        errln!("{}", kernel::ipvs_strerror(kind, errno));
                        255
                    }
                    _ => 0,
                }
            }
            Command::List(what, f) => {
                self.list(what, &f);
                0
            }
            Command::Save(f) => {
                self.save(&f);
                0
            }
            Command::Help => {
                let u = usage(&self.program);
                self.out.buf.push_str(&u);
                self.out.exit(0)
            }
            Command::Version => {
                self.out.buf.push_str(VERSION);
                self.out.exit(0)
            }
            Command::Restore => self.restore(),
        }
    }

    /// `-R`: every line is checked before anything is sent; then runs of
    /// changes go to the kernel in pipelined batches, listings in between
    /// run in their place.
    fn restore(&mut self) -> i32 {
        let mut raw = Vec::new();
        let _ = std::io::stdin().read_to_end(&mut raw);
        let text = String::from_utf8_lossy(&raw);
        let program = self.program.clone();
        let parsed = restore::parse_script(&text, &program, &LibcNames);
        let script = match parsed {
            Ok(s) => s,
            Err(errors) => {
                self.out.flush();
                for e in &errors {
                    errln!("{e}");
                }
                let status = errors.first().map(|e| e.error.status).unwrap_or(2);
                exit(status);
            }
        };
        let restore::Script { changes, others } = script;
        let mut status = 0;
        let mut done = 0;
        for (at, other) in others {
            if at > done {
                // Its status is the next command's to replace.
                self.apply_changes(&changes[done..at]);
                done = at;
            }
            status = self.run(other);
        }
        if done < changes.len() {
            status = self.apply_changes(&changes[done..]);
        }
        status
    }

    /// A run of changes, in chunks of `CHUNK` requests: each chunk's
    /// outcomes (a `Result` of the library's `Error` a request) are made,
    /// reported and freed before the next, so that a restore of 60,000
    /// changes holds the outcomes of 8,192 at a time (the memory is used
    /// again rather than faulted in: page faults are kernel time). Returns
    /// the status of the last change.
    fn apply_changes(&mut self, changes: &[Request]) -> i32 {
        const CHUNK: usize = 8192;
        let mut status = 0;
        for chunk in changes.chunks(CHUNK) {
            status = self.apply_batch(chunk);
        }
        status
    }

    fn apply_batch(&mut self, batch: &[Request]) -> i32 {
        let results = kernel::apply(&mut self.client, batch);
        let mut last = 0;
        self.out.flush();
        for (req, r) in batch.iter().zip(results) {
            last = match r {
                Ok(()) => 0,
                Err(errno) => {
                    errln!("{}", kernel::ipvs_strerror(req.kind(), errno));
                    255
                }
            };
        }
        last
    }
}

fn main() {
    let args: Vec<String> = std::env::args_os()
        .map(|a| a.to_string_lossy().into_owned())
        .collect();
    let program = args
        .first()
        .cloned()
        .unwrap_or_else(|| "ipvsadm".to_owned());
    let (client, info) = init();
    if info.version < 0x010104 {
        let v = info.version;
        errln!(
            "Warning: IPVS version mismatch: \n  Kernel compiled with IPVS version {}.{}.{}\n  ipvsadm v1.31  requires minimum IPVS version 1.1.4\n",
            (v >> 16) & 0xff,
            (v >> 8) & 0xff,
            v & 0xff
        );
    }
    let mut ctx = Ctx {
        client,
        info,
        program: program.clone(),
        out: Out { buf: String::new() },
    };
    if args.len() == 1 {
        ctx.list_all(&ListFormat::default());
        ctx.out.exit(0);
    }
    let argv: Vec<&str> = args.iter().map(String::as_str).collect();
    let cmd = match grammar::parse_args(&argv, &LibcNames) {
        Ok(c) => c,
        Err(ArgError { message, status }) => {
            errln!("{message}");
            exit(status);
        }
    };
    let status = ctx.run(cmd);
    ctx.out.exit(status);
}
#[cfg(test)]
mod restore_bad_input;
#[cfg(test)]
mod save_tests;
#[cfg(test)]
mod text_cost;
