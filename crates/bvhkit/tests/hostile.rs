//! Inputs that cannot be recovered (`tests/data/hostile`) and inputs built
//! to exhaust memory or the stack: errors with positions, never a panic.
use std::time::Instant;

use bvhkit::{ErrorKind, ReadOptions};

use crate::util::{check_expected, fixtures};

fn outcome(input: &[u8], lenient: bool) -> String {
    match ReadOptions::new().lenient(lenient).parse(input) {
        Ok((b, w)) => format!("ok: frames={} warnings={}", b.motion().n_frames(), w.len()),
        Err(e) => e.to_string(),
    }
}

#[test]
fn hostile_inputs_match_their_expectations() {
    let files = fixtures("hostile");
    assert!(files.len() >= 25);
    for f in files {
        let input = std::fs::read(&f).unwrap();
        let text =
            format!("strict: {}\nlenient: {}\n", outcome(&input, false), outcome(&input, true));
        check_expected(&f, &text);
        // The streaming reader agrees on the first error.
        let streamed = match ReadOptions::new().frame_reader(&input[..]) {
            Err(e) => Some(e.to_string()),
            Ok(mut r) => {
                let mut buf = vec![0.0; r.skeleton().n_channels()];
                loop {
                    match r.read_frame(&mut buf) {
                        Ok(true) => {}
                        Ok(false) => break None,
                        Err(e) => break Some(e.to_string()),
                    }
                }
            }
        };
        // So does the one that scans the bytes in place.
        let sliced = match ReadOptions::new().frame_reader_slice(&input) {
            Err(e) => Some(e.to_string()),
            Ok(mut r) => {
                let mut batch = Vec::new();
                loop {
                    match r.read_frames(&mut batch, 5) {
                        Ok(0) => break None,
                        Ok(_) => {}
                        Err(e) => break Some(e.to_string()),
                    }
                }
            }
        };
        assert_eq!(sliced, streamed, "{}", f.display());
        if let Err(e) = ReadOptions::new().parse(&input) {
            assert_eq!(streamed.as_deref(), Some(e.to_string().as_str()), "{}", f.display());
        }
    }
}

fn skeleton_with(motion: &str) -> Vec<u8> {
    format!("HIERARCHY\nROOT A\n{{\nOFFSET 0 0 0\nCHANNELS 1 Xrotation\n}}\nMOTION\n{motion}")
        .into_bytes()
}

#[test]
fn a_huge_declared_frame_count_allocates_nothing() {
    let input = skeleton_with("Frames: 1000000000000000\nFrame Time: 0.1\n1\n");
    let (b, w) = ReadOptions::new().lenient(true).parse(&input).unwrap();
    assert_eq!(b.motion().n_frames(), 1);
    assert_eq!(w.len(), 1);
    assert!(matches!(
        ReadOptions::new().parse(&input).unwrap_err().kind(),
        ErrorKind::FrameCount { .. }
    ));
    // With no channels at all, frames are empty lines: the count is still
    // bounded by the lines present.
    let input = b"HIERARCHY ROOT A { OFFSET 0 0 0 CHANNELS 0 }\nMOTION\nFrames: 1000000000000000\nFrame Time: 0.1\n\n\n";
    let (b, _) = ReadOptions::new().lenient(true).parse(input).unwrap();
    assert_eq!(b.motion().n_frames(), 2);
}

#[test]
fn nesting_100_000_deep_does_not_overflow_the_stack() {
    let depth = 100_000;
    let mut text = String::from("HIERARCHY\nROOT J0 { OFFSET 0 0 0 CHANNELS 1 Xrotation\n");
    for i in 1..depth {
        text.push_str(&format!("JOINT J{i} {{ OFFSET 0 1 0 CHANNELS 0\n"));
    }
    text.push_str(&"}".repeat(depth));
    text.push_str("\nMOTION\nFrames: 1\nFrame Time: 0.1\n5\n");
    // Run on a small stack to prove nothing recurses.
    let handle = std::thread::Builder::new()
        .stack_size(256 * 1024)
        .spawn(move || {
            let b = bvhkit::Bvh::parse(&text).unwrap();
            assert_eq!(b.skeleton().len(), depth);
            assert_eq!(b.skeleton().joints()[depth - 1].depth(), depth - 1);
            let out = b.to_bytes().unwrap();
            assert_eq!(bvhkit::Bvh::parse(&out).unwrap(), b);
            drop(b);
        })
        .unwrap();
    handle.join().unwrap();
    // Unbalanced at that depth is an error, not a crash.
    let text = "HIERARCHY ROOT A { OFFSET 0 0 0 CHANNELS 0 ".to_string()
        + &"JOINT B { OFFSET 0 0 0 CHANNELS 0 ".repeat(100_000);
    let e = bvhkit::Bvh::parse(&text).unwrap_err();
    assert!(matches!(e.kind(), ErrorKind::UnexpectedEof { .. }), "{e}");
}

#[test]
fn a_giant_joint_name_is_refused_quickly() {
    // 64 MiB of name: over the limit, refused without copying it all.
    let mut input = b"HIERARCHY\nROOT ".to_vec();
    input.resize(input.len() + (64 << 20), b'n');
    input.extend_from_slice(b"\n{ OFFSET 0 0 0 CHANNELS 0 }\n");
    let t = Instant::now();
    for lenient in [false, true] {
        let e = ReadOptions::new().lenient(lenient).parse(&input).unwrap_err();
        assert_eq!(e.position().map(|p| (p.line, p.column)), Some((2, 6)));
        assert!(e.to_string().contains("joint name of at most 65536 bytes"), "{e}");
        assert!(e.to_string().len() < 200, "the message quotes a short prefix only");
    }
    let mut r = ReadOptions::new().frame_reader(&input[..]);
    assert!(r.as_mut().is_err());
    assert!(t.elapsed().as_secs() < 60);
}

#[test]
fn a_long_line_is_fine() {
    // One frame of 200,000 channels on a single line (the seeds warn readers
    // that assume a line-length limit).
    let n = 200_000;
    let mut text = String::from("HIERARCHY\nROOT R { OFFSET 0 0 0 CHANNELS 0\n");
    for i in 0..n / 3 {
        text.push_str(&format!(
            "JOINT J{i} {{ OFFSET 0 1 0 CHANNELS 3 Zrotation Xrotation Yrotation }}\n"
        ));
    }
    text.push_str("}\nMOTION\nFrames: 1\nFrame Time: 0.1\n");
    let c = (n / 3) * 3;
    text.push_str(&vec!["1.5"; c].join(" "));
    let b = bvhkit::Bvh::parse(&text).unwrap();
    assert_eq!(b.motion().frame(0).len(), c);
}
