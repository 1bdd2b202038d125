//! On-disk framing of one WAL record: `magic u32 | len u32 | crc32 u32 | seq u64 | payload`.
//! The CRC covers `seq` and the payload, so a torn or corrupted frame is detected and never
//! replayed as data; the magic makes a zero-filled tail (after a crash on some filesystems) fail
//! instead of parsing as an empty record, and lets a scan find the next frame after damage.

use std::io::{self, Write};

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
    frame_header_parts(seq, &[payload])
}

/// The header of a payload made of `parts`, written one after the other: the frame on disk is
/// the same as that of their concatenation.
pub fn frame_header_parts(seq: u64, parts: &[&[u8]]) -> io::Result<[u8; HEADER_LEN]> {
    let total: usize = parts.iter().map(|p| p.len()).sum();
    let len = u32::try_from(total)
        .ok()
        .filter(|l| *l < MAX_PAYLOAD)
        .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "wal record too large"))?;
    let mut hasher = crc32fast::Hasher::new();
    hasher.update(&seq.to_le_bytes());
    for part in parts {
        hasher.update(part);
    }
    let mut header = [0u8; HEADER_LEN];
    header[0..4].copy_from_slice(&MAGIC.to_le_bytes());
    header[4..8].copy_from_slice(&len.to_le_bytes());
    header[8..12].copy_from_slice(&hasher.finalize().to_le_bytes());
    header[12..20].copy_from_slice(&seq.to_le_bytes());
    Ok(header)
}

/// Decode the frame at the start of `buf` (a segment read into memory): `(seq, payload, frame
/// length)`, or why the bytes there are not an intact frame. Used by the scan that can skip a
/// damaged frame and resynchronise on the next intact one.
pub fn decode_frame(buf: &[u8]) -> Result<(u64, &[u8], usize), &'static str> {
    if buf.len() < HEADER_LEN {
        return Err("partial header");
    }
    let word = |i: usize| u32::from_le_bytes([buf[i], buf[i + 1], buf[i + 2], buf[i + 3]]);
    if word(0) != MAGIC {
        return Err("bad magic");
    }
    let len = word(4);
    if len >= MAX_PAYLOAD {
        return Err("implausible length");
    }
    let end = HEADER_LEN + len as usize;
    if buf.len() < end {
        return Err("partial payload");
    }
    let mut hasher = crc32fast::Hasher::new();
    hasher.update(&buf[12..20]);
    hasher.update(&buf[HEADER_LEN..end]);
    if hasher.finalize() != word(8) {
        return Err("checksum mismatch");
    }
    let mut seq = [0u8; 8];
    seq.copy_from_slice(&buf[12..20]);
    Ok((u64::from_le_bytes(seq), &buf[HEADER_LEN..end], end))
}

/// Offsets at or after `from` where the frame magic starts (candidates for resynchronising).
pub fn magic_offsets(buf: &[u8], from: usize) -> impl Iterator<Item = usize> + '_ {
    let magic = MAGIC.to_le_bytes();
    buf.get(from..)
        .unwrap_or_default()
        .windows(4)
        .enumerate()
        .filter(move |(_, w)| *w == magic)
        .map(move |(i, _)| from + i)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frames_round_trip_and_detect_damage() {
        let mut buf = Vec::new();
        write_frame(&mut buf, 7, b"abc").unwrap();
        write_frame(&mut buf, 8, b"").unwrap();
        let (seq, payload, len) = decode_frame(&buf).unwrap();
        assert_eq!((seq, payload, len), (7, &b"abc"[..], HEADER_LEN + 3));
        let (seq, payload, _) = decode_frame(&buf[len..]).unwrap();
        assert_eq!((seq, payload), (8, &b""[..]));
        assert_eq!(magic_offsets(&buf, 1).collect::<Vec<_>>(), vec![len]);

        let mut flipped = buf.clone();
        flipped[HEADER_LEN] ^= 1;
        assert_eq!(decode_frame(&flipped), Err("checksum mismatch"));
        assert_eq!(decode_frame(&buf[..HEADER_LEN + 1]), Err("partial payload"));
        assert_eq!(decode_frame(&buf[..HEADER_LEN - 1]), Err("partial header"));
        assert_eq!(decode_frame(&[0u8; 30]), Err("bad magic"));
    }

    #[test]
    fn a_payload_in_parts_frames_as_its_concatenation() {
        let parts: [&[u8]; 3] = [b"head", b"", b"body bytes"];
        assert_eq!(
            frame_header_parts(9, &parts).unwrap(),
            frame_header(9, b"headbody bytes").unwrap()
        );
        assert_ne!(
            frame_header_parts(9, &[b"body bytes", b"head"]).unwrap(),
            frame_header(9, b"headbody bytes").unwrap()
        );
    }
}
