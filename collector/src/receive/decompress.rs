//! Decompressing a request body (`Content-Encoding` / `grpc-encoding`: identity, gzip, zstd) under
//! the body cap. The cap is applied to the bytes *after* decompression, so a small gzip or zstd
//! bomb cannot make the collector allocate gigabytes; the compressed body is capped too.

use std::borrow::Cow;
use std::io::Read;

/// Content encodings a client may send.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Encoding {
    Identity,
    Gzip,
    Zstd,
}

impl Encoding {
    /// Parse a `Content-Encoding` (or `grpc-encoding`) header value; `None` means unsupported.
    pub fn parse(header: Option<&str>) -> Option<Encoding> {
        match header.map(|h| h.trim().to_ascii_lowercase()).as_deref() {
            None | Some("") | Some("identity") => Some(Encoding::Identity),
            Some("gzip") | Some("x-gzip") => Some(Encoding::Gzip),
            Some("zstd") => Some(Encoding::Zstd),
            Some(_) => None,
        }
    }
}

/// Why a body could not be turned into plain bytes.
#[derive(Debug, thiserror::Error)]
pub enum BodyError {
    /// The (decompressed) body is larger than the cap.
    #[error("request body exceeds the limit of {limit} bytes after decompression; send smaller batches (or raise --max-body-bytes)")]
    TooLarge { limit: usize },
    /// The compressed stream is corrupt.
    #[error("cannot decompress the {encoding} request body: {source}; check the Content-Encoding header matches the body")]
    Corrupt {
        encoding: &'static str,
        source: std::io::Error,
    },
}

/// Decompress `body` per `encoding`, failing with [`BodyError::TooLarge`] as soon as more than
/// `limit` bytes come out (the reader stops there: memory stays bounded by `limit`).
/// A plain body is borrowed, not copied.
pub fn decompress_capped(
    body: &[u8],
    encoding: Encoding,
    limit: usize,
) -> Result<Cow<'_, [u8]>, BodyError> {
    match encoding {
        Encoding::Identity => {
            if body.len() > limit {
                return Err(BodyError::TooLarge { limit });
            }
            Ok(Cow::Borrowed(body))
        }
        Encoding::Gzip => {
            read_capped(flate2::read::MultiGzDecoder::new(body), "gzip", limit).map(Cow::Owned)
        }
        Encoding::Zstd => {
            let decoder =
                zstd::stream::read::Decoder::new(body).map_err(|source| BodyError::Corrupt {
                    encoding: "zstd",
                    source,
                })?;
            read_capped(decoder, "zstd", limit).map(Cow::Owned)
        }
    }
}

fn read_capped(reader: impl Read, name: &'static str, limit: usize) -> Result<Vec<u8>, BodyError> {
    let mut out = Vec::new();
    // Read one byte past the limit to tell "exactly at the limit" from "over it".
    let mut taken = reader.take((limit as u64).saturating_add(1));
    taken
        .read_to_end(&mut out)
        .map_err(|source| BodyError::Corrupt {
            encoding: name,
            source,
        })?;
    if out.len() > limit {
        return Err(BodyError::TooLarge { limit });
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    fn gzip(data: &[u8]) -> Vec<u8> {
        let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
        e.write_all(data).unwrap();
        e.finish().unwrap()
    }

    #[test]
    fn gzip_within_the_cap_round_trips() {
        let body = gzip(b"hello");
        let out = decompress_capped(&body, Encoding::Gzip, 5).unwrap();
        assert_eq!(&out[..], b"hello");
    }

    #[test]
    fn gzip_bomb_stops_at_the_cap() {
        let bomb = gzip(&vec![0u8; 10 * 1024 * 1024]);
        assert!(bomb.len() < 20 * 1024, "bomb is {} bytes", bomb.len());
        let err = decompress_capped(&bomb, Encoding::Gzip, 1024 * 1024).unwrap_err();
        assert!(matches!(err, BodyError::TooLarge { limit: 1048576 }));
    }

    #[test]
    fn zstd_over_the_cap_is_too_large() {
        let z = zstd::encode_all(&vec![7u8; 4096][..], 3).unwrap();
        assert!(matches!(
            decompress_capped(&z, Encoding::Zstd, 4095),
            Err(BodyError::TooLarge { limit: 4095 })
        ));
        assert_eq!(
            decompress_capped(&z, Encoding::Zstd, 4096).unwrap().len(),
            4096
        );
    }

    #[test]
    fn plain_body_is_borrowed_not_copied() {
        let body = b"plain bytes".to_vec();
        let out = decompress_capped(&body, Encoding::Identity, 11).unwrap();
        assert!(matches!(out, Cow::Borrowed(b) if std::ptr::eq(b, &body[..])));
        assert!(matches!(
            decompress_capped(&body, Encoding::Identity, 10),
            Err(BodyError::TooLarge { limit: 10 })
        ));
    }

    #[test]
    fn corrupt_gzip_is_reported() {
        let err = decompress_capped(b"not gzip at all", Encoding::Gzip, 100).unwrap_err();
        assert!(err
            .to_string()
            .starts_with("cannot decompress the gzip request body"));
    }

    #[test]
    fn encodings_parse() {
        assert_eq!(Encoding::parse(None), Some(Encoding::Identity));
        assert_eq!(Encoding::parse(Some("GZIP")), Some(Encoding::Gzip));
        assert_eq!(Encoding::parse(Some("zstd")), Some(Encoding::Zstd));
        assert_eq!(Encoding::parse(Some("br")), None);
    }
}
