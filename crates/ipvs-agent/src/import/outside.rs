//! The parts of a keepalived.conf outside the load balancer (VRRP, global
//! settings, static addresses, BFD): each block a warning saying what the
//! fleet mode offers instead, and a summary of the flags to run it with
//! (`--vip` for a `vrrp_instance`'s `virtual_ipaddress`, `--vip-interface`
//! for its `interface`, `--sync-interface` for `lvs_sync_daemon`).

use crate::import::report::{NoteKind, Report};
use crate::import::tree::Node;

/// What the outside blocks gather for the summary.
#[derive(Debug, Default)]
pub(crate) struct Outside {
    vips: Vec<String>,
    interfaces: Vec<String>,
    sync: Option<(String, Option<String>)>,
    netns: Option<String>,
}

impl Outside {
    /// Notes the top-level statement `node` (a keyword of
    /// [`crate::import::keywords::ROOT_OUTSIDE`]).
    pub(crate) fn take(&mut self, node: &Node, report: &mut Report) {
        let name = node.name();
        let what = node.arg(0).map(|a| format!(" {a}")).unwrap_or_default();
        let msg = match name {
            "vrrp_instance" => {
                let mut vips = Vec::new();
                for c in node.children() {
                    match c.name() {
                        "interface" => {
                            if let Some(i) = c.arg(0) {
                                push_new(&mut self.interfaces, i);
                            }
                        }
                        "virtual_ipaddress" | "virtual_ipaddress_excluded" => {
                            for a in c.children() {
                                push_new(&mut vips, &with_prefix(a.name()));
                            }
                        }
                        "lvs_sync_daemon_interface" => {
                            if let Some(i) = c.arg(0) {
                                self.sync.get_or_insert((i.to_string(), None));
                            }
                        }
                        _ => {}
                    }
                }
                for v in &vips {
                    push_new(&mut self.vips, v);
                }
                format!(
                    "`vrrp_instance{what}`: the fleet mode elects its leader through etcd \
                     (no priorities, adverts or authentication); its addresses as {}",
                    if vips.is_empty() {
                        "(none)".to_string()
                    } else {
                        vips.iter().map(|v| format!("`--vip {v}`")).collect::<Vec<_>>().join(" ")
                    }
                )
            }
            "vrrp_sync_group" => format!("`vrrp_sync_group{what}`: the fleet's leader holds every `--vip` together"),
            "vrrp_script" | "vrrp_track_process" | "vrrp_track_file" | "track_file" | "track_group"
            | "linkbeat_interfaces" | "linkbeat_use_polling" | "interface_up_down_delays" => format!(
                "`{name}{what}`: the fleet's leadership follows the agent's etcd lease (`--lease-ttl`), not scripts or tracked interfaces"
            ),
            "global_defs" => {
                for c in node.children() {
                    if c.name() == "lvs_sync_daemon" {
                        if let Some(i) = c.arg(0) {
                            let id = c.args.iter().position(|a| a.text == "id").and_then(|p| c.arg(p + 1)).map(str::to_string);
                            self.sync = Some((i.to_string(), id));
                        }
                    }
                }
                "`global_defs`: the agent has no global mail, router id or timers; `lvs_sync_daemon IF` is `--sync-interface IF`".to_string()
            }
            "net_namespace" | "net_namespace_ipvs" => {
                if let Some(n) = node.arg(0) {
                    self.netns = Some(n.to_string());
                }
                format!("`{name}{what}`: `ipvs-agent run --netns /var/run/netns/NAME` keeps that namespace's table")
            }
            "static_ipaddress" | "static_routes" | "static_rules" => format!("`{name}`: the system's network configuration keeps addresses, routes and rules"),
            _ => format!("`{name}{what}`: keepalived's own; the agent has no such setting"),
        };
        report.note(node.at(), NoteKind::Outside, msg);
        // The note speaks for the block's lines.
        node.inner(&mut report.mapped);
    }

    /// The summary: what to run instead of keepalived's VRRP (empty when
    /// the input has nothing outside the load balancer).
    pub(crate) fn summary(&self) -> Vec<String> {
        if self.vips.is_empty() && self.sync.is_none() && self.netns.is_none() {
            return Vec::new();
        }
        let mut cmd = String::from("ipvs-agent run --etcd URL");
        if let Some(n) = &self.netns {
            cmd.push_str(&format!(" --netns /var/run/netns/{n}"));
        }
        for v in &self.vips {
            cmd.push_str(&format!(" --vip {v}"));
        }
        if !self.vips.is_empty() {
            if let Some(i) = self.interfaces.first() {
                cmd.push_str(&format!(" --vip-interface {i}"));
            }
        }
        if let Some((i, id)) = &self.sync {
            cmd.push_str(&format!(" --sync-interface {i}"));
            if let Some(id) = id {
                cmd.push_str(&format!(" --sync-id {id}"));
            }
        }
        let mut out = vec![
            "Outside the load balancer: the fleet mode instead of keepalived's VRRP.".to_string(),
            "Publish this file: ipvs-agent publish FILE --etcd URL".to_string(),
            format!("Run each director: {cmd}"),
        ];
        if self.interfaces.len() > 1 {
            out.push(format!(
                "The VRRP instances use several interfaces ({}): the fleet's VIPs go on one",
                self.interfaces.join(", ")
            ));
        }
        out
    }
}

fn push_new(list: &mut Vec<String>, v: &str) {
    if !list.iter().any(|x| x == v) {
        list.push(v.to_string());
    }
}

/// A VRRP address as `--vip` takes it: with its prefix (/32 or /128 when
/// it has none).
fn with_prefix(a: &str) -> String {
    if a.contains('/') {
        a.to_string()
    } else if a.contains(':') {
        format!("{a}/128")
    } else {
        format!("{a}/32")
    }
}
