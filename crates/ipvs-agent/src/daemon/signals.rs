//! The signals a daemon takes: SIGHUP reloads, SIGTERM and SIGINT stop.

use tokio::signal::unix::{signal, SignalKind};

use crate::daemon::control::Handle;

/// Turns signals into calls on `handle` until the agent stops. `Err` when
/// a handler cannot be installed.
pub async fn forward_signals(handle: Handle) -> std::io::Result<()> {
    let mut hup = signal(SignalKind::hangup())?;
    let mut term = signal(SignalKind::terminate())?;
    let mut int = signal(SignalKind::interrupt())?;
    loop {
        tokio::select! {
            _ = hup.recv() => {
                tracing::info!("SIGHUP: reloading");
                handle.reload().await;
            }
            _ = term.recv() => {
                tracing::info!("SIGTERM: stopping");
                handle.stop();
            }
            _ = int.recv() => {
                tracing::info!("SIGINT: stopping");
                handle.stop();
            }
        }
    }
}
