//! The checks both targets run on a BVH text.

use bvhkit::{Bvh, ReadOptions, Warning};
use bvhkit_testdata::assert_bit_identical;

fn text(w: &[Warning]) -> Vec<String> {
    w.iter().map(|w| w.to_string()).collect()
}

/// Strict and lenient parsing never panic; the parallel parse agrees with
/// the one-thread parse (model bit for bit, warnings, or the error); what
/// parses writes to canonical text that parses back strictly to the same
/// model; the streaming reader never panics, never hands out more frames
/// than the input can hold, and agrees with the in-memory parse (frames,
/// values, warnings) whenever that succeeds.
pub fn check(data: &[u8]) {
    for lenient in [false, true] {
        let mut opts = ReadOptions::new();
        opts.lenient(lenient).parallel(false);
        let parsed = opts.parse(data);
        let mut par = opts.clone();
        par.parallel(true);
        match (&parsed, par.parse(data)) {
            (Ok((a, wa)), Ok((b, wb))) => {
                assert_bit_identical(a, &b, "parallel parse");
                assert_eq!(text(wa), text(&wb), "parallel warnings");
            }
            (Err(a), Err(b)) => assert_eq!(a.to_string(), b.to_string(), "parallel error"),
            (a, b) => panic!(
                "one-thread and parallel parses disagree: {:?} vs {:?}",
                a.as_ref().map(|_| ()),
                b.map(|_| ())
            ),
        }
        if let Ok((bvh, _)) = &parsed {
            let text = bvh.to_bytes().expect("a parsed model is finite and writes");
            let back = match Bvh::parse(&text) {
                Ok(b) => b,
                Err(e) => panic!(
                    "canonical output does not parse strictly: {e}\n{}",
                    String::from_utf8_lossy(&text[..text.len().min(4096)])
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
            assert_eq!(text(rdr.warnings()), text(warnings), "streamed warnings differ");
        }
    }
}
