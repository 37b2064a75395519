//! Unloading and loading the IPVS modules (and keeping the kernel from
//! loading them by itself), for the tests that reload `ip_vs` under a live
//! client (in a boot of their own: `exclusive_` tests run alone, see
//! .ci/kernel-tests). Modules are global: a reload from any namespace
//! resets every namespace's table.

use std::time::Duration;

use ipvsnl::Client;

use super::{assert_ok, run};

/// The IPVS modules loaded now (`ip_vs_*`), `ip_vs` last.
pub fn loaded_ip_vs_modules() -> Vec<String> {
    let modules = std::fs::read_to_string("/proc/modules").expect("read /proc/modules");
    let mut ours: Vec<String> = modules
        .lines()
        .filter_map(|l| l.split_whitespace().next())
        .filter(|m| m.starts_with("ip_vs_"))
        .map(str::to_owned)
        .collect();
    if modules.lines().any(|l| l.starts_with("ip_vs ")) {
        ours.push("ip_vs".to_owned());
    }
    ours
}

/// Unloads every IPVS module and returns their names (`ip_vs` last). Every
/// namespace's table must be empty already: a service holds its
/// scheduler's module.
pub fn unload_ip_vs() -> Vec<String> {
    let ours = loaded_ip_vs_modules();
    for m in &ours {
        // A deleted service lets go of its scheduler after an RCU grace
        // period: until then the module is busy (EAGAIN).
        let mut tries = 0;
        loop {
            let out = run("rmmod", &[m]);
            if out.status.success() {
                break;
            }
            tries += 1;
            if tries == 50 {
                assert_ok(&format!("rmmod {m}"), out);
            }
            std::thread::sleep(Duration::from_millis(100));
        }
    }
    assert!(
        loaded_ip_vs_modules().is_empty(),
        "IPVS modules still loaded after rmmod: {:?}",
        loaded_ip_vs_modules()
    );
    ours
}

/// Loads `ip_vs` and then each of `modules` (a list [`unload_ip_vs`]
/// returned, say), plus `ip_vs_rr` and `ip_vs_wlc`.
pub fn load_ip_vs(modules: &[String]) {
    let mut all = vec![
        "ip_vs".to_owned(),
        "ip_vs_rr".to_owned(),
        "ip_vs_wlc".to_owned(),
    ];
    for m in modules {
        if !all.contains(m) {
            all.push(m.clone());
        }
    }
    for m in &all {
        assert_ok(&format!("modprobe {m}"), run("modprobe", &[m.as_str()]));
    }
}

/// Unloads every IPVS module (the table of `c`'s namespace flushed first)
/// and loads again what was loaded (at least `ip_vs` and two schedulers).
pub fn reload_ip_vs(c: &mut Client) {
    c.flush().unwrap();
    let was = unload_ip_vs();
    load_ip_vs(&was);
}

/// Module autoloading off while it lives: the kernel's usermode modprobe
/// (`kernel.modprobe`) pointed at a program that does not exist.
pub struct NoAutoload(String);

const MODPROBE: &str = "/proc/sys/kernel/modprobe";

impl NoAutoload {
    pub fn new() -> NoAutoload {
        let was = std::fs::read_to_string(MODPROBE).unwrap();
        std::fs::write(MODPROBE, "/nonexistent/modprobe").unwrap();
        NoAutoload(was.trim().to_owned())
    }
}

impl Drop for NoAutoload {
    fn drop(&mut self) {
        std::fs::write(MODPROBE, &self.0).unwrap();
    }
}

/// How many services hold a scheduler's module (every namespace's).
pub fn module_refs(module: &str) -> u32 {
    let path = format!("/sys/module/{module}/refcnt");
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    text.trim().parse().unwrap()
}
