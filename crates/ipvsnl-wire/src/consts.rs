//! The attribute numbers of the IPVS family (`include/uapi/linux/ip_vs.h`),
//! named as the kernel names them. Every encoder and decoder of this crate
//! (the owned attribute enums, the one-pass values, the writer's users)
//! takes its numbers from here.

// Top level (`IPVS_CMD_ATTR_*`).

/// `IPVS_CMD_ATTR_SERVICE`: the service nest ([`crate::ServiceAttr`]).
pub const IPVS_CMD_ATTR_SERVICE: u16 = 1;
/// `IPVS_CMD_ATTR_DEST`: the destination nest ([`crate::DestAttr`]).
pub const IPVS_CMD_ATTR_DEST: u16 = 2;
/// `IPVS_CMD_ATTR_DAEMON`: the sync daemon nest ([`crate::DaemonAttr`]).
pub const IPVS_CMD_ATTR_DAEMON: u16 = 3;
/// `IPVS_CMD_ATTR_TIMEOUT_TCP`: TCP timeout in seconds, host order `u32`.
pub const IPVS_CMD_ATTR_TIMEOUT_TCP: u16 = 4;
/// `IPVS_CMD_ATTR_TIMEOUT_TCP_FIN`: TCP FIN-wait timeout in seconds, host order `u32`.
pub const IPVS_CMD_ATTR_TIMEOUT_TCP_FIN: u16 = 5;
/// `IPVS_CMD_ATTR_TIMEOUT_UDP`: UDP timeout in seconds, host order `u32`.
pub const IPVS_CMD_ATTR_TIMEOUT_UDP: u16 = 6;

// Top level of a `SET_INFO` message (the reply to `GET_INFO`).

/// `IPVS_INFO_ATTR_VERSION`: the IPVS version, host order `u32`.
pub const IPVS_INFO_ATTR_VERSION: u16 = 1;
/// `IPVS_INFO_ATTR_CONN_TAB_SIZE`: connection table size, host order `u32`.
pub const IPVS_INFO_ATTR_CONN_TAB_SIZE: u16 = 2;

// Service nest (`IPVS_SVC_ATTR_*`).

/// `IPVS_SVC_ATTR_AF`: address family, host order `u16`.
pub const IPVS_SVC_ATTR_AF: u16 = 1;
/// `IPVS_SVC_ATTR_PROTOCOL`: IP protocol number, host order `u16`.
pub const IPVS_SVC_ATTR_PROTOCOL: u16 = 2;
/// `IPVS_SVC_ATTR_ADDR`: virtual address, `union nf_inet_addr` (network order).
pub const IPVS_SVC_ATTR_ADDR: u16 = 3;
/// `IPVS_SVC_ATTR_PORT`: virtual port, network order `u16`.
pub const IPVS_SVC_ATTR_PORT: u16 = 4;
/// `IPVS_SVC_ATTR_FWMARK`: firewall mark, host order `u32`.
pub const IPVS_SVC_ATTR_FWMARK: u16 = 5;
/// `IPVS_SVC_ATTR_SCHED_NAME`: scheduler name, NUL-terminated string.
pub const IPVS_SVC_ATTR_SCHED_NAME: u16 = 6;
/// `IPVS_SVC_ATTR_FLAGS`: `struct ip_vs_flags` (flags and mask, host order `u32`s).
pub const IPVS_SVC_ATTR_FLAGS: u16 = 7;
/// `IPVS_SVC_ATTR_TIMEOUT`: persistence timeout in seconds, host order `u32`.
pub const IPVS_SVC_ATTR_TIMEOUT: u16 = 8;
/// `IPVS_SVC_ATTR_NETMASK`: persistence netmask, four raw bytes (an IPv4
/// mask in network order, or an IPv6 prefix length in host order).
pub const IPVS_SVC_ATTR_NETMASK: u16 = 9;
/// `IPVS_SVC_ATTR_STATS`: the 32-bit statistics nest (output only).
pub const IPVS_SVC_ATTR_STATS: u16 = 10;
/// `IPVS_SVC_ATTR_PE_NAME`: persistence engine name, NUL-terminated string.
pub const IPVS_SVC_ATTR_PE_NAME: u16 = 11;
/// `IPVS_SVC_ATTR_STATS64`: the 64-bit statistics nest (output only, kernel 4.1+).
pub const IPVS_SVC_ATTR_STATS64: u16 = 12;

// Destination nest (`IPVS_DEST_ATTR_*`).

/// `IPVS_DEST_ATTR_ADDR`: real server address, `union nf_inet_addr`.
pub const IPVS_DEST_ATTR_ADDR: u16 = 1;
/// `IPVS_DEST_ATTR_PORT`: real server port, network order `u16`.
pub const IPVS_DEST_ATTR_PORT: u16 = 2;
/// `IPVS_DEST_ATTR_FWD_METHOD`: `IP_VS_CONN_F_*` forwarding method, host order `u32`.
pub const IPVS_DEST_ATTR_FWD_METHOD: u16 = 3;
/// `IPVS_DEST_ATTR_WEIGHT`: weight, host order `u32` (the kernel reads an `int`).
pub const IPVS_DEST_ATTR_WEIGHT: u16 = 4;
/// `IPVS_DEST_ATTR_U_THRESH`: upper connection threshold, host order `u32`.
pub const IPVS_DEST_ATTR_U_THRESH: u16 = 5;
/// `IPVS_DEST_ATTR_L_THRESH`: lower connection threshold, host order `u32`.
pub const IPVS_DEST_ATTR_L_THRESH: u16 = 6;
/// `IPVS_DEST_ATTR_ACTIVE_CONNS`: active connections, host order `u32` (output only).
pub const IPVS_DEST_ATTR_ACTIVE_CONNS: u16 = 7;
/// `IPVS_DEST_ATTR_INACT_CONNS`: inactive connections, host order `u32` (output only).
pub const IPVS_DEST_ATTR_INACT_CONNS: u16 = 8;
/// `IPVS_DEST_ATTR_PERSIST_CONNS`: persistent connections, host order `u32` (output only).
pub const IPVS_DEST_ATTR_PERSIST_CONNS: u16 = 9;
/// `IPVS_DEST_ATTR_STATS`: the 32-bit statistics nest (output only).
pub const IPVS_DEST_ATTR_STATS: u16 = 10;
/// `IPVS_DEST_ATTR_ADDR_FAMILY`: address family, host order `u16` (kernel 3.18+).
pub const IPVS_DEST_ATTR_ADDR_FAMILY: u16 = 11;
/// `IPVS_DEST_ATTR_STATS64`: the 64-bit statistics nest (output only, kernel 4.1+).
pub const IPVS_DEST_ATTR_STATS64: u16 = 12;
/// `IPVS_DEST_ATTR_TUN_TYPE`: tunnel type, `u8` (kernel 5.2+).
pub const IPVS_DEST_ATTR_TUN_TYPE: u16 = 13;
/// `IPVS_DEST_ATTR_TUN_PORT`: GUE tunnel port, network order `u16` (kernel 5.2+).
pub const IPVS_DEST_ATTR_TUN_PORT: u16 = 14;
/// `IPVS_DEST_ATTR_TUN_FLAGS`: tunnel checksum flags, host order `u16` (kernel 5.3+).
pub const IPVS_DEST_ATTR_TUN_FLAGS: u16 = 15;

// Sync daemon nest (`IPVS_DAEMON_ATTR_*`).

/// `IPVS_DAEMON_ATTR_STATE`: 1 master, 2 backup, host order `u32`.
pub const IPVS_DAEMON_ATTR_STATE: u16 = 1;
/// `IPVS_DAEMON_ATTR_MCAST_IFN`: multicast interface name, NUL-terminated string.
pub const IPVS_DAEMON_ATTR_MCAST_IFN: u16 = 2;
/// `IPVS_DAEMON_ATTR_SYNC_ID`: sync id, host order `u32`.
pub const IPVS_DAEMON_ATTR_SYNC_ID: u16 = 3;
/// `IPVS_DAEMON_ATTR_SYNC_MAXLEN`: maximum sync message length, host order `u16` (kernel 4.3+).
pub const IPVS_DAEMON_ATTR_SYNC_MAXLEN: u16 = 4;
/// `IPVS_DAEMON_ATTR_MCAST_GROUP`: IPv4 multicast group, network order (kernel 4.3+).
pub const IPVS_DAEMON_ATTR_MCAST_GROUP: u16 = 5;
/// `IPVS_DAEMON_ATTR_MCAST_GROUP6`: IPv6 multicast group (kernel 4.3+).
pub const IPVS_DAEMON_ATTR_MCAST_GROUP6: u16 = 6;
/// `IPVS_DAEMON_ATTR_MCAST_PORT`: UDP port in **host** order `u16` (kernel 4.3+).
pub const IPVS_DAEMON_ATTR_MCAST_PORT: u16 = 7;
/// `IPVS_DAEMON_ATTR_MCAST_TTL`: multicast TTL, `u8` (kernel 4.3+).
pub const IPVS_DAEMON_ATTR_MCAST_TTL: u16 = 8;

// Statistics nest (`IPVS_STATS_ATTR_*`): `u32` in `STATS` except the byte
// counters, all `u64` in `STATS64`; host order.

/// `IPVS_STATS_ATTR_CONNS`: connections scheduled.
pub const IPVS_STATS_ATTR_CONNS: u16 = 1;
/// `IPVS_STATS_ATTR_INPKTS`: incoming packets.
pub const IPVS_STATS_ATTR_INPKTS: u16 = 2;
/// `IPVS_STATS_ATTR_OUTPKTS`: outgoing packets.
pub const IPVS_STATS_ATTR_OUTPKTS: u16 = 3;
/// `IPVS_STATS_ATTR_INBYTES`: incoming bytes (64-bit in both nests).
pub const IPVS_STATS_ATTR_INBYTES: u16 = 4;
/// `IPVS_STATS_ATTR_OUTBYTES`: outgoing bytes (64-bit in both nests).
pub const IPVS_STATS_ATTR_OUTBYTES: u16 = 5;
/// `IPVS_STATS_ATTR_CPS`: connections per second.
pub const IPVS_STATS_ATTR_CPS: u16 = 6;
/// `IPVS_STATS_ATTR_INPPS`: incoming packets per second.
pub const IPVS_STATS_ATTR_INPPS: u16 = 7;
/// `IPVS_STATS_ATTR_OUTPPS`: outgoing packets per second.
pub const IPVS_STATS_ATTR_OUTPPS: u16 = 8;
/// `IPVS_STATS_ATTR_INBPS`: incoming bytes per second.
pub const IPVS_STATS_ATTR_INBPS: u16 = 9;
/// `IPVS_STATS_ATTR_OUTBPS`: outgoing bytes per second.
pub const IPVS_STATS_ATTR_OUTBPS: u16 = 10;
/// `IPVS_STATS_ATTR_PAD`: the padding attribute the kernel may put before
/// 64-bit values on architectures without unaligned access (no payload).
pub const IPVS_STATS_ATTR_PAD: u16 = 11;
