//! The up axis everywhere: `render`, `serve` and `view` draw files that are
//! not Y up upright by default (with a note); `positions` and `rotations`
//! convert only when asked (`--up AXIS` or `--up auto`).
use std::path::Path;

use bvhkit::glam::DVec3;
use bvhkit_testdata::position_rows;

use super::{corpus, render_to, run, run_ok, served_clips, stderr, stdout};

/// The corpus files that are not Y up, with their up axis.
const NOT_Y_UP: [(&str, &str); 4] = [
    ("fair_zombie_animated_drawings_xyz_yxz", "z"),
    ("makehuman_163_joints_6ch_every_joint_deep", "z"),
    ("blender_export_daz_skeleton_face_hands", "z"),
    ("azure_kinect_xyz_no_end_sites", "-y"),
];

/// Head minus the mean of the feet, from joint names and their positions
/// (the first joint named like a head; every joint named like a foot).
fn head_minus_feet(named: &[(String, DVec3)]) -> DVec3 {
    let lower: Vec<(String, DVec3)> =
        named.iter().map(|(n, p)| (n.to_ascii_lowercase(), *p)).collect();
    let head = lower.iter().find(|(n, _)| n.contains("head") && !n.ends_with("_end")).unwrap().1;
    let feet: Vec<DVec3> = lower
        .iter()
        .filter(|(n, _)| n.contains("foot") || n.contains("ankle"))
        .map(|j| j.1)
        .collect();
    assert!(!feet.is_empty(), "no feet in {named:?}");
    head - feet.iter().copied().sum::<DVec3>() / feet.len() as f64
}

/// Upright: the head is above the feet, along Y more than along X and Z.
fn assert_upright(d: DVec3, what: &str) {
    assert!(d.y > 0.0 && d.y > d.x.abs() && d.y > d.z.abs(), "{what}: head - feet = {d}");
}

/// Frame 0 of `bvh positions FILE ARGS...` as (joint, position).
fn positions_frame0(file: &Path, args: &[&str]) -> (Vec<(String, DVec3)>, String) {
    let mut all = vec!["positions", file.to_str().unwrap(), "--frames", "0"];
    all.extend_from_slice(args);
    let o = run_ok(&all);
    let rows = position_rows(&stdout(&o)).into_iter().map(|(_, n, p)| (n, p)).collect();
    (rows, stderr(&o))
}

/// Each of the four corpus files that are not Y up stands upright in what
/// `bvh positions --up auto` and `bvh serve` give (numerically: the head
/// above the feet along Y), with the note naming the detected axis; their
/// own numbers (the default of `positions`, `--up keep`) do not stand.
#[test]
fn files_not_y_up_are_drawn_upright_by_default() {
    let Some(dir) = corpus() else { return };
    for (stem, axis) in NOT_Y_UP {
        let file = dir.join(format!("{stem}.bvh"));
        let (auto, err) = positions_frame0(&file, &["--up", "auto"]);
        assert!(err.contains(&format!("detected up axis {axis} (")), "{stem}: {err}");
        assert!(err.contains("converted to Y up"), "{stem}: {err}");
        assert_upright(head_minus_feet(&auto), stem);
        // The default keeps the file's numbers, silently.
        let (own, err) = positions_frame0(&file, &[]);
        assert!(!err.contains("up axis"), "{stem}: {err}");
        assert_eq!(own, positions_frame0(&file, &["--up", "keep"]).0, "{stem}");
        let d = head_minus_feet(&own);
        assert!(!(d.y > d.x.abs() && d.y > d.z.abs()), "{stem} was upright already: {d}");
        // `--up AXIS` names it: the same numbers as detecting it.
        assert_eq!(auto, positions_frame0(&file, &["--up", axis]).0, "{stem}");
        // serve: clips.json's first frame.
        let served = served_clips(&[&file]);
        let clip = &served["clips"][0];
        let names: Vec<String> = clip["joint_names"]
            .as_array()
            .unwrap()
            .iter()
            .map(|n| n.as_str().unwrap().to_string())
            .collect();
        let p = clip["positions"].as_array().unwrap();
        let at = |i: usize| p[i].as_f64().unwrap_or(f64::NAN);
        let named: Vec<(String, DVec3)> = names
            .iter()
            .enumerate()
            .map(|(j, n)| (n.clone(), DVec3::new(at(3 * j), at(3 * j + 1), at(3 * j + 2))))
            .collect();
        assert_upright(head_minus_feet(&named), &format!("{stem}: serve"));
    }
}

/// `bvh render` draws the four files upright by default, with the note:
/// the picture is the one of the file converted by `bvh edit --up y`,
/// drawn as it is; `--up keep` draws the file's own axes (today's
/// picture, different), and a Y-up file is drawn as before, without a note.
#[test]
fn render_draws_upright_and_keep_draws_the_files_axes() {
    let Some(dir) = corpus() else { return };
    let tmp = tempfile::tempdir().unwrap();
    let png = |name: &str| tmp.path().join(format!("{name}.png"));
    for (stem, axis) in NOT_Y_UP {
        let file = dir.join(format!("{stem}.bvh"));
        let file = file.to_str().unwrap();
        let o = render_to(&[file, "--size", "160x120"], &png("default"));
        assert!(o.status.success(), "{}", stderr(&o));
        let note = format!("bvh: note: {file}: detected up axis {axis} (");
        assert!(stderr(&o).contains(&note), "{stem}: {}", stderr(&o));
        let o = render_to(&[file, "--size", "160x120", "--up", "keep"], &png("keep"));
        assert!(o.status.success() && !stderr(&o).contains("up axis"), "{}", stderr(&o));
        // The file converted by `bvh edit`, under the same name, kept.
        let sub = tmp.path().join(stem);
        std::fs::create_dir_all(&sub).unwrap();
        let edited = sub.join(format!("{stem}.bvh"));
        run_ok(&["edit", file, "--up", "y", "--source-up", axis, "-o", edited.to_str().unwrap()]);
        let edited = edited.to_str().unwrap();
        let o = render_to(&[edited, "--size", "160x120", "--up", "keep"], &png("edited"));
        assert!(o.status.success(), "{}", stderr(&o));
        let read = |n: &str| std::fs::read(png(n)).unwrap();
        assert_eq!(read("default"), read("edited"), "{stem}: default vs bvh edit --up y");
        assert_ne!(read("default"), read("keep"), "{stem}: --up keep draws the file's axes");
    }
    // A Y-up file: no note, the same picture with and without --up keep.
    let walk = dir.join("cmu_01_01_walk_cgspeed_mb_names.bvh");
    let walk = walk.to_str().unwrap();
    let o = render_to(&[walk, "--size", "160x120"], &png("walk"));
    assert!(o.status.success() && !stderr(&o).contains("up axis"), "{}", stderr(&o));
    let o = render_to(&[walk, "--size", "160x120", "--up", "keep"], &png("walk_keep"));
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(std::fs::read(png("walk")).unwrap(), std::fs::read(png("walk_keep")).unwrap());
}

/// `bvh positions --up z` (and `rotations`) on a Z-up file give what `bvh
/// edit --up y --source-up z` followed by `positions` (`rotations`) gives;
/// the NPY sidecar records the conversion.
#[test]
fn exports_up_z_equal_edit_then_export() {
    let Some(dir) = corpus() else { return };
    let tmp = tempfile::tempdir().unwrap();
    for stem in ["fair_zombie_animated_drawings_xyz_yxz", "blender_export_daz_skeleton_face_hands"]
    {
        let file = dir.join(format!("{stem}.bvh"));
        let file = file.to_str().unwrap();
        let edited = tmp.path().join(format!("{stem}.bvh"));
        let edited = edited.to_str().unwrap();
        run_ok(&["edit", file, "--up", "y", "--source-up", "z", "-o", edited]);
        for command in [
            &["positions"][..],
            &["rotations", "--repr", "quat", "--space", "world"][..],
            &["rotations"][..],
        ] {
            let ours = run(&[command, &[file, "--up", "z", "--frames", "0..40"]].concat());
            let theirs = run(&[command, &[edited, "--frames", "0..40"]].concat());
            assert!(ours.status.success(), "{}", stderr(&ours));
            assert!(theirs.status.success(), "{}", stderr(&theirs));
            let (a, b) = (stdout(&ours), stdout(&theirs));
            assert_eq!(a.lines().count(), b.lines().count(), "{stem} {command:?}");
            assert!(a.lines().count() > 40, "{stem} {command:?}");
            // Numbers agree to the text the edited file was written with.
            for (la, lb) in a.lines().zip(b.lines()) {
                let (fa, fb): (Vec<&str>, Vec<&str>) =
                    (la.split(',').collect(), lb.split(',').collect());
                assert_eq!(fa.len(), fb.len(), "{la} / {lb}");
                for (x, y) in fa.iter().zip(&fb) {
                    match (x.parse::<f64>(), y.parse::<f64>()) {
                        (Ok(x), Ok(y)) => {
                            assert!(
                                (x - y).abs() <= 1e-6 * (1.0 + x.abs()),
                                "{stem} {command:?}: {la} / {lb}"
                            )
                        }
                        _ => assert_eq!(x, y, "{stem} {command:?}"),
                    }
                }
            }
            // And they differ from the file's own numbers (the default);
            // rotations only where the file turns (the DAZ export's frames
            // are all zero, the identity in either axes).
            if command[0] == "positions" || stem.starts_with("fair_zombie") {
                let own = run(&[command, &[file, "--frames", "0..40"]].concat());
                assert_ne!(stdout(&own), a, "{stem} {command:?}");
            }
        }
        // The NPY sidecar says what was converted.
        let npy = tmp.path().join("p.npy");
        run_ok(&["positions", file, "--up", "z", "-o", npy.to_str().unwrap()]);
        let side: serde_json::Value =
            serde_json::from_slice(&std::fs::read(tmp.path().join("p.npy.json")).unwrap()).unwrap();
        assert_eq!(side["up_converted_from"], "z", "{side}");
    }
}

/// `--up` takes auto, keep or an axis; anything else is refused.
#[test]
fn up_values_are_checked() {
    for cmd in ["render", "positions", "rotations"] {
        let o = run(&[cmd, "x.bvh", "--up", "sideways", "-o", "x.png"]);
        assert_eq!(o.status.code(), Some(2), "{cmd}");
        assert!(stderr(&o).contains("'sideways' is not auto, keep or an axis"), "{}", stderr(&o));
    }
}

/// `bvh view` draws the four files upright by default, with the note (its
/// screenshot sidecar: the head's pixel above the feet's), and `--up keep`
/// draws the file's own axes (the Y-down Kinect upside down).
#[cfg(feature = "view")]
#[test]
fn view_draws_upright_by_default() {
    let Some(dir) = corpus() else { return };
    if std::env::var_os("DISPLAY").is_none_or(|d| d.is_empty()) {
        bvhkit_testdata::skip("view_draws_upright_by_default", "no DISPLAY (run under Xvfb)");
        return;
    }
    let shot = tempfile::tempdir().unwrap();
    let png = shot.path().join("v.png");
    // Head minus feet on screen, with y up (pixels grow downwards).
    let screen = |file: &Path, extra: &[&str]| {
        let mut args = vec!["view", file.to_str().unwrap(), "--size", "400x300", "--screenshot"];
        args.push(png.to_str().unwrap());
        args.extend_from_slice(extra);
        let o = run_ok(&args);
        let side: serde_json::Value =
            serde_json::from_slice(&std::fs::read(shot.path().join("v.png.json")).unwrap())
                .unwrap();
        let named: Vec<(String, DVec3)> = side["clips"][0]["joints"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|j| j["x"].is_f64())
            .map(|j| {
                let (x, y) = (j["x"].as_f64().unwrap(), j["y"].as_f64().unwrap());
                (j["name"].as_str().unwrap().to_string(), DVec3::new(x, -y, 0.0))
            })
            .collect();
        (head_minus_feet(&named), stderr(&o))
    };
    for (stem, axis) in NOT_Y_UP {
        let file = dir.join(format!("{stem}.bvh"));
        let (d, err) = screen(&file, &[]);
        assert!(err.contains(&format!("detected up axis {axis} (")), "{stem}: {err}");
        assert_upright(d, &format!("{stem}: view"));
        if axis == "-y" {
            let (d, err) = screen(&file, &["--up", "keep"]);
            assert!(!err.contains("up axis"), "{stem}: {err}");
            assert!(d.y < 0.0, "{stem}: --up keep draws it upside down: {d}");
        }
    }
}
