//! A panic ends the daemon. The agent's work runs on several tasks (the
//! loop, the HTTP endpoint, the signal forwarder, fleet mode's follower
//! and election); tokio catches a task's panic and lets the rest run, so
//! a director whose follower died would go on, `/healthz` saying ok, with
//! a configuration that never changes again. Rather than supervise each
//! task, the daemon aborts: the panic is logged, and the service manager
//! (`Restart=` under systemd) starts a whole agent again, which adopts the
//! kernel's table as at any restart.

/// From now on a panic anywhere in the process logs its message and
/// where it happened, then aborts the process (SIGABRT).
pub fn abort_on_panic() {
    let default = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        let thread = std::thread::current();
        let location = info
            .location()
            .map(|l| format!("{}:{}", l.file(), l.line()))
            .unwrap_or_default();
        let message = info
            .payload()
            .downcast_ref::<&str>()
            .map(|s| (*s).to_string())
            .or_else(|| info.payload().downcast_ref::<String>().cloned())
            .unwrap_or_default();
        tracing::error!(
            thread = thread.name().unwrap_or("unnamed"),
            location,
            message,
            "panic: aborting the agent (it is restarted whole by its service manager)"
        );
        default(info);
        std::process::abort();
    }));
}
