//! Reloads on a bad day: a file cut short while being written (valid TOML
//! at every `[[service]]`) would remove most services and is refused by
//! the guard; a FIFO put in the file's place is refused at once, never
//! waited on; the loop answers throughout.

use ipvs_agent::daemon::AgentOptions;
use ipvsnl::emulator::Kernel;

use crate::daemon_support::*;

/// The usual file with three more services, on ports 443, 8080 and 8443;
/// `agent` goes into its `[agent]` table.
fn four(agent: &str) -> String {
    let mut t = text("1h", 20, "").replace("[agent]\n", &format!("[agent]\n{agent}"));
    for port in [443, 8080, 8443] {
        t += &format!(
            "[[service]]\nprotocol = \"tcp\"\naddress = \"{VIP}\"\nport = {port}\n\
             [[service.server]]\naddress = \"{A}\"\n"
        );
    }
    t
}

fn metric(text: &str, name: &str) -> String {
    let line = text.lines().find(|l| l.starts_with(&format!("{name} ")));
    line.unwrap_or_else(|| panic!("no {name}:\n{text}"))[name.len() + 1..].to_string()
}

#[tokio::test(start_paused = true)]
async fn a_file_cut_short_is_refused_by_the_guard() {
    let kernel = Kernel::new();
    let prober = Scripted::default();
    let whole = four("");
    let path = write_file("guard-cut.toml", &whole);
    let options = AgentOptions::default().with_config_path(&path);
    let agent = start(&kernel, config(&whole), &prober, options);
    advance(MS).await;
    assert!(kernel.init_netns().service(&key(8443)).is_some());
    // Cut where the second service begins: a valid file of one service.
    let cut = &whole[..whole
        .find("[[service]]\nprotocol = \"tcp\"\naddress = \"192.0.2.1\"\nport = 443")
        .unwrap()];
    config(cut);
    std::fs::write(&path, cut).unwrap();
    kernel.clear_requests();
    assert!(!agent.handle.reload().await);
    advance(MS).await;
    assert_eq!(changes(&kernel), []);
    for port in [80, 443, 8080, 8443] {
        assert!(kernel.init_netns().service(&key(port)).is_some(), "{port}");
    }
    let m = agent.handle.metrics_text();
    assert_eq!(metric(&m, "ipvs_agent_config_reloads_guarded_total"), "1");
    assert_eq!(metric(&m, "ipvs_agent_config_reload_errors_total"), "1");
    assert_eq!(metric(&m, "ipvs_agent_config_last_reload_successful"), "0");

    // Two of four removed is not most: applied.
    let half = &whole[..whole
        .find("[[service]]\nprotocol = \"tcp\"\naddress = \"192.0.2.1\"\nport = 8080")
        .unwrap()];
    std::fs::write(&path, half).unwrap();
    assert!(agent.handle.reload().await);
    advance(MS).await;
    assert!(kernel.init_netns().service(&key(8080)).is_none());
    assert!(kernel.init_netns().service(&key(443)).is_some());

    // A file that means it says so.
    let one = text("1h", 20, "").replace("[agent]\n", "[agent]\nreload_guard = false\n");
    std::fs::write(&path, &one).unwrap();
    assert!(agent.handle.reload().await);
    advance(MS).await;
    assert!(kernel.init_netns().service(&key(443)).is_none());
    assert!(kernel.init_netns().service(&key(80)).is_some());
    let m = agent.handle.metrics_text();
    assert_eq!(metric(&m, "ipvs_agent_config_reloads_guarded_total"), "1");
    assert_eq!(metric(&m, "ipvs_agent_config_reloads_total"), "2");
    agent.stop(false).await;
}

#[tokio::test(start_paused = true)]
async fn a_fifo_in_place_of_the_file_is_refused_at_once() {
    let kernel = Kernel::new();
    let prober = Scripted::default();
    let whole = four("");
    let path = write_file("guard-fifo.toml", &whole);
    let options = AgentOptions::default().with_config_path(&path);
    let agent = start(&kernel, config(&whole), &prober, options);
    advance(MS).await;
    std::fs::remove_file(&path).unwrap();
    let c = std::ffi::CString::new(path.to_str().unwrap()).unwrap();
    // SAFETY: mkfifo reads the NUL-terminated path, alive for the call.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
    // No writer ever comes: a blocking open would never return.
    let answered = tokio::time::timeout(S, agent.handle.reload()).await;
    assert_eq!(answered, Ok(false));
    let state = agent.handle.state().await.unwrap();
    assert_eq!(state.reload_errors, 1);
    assert!(kernel.init_netns().service(&key(8443)).is_some());
    std::fs::remove_file(&path).unwrap();
    agent.stop(false).await;
}

#[tokio::test(start_paused = true)]
async fn reloads_asked_while_one_reads_are_all_answered() {
    let kernel = Kernel::new();
    let prober = Scripted::default();
    let whole = four("");
    let path = write_file("guard-many.toml", &whole);
    let options = AgentOptions::default().with_config_path(&path);
    let agent = start(&kernel, config(&whole), &prober, options);
    advance(MS).await;
    let (a, b, c) = tokio::join!(
        agent.handle.reload(),
        agent.handle.reload(),
        agent.handle.reload()
    );
    assert_eq!((a, b, c), (true, true, true));
    let m = agent.handle.metrics_text();
    let applied: u32 = metric(&m, "ipvs_agent_config_reloads_total")
        .parse()
        .unwrap();
    // The first read, and one more for those asked while it ran.
    assert!((2..=3).contains(&applied), "{applied}");
    agent.stop(false).await;
}
