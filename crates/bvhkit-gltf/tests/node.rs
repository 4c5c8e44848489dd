//! The export of every corpus file (and of fixtures with several ROOTs and
//! with added position channels) is checked by independent readers under
//! node: the Khronos glTF-Validator (zero errors, zero warnings) and
//! three.js's GLTFLoader, whose world position of every joint at every
//! frame time must equal bvhkit's forward kinematics (`bvh positions`)
//! within 1e-5 of the skeleton's size, after the up-axis conversion (the
//! signed permutation from the source up axis to Y up, written out in
//! [`to_y_up`] as Blender's axis conversion gives it, applied to `bvh
//! positions` of the unconverted file). The Z-up and Y-down corpus files
//! must stand upright in three.js: the head above the feet. Needs `npm ci` in `tests/js`
//! (`scripts/test.sh` runs it); without node or the packages the test says
//! so with `bvhkit_testdata::skip`, which fails in CI.

use std::path::{Path, PathBuf};
use std::process::Command;

use bvhkit::edit::axes::SignedAxis;
use bvhkit::glam::DVec3;
use bvhkit::{Bvh, Kinematics, PositionChannels, ReadOptions};
use bvhkit_gltf::{ExportOptions, export};

/// A world position of a file whose up axis is `up`, in Y-up axes: the
/// rotation that takes `up` to +Y and the default forward (Blender's: Y up
/// looks along -Z, Z up along +Y; the others turned the shortest way) to -Z.
fn to_y_up(up: Option<SignedAxis>, p: DVec3) -> DVec3 {
    let DVec3 { x, y, z } = p;
    match up {
        None | Some(SignedAxis::PosY) => p,
        Some(SignedAxis::PosZ) => DVec3::new(x, z, -y),
        Some(SignedAxis::NegZ) => DVec3::new(x, -z, y),
        Some(SignedAxis::NegY) => DVec3::new(x, -y, -z),
        Some(SignedAxis::PosX) => DVec3::new(-y, x, z),
        Some(SignedAxis::NegX) => DVec3::new(y, -x, z),
    }
}

/// Files whose up axis is not +Y (Z up, and Y down for the Kinect one).
const NOT_Y_UP: [&str; 4] = [
    "fair_zombie_animated_drawings_xyz_yxz",
    "makehuman_163_joints_6ch_every_joint_deep",
    "blender_export_daz_skeleton_face_hands",
    "azure_kinect_xyz_no_end_sites",
];

fn js_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/js")
}

fn node_ready(test: &str) -> bool {
    if Command::new("node").arg("--version").output().is_err() {
        bvhkit_testdata::skip(test, "node is not installed");
        return false;
    }
    for pkg in ["gltf-validator", "three"] {
        if !js_dir().join("node_modules").join(pkg).is_dir() {
            bvhkit_testdata::skip(
                test,
                &format!("npm package {pkg} missing: run `npm ci` in {}", js_dir().display()),
            );
            return false;
        }
    }
    true
}

/// Writes NAME.glb and the expected world positions (metres) for check.mjs.
fn write_case(dir: &Path, name: &str, bvh: &Bvh, options: &ExportOptions) {
    let out = export(bvh, options).unwrap_or_else(|e| panic!("{name}: {e}"));
    std::fs::write(dir.join(format!("{name}.glb")), out.to_glb().unwrap()).unwrap();
    let s = bvh.skeleton();
    let fk = Kinematics::new(s, options.position_channels);
    let factor = out.applied.factor;
    let n_frames = bvh.motion().n_frames();
    let mut bin = Vec::with_capacity(n_frames * s.len() * 24);
    let mut p = vec![DVec3::ZERO; s.len()];
    for frame in bvh.motion().frames() {
        fk.positions(frame, &mut p);
        for v in &p {
            for x in (to_y_up(out.applied.source_up, *v) * factor).to_array() {
                bin.extend_from_slice(&x.to_le_bytes());
            }
        }
    }
    let size = out.applied.guess.size * factor;
    let tol = 1e-5 * if size > 0.0 { size } else { 1.0 };
    let times: Vec<f64> = (0..n_frames).map(|i| i as f64 * bvh.motion().frame_time()).collect();
    // The head and feet, for the upright check (by name, in the loaded scene).
    let named = |keys: &[&str]| -> Vec<usize> {
        s.joints()
            .iter()
            .enumerate()
            .filter(|(_, j)| {
                let n = j.name().to_ascii_lowercase();
                !j.is_end_site() && keys.iter().any(|k| n.contains(k))
            })
            .map(|(i, _)| i)
            .collect()
    };
    let head = named(&["head"]).first().copied();
    let feet = named(&["foot", "toe", "ankle"]);
    let meta = serde_json::json!({
        "nodes": out.joint_nodes, "frames": n_frames,
        "parents": s.joints().iter().map(|j| j.parent().map_or(-1, |p| p.index() as i64)).collect::<Vec<_>>(),
        "expect_boxes": options.mesh && n_frames > 0 && s.joints().iter().any(|j| {
            j.parent().is_some() && !j.channels().iter().any(|c| c.is_position()) && j.offset() != DVec3::ZERO
        }),
        "translated": s.joints().iter().map(|j| j.channels().iter().any(|c| c.is_position())).collect::<Vec<_>>(), "times": times, "tol": tol,
        "head": head, "feet": feet,
    });
    std::fs::write(dir.join(format!("{name}.expect.json")), meta.to_string()).unwrap();
    std::fs::write(dir.join(format!("{name}.expect.bin")), bin).unwrap();
}

const TWO_ROOTS: &str = "HIERARCHY
ROOT A
{
  OFFSET 0 0 0
  CHANNELS 6 Xposition Yposition Zposition Zrotation Xrotation Yrotation
  JOINT A1
  {
    OFFSET 0 50 0
    CHANNELS 3 Zrotation Xrotation Yrotation
    End Site
    {
      OFFSET 0 40 0
    }
  }
}
ROOT B
{
  OFFSET 100 0 0
  CHANNELS 6 Xposition Yposition Zposition Xrotation Yrotation Zrotation
  JOINT B1
  {
    OFFSET 10 60 5
    CHANNELS 6 Xposition Yposition Zposition Yrotation Zrotation Xrotation
    End Site
    {
      OFFSET 0 30 0
    }
  }
}
MOTION
Frames: 5
Frame Time: 0.04
0 90 0 0 0 0 0 0 0 100 0 0 0 0 0 10 60 5 0 0 0
5 91 -3 170 20 30 10 -20 45 100 5 0 -179 10 5 10 60 5 30 -60 90
10 92 -6 -170 40 60 20 -40 90 101 10 2 179 20 10 12 61 6 60 -120 179
15 91 -9 -90 60 90 30 -60 135 102 15 4 90 30 15 14 62 7 90 -179 -179
20 90 -12 0 80 120 40 -80 180 103 20 6 0 40 20 16 63 8 120 179 0
";

#[test]
fn validator_and_three_js_agree_with_bvhkit() {
    let test = "validator_and_three_js_agree_with_bvhkit";
    if !node_ready(test) {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let mut n = 0;
    let files = bvhkit_testdata::corpus_files();
    if files.is_empty() {
        bvhkit_testdata::skip(test, "corpus not found; only the fixtures are checked");
    }
    for path in &files {
        let bytes = std::fs::read(path).unwrap();
        let Ok((bvh, _)) = ReadOptions::new().lenient(true).parse(&bytes) else { continue };
        let name = path.file_stem().unwrap().to_string_lossy().into_owned();
        write_case(dir.path(), &name, &bvh, &ExportOptions::default());
        n += 1;
    }
    let two = Bvh::parse(TWO_ROOTS).unwrap();
    write_case(dir.path(), "fixture_two_roots", &two, &ExportOptions::default());
    let add = ExportOptions { position_channels: PositionChannels::Add, ..Default::default() };
    write_case(dir.path(), "fixture_two_roots_add", &two, &add);
    let bare =
        ExportOptions { mesh: false, scale: bvhkit_gltf::Scale::Factor(1.0), ..Default::default() };
    write_case(dir.path(), "fixture_two_roots_no_mesh", &two, &bare);
    // The JSON forms: embedded data URI and a side .bin file.
    let x = export(&two, &ExportOptions::default()).unwrap();
    let embedded = x.to_gltf(&bvhkit_gltf::BufferUri::Embedded).unwrap();
    std::fs::write(dir.path().join("fixture_embedded.gltf"), embedded).unwrap();
    let side = x.to_gltf(&bvhkit_gltf::BufferUri::File("side buffer.bin".into())).unwrap();
    std::fs::write(dir.path().join("fixture_side.gltf"), side).unwrap();
    std::fs::write(dir.path().join("side buffer.bin"), &x.buffer).unwrap();
    let out = Command::new("node")
        .arg(js_dir().join("check.mjs"))
        .arg(dir.path())
        .current_dir(js_dir())
        .output()
        .expect("running node");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let mut checked = 0;
    let mut bad = Vec::new();
    for line in stdout.lines() {
        let r: serde_json::Value =
            serde_json::from_str(line).unwrap_or_else(|e| panic!("{e}: {line}"));
        checked += 1;
        let glb = r["file"].as_str().unwrap().ends_with(".glb");
        let ok = r["errors"] == 0
            && r["warnings"] == 0
            && r.get("load").is_none()
            && (!glb || r["max_err"].as_f64().is_some_and(|e| e <= r["tol"].as_f64().unwrap()))
            && (!glb || r["max_mesh_err"].as_f64().is_some_and(|e| e <= r["tol"].as_f64().unwrap()))
            // Boxes are checked whenever there is one to check: a bone of length
            // to a joint without position channels (see check.mjs).
            && (!glb
                || r["boxes"].as_u64().is_some_and(|b| (b > 0) == r["expect_boxes"].as_bool().unwrap()));
        if !ok {
            bad.push(line.to_string());
        }
    }
    eprintln!("{stdout}");
    // The files that are not Y up stand upright in three.js's world: the
    // head above the mean of the feet in (nearly) every frame.
    let mut upright = 0;
    for line in stdout.lines() {
        let r: serde_json::Value = serde_json::from_str(line).unwrap();
        let file = r["file"].as_str().unwrap();
        if NOT_Y_UP.iter().any(|n| file == format!("{n}.glb")) {
            let share = r["head_above_feet"].as_f64().unwrap_or(0.0);
            if share < 0.9 {
                bad.push(format!("{file}: head above the feet in only {share} of the frames"));
            }
            upright += 1;
        }
    }
    if !files.is_empty() {
        assert_eq!(upright, NOT_Y_UP.len(), "every Z-up and Y-down corpus file was checked");
    }
    assert!(
        bad.is_empty(),
        "failures:\n{}\nstderr: {}",
        bad.join("\n"),
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(
        checked,
        n + 5,
        "every export was checked; stderr: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.status.success(), "node exited {:?}", out.status);
}
