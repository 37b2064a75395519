//! `--watch`: the file reloaded when it changes (replaced by a rename, as
//! editors and configuration managers write), once a change has held for a
//! period; a file with errors refused once, not at every period; the
//! watcher ends with the agent.

use std::path::Path;

use ipvs_agent::daemon::{watch_file, AgentOptions, FileVersion};
use ipvsnl::emulator::Kernel;
use ipvsnl::{Destination, Request};

use crate::daemon_support::*;

/// Replaces `path` by a new file, as `mv new path` does.
fn replace(path: &Path, text: &str) {
    let new = path.with_extension("new");
    std::fs::write(&new, text).unwrap();
    std::fs::rename(&new, path).unwrap();
}

#[tokio::test(start_paused = true)]
async fn a_replaced_file_is_reloaded_after_it_held_for_a_period() {
    let kernel = Kernel::new();
    let prober = Scripted::default();
    let path = write_file("watch-replace.toml", &text("1h", 20, ""));
    let options = AgentOptions::default().with_config_path(&path);
    let agent = start(&kernel, config(&text("1h", 20, "")), &prober, options);
    let watcher = tokio::spawn(watch_file(
        path.clone(),
        S,
        agent.handle.clone(),
        FileVersion::of(&path),
    ));
    advance(MS).await;
    assert!(agent.handle.ready());
    kernel.clear_requests();

    // Unchanged for a while: nothing.
    advance(5 * S).await;
    assert_eq!(agent.handle.state().await.unwrap().reload_errors, 0);
    assert_eq!(changes(&kernel), Vec::<Request>::new());

    replace(&path, &text("1h", 30, ""));
    // Seen at the next tick, reloaded at the one after (it held).
    advance(S + MS).await;
    assert_eq!(weight(&kernel, &key(80), B), "20");
    advance(S).await;
    assert_eq!(weight(&kernel, &key(80), B), "30");
    let b = Destination::new(ip(B), 80).with_weight(30);
    assert_eq!(changes(&kernel), [Request::EditDestination(key(80), b)]);
    assert!(agent
        .handle
        .metrics_text()
        .contains("\nipvs_agent_config_reloads_total 1\n"));

    agent.stop(false).await;
    advance(2 * S).await;
    assert!(watcher.is_finished(), "the watcher outlived the agent");
}

#[tokio::test(start_paused = true)]
async fn a_file_with_errors_is_refused_once_and_a_missing_file_waited_for() {
    let kernel = Kernel::new();
    let prober = Scripted::default();
    let good = text("1h", 20, "");
    let path = write_file("watch-bad.toml", &good);
    let options = AgentOptions::default().with_config_path(&path);
    let agent = start(&kernel, config(&good), &prober, options);
    tokio::spawn(watch_file(
        path.clone(),
        S,
        agent.handle.clone(),
        FileVersion::of(&path),
    ));
    advance(MS).await;

    replace(&path, &good.replace("weight = 20", "weight = -1"));
    advance(10 * S).await;
    // One refusal for one change, however many periods pass.
    assert_eq!(agent.handle.state().await.unwrap().reload_errors, 1);
    assert_eq!(weight(&kernel, &key(80), B), "20");

    // Gone for a while (between an unlink and a rename): waited for.
    std::fs::remove_file(&path).unwrap();
    advance(5 * S).await;
    assert_eq!(agent.handle.state().await.unwrap().reload_errors, 1);
    replace(&path, &text("1h", 40, ""));
    advance(3 * S).await;
    assert_eq!(weight(&kernel, &key(80), B), "40");
    assert_eq!(agent.handle.state().await.unwrap().reload_errors, 1);
    agent.stop(false).await;
}

#[tokio::test(start_paused = true)]
async fn a_change_between_the_load_and_the_watch_is_reloaded() {
    let kernel = Kernel::new();
    let prober = Scripted::default();
    let path = write_file("watch-early.toml", &text("1h", 20, ""));
    // The version taken, then the file read, then changed before the
    // watch begins.
    let version = FileVersion::of(&path);
    let loaded = config(&std::fs::read_to_string(&path).unwrap());
    let options = AgentOptions::default().with_config_path(&path);
    let agent = start(&kernel, loaded, &prober, options);
    advance(MS).await;
    replace(&path, &text("1h", 30, ""));
    advance(S).await;
    tokio::spawn(watch_file(path.clone(), S, agent.handle.clone(), version));
    advance(3 * S).await;
    assert_eq!(weight(&kernel, &key(80), B), "30");
    agent.stop(false).await;
}
