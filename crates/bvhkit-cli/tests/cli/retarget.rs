//! `bvh retarget`: the library's result, the printed map, and what it
//! refuses.
use bvhkit::Bvh;
use bvhkit::retarget::map::JointMap;
use bvhkit::retarget::{Options, Reference, retarget};

use super::{corpus, run, run_ok, stderr};

/// What `bvh retarget` writes, from the library: the retarget without the
/// position channels that only repeat the target's offsets.
fn library_result(src: &Bvh, tgt: &Bvh, opts: &Options) -> Bvh {
    let (out, _) = retarget(src, tgt, opts).unwrap();
    bvhkit::edit::portable::portable(
        &out,
        bvhkit::PositionChannels::Replace,
        bvhkit::edit::portable::Scope::Repeats,
    )
    .unwrap()
    .0
}

/// Both ways the command writes its frames give the library's result bit
/// for bit: mapped again in the writing pass (Bandai Namco: 132 output
/// channels, more than the source's 96) or kept from the first pass
/// (Kinect v1: 63), with and without `--lock-feet`.
#[test]
fn retarget_writes_the_library_result_whether_it_keeps_its_first_pass_or_not() {
    let Some(dir) = corpus() else { return };
    let src_path = dir.join("cmu_01_01_walk_cgspeed_mb_names.bvh");
    let src = Bvh::from_path(&src_path).unwrap();
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("out.bvh");
    let (s, o) = (src_path.to_str().unwrap(), out.to_str().unwrap());
    for name in [
        "bandai_namco_ds1_kick_6ch_every_joint.bvh",
        "kinect_v1_custom_writer_nonzero_root_offset.bvh",
    ] {
        let tgt_path = dir.join(name);
        let tgt = Bvh::from_path(&tgt_path).unwrap();
        assert_eq!(src.skeleton().n_channels(), 96);
        for lock_feet in [false, true] {
            let mut args = vec!["retarget", s, "--to", tgt_path.to_str().unwrap(), "-o", o];
            // The default locks; --no-lock-feet streams the exact transfer.
            if !lock_feet {
                args.push("--no-lock-feet");
            }
            run_ok(&args);
            let opts = Options { lock_feet, ..Options::default() };
            let expected = library_result(&src, &tgt, &opts);
            let what = format!("{name}, lock_feet {lock_feet}");
            bvhkit_testdata::assert_bit_identical(&Bvh::from_path(&out).unwrap(), &expected, &what);
        }
    }
}

#[test]
fn retarget_writes_the_library_result_and_prints_the_map() {
    let Some(dir) = corpus() else { return };
    let src_path = dir.join("cmu_01_01_walk_cgspeed_mb_names.bvh");
    let tgt_path = dir.join("bandai_namco_ds1_kick_6ch_every_joint.bvh");
    let (src, tgt) = (Bvh::from_path(&src_path).unwrap(), Bvh::from_path(&tgt_path).unwrap());
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("out.bvh");
    let (s, t, o) = (src_path.to_str().unwrap(), tgt_path.to_str().unwrap(), out.to_str().unwrap());
    let r = run_ok(&["retarget", s, "--to", t, "-o", o]);
    let (expected, _) = retarget(&src, &tgt, &Options::default()).unwrap();
    // Less the target's constant position channels below the root that
    // repeat the OFFSET (the Bandai Namco target has six on every joint).
    let (expected, dropped) = bvhkit::edit::portable::portable(
        &expected,
        bvhkit::PositionChannels::Replace,
        bvhkit::edit::portable::Scope::Repeats,
    )
    .unwrap();
    assert!(dropped.dropped > 0, "{dropped:?}");
    bvhkit_testdata::assert_bit_identical(&Bvh::from_path(&out).unwrap(), &expected, "retarget");
    let e = stderr(&r);
    assert!(e.contains("21 joints mapped:"), "{e}");
    assert!(e.contains("  LeftUpLeg -> UpperLeg_L (left upper leg)"), "{e}");
    assert!(e.contains("  LowerBack -> Spine (spine)"), "{e}");
    assert!(
        e.contains("target joints unmapped (kept as in the reference pose): joint_Root"),
        "{e}"
    );
    assert!(e.contains("source joints unmapped (their motion dropped): LHipJoint"), "{e}");
    assert!(e.contains("rest pose not a T-pose"), "{e}");

    // A map file and a frame as the reference: the library's result too.
    let map_path = tmp.path().join("map.txt");
    std::fs::write(
        &map_path,
        "# legs only\nLeftUpLeg = UpperLeg_L\nRightUpLeg = UpperLeg_R\nHips = Hips\n",
    )
    .unwrap();
    let m = map_path.to_str().unwrap();
    let r = run_ok(&[
        "retarget",
        s,
        "--to",
        t,
        "-o",
        o,
        "--map",
        m,
        "--reference",
        "rest",
        "--source-reference",
        "0",
    ]);
    let text = std::fs::read_to_string(&map_path).unwrap();
    let opts = Options {
        map: Some(JointMap::parse(&text, src.skeleton(), tgt.skeleton()).unwrap()),
        reference: Reference::Rest,
        source_reference: Some(Reference::Frame(0)),
        ..Options::default()
    };
    let expected = library_result(&src, &tgt, &opts);
    bvhkit_testdata::assert_bit_identical(&Bvh::from_path(&out).unwrap(), &expected, "--map");
    assert!(stderr(&r).contains("3 joints mapped:"), "{}", stderr(&r));

    // --lock-feet: the library's locked result, and what was locked said.
    let r = run_ok(&["retarget", s, "--to", t, "-o", o, "--lock-feet"]);
    let lock = Options { lock_feet: true, ..Options::default() };
    let (expected, report) = retarget(&src, &tgt, &lock).unwrap();
    let spans = report.locked.unwrap().spans.len();
    assert!(spans > 0);
    let (expected, _) = bvhkit::edit::portable::portable(
        &expected,
        bvhkit::PositionChannels::Replace,
        bvhkit::edit::portable::Scope::Repeats,
    )
    .unwrap();
    bvhkit_testdata::assert_bit_identical(&Bvh::from_path(&out).unwrap(), &expected, "--lock-feet");
    let e = stderr(&r);
    assert!(e.contains(&format!("feet locked over {spans} contact span(s)")), "{e}");
}

#[test]
fn retarget_refuses_bad_maps_and_its_inputs_as_output() {
    let Some(dir) = corpus() else { return };
    let src_path = dir.join("cmu_01_01_walk_cgspeed_mb_names.bvh");
    let tgt_path = dir.join("rokoko_jesse_dance_yxz_fingers.bvh");
    let tmp = tempfile::tempdir().unwrap();
    // Inputs copied so that a refusal is seen to leave them alone.
    let (s, t) = (tmp.path().join("src.bvh"), tmp.path().join("tgt.bvh"));
    std::fs::copy(&src_path, &s).unwrap();
    std::fs::copy(&tgt_path, &t).unwrap();
    let before = std::fs::read(&t).unwrap();
    let (ss, ts) = (s.to_str().unwrap(), t.to_str().unwrap());
    let r = run(&["retarget", ss, "--to", ts, "-o", ts]);
    assert_eq!(r.status.code(), Some(2));
    assert!(stderr(&r).contains("refusing to overwrite"), "{}", stderr(&r));
    assert_eq!(std::fs::read(&t).unwrap(), before);

    let out = tmp.path().join("out.bvh");
    let o = out.to_str().unwrap();
    let map = tmp.path().join("map.txt");
    std::fs::write(&map, "Hips = Hips\nLeftArm = NoSuchJoint\n").unwrap();
    let r = run(&["retarget", ss, "--to", ts, "-o", o, "--map", map.to_str().unwrap()]);
    assert_eq!(r.status.code(), Some(2));
    let e = stderr(&r);
    assert!(
        e.contains("map.txt: map line 2: the target skeleton has no joint \"NoSuchJoint\""),
        "{e}"
    );
    assert!(!out.exists(), "no output after an error");

    let r = run(&["retarget", ss, "--to", ts, "-o", o, "--reference", "999999"]);
    assert_eq!(r.status.code(), Some(2));
    assert!(stderr(&r).contains("reference frame 999999 is not in the clip"), "{}", stderr(&r));
    assert!(!out.exists());

    let r = run(&["retarget", "--help"]);
    assert!(r.status.success());
    let help = super::stdout(&r);
    assert!(
        help.contains("bvh retarget walk.bvh --to character.bvh -o character_walk.bvh"),
        "{help}"
    );
}

/// The source and the target cannot both be standard input, which can be
/// read once (both were read from it, the second read getting nothing).
#[test]
fn retarget_refuses_standard_input_twice() {
    let out = tempfile::tempdir().unwrap();
    let o = out.path().join("out.bvh");
    let r = run(&["retarget", "-", "--to", "-", "-o", o.to_str().unwrap()]);
    assert_eq!(r.status.code(), Some(2), "{}", stderr(&r));
    assert!(stderr(&r).contains("both standard input"), "{}", stderr(&r));
    assert!(!o.exists());
}

/// What lenient reading recovered from in the source and in the target is
/// said with its place, as every other command says it (the retarget read
/// both without a word: a target without frames or a source whose
/// `Frames:` is wrong went by unnoticed).
#[test]
fn retarget_prints_the_reading_warnings_of_both_inputs() {
    let Some(dir) = corpus() else { return };
    let src = dir.join("malformed_frames_1352_but_1_row.bvh");
    let tgt = dir.join("malformed_hierarchy_only_no_motion_kinect.bvh");
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("out.bvh");
    let (s, t) = (src.to_str().unwrap(), tgt.to_str().unwrap());
    let r = run_ok(&["retarget", s, "--to", t, "-o", out.to_str().unwrap()]);
    let e = stderr(&r);
    assert!(
        e.contains(&format!(
            "{s}:1020:9: Frames: declares 1352 frames but the file holds 1; the frames present are kept"
        )),
        "{e}"
    );
    assert!(e.contains(&format!("{t}:112:1: no MOTION section; the file has zero frames")), "{e}");
    assert!(out.exists());
    // With --strict, the source's problem is an error and nothing is written.
    std::fs::remove_file(&out).unwrap();
    let r = run(&["retarget", s, "--to", t, "-o", out.to_str().unwrap(), "--strict"]);
    assert_eq!(r.status.code(), Some(2), "{}", stderr(&r));
    assert!(!out.exists());
}

/// A figure whose hips are no higher than its feet in the reference pose
/// (legs laid flat): the ratio of hip heights means nothing, and the
/// report says the root translation is not scaled, and why.
#[test]
fn retarget_says_why_a_zero_hip_height_leaves_the_root_unscaled() {
    let tmp = tempfile::tempdir().unwrap();
    let flat = tmp.path().join("flat.bvh");
    std::fs::write(&flat, FLAT).unwrap();
    let f = flat.to_str().unwrap();
    let out = tmp.path().join("out.bvh");
    let args = ["retarget", f, "--to", f, "-o", out.to_str().unwrap(), "--reference", "rest"];
    let r = run_ok(&[&args[..], &["--source-up", "y", "--target-up", "y"]].concat());
    let e = stderr(&r);
    assert!(
        e.contains(
            "root translation not scaled (1): the hips are not above the feet in the reference \
             pose (hip heights: source 0.0000, target 0.0000)"
        ),
        "{e}"
    );
    assert!(!e.contains("ratio of hip heights"), "{e}");
}

const FLAT: &str = "HIERARCHY
ROOT Hips
{
	OFFSET 0 0 0
	CHANNELS 6 Xposition Yposition Zposition Zrotation Xrotation Yrotation
	JOINT LeftUpLeg
	{
		OFFSET 10 0 0
		CHANNELS 3 Zrotation Xrotation Yrotation
		JOINT LeftLeg
		{
			OFFSET 0 0 40
			CHANNELS 3 Zrotation Xrotation Yrotation
			JOINT LeftFoot
			{
				OFFSET 0 0 40
				CHANNELS 3 Zrotation Xrotation Yrotation
				End Site
				{
					OFFSET 0 0 10
				}
			}
		}
	}
	JOINT RightUpLeg
	{
		OFFSET -10 0 0
		CHANNELS 3 Zrotation Xrotation Yrotation
		JOINT RightLeg
		{
			OFFSET 0 0 40
			CHANNELS 3 Zrotation Xrotation Yrotation
			JOINT RightFoot
			{
				OFFSET 0 0 40
				CHANNELS 3 Zrotation Xrotation Yrotation
				End Site
				{
					OFFSET 0 0 10
				}
			}
		}
	}
	JOINT Spine
	{
		OFFSET 0 0 -10
		CHANNELS 3 Zrotation Xrotation Yrotation
		JOINT Head
		{
			OFFSET 0 0 -50
			CHANNELS 3 Zrotation Xrotation Yrotation
			End Site
			{
				OFFSET 0 0 -10
			}
		}
	}
}
MOTION
Frames: 2
Frame Time: 0.04
0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 
1 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 
";

/// A joint map or a contacts table is a small text file: `/dev/zero` (or an
/// endless pipe) is refused after 64 MiB instead of read until the memory
/// runs out.
#[test]
fn map_and_contacts_files_are_read_within_a_bound() {
    let tmp = tempfile::tempdir().unwrap();
    let fig = tmp.path().join("fig.bvh");
    let mut text = super::standing_figure_header(3);
    text += &"0 90 0 0 0 0 0 0 0 0 0 0 0 0 0\n".repeat(3);
    std::fs::write(&fig, text).unwrap();
    let (f, out) = (fig.to_str().unwrap(), tmp.path().join("out.bvh"));
    let o = out.to_str().unwrap();
    let want = ["/dev/zero", "more than 64 MiB"];
    super::refused(&["retarget", f, "--to", f, "-o", o, "--map", "/dev/zero"], &want, &out);
    super::refused(&["diff", f, f, "--map", "/dev/zero"], &want, &out);
    let lock = ["clean", f, "-o", o, "--lock-feet", "--contacts", "/dev/zero"];
    super::refused(&lock, &want, &out);
}

/// An output that cannot be made where it is asked for (a folder, a path
/// under a file) is refused before the retarget or the drawing, which ran
/// to the end (the map printed) before the write said so; a missing folder
/// is made, as by every writing command (`docs/commands.md`).
#[test]
fn an_unplaceable_output_is_refused_before_the_work() {
    let tmp = tempfile::tempdir().unwrap();
    let fig = tmp.path().join("fig.bvh");
    let mut text = super::standing_figure_header(3);
    text += &"0 90 0 0 0 0 0 0 0 0 0 0 0 0 0\n".repeat(3);
    std::fs::write(&fig, text).unwrap();
    let f = fig.to_str().unwrap();
    let (folder, under) = (tmp.path().join("takes"), tmp.path().join("fig.bvh/out.bvh"));
    std::fs::create_dir(&folder).unwrap();
    let (d, u) = (folder.to_str().unwrap(), under.to_str().unwrap());
    let err = super::refused(
        &["retarget", f, "--to", f, "-o", d],
        &[&format!("{d}: is a directory")],
        &under,
    );
    assert!(!err.contains("mapped"), "{err}");
    let want = format!("{u}: {f} is not a folder");
    let err = super::refused(&["retarget", f, "--to", f, "-o", u], &[&want], &under);
    assert!(!err.contains("mapped"), "{err}");
    let png = tmp.path().join("fig.bvh/out.png");
    super::refused(&["render", f, "-o", png.to_str().unwrap()], &["is not a folder"], &png);
    let deep = tmp.path().join("new/deeper/out.bvh");
    run_ok(&["retarget", f, "--to", f, "-o", deep.to_str().unwrap()]);
    assert!(deep.is_file());
    let deep = tmp.path().join("new2/out.png");
    run_ok(&["render", f, "-o", deep.to_str().unwrap(), "--frame", "0"]);
    assert!(deep.is_file());
}

/// A map that leaves limbs out says so (a hand-only rig mapped its root
/// alone onto a body and printed "1 joints mapped" without a word), and a
/// skeleton on all fours mapped onto one that is not (the elephant onto a
/// person) is noted: its front legs become arms (the core's
/// `Report::notes`, printed after the summary).
#[test]
fn retarget_notes_missing_limbs_and_a_quadruped() {
    let tmp = tempfile::tempdir().unwrap();
    let joint = |name: &str, offset: &str| {
        format!(
            "\tJOINT {name}\n\t{{\n\t\tOFFSET {offset}\n\t\tCHANNELS 3 Zrotation Xrotation \
             Yrotation\n\t\tEnd Site\n\t\t{{\n\t\t\tOFFSET 0 0 5\n\t\t}}\n\t}}\n"
        )
    };
    let figure = |root: &str, joints: &[(&str, &str)]| {
        let mut t = format!(
            "HIERARCHY\nROOT {root}\n{{\n\tOFFSET 0 90 0\n\tCHANNELS 6 Xposition Yposition \
             Zposition Zrotation Xrotation Yrotation\n"
        );
        for (n, o) in joints {
            t += &joint(n, o);
        }
        t += "}\nMOTION\nFrames: 3\nFrame Time: 0.04\n";
        let line = format!("0 90 0 0 0 0{}\n", " 0 0 0".repeat(joints.len()));
        t + &line.repeat(3)
    };
    let write = |name: &str, text: String| {
        let p = tmp.path().join(name);
        std::fs::write(&p, text).unwrap();
        p.to_string_lossy().into_owned()
    };
    let body = write(
        "body.bvh",
        figure(
            "Hips",
            &[
                ("Head", "0 60 0"),
                ("LeftFoot", "10 -85 0"),
                ("RightFoot", "-10 -85 0"),
                ("LeftHand", "40 40 0"),
                ("RightHand", "-40 40 0"),
            ],
        ),
    );
    let quad = write(
        "quad.bvh",
        figure(
            "Hips",
            &[
                ("Head", "0 30 60"),
                ("LeftFoot", "10 -85 -40"),
                ("RightFoot", "-10 -85 -40"),
                ("LeftHand", "10 -85 40"),
                ("RightHand", "-10 -85 40"),
            ],
        ),
    );
    let hand = write("hand.bvh", figure("Wrist", &[("Index1", "0 0 5"), ("Thumb1", "3 0 2")]));
    let out = tmp.path().join("out.bvh");
    let o = out.to_str().unwrap();
    let e = stderr(&run_ok(&["retarget", &hand, "--to", &body, "-o", o]));
    assert!(e.contains("\n1 joint mapped:"), "{e}");
    let kept = "bvh: note: no left leg, right leg, left arm or right arm found in the source to \
                drive the target's: kept in the reference pose";
    assert!(e.contains(kept), "{e}");
    let e = stderr(&run_ok(&["retarget", &body, "--to", &hand, "-o", o]));
    let dropped = "bvh: note: no left leg, right leg, left arm or right arm found in the target: \
                   the source's motion there is dropped";
    assert!(e.contains(dropped), "{e}");
    let fours = "hands stand as low as its feet in its first frame (a quadruped?)";
    let e = stderr(&run_ok(&["retarget", &quad, "--to", &body, "-o", o]));
    assert!(e.contains(&format!("bvh: note: the source's {fours}")), "{e}");
    let e = stderr(&run_ok(&["retarget", &body, "--to", &quad, "-o", o]));
    assert!(e.contains(&format!("bvh: note: the target's {fours}")), "{e}");
    // Like onto like: nothing said; also where the names hold runs of
    // spaces (the map's pairs were found again by their printed names,
    // folded to one space: none was, and every limb was said to be kept).
    let spaced = write(
        "spaced.bvh",
        figure(
            "Hips",
            &[
                ("Head", "0 60 0"),
                ("Left  Foot", "10 -85 0"),
                ("Right  Foot", "-10 -85 0"),
                ("Left  Hand", "40 40 0"),
                ("Right  Hand", "-40 40 0"),
            ],
        ),
    );
    for (a, b) in [(&body, &body), (&quad, &quad), (&spaced, &spaced), (&body, &spaced)] {
        let e = stderr(&run_ok(&["retarget", a, "--to", b, "-o", o]));
        assert!(!e.contains("found in the") && !e.contains("quadruped"), "{e}");
    }
}
