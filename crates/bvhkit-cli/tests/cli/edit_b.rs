//! `bvh edit` with the edit-b transforms: the command gives the library's
//! results, in command-line order.
use bvhkit::edit::{axes::SignedAxis, joints, mirror, root};
use bvhkit::{Bvh, PositionChannels};

use super::{corpus, run, run_ok, stderr};

fn read(p: &std::path::Path) -> Bvh {
    Bvh::from_path(p).unwrap()
}

#[test]
fn edit_mirror_and_root_flags_match_the_library_in_order() {
    let Some(dir) = corpus() else { return };
    let input = dir.join("cmu_01_01_walk_cgspeed_mb_names.bvh");
    let src = read(&input);
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("out.bvh");
    let (i, o) = (input.to_str().unwrap(), out.to_str().unwrap());
    // Mirror then in place: the library's two steps in that order.
    run_ok(&["edit", i, "-o", o, "--mirror", "--in-place-root", "--source-up", "y"]);
    let expected = root::in_place(&mirror::mirror(&src).unwrap(), SignedAxis::PosY).unwrap();
    bvhkit_testdata::assert_bit_identical(&read(&out), &expected, "--mirror --in-place-root");
    // Mirroring twice gives the input back bit for bit (same channels on both sides).
    run_ok(&["edit", i, "-o", o, "--mirror", "--mirror"]);
    bvhkit_testdata::assert_bit_identical(&read(&out), &src, "--mirror --mirror");
    // Joints: rename by pattern, remove, strip End Sites, extract the root.
    run_ok(&[
        "edit",
        i,
        "-o",
        o,
        "--remove-joints",
        "LHipJoint,RHipJoint",
        "--rename",
        "Left=L_",
        "--strip-end-sites",
        "--extract-root",
        "--source-up",
        "y",
    ]);
    let (a, _) =
        joints::remove_joints(&src, &["LHipJoint", "RHipJoint"], PositionChannels::Replace)
            .unwrap();
    let b = joints::rename_pattern(&a, "Left", "L_").unwrap();
    let c = joints::strip_end_sites(&b).unwrap();
    let d = root::extract(&c, SignedAxis::PosY, "Root").unwrap();
    bvhkit_testdata::assert_bit_identical(&read(&out), &d, "joints and root");
    assert!(read(&out).skeleton().find("L_UpLeg").is_some());
}

/// Issue #27: a Kinect v1 take whose rest pose is a captured pose swaps
/// its pairs (confirmed by their lengths, said on stderr) across the first
/// frame's lateral plane (the stream gives up for the whole clip), as the
/// library.
#[test]
fn edit_mirror_swaps_a_captured_rest_pose_and_says_so() {
    let Some(dir) = corpus() else { return };
    let input = dir.join("kinect_v1_custom_writer_nonzero_root_offset.bvh");
    let src = read(&input);
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("out.bvh");
    let (i, o) = (input.to_str().unwrap(), out.to_str().unwrap());
    let e = stderr(&run_ok(&["edit", i, "-o", o, "--mirror"]));
    assert!(
        e.contains("ShoulderLeft|ShoulderRight, HipLeft|HipRight swapped as their offsets have the same length")
            && e.contains("mirrored across Z"),
        "{e}"
    );
    assert!(!e.contains("not swapped"), "{e}");
    bvhkit_testdata::assert_bit_identical(&read(&out), &mirror::mirror(&src).unwrap(), "--mirror");
}

#[test]
fn edit_rest_pose_and_bad_arguments() {
    let Some(dir) = corpus() else { return };
    let input = dir.join("bvhio_test_example_tab_separated.bvh");
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("out.bvh");
    let (i, o) = (input.to_str().unwrap(), out.to_str().unwrap());
    run_ok(&["edit", i, "-o", o, "--rest-pose", "1"]);
    run_ok(&["edit", i, "-o", o, "--rest-pose", i]);
    let r = run(&["edit", i, "-o", o, "--remove-joints", "NoSuchJoint"]);
    assert_eq!(r.status.code(), Some(2));
    assert!(stderr(&r).contains("no joint named \"NoSuchJoint\""), "{}", stderr(&r));
    let r = run(&["edit", i, "-o", o, "--rename", "nonsense"]);
    assert_eq!(r.status.code(), Some(2));
    assert!(stderr(&r).contains("FROM=TO"), "{}", stderr(&r));
}

/// Removing a root: refused when several joints would become roots in its
/// place (no joint carries its motion); allowed when one joint takes its
/// place, which becomes the root with the root's motion folded in.
#[test]
fn edit_remove_joints_refuses_a_root_that_would_leave_several_roots() {
    let Some(dir) = corpus() else { return };
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("out.bvh");
    let o = out.to_str().unwrap();
    let xia = dir.join("xia_style_angry_13_000.bvh");
    let r = run(&["edit", xia.to_str().unwrap(), "-o", o, "--remove-joints", "Hips"]);
    assert_eq!(r.status.code(), Some(2));
    assert!(
        stderr(&r).contains(
            "remove: \"Hips\" is a root: removing it would leave 3 roots in its place \
             (LHipJoint, RHipJoint, LowerBack) and no joint to carry its motion"
        ),
        "{}",
        stderr(&r)
    );
    assert!(!out.exists());
    // Bandai Namco's joint_Root above Hips: Hips becomes the root, every
    // joint where it was (Hips has position channels to take the motion).
    let bandai = dir.join("bandai_namco_ds1_kick_6ch_every_joint.bvh");
    let r = run_ok(&["edit", bandai.to_str().unwrap(), "-o", o, "--remove-joints", "joint_Root"]);
    assert!(stderr(&r).is_empty(), "{}", stderr(&r));
    let edited = Bvh::from_path(&out).unwrap();
    assert_eq!(edited.skeleton().roots().count(), 1);
    assert_eq!(edited.skeleton().joints()[0].name(), "Hips");
}
