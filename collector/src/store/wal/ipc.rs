//! A WAL record's payload is the converted batch as an Arrow IPC stream: the request is decoded
//! and converted exactly once, and replay rebuilds the very same rows without re-running the
//! dialect mapping (which may have changed between versions).

use arrow::error::ArrowError;
use arrow::ipc::reader::StreamReader;
use arrow::ipc::writer::StreamWriter;
use arrow::record_batch::RecordBatch;

/// Serialise one batch.
pub fn encode(batch: &RecordBatch) -> Result<Vec<u8>, ArrowError> {
    // Sized up front (the batch's buffers plus room for the schema and metadata): growing the
    // vector by doubling copied the payload several times per request.
    let mut out = Vec::with_capacity(batch.get_array_memory_size() + 64 * 1024);
    {
        let mut w = StreamWriter::try_new(&mut out, &batch.schema())?;
        w.write(batch)?;
        w.finish()?;
    }
    Ok(out)
}

/// Deserialise the batches of one payload (one in practice). Its framing is checked first
/// (`check_framing`), so a damaged length cannot make the reader allocate beyond the payload.
pub fn decode(payload: &[u8]) -> Result<Vec<RecordBatch>, ArrowError> {
    check_framing(payload)?;
    let reader = StreamReader::try_new(payload, None)?;
    reader.collect()
}

/// Checks the framing of an Arrow IPC stream held whole in memory: every message's metadata and
/// body lie inside `payload`. The stream reader sizes its buffers from these lengths before it
/// reads them, so a damaged length (a record of another version, or bytes the CRC did not catch)
/// made it allocate and zero up to 2 GiB per message and spend minutes doing so (found by
/// `fuzz/wal_record`). Checked here, nothing is allocated beyond the payload's own size.
fn check_framing(payload: &[u8]) -> Result<(), ArrowError> {
    const CONTINUATION: i32 = -1; // 0xFFFF_FFFF
    let damaged = |what: &str| ArrowError::IpcError(format!("damaged Arrow IPC payload: {what}"));
    let word = |b: &[u8]| i32::from_le_bytes([b[0], b[1], b[2], b[3]]);
    let mut rest = payload;
    while !rest.is_empty() {
        if rest.len() < 4 {
            return Err(damaged("a message length is cut short"));
        }
        let (mut len, mut header) = (word(rest), 4);
        if len == CONTINUATION {
            if rest.len() < 8 {
                return Err(damaged("a message length is cut short"));
            }
            (len, header) = (word(&rest[4..]), 8);
        }
        if len == 0 {
            return Ok(()); // end of stream
        }
        let meta_end = usize::try_from(len)
            .ok()
            .and_then(|l| l.checked_add(header))
            .filter(|&end| end <= rest.len())
            .ok_or_else(|| damaged("a message's metadata runs past the payload"))?;
        let message = arrow::ipc::root_as_message(&rest[header..meta_end])
            .map_err(|e| damaged(&format!("unreadable message metadata ({e})")))?;
        let end = usize::try_from(message.bodyLength())
            .ok()
            .and_then(|body| body.checked_add(meta_end))
            .filter(|&end| end <= rest.len())
            .ok_or_else(|| damaged("a message's body runs past the payload"))?;
        rest = &rest[end..];
    }
    Ok(())
}

/// The one batch of a WAL record (its batches joined if there are several), `None` when empty.
pub fn decode_one(payload: &[u8]) -> Result<Option<RecordBatch>, ArrowError> {
    let batches = decode(payload)?;
    match batches.len() {
        0 => Ok(None),
        1 => Ok(batches.into_iter().next()),
        _ => {
            let schema = batches[0].schema();
            arrow::compute::concat_batches(&schema, &batches).map(Some)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow::array::Int64Array;
    use arrow::datatypes::{DataType, Field, Schema};
    use std::sync::Arc;

    fn payload() -> Vec<u8> {
        let schema = Arc::new(Schema::new(vec![Field::new("n", DataType::Int64, false)]));
        let batch =
            RecordBatch::try_new(schema, vec![Arc::new(Int64Array::from(vec![1, 2, 3]))]).unwrap();
        encode(&batch).unwrap()
    }

    #[test]
    fn a_whole_payload_passes_and_decodes() {
        let p = payload();
        assert!(check_framing(&p).is_ok());
        assert_eq!(decode_one(&p).unwrap().unwrap().num_rows(), 3);
    }

    #[test]
    fn a_length_past_the_payload_is_refused_before_anything_is_allocated() {
        let mut p = payload();
        // The first message's metadata length (after the continuation marker) set to 2 GiB - 1.
        assert_eq!(&p[..4], &[0xff; 4]);
        p[4..8].copy_from_slice(&i32::MAX.to_le_bytes());
        let e = decode(&p).unwrap_err().to_string();
        assert!(e.contains("metadata runs past the payload"), "{e}");
    }

    #[test]
    fn a_cut_payload_is_refused() {
        let p = payload();
        for cut in [2, 6, 9, p.len() / 2, p.len() - 9] {
            let e = decode(&p[..cut]).unwrap_err().to_string();
            assert!(e.contains("damaged Arrow IPC payload"), "cut at {cut}: {e}");
        }
        // The end-of-stream marker alone is an empty stream, not damage.
        assert!(check_framing(&[0xff, 0xff, 0xff, 0xff, 0, 0, 0, 0]).is_ok());
    }
}
