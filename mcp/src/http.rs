//! `tripline mcp --http ADDR`: the server over Streamable HTTP at `http://ADDR/mcp`.
//!
//! Secure by default: a loopback address only, unless `--allow-remote`, which also requires
//! `--auth-token-file` (an open, remote endpoint over a trace store is never a default); with a
//! token every request needs `Authorization: Bearer <token>`, checked in constant time by the
//! collector's own [`collector::receive::auth::authorized`], and is answered 401 otherwise. rmcp's own
//! checks stay on: `Host` must be a loopback name for a loopback listener (DNS rebinding), a
//! request carrying a browser `Origin` is refused, bodies are capped.

use std::net::SocketAddr;
use std::sync::Arc;

use axum::extract::{Request, State};
use axum::http::{header, HeaderValue, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use tokio_util::sync::CancellationToken;

use crate::server::TriplineServer;

/// Largest JSON-RPC request body accepted (a SQL statement and a few arguments).
pub const MAX_REQUEST_BYTES: usize = 1024 * 1024;

/// The listen address was refused before binding.
#[derive(Debug, thiserror::Error)]
pub enum AddressError {
    #[error("--http {0} is not a loopback address; tripline mcp listens on loopback only (127.0.0.1, ::1) unless --allow-remote is given")]
    NotLoopback(SocketAddr),
    #[error("--allow-remote needs --auth-token-file: a trace store served beyond this machine must require a bearer token")]
    RemoteWithoutToken,
}

/// Whether `addr` may be listened on with these flags.
pub fn check_address(
    addr: SocketAddr,
    allow_remote: bool,
    has_token: bool,
) -> Result<(), AddressError> {
    if addr.ip().is_loopback() {
        return Ok(());
    }
    if !allow_remote {
        return Err(AddressError::NotLoopback(addr));
    }
    if !has_token {
        return Err(AddressError::RemoteWithoutToken);
    }
    Ok(())
}

/// Serves `server` on `listener` until `shutdown` is cancelled; `on_listening` gets the URL.
pub async fn serve(
    server: TriplineServer,
    listener: tokio::net::TcpListener,
    token: Option<String>,
    remote: bool,
    shutdown: CancellationToken,
) -> std::io::Result<()> {
    let mut config = StreamableHttpServerConfig::default()
        .with_max_request_body_bytes(MAX_REQUEST_BYTES)
        .enforce_origin_validation();
    if remote {
        // Clients reach a remote listener by names this process cannot know; the bearer token
        // (required with --allow-remote) is what keeps strangers out.
        config = config.disable_allowed_hosts();
    }
    config.cancellation_token = shutdown.child_token();
    let service: StreamableHttpService<TriplineServer, LocalSessionManager> =
        StreamableHttpService::new(
            move || Ok(server.clone()),
            Arc::new(LocalSessionManager::default()),
            config,
        );
    let router = axum::Router::new().nest_service("/mcp", service).layer(
        axum::middleware::from_fn_with_state(Arc::new(token), require_token),
    );
    axum::serve(listener, router)
        .with_graceful_shutdown(async move { shutdown.cancelled_owned().await })
        .await
}

async fn require_token(
    State(token): State<Arc<Option<String>>>,
    request: Request,
    next: Next,
) -> Response {
    let presented = request
        .headers()
        .get(header::AUTHORIZATION)
        .map(HeaderValue::as_bytes);
    if collector::receive::auth::authorized(token.as_deref(), presented) {
        return next.run(request).await;
    }
    let why = if presented.is_some() {
        "the bearer token is not valid; send the token from --auth-token-file as `Authorization: Bearer <token>`\n"
    } else {
        "missing bearer token; send `Authorization: Bearer <token>` (tripline mcp runs with --auth-token-file)\n"
    };
    let mut response = (StatusCode::UNAUTHORIZED, why).into_response();
    response
        .headers_mut()
        .insert(header::WWW_AUTHENTICATE, HeaderValue::from_static("Bearer"));
    response
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loopback_only_unless_remote_is_allowed_with_a_token() {
        let local: SocketAddr = "127.0.0.1:0".parse().unwrap();
        let local6: SocketAddr = "[::1]:8080".parse().unwrap();
        let any: SocketAddr = "0.0.0.0:8080".parse().unwrap();
        let lan: SocketAddr = "192.168.1.10:8080".parse().unwrap();
        assert!(check_address(local, false, false).is_ok());
        assert!(check_address(local6, false, false).is_ok());
        assert!(matches!(
            check_address(any, false, true),
            Err(AddressError::NotLoopback(_))
        ));
        assert!(matches!(
            check_address(lan, true, false),
            Err(AddressError::RemoteWithoutToken)
        ));
        assert!(check_address(lan, true, true).is_ok());
    }
}
