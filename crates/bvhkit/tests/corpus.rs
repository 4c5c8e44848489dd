//! Every file of the shared corpus parses: the well-formed ones strictly,
//! all of them leniently, with the warnings they deserve.
use std::collections::HashMap;

use bvhkit::{ReadOptions, WarningKind};

use crate::util::{corpus_dir, corpus_files, stem};

/// `file -> (joints without End Sites, channels, frames found)` from MANIFEST.tsv.
fn manifest() -> HashMap<String, (usize, usize, usize)> {
    let Some(dir) = corpus_dir() else { return HashMap::new() };
    let text = std::fs::read_to_string(dir.join("MANIFEST.tsv")).unwrap();
    let mut out = HashMap::new();
    for line in text.lines().skip(1) {
        let cols: Vec<&str> = line.split('\t').collect();
        let frames = cols[8];
        // "1352 (found 1)" means the file holds 1.
        let found = match frames.split_once("(found ") {
            Some((_, rest)) => rest.trim_end_matches(')').parse().unwrap(),
            None => frames.parse().unwrap_or(0),
        };
        out.insert(
            cols[0].trim_end_matches(".bvh").to_string(),
            (cols[6].parse().unwrap(), cols[7].parse().unwrap(), found),
        );
    }
    out
}

#[test]
fn well_formed_files_parse_strictly_and_match_the_manifest() {
    let manifest = manifest();
    for path in corpus_files() {
        let name = stem(&path);
        let bytes = std::fs::read(&path).unwrap();
        let strict = ReadOptions::new().parse(&bytes);
        if name.starts_with("malformed_") {
            assert!(strict.is_err(), "{name} should fail strict reading");
            continue;
        }
        let (bvh, warnings) = strict.unwrap_or_else(|e| panic!("{name}: {e}"));
        assert!(warnings.is_empty());
        let (joints, channels, frames) = manifest[&name];
        let s = bvh.skeleton();
        assert_eq!(
            s.joints().iter().filter(|j| !j.is_end_site()).count(),
            joints,
            "{name}: joints"
        );
        assert_eq!(s.n_channels(), channels, "{name}: channels");
        assert_eq!(bvh.motion().n_frames(), frames, "{name}: frames");
    }
}

#[test]
fn malformed_files_parse_leniently_with_the_warnings_they_deserve() {
    use WarningKind::*;
    let expected: &[(&str, &[WarningKind], usize)] = &[
        ("malformed_132_channels_66_values_per_row", &[RowLayout], 45),
        ("malformed_frames_1352_but_1_row", &[FrameCount], 1),
        ("malformed_frames_3069_rows_3070_boxing_toes", &[FrameCount], 3070),
        ("malformed_hierarchy_only_no_motion_kinect", &[MotionHeader], 0),
        ("malformed_no_motion_keyword_no_frame_time", &[MotionHeader, FrameTime, FrameCount], 59),
    ];
    let Some(dir) = corpus_dir() else { return };
    for (name, kinds, frames) in expected {
        let bytes = std::fs::read(dir.join(format!("{name}.bvh"))).unwrap();
        let (bvh, warnings) = ReadOptions::new().lenient(true).parse(&bytes).unwrap();
        let got: Vec<WarningKind> = warnings.iter().map(|w| w.kind).collect();
        assert_eq!(&got, kinds, "{name}: {warnings:?}");
        assert!(
            warnings.iter().all(|w| w.position.is_some()),
            "{name}: every warning has a position"
        );
        assert_eq!(bvh.motion().n_frames(), *frames, "{name}");
    }
    // 66 values per row: the first 66 channels come from the file, the rest are 0.
    let bytes = std::fs::read(dir.join("malformed_132_channels_66_values_per_row.bvh")).unwrap();
    let (bvh, _) = ReadOptions::new().lenient(true).parse(&bytes).unwrap();
    let f = bvh.motion().frame(0);
    assert!(f[66..].iter().all(|&v| v == 0.0));
    assert!(f[..66].iter().any(|&v| v != 0.0));
}

#[test]
fn every_file_parses_leniently() {
    for path in corpus_files() {
        let bytes = std::fs::read(&path).unwrap();
        let (bvh, warnings) = ReadOptions::new().lenient(true).parse(&bytes).unwrap();
        if !stem(&path).starts_with("malformed_") {
            assert!(warnings.is_empty(), "{}: {warnings:?}", stem(&path));
        }
        assert!(!bvh.skeleton().is_empty());
    }
}
