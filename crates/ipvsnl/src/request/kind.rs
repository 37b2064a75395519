//! What kind of request: named in errors and reports.

use std::fmt;

/// What kind of request failed: named in errors and reports.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum RequestKind {
    /// Resolving the IPVS family id.
    ResolveFamily,
    /// `NEW_SERVICE`.
    AddService,
    /// `SET_SERVICE`.
    EditService,
    /// `DEL_SERVICE`.
    DeleteService,
    /// `GET_SERVICE` (one).
    GetService,
    /// `GET_SERVICE` dump.
    ListServices,
    /// `NEW_DEST`.
    AddDestination,
    /// `SET_DEST`.
    EditDestination,
    /// `DEL_DEST`.
    DeleteDestination,
    /// `GET_DEST` dump.
    ListDestinations,
    /// `NEW_DAEMON`.
    StartDaemon,
    /// `DEL_DAEMON`.
    StopDaemon,
    /// `GET_DAEMON` dump.
    ListDaemons,
    /// `SET_CONFIG`.
    SetTimeouts,
    /// `GET_CONFIG`.
    GetTimeouts,
    /// `GET_INFO`.
    GetInfo,
    /// `ZERO`.
    Zero,
    /// `FLUSH`.
    Flush,
    /// Reading the totals (`/proc/net/ip_vs_stats`, not netlink).
    Totals,
    /// Counting the IPv4 services (the socket option `IP_VS_SO_GET_INFO`,
    /// not netlink).
    CountServices,
    /// Copying every IPv4 service at once (the socket option
    /// `IP_VS_SO_GET_SERVICES`, not netlink).
    SnapshotServices,
}

impl fmt::Display for RequestKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        use RequestKind::*;
        f.write_str(match self {
            ResolveFamily => "resolve IPVS family",
            AddService => "add service",
            EditService => "edit service",
            DeleteService => "delete service",
            GetService => "get service",
            ListServices => "list services",
            AddDestination => "add destination",
            EditDestination => "edit destination",
            DeleteDestination => "delete destination",
            ListDestinations => "list destinations of",
            StartDaemon => "start sync daemon",
            StopDaemon => "stop sync daemon",
            ListDaemons => "list sync daemons",
            SetTimeouts => "set timeouts",
            GetTimeouts => "get timeouts",
            GetInfo => "get info",
            Zero => "zero counters",
            Flush => "flush",
            Totals => "read totals",
            CountServices => "count IPv4 services (IP_VS_SO_GET_INFO)",
            SnapshotServices => "copy IPv4 services (IP_VS_SO_GET_SERVICES)",
        })
    }
}
