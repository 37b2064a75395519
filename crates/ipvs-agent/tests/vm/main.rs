//! The fleet in the VM (root, namespaces, a bridge, Debian's etcd): three
//! etcd members, three directors running `ipvs-agent run`, real servers
//! and a client on one L2 segment (the lab: `fleet_lab`, `fleet_traffic`);
//! by direct routing (`fleet_vm`), with the peer link (`fleet_vm_peers`),
//! at scale (`fleet_vm_scale`), by NAT (`fleet_nat`), the VIPs alone
//! (`fleet_vip`, `fleet_vip_na`). Every test is `#[ignore]`d: run by
//! `.ci/fleet-tests [-- FILTER]`, which builds this binary (`cargo test -p
//! ipvs-agent --features fleet --test vm --no-run`) and runs it in the VM
//! as `./vm --ignored --test-threads=1 FILTER`.

mod fleet_lab;
#[path = "../common/fleet_na_frame.rs"]
mod fleet_na_frame;
mod fleet_nat;
#[path = "../common/fleet_scale_services.rs"]
mod fleet_scale_services;
mod fleet_traffic;
mod fleet_vip;
mod fleet_vip_na;
mod fleet_vm;
mod fleet_vm_peers;
mod fleet_vm_scale;
