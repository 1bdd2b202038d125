//! What a WAL record holds: converted rows (an Arrow IPC stream, [`super::ipc`]) or an OTLP
//! trace request as it was received ([`RequestRecord`]), converted once it is in the WAL.
//!
//! Why two kinds: the received bytes are a quarter of the rows' IPC encoding to write (and
//! compressed bodies stay compressed), and the WAL's page-cache copies were the largest kernel
//! cost per span. The record is written after a light validation (the same checks and the same
//! `partial_success` answer conversion gives, [`schemas::convert::validate_request`]); the
//! request thread converts it while the WAL is synced (ADR 0004), and a conversion that fails
//! is redone from the record. Every reader of the WAL (replay,
//! the batcher's retry, the checkpoint rebuild, `tripline verify`, the analyzer's view of the
//! WAL tail) goes through [`decode`] / [`decode_one`] and sees rows either way.
//!
//! Replay converts a request record with the running version's dialect mapping, so rows of a
//! record replayed after an upgrade follow the new mapping; rows of an IPC record never change.
//! With `--redact-content` requests are converted (and redacted) before they are written:
//! unredacted content never reaches the disk, and such records are IPC.

use arrow::error::ArrowError;
use arrow::record_batch::RecordBatch;
use schemas::convert::{convert_request_for_store, IngestContext};

use crate::receive::decompress::{decompress_capped, Encoding};
use crate::receive::otlp_wire::Format;
use crate::store::wal::ipc;

/// First bytes of a request record. An IPC stream starts with `0xFFFFFFFF` (its continuation
/// marker), so the two kinds cannot be confused.
const MAGIC: &[u8; 8] = b"TLOTLP1\n";

/// Fixed part of a request record's header after [`MAGIC`]: format, encoding, redact (one byte
/// each), received_at (i64), plain length (u64), source length (u16).
const FIXED: usize = 3 + 8 + 8 + 2;

/// The most a stored body may decompress to, whatever its header says (`--max-body-bytes`
/// cannot be set above this either way: 4 GiB).
const MAX_PLAIN_BYTES: usize = 4 << 30;

/// Why a WAL record cannot be turned into rows.
#[derive(Debug, thiserror::Error)]
pub enum RecordError {
    #[error("not a readable Arrow batch: {0}")]
    Arrow(#[from] ArrowError),
    #[error("the stored OTLP request cannot be read: {0}")]
    Request(String),
    #[error("the stored OTLP request cannot be converted: {0}")]
    Convert(String),
}

/// An OTLP trace request as received, with what converting it needs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RequestRecord<'a> {
    pub format: Format,
    /// The body's `Content-Encoding` (kept compressed as it came).
    pub encoding: Encoding,
    /// Bytes of the decompressed body: the cap when it is decompressed again.
    pub plain_len: u64,
    /// `received_at`, `ingest_source` and redaction of the rows.
    pub ctx: IngestContext,
    pub body: &'a [u8],
}

impl RequestRecord<'_> {
    /// The record's payload in one buffer, as [`RequestRecord::parse`] reads it back (tests and
    /// the fuzz target; the WAL appends [`RequestRecord::encode_header`] and the body apart).
    pub fn encode(&self) -> Vec<u8> {
        let mut out = self.encode_header();
        out.reserve_exact(self.body.len());
        out.extend_from_slice(self.body);
        out
    }

    /// The payload less its body, which follows it: the WAL appends the two as they are
    /// ([`crate::store::wal::Wal::append_parts`]), so a request's body (the bulk of its record)
    /// is not copied into a payload buffer first.
    pub fn encode_header(&self) -> Vec<u8> {
        let source = self.ctx.source.as_bytes();
        let source = &source[..source.len().min(u16::MAX as usize)];
        let mut out = Vec::with_capacity(MAGIC.len() + FIXED + source.len());
        out.extend_from_slice(MAGIC);
        out.push(match self.format {
            Format::Protobuf => 0,
            Format::Json => 1,
        });
        out.push(match self.encoding {
            Encoding::Identity => 0,
            Encoding::Gzip => 1,
            Encoding::Zstd => 2,
        });
        out.push(u8::from(self.ctx.redact_content));
        out.extend_from_slice(&self.ctx.received_at_unix_nano.to_le_bytes());
        out.extend_from_slice(&self.plain_len.to_le_bytes());
        out.extend_from_slice(&(source.len() as u16).to_le_bytes());
        out.extend_from_slice(source);
        out
    }

    /// The request record in `payload`; `Ok(None)` for an IPC record.
    pub fn parse(payload: &[u8]) -> Result<Option<RequestRecord<'_>>, RecordError> {
        let Some(rest) = payload.strip_prefix(MAGIC.as_slice()) else {
            return Ok(None);
        };
        let bad = |what: &str| RecordError::Request(format!("damaged header: {what}"));
        if rest.len() < FIXED {
            return Err(bad("too short"));
        }
        let format = match rest[0] {
            0 => Format::Protobuf,
            1 => Format::Json,
            _ => return Err(bad("unknown format")),
        };
        let encoding = match rest[1] {
            0 => Encoding::Identity,
            1 => Encoding::Gzip,
            2 => Encoding::Zstd,
            _ => return Err(bad("unknown encoding")),
        };
        // Strict, as the format and encoding bytes are: a record that parses encodes back to the
        // same bytes (found by fuzz/wal_record: 255 parsed as true and encoded as 1).
        let redact_content = match rest[2] {
            0 => false,
            1 => true,
            _ => return Err(bad("unknown redaction flag")),
        };
        let received_at_unix_nano = i64::from_le_bytes(rest[3..11].try_into().unwrap_or_default());
        let plain_len = u64::from_le_bytes(rest[11..19].try_into().unwrap_or_default());
        let source_len = u16::from_le_bytes(rest[19..21].try_into().unwrap_or_default()) as usize;
        let rest = &rest[FIXED..];
        if rest.len() < source_len {
            return Err(bad("source cut short"));
        }
        let source = std::str::from_utf8(&rest[..source_len])
            .map_err(|_| bad("source is not UTF-8"))?
            .to_string();
        Ok(Some(RequestRecord {
            format,
            encoding,
            plain_len,
            ctx: IngestContext {
                received_at_unix_nano,
                source,
                redact_content,
            },
            body: &rest[source_len..],
        }))
    }

    /// The rows the request converts to (the same rows conversion before the answer gives), for
    /// the store's writer: origin columns as dictionaries
    /// ([`schemas::convert::store_batch_schema`]).
    pub fn convert(&self) -> Result<RecordBatch, RecordError> {
        #[cfg(feature = "failpoints")]
        fail::fail_point!("record::convert", |_| Err(RecordError::Convert(
            "injected fault at record::convert".to_string()
        )));
        // The stored length is the cap; a damaged header cannot ask for more than a body may be.
        let cap = usize::try_from(self.plain_len)
            .unwrap_or(usize::MAX)
            .min(MAX_PLAIN_BYTES);
        let plain = decompress_capped(self.body, self.encoding, cap)
            .map_err(|e| RecordError::Request(e.to_string()))?;
        let request = match self.format {
            Format::Protobuf => schemas::decode::decode_protobuf(&plain),
            Format::Json => schemas::decode::decode_json(&plain),
        }
        .map_err(|e| RecordError::Request(e.to_string()))?;
        drop(plain);
        // Its size was checked against --max-converted-bytes before it was acknowledged.
        convert_request_for_store(&request, &self.ctx, u64::MAX)
            .map(|c| c.batch)
            .map_err(|e| RecordError::Convert(e.to_string()))
    }
}

/// Whether `payload` is a request record (a request as received, converted once in the WAL).
pub fn is_request(payload: &[u8]) -> bool {
    payload.starts_with(MAGIC)
}

/// The batches of a WAL record, whichever its kind (one in practice; none for an empty record),
/// in the canonical [`schemas::span_schema`]: for readers of the WAL beside the store.
pub fn decode(payload: &[u8]) -> Result<Vec<RecordBatch>, RecordError> {
    match RequestRecord::parse(payload)? {
        Some(request) => {
            let batch = schemas::convert::to_span_schema(request.convert()?)
                .map_err(|e| RecordError::Convert(e.to_string()))?;
            Ok(vec![batch])
        }
        None => Ok(ipc::decode(payload)?),
    }
}

/// The one batch of a WAL record, whichever its kind; `None` when it holds no rows. A request
/// record's batch is [`RequestRecord::convert`]'s, for the store's writer
/// ([`schemas::convert::store_batch_schema`]).
pub fn decode_one(payload: &[u8]) -> Result<Option<RecordBatch>, RecordError> {
    match RequestRecord::parse(payload)? {
        Some(request) => Ok(Some(request.convert()?)),
        None => Ok(ipc::decode_one(payload)?),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use prost::Message as _;
    use std::io::Write as _;

    fn request() -> opentelemetry_proto::tonic::collector::trace::v1::ExportTraceServiceRequest {
        synth::RequestBuilder::new(3, synth::SpanMix::default())
            .with_fixed_clock(1_700_000_000_000_000_000)
            .build(40)
    }

    fn ctx() -> IngestContext {
        IngestContext {
            received_at_unix_nano: 1_700_000_000_123_456_789,
            source: "otlp-http".into(),
            redact_content: false,
        }
    }

    /// A protobuf body stored as it came (no compression).
    fn identity(plain: &[u8]) -> RequestRecord<'_> {
        RequestRecord {
            format: Format::Protobuf,
            encoding: Encoding::Identity,
            plain_len: plain.len() as u64,
            ctx: ctx(),
            body: plain,
        }
    }

    fn direct(
        req: &opentelemetry_proto::tonic::collector::trace::v1::ExportTraceServiceRequest,
    ) -> RecordBatch {
        schemas::convert::convert_request(req, &ctx()).batch
    }

    #[test]
    fn a_request_record_replays_to_the_rows_conversion_gives() {
        let req = request();
        let plain = req.encode_to_vec();
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        gz.write_all(&plain).unwrap();
        let gz = gz.finish().unwrap();
        let json = serde_json::to_vec(&req).unwrap();
        for (format, encoding, body) in [
            (Format::Protobuf, Encoding::Identity, plain.as_slice()),
            (Format::Protobuf, Encoding::Gzip, gz.as_slice()),
            (Format::Json, Encoding::Identity, json.as_slice()),
        ] {
            let plain_len = match encoding {
                Encoding::Identity => body.len(),
                _ => plain.len(),
            } as u64;
            let record = RequestRecord {
                format,
                encoding,
                plain_len,
                ctx: ctx(),
                body,
            };
            let payload = record.encode();
            assert!(is_request(&payload));
            assert_eq!(RequestRecord::parse(&payload).unwrap(), Some(record));
            // The writer's rows keep the origin columns as dictionaries; readers get the
            // canonical rows.
            let rows = decode_one(&payload).unwrap().unwrap();
            assert_eq!(rows.schema(), schemas::convert::store_batch_schema());
            let canonical = schemas::convert::to_span_schema(rows).unwrap();
            assert_eq!(canonical, direct(&req), "{format:?} {encoding:?}");
            assert_eq!(decode(&payload).unwrap(), vec![canonical]);
        }
    }

    #[test]
    fn ipc_records_still_decode() {
        let rows = direct(&request());
        let payload = ipc::encode(&rows).unwrap();
        assert!(!is_request(&payload));
        assert_eq!(RequestRecord::parse(&payload).unwrap(), None);
        assert_eq!(decode_one(&payload).unwrap(), Some(rows));
    }

    #[test]
    fn the_header_and_the_body_appended_apart_are_the_payload() {
        let plain = request().encode_to_vec();
        let record = identity(&plain);
        let mut apart = record.encode_header();
        assert!(
            apart.len() < 64,
            "the header is small: {} bytes",
            apart.len()
        );
        apart.extend_from_slice(&plain);
        assert_eq!(apart, record.encode());
        assert_eq!(RequestRecord::parse(&apart).unwrap(), Some(record));
    }

    #[test]
    fn a_damaged_request_record_is_an_error_not_a_panic() {
        let plain = request().encode_to_vec();
        let payload = identity(&plain).encode();
        for cut in [
            MAGIC.len(),
            MAGIC.len() + 5,
            MAGIC.len() + FIXED + 3,
            payload.len() - 7,
        ] {
            assert!(decode_one(&payload[..cut]).is_err(), "cut at {cut}");
        }
        // Every header byte with a fixed set of values is checked: a flag of 255 is damage, not
        // `true` (it would encode back as 1: fuzz/wal_record).
        for (at, value) in [(0, 2u8), (1, 3), (2, 255)] {
            let mut bad = payload.clone();
            bad[MAGIC.len() + at] = value;
            assert!(
                matches!(RequestRecord::parse(&bad), Err(RecordError::Request(_))),
                "byte {at} = {value}"
            );
        }
        // A body longer than the length it was stored with is refused, not decompressed on.
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        gz.write_all(&plain).unwrap();
        let gz = gz.finish().unwrap();
        let short = RequestRecord {
            format: Format::Protobuf,
            encoding: Encoding::Gzip,
            plain_len: 10,
            ctx: ctx(),
            body: &gz,
        }
        .encode();
        assert!(matches!(decode_one(&short), Err(RecordError::Request(_))));
        // A damaged length field (u64::MAX) neither overflows nor allocates: the body decodes.
        let huge = RequestRecord {
            format: Format::Protobuf,
            encoding: Encoding::Gzip,
            plain_len: u64::MAX,
            ctx: ctx(),
            body: &gz,
        }
        .encode();
        assert!(decode_one(&huge).unwrap().is_some());
    }
}
