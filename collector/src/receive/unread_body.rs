//! The rest of a refused HTTP/1.x request's body, read and dropped before the answer.
//!
//! Why: exporters send the whole body before they read the answer. Answering a refusal and
//! closing the connection with the rest of the body unread makes the kernel answer the client's
//! next bytes with a reset, and the reset also discards the answer the client has not read yet:
//! the client reports a transport error instead of the 429 and its `Retry-After` (9 of 1,938
//! requests in an overload benchmark run, BENCHMARKS.md session 33). Reading the rest costs the
//! copy out of the socket and no memory (each frame is dropped as it arrives, and none is charged
//! to the in-flight budget). It stops at the body cap, at the body deadline (`--body-timeout`,
//! which bounds an accepted body too), or when no byte has come for [`DRAIN_IDLE`], and the
//! connection is then closed as before: a client that stops sending gets its refusal that much
//! later, not at the body deadline.
//!
//! Why idle time and not a total: under overload a refused body arrives as slowly as the
//! accepted ones, since the collector reads 128 sockets on two cores and TCP flow control paces
//! every sender. A 2 MB body then took over 2 s; the earlier fixed 2 s drain gave up on it while
//! its client was still sending, and 7 of 2,400 requests of session 38's overload benchmark
//! failed with "connection closed before message completed" instead of reading their 429.
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

/// How long the rest of a refused body may go without a byte before the drain gives up: a
/// client still sending never waits that long between two segments, one that stopped is not
/// waited for until the body deadline.
pub const DRAIN_IDLE: Duration = Duration::from_secs(2);

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

/// Reads `body` to its end and drops it, giving up past `limit` bytes, at an error, after
/// `timeout` or after `idle` without a frame; whether it ended.
async fn discard<B>(mut body: B, limit: usize, timeout: Duration, idle: Duration) -> bool
where
    B: Body + Unpin,
{
    let read = async {
        let mut seen = 0usize;
        loop {
            let frame = match tokio::time::timeout(idle, body.frame()).await {
                Err(_silent) => return false,
                Ok(None) => return true,
                Ok(Some(Err(_))) => return false,
                Ok(Some(Ok(frame))) => frame,
            };
            if let Some(data) = frame.data_ref() {
                seen = seen.saturating_add(data.remaining());
                if seen > limit {
                    return false;
                }
            }
        }
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
    let ended = drain && discard(body, limit, timeout, DRAIN_IDLE).await;
    if !ended {
        response
            .headers_mut()
            .insert(header::CONNECTION, HeaderValue::from_static("close"));
    }
    response
}

#[cfg(test)]
mod tests {
    use super::*;
    use bytes::Bytes;
    use futures::StreamExt;
    use http_body::Frame;
    use http_body_util::StreamBody;

    /// A body of `chunks` frames of 1 KiB, one every `every`, then `stall` without a byte before
    /// it ends.
    fn trickle(
        chunks: usize,
        every: Duration,
        stall: Duration,
    ) -> impl Body<Data = Bytes, Error = std::io::Error> + Unpin {
        let frames = futures::stream::iter(0..=chunks).then(move |i| async move {
            if i == chunks {
                tokio::time::sleep(stall).await;
                return Ok(Frame::data(Bytes::new()));
            }
            tokio::time::sleep(every).await;
            Ok(Frame::data(Bytes::from(vec![0u8; 1024])))
        });
        StreamBody::new(Box::pin(frames))
    }

    /// [`discard`] with a 200 ms idle limit, a 10 s deadline and room for 1 MiB: whether the
    /// body ended, and how long it took.
    async fn drain_idle_200ms(
        body: impl Body<Data = Bytes, Error = std::io::Error> + Unpin,
    ) -> (bool, Duration) {
        let started = std::time::Instant::now();
        let idle = Duration::from_millis(200);
        let ended = discard(body, 1 << 20, Duration::from_secs(10), idle).await;
        (ended, started.elapsed())
    }

    #[tokio::test]
    async fn a_body_still_arriving_is_read_to_its_end_past_the_idle_limit() {
        // 12 frames 50 ms apart: 600 ms in all, three times the idle limit, no gap near it.
        let (ended, took) =
            drain_idle_200ms(trickle(12, Duration::from_millis(50), Duration::ZERO)).await;
        assert!(ended, "a sender that keeps sending is read to the end");
        assert!(took >= Duration::from_millis(600));
    }

    #[tokio::test]
    async fn a_body_that_stops_arriving_is_given_up_after_the_idle_limit() {
        let stalled = trickle(2, Duration::from_millis(10), Duration::from_secs(30));
        let (ended, waited) = drain_idle_200ms(stalled).await;
        assert!(!ended, "a silent sender is not waited for");
        assert!(
            waited < Duration::from_secs(5),
            "gave up after {waited:?}, not at the idle limit"
        );
    }

    #[tokio::test]
    async fn the_drain_stops_at_the_body_deadline_and_at_the_byte_limit() {
        let slow = trickle(100, Duration::from_millis(50), Duration::ZERO);
        let deadline = Duration::from_millis(300);
        let started = std::time::Instant::now();
        assert!(!discard(slow, 1 << 20, deadline, Duration::from_secs(2)).await);
        assert!(started.elapsed() < Duration::from_secs(3));

        let large = trickle(8, Duration::ZERO, Duration::ZERO);
        assert!(
            !discard(
                large,
                4 * 1024,
                Duration::from_secs(10),
                Duration::from_secs(2)
            )
            .await
        );
    }
}
