//! What is wrong with a command line: a [`UsageError`], said on stderr
//! after the command's name, exit status 2. Only the commands layer
//! makes one; the engines ([`crate::daemon`], [`crate::fleet`]) take
//! options already checked.

use std::fmt;

/// What is wrong with a command line.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct UsageError(pub String);

impl fmt::Display for UsageError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for UsageError {}

/// `ipvs-agent`'s usage (`-h`, and on stderr after an unknown command).
pub(super) const USAGE: &str = concat!(
    "usage: ipvs-agent check FILE\n",
    "       ipvs-agent publish FILE --etcd URL[,URL...] [--prefix P] [--cache PATH | --no-cache]\n",
    "       ipvs-agent run FILE [--listen ADDR | --no-http] [--netns PATH] [--remove-on-exit]\n",
    "                           [--log-format logfmt|json] [--watch PERIOD]\n",
    "       ipvs-agent run --etcd URL[,URL...] [--prefix P] [OPTIONS]\n",
    "                      [--vip ADDR/PREFIX ... --vip-interface IF] [--sync-interface IF [--sync-id N]]\n",
    "  check FILE   validate the configuration FILE and print what it would configure\n",
    "               (exit 0: valid; 1: errors, each as FILE:LINE:COLUMN: message; 2: usage)\n",
    "  publish FILE validate FILE, then publish it to etcd as the fleet's desired state\n",
    "               (needs the `fleet` feature; exit 0: published; 1: errors; 2: usage);\n",
    "               only the services changed since the last publish are parsed, the\n",
    "               others known from its cache (default under $XDG_CACHE_HOME or ~/.cache)\n",
    "  run FILE     keep the services of FILE in the kernel, their servers checked\n",
    "               (SIGHUP reloads, SIGTERM stops; HTTP on 127.0.0.1:9102 by default)\n",
    "  run --etcd   the same, its configuration what `publish` put in etcd, each new\n",
    "               generation applied as a reload (needs the `fleet` feature); with\n",
    "               --vip/--sync-interface it campaigns to lead: the leader holds the VIPs\n",
    "               and runs the sync daemon as master, the others as backup"
);
