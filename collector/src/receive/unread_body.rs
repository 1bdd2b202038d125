//! The rest of a refused HTTP/1.x request's body, read and dropped before the answer.
//!
//! Why: exporters send the whole body before they read the answer. Answering a refusal and
//! closing the connection with the rest of the body unread makes the kernel answer the client's
//! next bytes with a reset, and the reset also discards the answer the client has not read yet:
//! the client reports a transport error instead of the 429 and its `Retry-After` (9 of 1,938
//! requests in an overload benchmark run, BENCHMARKS.md session 33). Reading the rest costs the
//! copy out of the socket and no memory (each frame is dropped as it arrives, and none is charged
//! to the in-flight budget). It stops at the body cap, or after [`DRAIN_FOR`] (or the body
//! deadline, if shorter), and the connection is then closed as before: a client that stops
//! sending gets its refusal that much later, not at the body deadline.
//!
//! Not done for HTTP/2, where the refusal ends the stream and the connection stays usable; for a
//! request that announced `Expect: 100-continue` and was refused before its body was asked for
//! (its client has not sent the body and will not); nor for the refusals that say the body
//! itself is the problem (too large, too slow, unreadable) or that the client is not authorised.

use std::time::Duration;

use axum::http::{header, HeaderMap, HeaderValue, Version};
use axum::response::Response;
use bytes::Buf;
use http_body::Body;
use http_body_util::BodyExt;

/// How long the rest of a refused body is read at most: an exporter sending on loopback or a
/// LAN finishes megabytes well within it.
pub const DRAIN_FOR: Duration = Duration::from_secs(2);

/// Whether a refusal answered before the body was read should read the rest first: HTTP/1.x
/// without `Expect: 100-continue`.
pub fn drain_before_reading(version: Version, headers: &HeaderMap) -> bool {
    let expects_continue = headers
        .get(header::EXPECT)
        .is_some_and(|v| v.as_bytes().eq_ignore_ascii_case(b"100-continue"));
    drain_after_reading(version) && !expects_continue
}

/// Whether a refusal answered while the body was being read should read the rest first.
pub fn drain_after_reading(version: Version) -> bool {
    version < Version::HTTP_2
}

/// Reads `body` to its end and drops it, giving up past `limit` bytes, at an error or after
/// `timeout`; whether it ended.
async fn discard<B>(mut body: B, limit: usize, timeout: Duration) -> bool
where
    B: Body + Unpin,
{
    let read = async {
        let mut seen = 0usize;
        while let Some(frame) = body.frame().await {
            let Ok(frame) = frame else { return false };
            if let Some(data) = frame.data_ref() {
                seen = seen.saturating_add(data.remaining());
                if seen > limit {
                    return false;
                }
            }
        }
        true
    };
    tokio::time::timeout(timeout, read).await.unwrap_or(false)
}

/// `response`, sent once the rest of `body` is read and dropped when `drain` says so (see the
/// module doc); with `Connection: close` unless the body ended, since the connection cannot
/// carry another request while part of this one is unread.
pub async fn answer_after<B>(
    mut response: Response,
    body: B,
    drain: bool,
    limit: usize,
    timeout: Duration,
) -> Response
where
    B: Body + Unpin,
{
    let ended = drain && discard(body, limit, timeout.min(DRAIN_FOR)).await;
    if !ended {
        response
            .headers_mut()
            .insert(header::CONNECTION, HeaderValue::from_static("close"));
    }
    response
}
