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

/// Deserialise the batches of one payload (one in practice).
pub fn decode(payload: &[u8]) -> Result<Vec<RecordBatch>, ArrowError> {
    let reader = StreamReader::try_new(payload, None)?;
    reader.collect()
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
