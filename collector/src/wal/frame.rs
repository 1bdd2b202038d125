//! On-disk framing of one WAL record: `magic u32 | len u32 | crc32 u32 | seq u64 | payload`.
//! The CRC covers `seq` and the payload, so a torn or corrupted tail is detected and never
//! replayed as data; the magic makes a zero-filled tail (after a crash on some filesystems)
//! stop the scan instead of parsing as an empty record.

use std::io::{self, Read, Write};

const MAGIC: u32 = 0x5450_4c57; // "TPLW"
/// Bytes before the payload.
pub const HEADER_LEN: usize = 4 + 4 + 4 + 8;
/// A record larger than this is treated as corruption (the body cap is far below it).
const MAX_PAYLOAD: u32 = 1 << 31;

/// Write one framed record; returns the bytes written.
pub fn write_frame(out: &mut impl Write, seq: u64, payload: &[u8]) -> io::Result<usize> {
    out.write_all(&frame_header(seq, payload)?)?;
    out.write_all(payload)?;
    Ok(HEADER_LEN + payload.len())
}

/// The header that precedes `payload` on disk, so a caller can write header and payload
/// without first copying the payload into one buffer.
pub fn frame_header(seq: u64, payload: &[u8]) -> io::Result<[u8; HEADER_LEN]> {
    let len = u32::try_from(payload.len())
        .ok()
        .filter(|l| *l < MAX_PAYLOAD)
        .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "wal record too large"))?;
    let mut hasher = crc32fast::Hasher::new();
    hasher.update(&seq.to_le_bytes());
    hasher.update(payload);
    let mut header = [0u8; HEADER_LEN];
    header[0..4].copy_from_slice(&MAGIC.to_le_bytes());
    header[4..8].copy_from_slice(&len.to_le_bytes());
    header[8..12].copy_from_slice(&hasher.finalize().to_le_bytes());
    header[12..20].copy_from_slice(&seq.to_le_bytes());
    Ok(header)
}

/// Outcome of reading one frame.
#[derive(Debug)]
pub enum Frame {
    Record {
        seq: u64,
        payload: Vec<u8>,
    },
    /// Clean end of file exactly at a frame boundary.
    End,
    /// A partial or corrupt frame: everything from here on is not trusted.
    Torn {
        reason: &'static str,
    },
}

/// Read the next frame.
pub fn read_frame(input: &mut impl Read) -> io::Result<Frame> {
    let mut header = [0u8; HEADER_LEN];
    let got = read_full(input, &mut header)?;
    if got == 0 {
        return Ok(Frame::End);
    }
    if got < HEADER_LEN {
        return Ok(Frame::Torn {
            reason: "partial header",
        });
    }
    let word =
        |i: usize| u32::from_le_bytes([header[i], header[i + 1], header[i + 2], header[i + 3]]);
    if word(0) != MAGIC {
        return Ok(Frame::Torn {
            reason: "bad magic",
        });
    }
    let len = word(4);
    if len >= MAX_PAYLOAD {
        return Ok(Frame::Torn {
            reason: "implausible length",
        });
    }
    let crc = word(8);
    let mut seq_bytes = [0u8; 8];
    seq_bytes.copy_from_slice(&header[12..20]);
    let seq = u64::from_le_bytes(seq_bytes);
    let mut payload = vec![0u8; len as usize];
    if read_full(input, &mut payload)? < payload.len() {
        return Ok(Frame::Torn {
            reason: "partial payload",
        });
    }
    let mut hasher = crc32fast::Hasher::new();
    hasher.update(&seq_bytes);
    hasher.update(&payload);
    if hasher.finalize() != crc {
        return Ok(Frame::Torn {
            reason: "checksum mismatch",
        });
    }
    Ok(Frame::Record { seq, payload })
}

fn read_full(input: &mut impl Read, buf: &mut [u8]) -> io::Result<usize> {
    let mut n = 0;
    while n < buf.len() {
        match input.read(&mut buf[n..]) {
            Ok(0) => break,
            Ok(k) => n += k,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(n)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frames_round_trip_and_detect_damage() {
        let mut buf = Vec::new();
        write_frame(&mut buf, 7, b"abc").unwrap();
        write_frame(&mut buf, 8, b"").unwrap();
        let mut r = &buf[..];
        assert!(
            matches!(read_frame(&mut r).unwrap(), Frame::Record { seq: 7, ref payload } if payload == b"abc")
        );
        assert!(
            matches!(read_frame(&mut r).unwrap(), Frame::Record { seq: 8, ref payload } if payload.is_empty())
        );
        assert!(matches!(read_frame(&mut r).unwrap(), Frame::End));

        let mut flipped = buf.clone();
        flipped[HEADER_LEN] ^= 1;
        assert!(matches!(
            read_frame(&mut &flipped[..]).unwrap(),
            Frame::Torn {
                reason: "checksum mismatch"
            }
        ));
        assert!(matches!(
            read_frame(&mut &buf[..HEADER_LEN + 1]).unwrap(),
            Frame::Torn {
                reason: "partial payload"
            }
        ));
        assert!(matches!(
            read_frame(&mut &[0u8; 30][..]).unwrap(),
            Frame::Torn {
                reason: "bad magic"
            }
        ));
    }
}
