//! Waiting for the signal to stop: ctrl-c (SIGINT) or SIGTERM (what `kill` and container
//! runtimes send). Either one starts the staged shutdown of [`crate::Server::shutdown`].

/// Resolve when SIGINT or SIGTERM arrives; returns the signal's name.
pub async fn wait_for_signal() -> &'static str {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{signal, SignalKind};
        match signal(SignalKind::terminate()) {
            Ok(mut term) => tokio::select! {
                _ = tokio::signal::ctrl_c() => "SIGINT",
                _ = term.recv() => "SIGTERM",
            },
            Err(e) => {
                tracing::warn!(error = %e, "cannot install a SIGTERM handler; only ctrl-c stops the collector");
                let _ = tokio::signal::ctrl_c().await;
                "SIGINT"
            }
        }
    }
    #[cfg(not(unix))]
    {
        let _ = tokio::signal::ctrl_c().await;
        "ctrl-c"
    }
}
