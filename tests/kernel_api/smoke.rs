//! Smoke tests of the kernel-test harness itself: the VM has IPVS, the reference
//! ipvsadm works, every test gets its own network namespace and IPVS table.
//!
//! Run with `.ci/kernel-tests` (boots the 6.1 and 6.12 VMs); a plain `cargo test`
//! skips them.

use crate::common;

use common::*;
use std::sync::{Arc, Barrier};
use std::thread;

#[test]
#[ignore = "needs IPVS: runs in the VM via .ci/kernel-tests"]
fn fresh_netns_is_empty_with_lo_up() {
    fresh_netns();
    assert!(link_is_up("lo").unwrap(), "lo must be up after fresh_netns");
    assert_eq!(
        ipvsadm_ok(&["-S", "-n"]),
        "",
        "a new namespace has no services"
    );
    let proc = read_proc_net("ip_vs");
    assert!(
        proc.starts_with("IP Virtual Server version "),
        "unexpected /proc/net/ip_vs: {proc}"
    );
    assert_eq!(
        proc.lines().count(),
        3,
        "only the 3 header lines expected:\n{proc}"
    );
}

#[test]
#[ignore = "needs IPVS: runs in the VM via .ci/kernel-tests"]
fn ipvsadm_add_and_save() {
    fresh_netns();
    ipvsadm_ok(&["-A", "-t", "10.0.0.1:80", "-s", "rr"]);
    ipvsadm_ok(&["-a", "-t", "10.0.0.1:80", "-r", "10.0.0.2:80", "-m"]);
    assert_eq!(
        ipvsadm_ok(&["-S", "-n"]),
        "-A -t 10.0.0.1:80 -s rr\n-a -t 10.0.0.1:80 -r 10.0.0.2:80 -m -w 1\n"
    );
    // Without -n, ports go through /etc/services (present in the VM).
    assert_eq!(
        ipvsadm_ok(&["-S"]),
        "-A -t 10.0.0.1:http -s rr\n-a -t 10.0.0.1:http -r 10.0.0.2:http -m -w 1\n"
    );
    // The same table seen through this thread's /proc view.
    let proc = read_proc_net("ip_vs");
    assert!(
        proc.contains("TCP  0A000001:0050 rr"),
        "service missing in /proc:\n{proc}"
    );
    assert!(
        proc.contains("-> 0A000002:0050      Masq    1"),
        "dest missing in /proc:\n{proc}"
    );
}

#[test]
#[ignore = "needs IPVS: runs in the VM via .ci/kernel-tests"]
fn ipvsadm_errors_are_reported() {
    fresh_netns();
    // Deleting a service that does not exist fails (ESRCH).
    let out = ipvsadm(&["-D", "-t", "10.9.9.9:80"]);
    assert!(
        !out.status.success(),
        "deleting a missing service must fail"
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("No such service"), "unexpected stderr: {err}");
}

#[test]
#[ignore = "needs IPVS: runs in the VM via .ci/kernel-tests"]
fn every_scheduler_module_is_usable() {
    fresh_netns();
    let mut scheds = vec![
        "rr", "wrr", "lc", "wlc", "lblc", "lblcr", "dh", "sh", "sed", "nq", "fo", "ovf", "mh",
    ];
    if kernel_version() >= (6, 7) {
        scheds.push("twos"); // ip_vs_twos is new in 6.7
    }
    for (i, s) in scheds.iter().enumerate() {
        let vip = format!("10.1.0.{}:80", i + 1);
        ipvsadm_ok(&["-A", "-t", &vip, "-s", s]);
    }
    let saved = ipvsadm_ok(&["-S", "-n"]);
    for (i, s) in scheds.iter().enumerate() {
        let line = format!("-A -t 10.1.0.{}:80 -s {s}\n", i + 1);
        assert!(saved.contains(&line), "missing {line:?} in:\n{saved}");
    }
}

#[test]
#[ignore = "needs IPVS: runs in the VM via .ci/kernel-tests"]
fn unprivileged_user_is_refused() {
    fresh_netns();
    let out = command_as_nobody("ipvsadm")
        .args(["-L", "-n"])
        .output()
        .expect("run ipvsadm as nobody");
    assert!(
        !out.status.success(),
        "ipvsadm as nobody must fail: {out:?}"
    );
    let id = command_as_nobody("id").output().expect("run id as nobody");
    assert_eq!(
        String::from_utf8_lossy(&id.stdout).trim(),
        "uid=65534(nobody) gid=65534(nogroup)"
    );
}

/// Two threads, each in its own namespace, configure different services at the
/// same time; each sees only its own. The test thread's own namespace sees
/// neither.
#[test]
#[ignore = "needs IPVS: runs in the VM via .ci/kernel-tests"]
fn namespaces_are_isolated() {
    require_root();
    let barrier = Arc::new(Barrier::new(2));
    let workers: Vec<_> = (1..=2)
        .map(|i| {
            let barrier = Arc::clone(&barrier);
            thread::spawn(move || {
                fresh_netns();
                let vip = format!("10.77.0.{i}:80");
                ipvsadm_ok(&["-A", "-t", &vip, "-s", "wlc"]);
                ipvsadm_ok(&[
                    "-a",
                    "-t",
                    &vip,
                    "-r",
                    &format!("10.77.1.{i}:8080"),
                    "-m",
                    "-w",
                    "3",
                ]);
                // Both tables are populated now.
                barrier.wait();
                let saved = ipvsadm_ok(&["-S", "-n"]);
                let proc = read_proc_net("ip_vs");
                // /proc/net is /proc/self/net: the main thread's namespace, not ours.
                let main_view =
                    std::fs::read_to_string("/proc/net/ip_vs").expect("read /proc/net/ip_vs");
                assert!(
                    !main_view.contains(&format!("0A4D000{i}:0050")),
                    "/proc/net unexpectedly shows worker {i}'s namespace:\n{main_view}"
                );
                // Keep both namespaces alive until both have looked.
                barrier.wait();
                (i, saved, proc)
            })
        })
        .collect();
    for w in workers {
        let (i, saved, proc) = w.join().expect("worker panicked");
        assert_eq!(
            saved,
            format!(
                "-A -t 10.77.0.{i}:80 -s wlc\n-a -t 10.77.0.{i}:80 -r 10.77.1.{i}:8080 -m -w 3\n"
            ),
            "namespace {i} must see exactly its own service"
        );
        assert!(
            proc.contains(&format!("0A4D000{i}:0050")),
            "ns {i} /proc view:\n{proc}"
        );
        let other = 3 - i;
        assert!(
            !proc.contains(&format!("0A4D000{other}:0050")),
            "ns {i} sees ns {other}:\n{proc}"
        );
    }
    // This thread never left its namespace (the VM's initial one, or another
    // test's when run with --test-threads=1): the workers' services are not here.
    let here = ipvsadm(&["-S", "-n"]);
    let here = String::from_utf8_lossy(&here.stdout);
    assert!(
        !here.contains("10.77."),
        "workers' services leaked:\n{here}"
    );
}

/// The two tests below run in parallel under libtest (one thread each) and use
/// the same virtual address with different schedulers: each must only ever see
/// its own.
fn own_table_stays_own(sched: &str) {
    fresh_netns();
    ipvsadm_ok(&["-A", "-t", "10.88.0.1:80", "-s", sched]);
    let want = format!("-A -t 10.88.0.1:80 -s {sched}\n");
    for _ in 0..10 {
        // Debian's ipvsadm lists through a dump that resumes by a position
        // counted over every namespace's services, so the other test's
        // changes can make it print our service twice (measured on 6.12;
        // our client drops such repeats). A repeat is not a leak: compare
        // the distinct lines, in order.
        let listed = ipvsadm_ok(&["-S", "-n"]);
        let mut distinct: Vec<&str> = Vec::new();
        for line in listed.lines() {
            if !distinct.contains(&line) {
                distinct.push(line);
            }
        }
        assert_eq!(
            distinct.join("\n") + "\n",
            want,
            "ipvsadm -S -n printed:\n{listed}"
        );
        thread::sleep(std::time::Duration::from_millis(50));
    }
}

#[test]
#[ignore = "needs IPVS: runs in the VM via .ci/kernel-tests"]
fn parallel_test_a_sees_only_its_table() {
    own_table_stays_own("rr");
}

#[test]
#[ignore = "needs IPVS: runs in the VM via .ci/kernel-tests"]
fn parallel_test_b_sees_only_its_table() {
    own_table_stays_own("sh");
}

/// IPVS sysctls are per namespace, and /proc/sys/net follows the namespace of the
/// thread that opens it (unlike /proc/net, see tests/common).
#[test]
#[ignore = "needs IPVS: runs in the VM via .ci/kernel-tests"]
fn sysctls_follow_the_thread_namespace() {
    const KNOB: &str = "/proc/sys/net/ipv4/vs/expire_nodest_conn";
    let read = || std::fs::read_to_string(KNOB).unwrap_or_else(|e| panic!("read {KNOB}: {e}"));
    let barrier = Arc::new(Barrier::new(2));
    let b = Arc::clone(&barrier);
    let writer = thread::spawn(move || {
        fresh_netns();
        std::fs::write(KNOB, "1\n").expect("write sysctl");
        b.wait();
        b.wait();
        std::fs::read_to_string(KNOB).unwrap()
    });
    fresh_netns();
    barrier.wait();
    let here = read();
    barrier.wait();
    assert_eq!(
        writer.join().unwrap().trim(),
        "1",
        "writer's namespace keeps its value"
    );
    assert_eq!(here.trim(), "0", "another namespace keeps the default");
}
