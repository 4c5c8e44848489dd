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

/// The unit of every corpus file, written down from what is known of its
/// source (the tool or dataset that wrote it) and checked against its
/// bone lengths (thigh and shin about a quarter of a person's height
/// each): the guess must say it, or say "unknown" where the truth is not
/// a unit bvhkit knows. A file missing from the table fails the test.
#[test]
fn unit_guesses_tell_the_truth_on_every_corpus_file() {
    use bvhkit::PositionChannels;
    use bvhkit::units::{UnitGuess, Units::*};
    // `None`: not a figure (axis markers, a two-joint fixture), so not a
    // person's unit to tell; the guess is not checked.
    let expected: &[(&str, Option<bvhkit::units::Units>, &str)] = &[
        ("azure_kinect_xyz_no_end_sites", Some(Centimetres), "thigh 36 cm"),
        ("bandai_namco_ds1_kick_6ch_every_joint", Some(Centimetres), "dataset in cm; thigh 39 cm"),
        ("blender_export_daz_skeleton_face_hands", Some(Metres), "Blender export; thigh 0.37 m"),
        ("bvh_anim_test_simple", None, "a two-joint test fixture"),
        ("bvh_python_test_mocapbank_crlf", Some(Centimetres), "thigh 49 cm"),
        ("bvhio_test_example_tab_separated", Some(Inches), "thigh 18.3 in"),
        ("bvhviewer_debug_axes_tiny", None, "three axis markers, no figure"),
        ("cmu_01_01_walk_cgspeed_mb_names", Some(CmuScale), "cgspeed's CMU conversion"),
        (
            "cmu_02_03_daz_names_165_joints_face_hands",
            Some(Centimetres),
            "cgspeed's Daz-friendly cm",
        ),
        ("cmu_12_01_walk_cgspeed_pybvh", Some(CmuScale), "cgspeed's CMU conversion"),
        ("cmu_131_01_cgspeed_3dsmax_mixed_eol", Some(CmuScale), "cgspeed's CMU conversion"),
        ("cmu_16_15_imusim_asf_names_sci", Some(Centimetres), "IMUSim from ASF; tibia 40 cm"),
        ("cpp_bvh_parser_test_simple_single_frame", Some(CmuScale), "CMU-sized fixture; thigh 8"),
        ("edinburgh_pfnn_hierarchy_crlf_no_final_eol", Some(Metres), "thigh 0.40 m"),
        (
            "fair_zombie_animated_drawings_xyz_yxz",
            Some(Inches),
            "a cartoon: legs 0.55 m in inches, 1.22 m in CMU units",
        ),
        ("fairmotion_test_sinusoidal_no_end_sites", Some(Unknown), "a four-joint synthetic chain"),
        ("geno_bind_pose_6ch_sci_crlf", Some(Centimetres), "thigh 38 cm"),
        (
            "godot_vr_mocap_root_0_channels_trackers",
            Some(Metres),
            "VR trackers in metres; head at 1.61",
        ),
        ("hand_only_skeleton_lhand_crlf", Some(Centimetres), "a hand about 17 cm long"),
        ("ipi_soft_mocap_studio_fingers_xyz", Some(Centimetres), "thigh 44 cm"),
        (
            "kinect_v1_custom_writer_nonzero_root_offset",
            Some(Centimetres),
            "thigh 45 cm, crumpled poses",
        ),
        ("makehuman_163_joints_6ch_every_joint_deep", Some(Unknown), "MakeHuman's decimetres"),
        ("malformed_132_channels_66_values_per_row", Some(Centimetres), "Daz names, thigh 37 cm"),
        ("malformed_frames_1352_but_1_row", Some(Centimetres), "Daz names, thigh 37 cm"),
        ("malformed_frames_3069_rows_3070_boxing_toes", Some(Centimetres), "thigh 42 cm"),
        ("malformed_hierarchy_only_no_motion_kinect", Some(Centimetres), "thigh 38 cm"),
        ("malformed_no_motion_keyword_no_frame_time", Some(CmuScale), "CMU names, shin 7.3"),
        ("mediapipe_to_bvh_dance_zxy", Some(Centimetres), "thigh 42 cm"),
        ("openni_nite_kinect_hash_in_joint_names", Some(Millimetres), "OpenNI's mm; thigh 444 mm"),
        ("perception_neuron_axis_yxz_fingers_crlf", Some(Centimetres), "Axis Neuron's cm"),
        ("pybvh_fixture_full_precision_frame_time", Some(Unknown), "a two-joint fixture"),
        (
            "pybvh_fixture_rotation_before_position_root",
            Some(CmuScale),
            "CMU-sized fixture; thigh 8.2",
        ),
        ("pymo_demo_av_8walk_meredith", Some(Inches), "thigh 16.8 in"),
        ("pymo_writer_end_site_lowercase_xyz", Some(Millimetres), "a Leap Motion hand, in mm"),
        ("rokoko_jesse_dance_yxz_fingers", Some(Centimetres), "Rokoko Studio's cm"),
        ("second_life_avatar_walk_poser_per_joint_orders", Some(Inches), "Second Life's inches"),
        ("sfu_0005_jumprope_crlf_xyz", Some(Inches), "thigh 15.7 in"),
        ("shadermotion_vrchat_tab_separated", Some(Metres), "Unity's metres"),
        ("truebones_elephant_idle_6ch_every_joint", Some(Unknown), "an elephant: legs 1.3 m"),
        ("xia_style_angry_13_000", Some(CmuScale), "CMU skeleton"),
        ("xsens_mvn_style_mpi_1space_yxz_crlf", Some(Centimetres), "MVN's cm"),
    ];
    let files = corpus_files();
    if files.is_empty() {
        return;
    }
    let mut wrong = Vec::new();
    for path in &files {
        let name = stem(path);
        let Some(&(_, want, why)) = expected.iter().find(|(n, ..)| *n == name) else {
            panic!("{name}: no expected unit written down");
        };
        let bytes = std::fs::read(path).unwrap();
        let (bvh, _) = ReadOptions::new().lenient(true).parse(&bytes).unwrap();
        let guess = UnitGuess::of_bvh(&bvh, PositionChannels::Replace);
        match want {
            Some(want) if guess.units != want => {
                wrong.push(format!("{name}: {} (expected {want}: {why})", guess.label()));
            }
            Some(_) => {}
            None => println!("{name}: not a figure ({why}), guessed {}", guess.label()),
        }
    }
    assert_eq!(files.len(), expected.len(), "the table lists every corpus file");
    assert!(wrong.is_empty(), "wrong unit guesses:\n{}", wrong.join("\n"));
}

/// `ReadOptions::parse_with` gives `parse`'s clip to the bit, and its
/// warnings and errors, with one `ParseBuffers` recycled from file to file:
/// every corpus file (the malformed ones too), strict and lenient, serial
/// and parallel, largest first (the buffer serves smaller files, some of
/// its old values left beyond the new ones) and then smallest first (it is
/// replaced by larger ones); a file parsed again goes into the very buffer
/// its first parse recycled.
#[test]
fn parse_with_recycled_buffers_gives_the_bits_of_parse() {
    let mut files: Vec<(Vec<u8>, String)> =
        corpus_files().iter().map(|p| (std::fs::read(p).unwrap(), stem(p))).collect();
    if files.is_empty() {
        return;
    }
    files.sort_by_key(|(b, _)| std::cmp::Reverse(b.len()));
    let ascending: Vec<_> = files.iter().rev().cloned().collect();
    let mut compared = 0;
    for lenient in [false, true] {
        for parallel in [false, true] {
            let mut o = ReadOptions::new();
            o.lenient(lenient).parallel(parallel);
            let mut buffers = bvhkit::ParseBuffers::new();
            for (bytes, name) in files.iter().chain(&ascending) {
                let what = format!("{name} (lenient {lenient}, parallel {parallel})");
                match (o.parse(bytes), o.parse_with(bytes, &mut buffers)) {
                    (Ok((a, wa)), Ok((b, wb))) => {
                        bvhkit_testdata::assert_bit_identical(&a, &b, &what);
                        let text = |w: &[bvhkit::Warning]| {
                            w.iter().map(ToString::to_string).collect::<Vec<_>>()
                        };
                        assert_eq!(text(&wa), text(&wb), "{what}: warnings");
                        // The same file again is parsed into the very
                        // buffer just recycled (but where the lenient
                        // reading re-lays the rows into a new one).
                        let at = b.motion().values().as_ptr();
                        let relaid = wb.iter().any(|w| w.kind == WarningKind::RowLayout);
                        buffers.recycle(b);
                        let (again, _) = o.parse_with(bytes, &mut buffers).unwrap();
                        if !again.motion().values().is_empty() && !relaid {
                            assert_eq!(again.motion().values().as_ptr(), at, "{what}: reused");
                        }
                        bvhkit_testdata::assert_bit_identical(&a, &again, &what);
                        buffers.recycle(again);
                        let values = a.motion().values().len() * 8;
                        assert!(buffers.capacity_bytes() >= values, "{what}: held");
                        compared += 1;
                    }
                    (Err(a), Err(b)) => assert_eq!(a.to_string(), b.to_string(), "{what}: error"),
                    (a, b) => panic!("{what}: parse {:?} but parse_with {:?}", a.err(), b.err()),
                }
            }
        }
    }
    assert!(compared >= 4 * 2 * 36, "{compared} parses compared");
}
