//! The WAL reader on damaged segments: scanning arbitrary bytes never panics, never reads out of
//! bounds, and every record it hands to replay carries a valid checksum and an increasing
//! sequence number (so a corrupt byte can never be replayed as data, nor a record twice).
#![no_main]

use collector::store::wal::frame::{decode_frame, write_frame};
use collector::store::wal::scan_frames;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let first = data.first().map_or(0, |b| u64::from(*b));
    let mut seen: Vec<u64> = Vec::new();
    let scan = scan_frames(data, first, None, |seq, payload| {
        // Every replayed record re-frames to an intact frame with the same content.
        let mut again = Vec::new();
        write_frame(&mut again, seq, payload).expect("re-frame");
        let (s, p, _) = decode_frame(&again).expect("intact");
        assert_eq!((s, p), (seq, payload));
        seen.push(seq);
    });
    assert!(seen.windows(2).all(|w| w[0] < w[1]), "sequence numbers increase");
    assert_eq!(scan.last_seq, seen.last().copied());
    let mut covered = 0usize;
    for s in &scan.skipped {
        assert!(s.offset >= covered && s.offset + s.len <= data.len());
        covered = s.offset + s.len;
    }
    if let Some((at, _)) = scan.tail {
        assert!(at <= data.len());
    }
});
