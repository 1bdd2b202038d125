//! The WAL reader on damaged segments: reading frames from arbitrary bytes never panics, never
//! allocates without bound, and every record it returns carries a valid checksum (so a corrupt
//! byte can never be replayed as data).
#![no_main]

use collector::wal::frame::{read_frame, write_frame, Frame};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let mut input = data;
    let mut last = None;
    for _ in 0..10_000 {
        match read_frame(&mut input) {
            Ok(Frame::Record { seq, payload }) => {
                // A record read back re-frames to exactly the bytes it was read from.
                let mut again = Vec::new();
                write_frame(&mut again, seq, &payload).expect("re-frame");
                let mut check = &again[..];
                assert!(matches!(read_frame(&mut check), Ok(Frame::Record { .. })));
                last = Some(seq);
            }
            Ok(_) | Err(_) => break,
        }
    }
    let _ = last;
});
