//! Blender's reader: every well-formed corpus file is exported (with the
//! mesh, as `bvh export` writes it) and imported by Debian's Blender with
//! its own FBX importer (`io_scene_fbx`, headless, one Blender process for
//! all the files: `tests/blender/heads.py`), and the world position of
//! every bone's head at five sampled frames must equal bvhkit's forward
//! kinematics (`bvh positions`) within 1e-4 of the skeleton's size, in
//! Blender's axes and units: the position turned to Y up from the up axis
//! the FBX states, to metres by the unit it states, then to Blender's Z up
//! (`(x, y, z)` to `(x, -z, y)`), which is what the importer does with the
//! file's `GlobalSettings`.
//!
//! Needs `blender` (Debian's package; `scripts/test.sh` installs it);
//! without it the test says so with `bvhkit_testdata::skip`, which fails in
//! CI.

use std::path::{Path, PathBuf};
use std::process::Command;

use bvhkit::glam::DVec3;
use bvhkit::{Kinematics, PositionChannels, ReadOptions};
use bvhkit_fbx::{ExportOptions, export};
use bvhkit_testdata::to_y_up;
use serde_json::{Value, json};

/// Files that cannot meet 1e-4 of the size for a reason inside Blender's
/// importer: (file, largest error measured relative to its size, reason).
/// Each must still be within twice the measured error, and must exceed
/// 1e-4 (else it belongs with the others).
const KNOWN: &[(&str, f64, &str)] = &[];

const TOLERANCE: f64 = 1e-4;

fn blender(test: &str) -> Option<PathBuf> {
    match Command::new("blender").args(["-b", "--factory-startup", "--version"]).output() {
        Ok(o) if o.status.success() => Some(PathBuf::from("blender")),
        Ok(o) => {
            let text = String::from_utf8_lossy(&o.stderr).into_owned();
            bvhkit_testdata::skip(test, &format!("blender --version failed: {text}"));
            None
        }
        Err(e) => {
            bvhkit_testdata::skip(
                test,
                &format!("blender is not installed ({e}): apt-get install blender"),
            );
            None
        }
    }
}

/// Y up (front +Z) to Blender's Z up (front -Y).
fn y_up_to_blender(p: DVec3) -> DVec3 {
    DVec3::new(p.x, -p.z, p.y)
}

/// The frames sampled: first, last and three between.
fn sampled(n: usize) -> Vec<usize> {
    let mut f: Vec<usize> = if n == 0 { vec![0] } else { vec![0, n / 4, n / 2, 3 * n / 4, n - 1] };
    f.dedup();
    f
}

/// Blender's bone name for a model name: at most 63 bytes, cut at a
/// character boundary.
fn blender_name(name: &str) -> &str {
    let mut end = name.len().min(63);
    while !name.is_char_boundary(end) {
        end -= 1;
    }
    &name[..end]
}

#[test]
fn blender_imports_every_export() {
    let test = "blender_imports_every_export";
    if bvhkit_testdata::corpus_or_skip(test).is_none() {
        return;
    }
    let Some(exe) = blender(test) else { return };
    let dir = tempfile::tempdir().unwrap();
    let mut cases = Vec::new();
    let mut job = Vec::new();
    for path in bvhkit_testdata::corpus_files() {
        let name = path.file_stem().unwrap().to_string_lossy().into_owned();
        let bytes = std::fs::read(&path).unwrap();
        let Ok((bvh, _)) = ReadOptions::new().lenient(true).parse(&bytes) else { continue };
        let options = ExportOptions::default();
        let out = export(&bvh, &options).unwrap_or_else(|e| panic!("{name}: {e}"));
        let fbx = dir.path().join(format!("{name}.fbx"));
        std::fs::write(&fbx, &out.bytes).unwrap();
        let frames = sampled(bvh.motion().n_frames());
        let ft = bvh.motion().frame_time();
        let times: Vec<f64> = frames.iter().map(|&i| i as f64 * ft).collect();
        job.push(json!({"name": name, "fbx": fbx, "times": times}));
        cases.push((name, bvh, out, frames, options));
    }
    assert!(cases.len() >= 30, "only {} corpus files read", cases.len());
    let job_path = dir.path().join("job.json");
    let out_path = dir.path().join("out.json");
    std::fs::write(&job_path, serde_json::to_vec(&job).unwrap()).unwrap();
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/blender/heads.py");
    let started = std::time::Instant::now();
    let run = Command::new(&exe)
        .args(["-b", "--factory-startup", "--python-exit-code", "1", "--python"])
        .arg(&script)
        .arg("--")
        .arg(&job_path)
        .arg(&out_path)
        .output()
        .unwrap();
    let log =
        format!("{}{}", String::from_utf8_lossy(&run.stdout), String::from_utf8_lossy(&run.stderr));
    assert!(run.status.success() && out_path.is_file(), "blender failed: {log}");
    eprintln!("Blender imported {} files in {:.1} s", cases.len(), started.elapsed().as_secs_f64());
    let results: Vec<Value> = serde_json::from_slice(&std::fs::read(&out_path).unwrap()).unwrap();
    assert_eq!(results.len(), cases.len());

    let mut failures = Vec::new();
    let mut known_seen = Vec::new();
    let (mut worst, mut worst_name, mut checked) = (0.0f64, String::new(), 0usize);
    for ((name, bvh, out, frames, options), r) in cases.iter().zip(&results) {
        assert_eq!(r["name"].as_str(), Some(name.as_str()));
        assert!(r["error"].is_null(), "{name}: Blender's import failed: {}", r["error"]);
        let bones = r["bones"].as_object().unwrap();
        let s = bvh.skeleton();
        let fk = Kinematics::new(s, options.common.position_channels);
        let factor = out.applied.factor;
        let size = out.applied.guess.size * factor;
        let mut p = vec![DVec3::ZERO; s.len()];
        let mut file_worst = 0.0f64;
        let m = bvh.motion();
        for (k, &f) in frames.iter().enumerate() {
            if m.n_frames() == 0 {
                // No motion: the FBX has the rest pose, every joint at its
                // OFFSET (the root's too, whatever its position channels).
                p = bvhkit::units::rest_pose(s, PositionChannels::Add);
            } else {
                fk.positions(m.frame(f), &mut p);
            }
            for (j, model) in out.names.iter().enumerate() {
                let got = bones
                    .get(blender_name(model))
                    .unwrap_or_else(|| panic!("{name}: no Blender bone for {model:?}"));
                let g = &got[k];
                let got = DVec3::new(
                    g[0].as_f64().unwrap(),
                    g[1].as_f64().unwrap(),
                    g[2].as_f64().unwrap(),
                );
                let want = y_up_to_blender(to_y_up(out.applied.up, p[j]) * factor);
                file_worst = file_worst.max(got.distance(want) / size);
                checked += 1;
            }
        }
        eprintln!("{name}: largest error {file_worst:.2e} of the size ({} frames)", frames.len());
        match KNOWN.iter().find(|k| k.0 == name) {
            Some(&(_, measured, reason)) => {
                known_seen.push(name.clone());
                assert!(
                    file_worst > TOLERANCE && file_worst <= 2.0 * measured,
                    "{name} (known: {reason}): error {file_worst:.3e}, listed as {measured:.3e}"
                );
            }
            None => {
                if file_worst > TOLERANCE {
                    failures.push(format!("{name}: {file_worst:.3e}"));
                }
                if file_worst > worst {
                    (worst, worst_name) = (file_worst, name.clone());
                }
            }
        }
    }
    eprintln!(
        "{} files, {checked} bone heads; largest error {worst:.2e} of the size ({worst_name})",
        cases.len()
    );
    assert!(
        failures.is_empty(),
        "Blender's bone heads differ beyond 1e-4 of the size: {failures:?}"
    );
    assert_eq!(known_seen.len(), KNOWN.len(), "a file listed in KNOWN was not read");
}
