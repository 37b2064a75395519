//! The agent on the host, no kernel: its configuration (every bad input
//! with its exact error), the check state machine and schedule, the
//! decision layer, reloads and the `check` command; the checkers against
//! local servers on 127.0.0.1 (probe_*); with the `fleet` feature, the
//! fleet against a local etcd (fleet_*). One test binary, a module per
//! topic: `cargo test -p ipvs-agent [--features fleet] --test host`.
//!
//! The fleet's VM tests are the `vm` binary (tests/vm/), the figures for
//! benches/AGENT.md the `figures` binary (tests/figures/); support they
//! share with this one is in tests/common/, included by `#[path]`.

mod cli;
mod config_check_errors;
mod config_errors;
mod config_ok;
mod config_robust;
mod daemon_apply;
mod daemon_delta;
mod daemon_drain;
mod daemon_health;
mod daemon_http;
mod daemon_http_slow;
mod daemon_lifecycle;
mod daemon_ownership;
mod daemon_reload_guard;
mod daemon_short;
mod daemon_startup;
#[path = "../common/daemon_support.rs"]
mod daemon_support;
mod daemon_watch;
mod desired;
#[cfg(feature = "fleet")]
mod fleet_cli;
#[cfg(feature = "fleet")]
mod fleet_current;
#[cfg(feature = "fleet")]
mod fleet_election;
#[cfg(feature = "fleet")]
mod fleet_encode;
#[cfg(feature = "fleet")]
#[path = "../common/fleet_etcd.rs"]
mod fleet_etcd;
#[cfg(feature = "fleet")]
mod fleet_layout;
#[cfg(feature = "fleet")]
mod fleet_lead;
#[cfg(feature = "fleet")]
mod fleet_leadership;
#[cfg(feature = "fleet")]
#[path = "../common/fleet_na_frame.rs"]
mod fleet_na_frame;
#[cfg(feature = "fleet")]
mod fleet_peer_link;
#[cfg(feature = "fleet")]
mod fleet_peers;
#[cfg(feature = "fleet")]
mod fleet_peers_named;
#[cfg(feature = "fleet")]
mod fleet_publish_cache;
#[cfg(feature = "fleet")]
mod fleet_roles;
#[cfg(feature = "fleet")]
mod fleet_run_options;
#[cfg(feature = "fleet")]
mod fleet_signals;
#[cfg(feature = "fleet")]
mod fleet_split;
#[cfg(feature = "fleet")]
mod fleet_store;
#[cfg(feature = "fleet")]
mod fleet_sync_id;
#[cfg(feature = "fleet")]
mod fleet_vip_frames;
#[cfg(feature = "fleet")]
mod fleet_watch;
mod health_book;
mod health_state;
mod import_cli;
mod import_errors;
mod import_robust;
mod import_samples;
mod probe_command;
mod probe_dns;
mod probe_http;
mod probe_https;
mod probe_support;
mod probe_tcp;
mod schedule;
