//! For arbitrary bytes: strict and lenient parsing never panic; whatever
//! parses writes to canonical text that parses back strictly to the same
//! model, bit for bit; the streaming reader never panics, never hands out
//! more frames than the input can hold, and agrees with the in-memory parse
//! (frames, values and, when lenient, warnings) whenever that succeeds.
#![no_main]

use bvhkit::{Bvh, ReadOptions};
use bvhkit_testdata::assert_bit_identical;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    for lenient in [false, true] {
        let mut opts = ReadOptions::new();
        opts.lenient(lenient).parallel(false);
        let parsed = opts.parse(data);
        if let Ok((bvh, _)) = &parsed {
            let text = bvh.to_bytes().expect("a parsed model is finite and writes");
            let back = match Bvh::parse(&text) {
                Ok(b) => b,
                Err(e) => panic!(
                    "canonical output does not parse strictly: {e}\n{}",
                    String::from_utf8_lossy(&text)
                ),
            };
            assert_bit_identical(bvh, &back, "round trip");
        }
        // The streaming reader, over the same bytes.
        let Ok(mut rdr) = opts.frame_reader(data) else {
            continue;
        };
        let c = rdr.skeleton().n_channels();
        let mut frame = vec![0.0; c];
        let mut values = Vec::new();
        let mut ok = true;
        loop {
            match rdr.read_frame(&mut frame) {
                Ok(true) => {
                    values.extend_from_slice(&frame);
                    assert!(
                        rdr.frames_read() <= data.len() as u64 + 1,
                        "more frames than the input can hold"
                    );
                }
                Ok(false) => break,
                Err(_) => {
                    ok = false;
                    break;
                }
            }
        }
        if let Ok((bvh, warnings)) = &parsed {
            assert!(ok, "parsing succeeds but streaming fails (lenient: {lenient})");
            assert_eq!(rdr.frames_read() as usize, bvh.motion().n_frames(), "streamed frame count");
            let same =
                values.iter().zip(bvh.motion().values()).all(|(x, y)| x.to_bits() == y.to_bits());
            assert!(same && values.len() == bvh.motion().values().len(), "streamed values differ");
            let text = |w: &[bvhkit::Warning]| w.iter().map(|w| w.to_string()).collect::<Vec<_>>();
            assert_eq!(text(rdr.warnings()), text(warnings), "streamed warnings differ");
        }
    }
});
