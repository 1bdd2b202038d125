//! Acknowledged request records that could not be converted into rows: kept whole under
//! `<data-dir>/quarantine/`, never dropped.
//!
//! Why: a request record ([`crate::store::wal::record`]) is acknowledged before it is
//! converted. Conversion does not fail on any input the validation let through, but if it ever
//! did (a bug), releasing the WAL record would lose acknowledged spans without a trace. The
//! record is written to its own file first (fsynced, then its directory), logged at error level
//! and counted (`records_quarantined_total`); `tripline ingest` reads the OTLP body back once the
//! cause is fixed. Only then does the WAL move past it.

use std::path::{Path, PathBuf};

use crate::store::durable_files::{fsync_dir, write_atomically};
use crate::store::wal::record::RequestRecord;

/// Directory under the data directory.
pub const QUARANTINE_DIR: &str = "quarantine";

/// Keep WAL record `seq` of WAL `epoch` (its `payload`) in the quarantine directory; returns the
/// file written. The OTLP body goes to a file `tripline ingest` reads (`.pb`, `.pb.gz`, `.json`
/// ...); a payload that is not a readable request record is kept as it is (`.walrecord`).
pub fn keep(data_dir: &Path, epoch: &str, seq: u64, payload: &[u8]) -> std::io::Result<PathBuf> {
    let dir = data_dir.join(QUARANTINE_DIR);
    std::fs::create_dir_all(&dir)?;
    let epoch: String = epoch
        .chars()
        .filter(|c| c.is_ascii_alphanumeric())
        .take(64)
        .collect();
    let (extension, bytes) = match RequestRecord::parse(payload) {
        Ok(Some(r)) => (body_extension(&r), r.body),
        _ => ("walrecord", payload),
    };
    let path = dir.join(format!("wal-{epoch}-{seq:020}.{extension}"));
    write_atomically(&path, bytes)?;
    fsync_dir(&dir)?;
    fsync_dir(data_dir)?;
    Ok(path)
}

fn body_extension(r: &RequestRecord<'_>) -> &'static str {
    use crate::receive::decompress::Encoding;
    use crate::receive::otlp_wire::Format;
    match (r.format, r.encoding) {
        (Format::Protobuf, Encoding::Identity) => "pb",
        (Format::Protobuf, Encoding::Gzip) => "pb.gz",
        (Format::Protobuf, Encoding::Zstd) => "pb.zst",
        (Format::Json, Encoding::Identity) => "json",
        (Format::Json, Encoding::Gzip) => "json.gz",
        (Format::Json, Encoding::Zstd) => "json.zst",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::receive::decompress::Encoding;
    use crate::receive::otlp_wire::Format;
    use schemas::convert::IngestContext;

    #[test]
    fn the_body_is_kept_in_a_file_ingest_reads_and_names_are_sanitised() {
        let dir = tempfile::tempdir().unwrap();
        let payload = RequestRecord {
            format: Format::Protobuf,
            encoding: Encoding::Gzip,
            plain_len: 3,
            ctx: IngestContext {
                received_at_unix_nano: 1,
                source: "otlp-http".into(),
                redact_content: false,
            },
            body: b"abc",
        }
        .encode();
        let path = keep(dir.path(), "../e/1", 7, &payload).unwrap();
        assert_eq!(path.parent().unwrap(), dir.path().join(QUARANTINE_DIR));
        assert_eq!(
            path.file_name().unwrap().to_str().unwrap(),
            "wal-e1-00000000000000000007.pb.gz"
        );
        assert_eq!(std::fs::read(&path).unwrap(), b"abc");
        let other = keep(dir.path(), "e", 8, b"\xff\xff\xff\xffipc").unwrap();
        assert!(other.to_str().unwrap().ends_with(".walrecord"));
        assert_eq!(std::fs::read(&other).unwrap(), b"\xff\xff\xff\xffipc");
    }
}
