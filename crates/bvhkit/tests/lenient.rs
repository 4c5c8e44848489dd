//! Recoverable quirks (`tests/data/quirks`): what strict and lenient reading
//! make of each, checked against the `.expected` file next to it.
use bvhkit::{Bvh, ReadOptions, WarningKind};

use crate::util::{
    assert_round_trip, assert_streaming_agrees, check_expected, data_dir, fixtures, stem,
};

fn describe(input: &[u8]) -> String {
    let mut out = String::new();
    match ReadOptions::new().parse(input) {
        Ok((_, w)) => {
            assert!(w.is_empty(), "strict mode never warns");
            out.push_str("strict: ok\n");
        }
        Err(e) => out.push_str(&format!("strict: {e}\n")),
    }
    match ReadOptions::new().lenient(true).parse(input) {
        Ok((bvh, warnings)) => {
            let m = bvh.motion();
            out.push_str(&format!(
                "lenient: joints={} channels={} frames={} frame_time={}\n",
                bvh.skeleton().len(),
                m.n_channels(),
                m.n_frames(),
                m.frame_time()
            ));
            for w in warnings {
                out.push_str(&format!("warning: {w}\n"));
            }
        }
        Err(e) => out.push_str(&format!("lenient: {e}\n")),
    }
    out
}

#[test]
fn quirks_match_their_expectations() {
    let files = fixtures("quirks");
    assert!(files.len() >= 30);
    for f in files {
        let input = std::fs::read(&f).unwrap();
        check_expected(&f, &describe(&input));
        // Whatever lenient reading makes of it writes out and reads back exactly.
        let (bvh, _) = ReadOptions::new().lenient(true).parse(&input).unwrap();
        assert_round_trip(&bvh, &stem(&f));
        // Streaming makes the same frames of it, with the same warnings.
        assert_streaming_agrees(&input, &stem(&f));
    }
}

fn lenient(name: &str) -> (Bvh, Vec<bvhkit::Warning>) {
    let input = std::fs::read(data_dir("quirks").join(format!("{name}.bvh"))).unwrap();
    ReadOptions::new().lenient(true).parse(&input).unwrap()
}

#[test]
fn layout_variants_all_give_the_same_motion() {
    let (base, _) = lenient("crlf");
    for name in [
        "bom",
        "cr_only",
        "mixed_eol",
        "no_final_newline",
        "one_line",
        "keyword_case",
        "blank_lines_in_motion",
        "wrapped_rows",
        "several_frames_per_line",
        "no_indentation_spaces_tabs",
        "end_site_lowercase",
        "frame_time_glued",
        "frames_too_many",
        "frames_huge",
    ] {
        let (b, _) = lenient(name);
        assert_eq!(b, base, "{name}");
    }
    assert_eq!(base.motion().frame(1), [10., 11., 12., 13., 14., 15., 16., 17., 18.]);
}

#[test]
fn numbers_in_every_spelling() {
    let (b, w) = lenient("number_spellings");
    assert!(w.is_empty());
    let f = b.motion().frame(0);
    assert_eq!(f[..3], [1.0, 2.0, 0.3]);
    assert!(f[3] == 0.0 && f[3].is_sign_negative(), "-0 keeps its sign");
    assert_eq!(f[4..], [4.0, 50.0, -0.65, 1e-21, 1.2345678901234568e23]);
}

#[test]
fn names_survive_byte_for_byte() {
    let (b, _) = lenient("names_with_spaces_colon_hash_unicode");
    let names: Vec<&str> = b.skeleton().joints().iter().map(|j| j.name()).collect();
    assert_eq!(names, ["mixamorig:Hips #1 . é", "Spine  Upper", ""]);
    assert_eq!(
        b.skeleton().display_names(),
        ["mixamorig:Hips #1 . é", "Spine Upper", "Spine Upper_End"]
    );
}

#[test]
fn rows_with_the_same_wrong_count_are_read_row_by_row() {
    let (b, w) = lenient("same_wrong_count_per_row");
    assert_eq!(w.len(), 1);
    assert_eq!(w[0].kind, WarningKind::RowLayout);
    assert_eq!(b.motion().frame(1), [10., 11., 12., 13., 14., 15., 0., 0., 0.]);
    let (b, _) = lenient("same_long_count_per_row");
    assert_eq!(b.motion().frame(1), [10., 11., 12., 13., 14., 15., 16., 17., 18.]);
}

#[test]
fn a_cut_last_row_is_dropped() {
    let (b, w) = lenient("last_row_cut");
    assert_eq!(b.motion().n_frames(), 2);
    let kinds: Vec<WarningKind> = w.iter().map(|w| w.kind).collect();
    assert_eq!(kinds, [WarningKind::TruncatedFrame, WarningKind::FrameCount]);
    assert_eq!(w[0].position.map(|p| p.line), Some(21));
}

#[test]
fn several_roots_and_odd_channels_are_kept() {
    let (b, w) = lenient("two_roots");
    assert!(w.is_empty());
    assert_eq!(b.skeleton().roots().count(), 2);
    assert_eq!(b.motion().frame(0)[9..], [0.5, 0.25, 0.125]);
    let (b, w) = lenient("odd_channel_layouts");
    assert!(w.is_empty());
    let s = b.skeleton();
    assert_eq!(s.n_channels(), 5);
    assert!(s.joints()[0].channels().is_empty());
    assert_eq!(s.joints()[1].channels().len(), 4);
    assert_eq!(s.joints().iter().filter(|j| j.is_end_site()).count(), 2);
}

#[test]
fn missing_frame_time_is_assumed_and_said() {
    for name in ["frame_time_missing", "frame_time_zero"] {
        let (b, w) = lenient(name);
        assert_eq!(b.motion().frame_time(), 1.0 / 30.0);
        assert!(
            w.iter().any(|w| w.kind == WarningKind::FrameTime && w.message.contains("1/30 s")),
            "{name}"
        );
    }
}

#[test]
fn lines_with_extra_values_are_frames_cut_to_the_channels() {
    let (bvh, w) = lenient("varying_extra_values_per_row");
    assert_eq!(bvh.motion().n_frames(), 4);
    let first: Vec<f64> = (1..=9).map(f64::from).collect();
    assert_eq!(bvh.motion().frame(0), first.as_slice());
    for (f, start) in [(1, 10.0), (2, 19.0), (3, 28.0)] {
        let want: Vec<f64> = (0..9).map(|k| start + f64::from(k)).collect();
        assert_eq!(bvh.motion().frame(f), want.as_slice(), "frame {f}");
    }
    assert_eq!(w.len(), 1);
    assert_eq!(w[0].kind, WarningKind::RowLayout);
}

/// A hand-tracking-like export large enough for the parallel parse: 108
/// channels, lines of 108, 110 or 112 values, one per declared frame.
#[test]
fn large_files_with_extra_values_per_line_agree_everywhere() {
    let joints = 36; // 3 rotations each
    let mut s = String::from(
        "HIERARCHY\nROOT j0\n{\nOFFSET 0 0 0\nCHANNELS 3 Zrotation Xrotation Yrotation\n",
    );
    for i in 1..joints {
        s.push_str(&format!(
            "JOINT j{i}\n{{\nOFFSET 0 1 0\nCHANNELS 3 Zrotation Xrotation Yrotation\n"
        ));
    }
    s.push_str("End Site\n{\nOFFSET 0 1 0\n}\n");
    s.push_str(&"}\n".repeat(joints));
    let frames = 6000;
    s.push_str(&format!("MOTION\nFrames: {frames}\nFrame Time: 0.0111\n"));
    let mut want = Vec::new();
    for f in 0..frames {
        let extra = [0, 2, 4][f % 3];
        let row: Vec<String> =
            (0..108 + extra).map(|k| format!("{}.5", (f * 7 + k) % 300)).collect();
        want.extend((0..108).map(|k| ((f * 7 + k) % 300) as f64 + 0.5));
        s.push_str(&row.join(" "));
        s.push('\n');
    }
    assert!(
        s.len() > 2 << 20,
        "{} bytes: large enough to be split across threads (2 MiB)",
        s.len()
    );
    for parallel in [false, true] {
        let (bvh, w) =
            ReadOptions::new().lenient(true).parallel(parallel).parse(s.as_bytes()).unwrap();
        assert_eq!(bvh.motion().n_frames(), frames);
        assert_eq!(bvh.motion().values(), want.as_slice(), "parallel: {parallel}");
        assert_eq!(w.len(), 1, "{w:?}");
        assert!(w[0].to_string().contains("108 to 112 values"), "{}", w[0]);
    }
    assert_eq!(assert_streaming_agrees(s.as_bytes(), "hand tracking"), frames);
}
