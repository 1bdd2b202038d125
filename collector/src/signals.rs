//! Waiting for the signal to stop: ctrl-c (SIGINT) or SIGTERM (what `kill` and container
//! runtimes send). Either one starts the staged shutdown of [`crate::Server::shutdown`].
//!
//! The handlers are installed eagerly by [`Signals::install`], before the collector announces
//! that it is listening: a SIGTERM that arrives right after the announcement must start the
//! graceful shutdown, not hit the default action (which kills the process without a flush).

#[cfg(unix)]
use tokio::signal::unix::{signal, Signal, SignalKind};

/// Installed SIGINT / SIGTERM handlers.
pub struct Signals {
    #[cfg(unix)]
    term: Option<Signal>,
    #[cfg(unix)]
    int: Option<Signal>,
}

impl Signals {
    /// Install the handlers now; call it inside the tokio runtime, before announcing readiness.
    pub fn install() -> Signals {
        #[cfg(unix)]
        {
            let install = |kind: SignalKind, name: &str| match signal(kind) {
                Ok(s) => Some(s),
                Err(e) => {
                    tracing::warn!(error = %e, signal = name, "cannot install a signal handler; the other signal still stops the collector");
                    None
                }
            };
            Signals {
                term: install(SignalKind::terminate(), "SIGTERM"),
                int: install(SignalKind::interrupt(), "SIGINT"),
            }
        }
        #[cfg(not(unix))]
        {
            Signals {}
        }
    }

    /// Resolve when SIGINT or SIGTERM arrives; returns the signal's name.
    pub async fn recv(&mut self) -> &'static str {
        #[cfg(unix)]
        {
            async fn next(s: &mut Option<Signal>) {
                match s {
                    Some(s) => {
                        s.recv().await;
                    }
                    None => std::future::pending().await,
                }
            }
            tokio::select! {
                _ = next(&mut self.int) => "SIGINT",
                _ = next(&mut self.term) => "SIGTERM",
            }
        }
        #[cfg(not(unix))]
        {
            let _ = tokio::signal::ctrl_c().await;
            "ctrl-c"
        }
    }
}
