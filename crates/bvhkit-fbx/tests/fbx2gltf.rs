//! Autodesk's reader: every well-formed corpus file is exported and
//! converted by FBX2glTF (the npm package `fbx2gltf`, built on the Autodesk
//! FBX SDK), which must succeed without a warning; its `.glb` must pass the
//! Khronos glTF-Validator with no error and no warning; and the world
//! position of every joint, by a plain forward kinematics over the glb's
//! node TRS and animation, must equal bvhkit's (`bvh positions`, turned to
//! Y up from the up axis the FBX states, in metres) within 1e-4 of the
//! skeleton's size at every key FBX2glTF writes.
//!
//! FBX2glTF bakes the animation at 24, 30 or 60 frames per second; the rate
//! with the most keys on the source's frame times is used, and at each key
//! the expected pose is bvhkit's forward kinematics of the channels
//! interpolated linearly at the key's time (what FBX's linear curves give;
//! at a key on a source frame time, that frame itself).
//!
//! Needs `npm ci` in `tests/js` (`scripts/test.sh` runs it); without node,
//! the packages, or a runnable FBX2glTF the test says so with
//! `bvhkit_testdata::skip`, which fails in CI.

use std::path::{Path, PathBuf};
use std::process::Command;

use bvhkit::edit::axes::SignedAxis;
use bvhkit::glam::{DAffine3, DMat3, DMat4, DQuat, DVec3};
use bvhkit::{Bvh, Kinematics, PositionChannels, ReadOptions};
use bvhkit_fbx::{ExportOptions, Options, export};
use bvhkit_testdata::to_y_up;
use serde_json::Value;

fn js_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/js")
}

/// A copy of the package's FBX2glTF that can run: npm unpacks the
/// prebuilt binary without its execute bit, so it is copied into the
/// target's temporary folder and made executable, once for all the tests (a copy being
/// written while another test forks would make that test's exec fail with
/// "text file busy").
fn fbx2gltf(test: &str) -> Option<PathBuf> {
    static EXE: std::sync::OnceLock<Result<PathBuf, String>> = std::sync::OnceLock::new();
    match EXE.get_or_init(install_fbx2gltf) {
        Ok(exe) => Some(exe.clone()),
        Err(reason) => {
            bvhkit_testdata::skip(test, reason);
            None
        }
    }
}

fn install_fbx2gltf() -> Result<PathBuf, String> {
    if Command::new("node").arg("--version").output().is_err() {
        return Err("node is not installed".into());
    }
    for pkg in ["fbx2gltf", "gltf-validator"] {
        if !js_dir().join("node_modules").join(pkg).is_dir() {
            return Err(format!(
                "npm package {pkg} missing: run `npm ci` in {}",
                js_dir().display()
            ));
        }
    }
    let bin = js_dir().join("node_modules/fbx2gltf/bin/Linux/FBX2glTF");
    if !cfg!(all(target_os = "linux", target_arch = "x86_64")) || !bin.is_file() {
        return Err(
            "the npm package ships FBX2glTF for x86-64 Linux, macOS and Windows only".into()
        );
    }
    // In the target's temporary folder, copied once (a copy already there
    // of the same size is used as it is).
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("fbx2gltf-0.9.7");
    std::fs::create_dir_all(&dir).map_err(|e| e.to_string())?;
    let exe = dir.join("FBX2glTF");
    let size = |p: &Path| std::fs::metadata(p).map(|m| m.len()).ok();
    if size(&exe) != size(&bin) {
        let part = dir.join(format!("FBX2glTF.{}", std::process::id()));
        std::fs::copy(&bin, &part).map_err(|e| e.to_string())?;
        std::fs::rename(&part, &exe).map_err(|e| e.to_string())?;
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&exe, std::fs::Permissions::from_mode(0o755))
            .map_err(|e| e.to_string())?;
    }
    match Command::new(&exe).arg("--version").output() {
        Ok(o) if o.status.success() => Ok(exe),
        Ok(o) => Err(format!("FBX2glTF --version failed: {}", String::from_utf8_lossy(&o.stderr))),
        Err(e) => Err(format!("FBX2glTF cannot run here: {e}")),
    }
}

/// A `.glb` read just enough for forward kinematics.
struct Glb {
    json: Value,
    bin: Vec<u8>,
}

impl Glb {
    fn read(bytes: &[u8]) -> Glb {
        assert_eq!(&bytes[..4], b"glTF");
        let u = |at: usize| u32::from_le_bytes(bytes[at..at + 4].try_into().unwrap()) as usize;
        let json_len = u(12);
        let json: Value = serde_json::from_slice(&bytes[20..20 + json_len]).unwrap();
        let at = 20 + json_len;
        let bin =
            if at + 8 <= bytes.len() { bytes[at + 8..at + 8 + u(at)].to_vec() } else { Vec::new() };
        Glb { json, bin }
    }

    /// The unsigned integers of accessor `i`, by element.
    fn ints(&self, i: usize) -> Vec<Vec<u32>> {
        let a = &self.json["accessors"][i];
        let size = match a["componentType"].as_u64().unwrap() {
            5121 => 1,
            5123 => 2,
            5125 => 4,
            c => panic!("component type {c}"),
        };
        let n = match a["type"].as_str().unwrap() {
            "SCALAR" => 1,
            "VEC4" => 4,
            t => panic!("accessor type {t}"),
        };
        let v = &self.json["bufferViews"][a["bufferView"].as_u64().unwrap() as usize];
        let start = v["byteOffset"].as_u64().unwrap_or(0) as usize
            + a["byteOffset"].as_u64().unwrap_or(0) as usize;
        let stride = v["byteStride"].as_u64().map_or(size * n, |s| s as usize);
        (0..a["count"].as_u64().unwrap() as usize)
            .map(|e| {
                (0..n)
                    .map(|k| {
                        let o = start + e * stride + size * k;
                        let mut b = [0u8; 4];
                        b[..size].copy_from_slice(&self.bin[o..o + size]);
                        u32::from_le_bytes(b)
                    })
                    .collect()
            })
            .collect()
    }

    /// The floats of accessor `i`, by element.
    fn floats(&self, i: usize) -> Vec<Vec<f64>> {
        let a = &self.json["accessors"][i];
        assert_eq!(a["componentType"], 5126, "float accessors only");
        let n = match a["type"].as_str().unwrap() {
            "SCALAR" => 1,
            "VEC3" => 3,
            "VEC4" => 4,
            "MAT4" => 16,
            t => panic!("accessor type {t}"),
        };
        let v = &self.json["bufferViews"][a["bufferView"].as_u64().unwrap() as usize];
        let start = v["byteOffset"].as_u64().unwrap_or(0) as usize
            + a["byteOffset"].as_u64().unwrap_or(0) as usize;
        let stride = v["byteStride"].as_u64().map_or(4 * n, |s| s as usize);
        (0..a["count"].as_u64().unwrap() as usize)
            .map(|e| {
                (0..n)
                    .map(|k| {
                        let o = start + e * stride + 4 * k;
                        f64::from(f32::from_le_bytes(self.bin[o..o + 4].try_into().unwrap()))
                    })
                    .collect()
            })
            .collect()
    }
}

/// One animated property of a node: key times and values.
struct Track {
    node: usize,
    path: String,
    times: Vec<f64>,
    values: Vec<Vec<f64>>,
}

impl Track {
    fn at(&self, t: f64) -> Vec<f64> {
        let k = self.times.partition_point(|&x| x <= t);
        if k == 0 {
            return self.values[0].clone();
        }
        if k >= self.times.len() {
            return self.values[self.times.len() - 1].clone();
        }
        let (t0, t1) = (self.times[k - 1], self.times[k]);
        let w = if t1 > t0 { (t - t0) / (t1 - t0) } else { 0.0 };
        let (a, b) = (&self.values[k - 1], &self.values[k]);
        if self.path == "rotation" {
            let qa = DQuat::from_xyzw(a[0], a[1], a[2], a[3]);
            let qb = DQuat::from_xyzw(b[0], b[1], b[2], b[3]);
            qa.slerp(qb, w).to_array().to_vec()
        } else {
            a.iter().zip(b).map(|(x, y)| x + (y - x) * w).collect()
        }
    }
}

/// World transforms of every glb node at time `t`.
fn glb_world(glb: &Glb, tracks: &[Track], t: f64) -> Vec<DAffine3> {
    let nodes = glb.json["nodes"].as_array().unwrap();
    let mut local: Vec<DAffine3> = nodes
        .iter()
        .map(|n| {
            if let Some(m) = n.get("matrix") {
                let m: Vec<f64> =
                    m.as_array().unwrap().iter().map(|x| x.as_f64().unwrap()).collect();
                return DAffine3::from_mat4(DMat4::from_cols_slice(&m));
            }
            let v = |k: &str, d: &[f64]| -> Vec<f64> {
                n.get(k).map_or(d.to_vec(), |a| {
                    a.as_array().unwrap().iter().map(|x| x.as_f64().unwrap()).collect()
                })
            };
            let (tr, r, s) = (
                v("translation", &[0.0; 3]),
                v("rotation", &[0.0, 0.0, 0.0, 1.0]),
                v("scale", &[1.0; 3]),
            );
            DAffine3::from_scale_rotation_translation(
                DVec3::from_slice(&s),
                DQuat::from_xyzw(r[0], r[1], r[2], r[3]),
                DVec3::from_slice(&tr),
            )
        })
        .collect();
    // Animated properties replace the node's own.
    let mut trs: Vec<(DVec3, DQuat, DVec3)> =
        local.iter().map(|a| a.to_scale_rotation_translation()).collect();
    let mut animated = vec![false; nodes.len()];
    for tr in tracks {
        let v = tr.at(t);
        let e = &mut trs[tr.node];
        match tr.path.as_str() {
            "translation" => e.2 = DVec3::from_slice(&v),
            "rotation" => e.1 = DQuat::from_xyzw(v[0], v[1], v[2], v[3]).normalize(),
            "scale" => e.0 = DVec3::from_slice(&v),
            _ => continue,
        }
        animated[tr.node] = true;
    }
    for (i, a) in animated.iter().enumerate() {
        if *a {
            local[i] = DAffine3::from_scale_rotation_translation(trs[i].0, trs[i].1, trs[i].2);
        }
    }
    let mut world = vec![DAffine3::IDENTITY; nodes.len()];
    let mut stack: Vec<(usize, DAffine3)> = glb.json["scenes"]
        [glb.json["scene"].as_u64().unwrap_or(0) as usize]["nodes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| (n.as_u64().unwrap() as usize, DAffine3::IDENTITY))
        .collect();
    while let Some((i, parent)) = stack.pop() {
        world[i] = parent * local[i];
        if let Some(c) = nodes[i].get("children") {
            for c in c.as_array().unwrap() {
                stack.push((c.as_u64().unwrap() as usize, world[i]));
            }
        }
    }
    world
}

fn tracks_of(glb: &Glb) -> Vec<Track> {
    let mut out = Vec::new();
    let Some(anims) = glb.json["animations"].as_array() else { return out };
    assert!(anims.len() <= 1, "one animation");
    for a in anims {
        for ch in a["channels"].as_array().unwrap() {
            let s = &a["samplers"][ch["sampler"].as_u64().unwrap() as usize];
            assert_eq!(s["interpolation"].as_str().unwrap_or("LINEAR"), "LINEAR");
            out.push(Track {
                node: ch["target"]["node"].as_u64().unwrap() as usize,
                path: ch["target"]["path"].as_str().unwrap().to_string(),
                times: glb
                    .floats(s["input"].as_u64().unwrap() as usize)
                    .into_iter()
                    .map(|v| v[0])
                    .collect(),
                values: glb.floats(s["output"].as_u64().unwrap() as usize),
            });
        }
    }
    out
}

/// The bake rate of FBX2glTF with the most keys on source frame times.
fn bake_rate(frame_time: f64, n_frames: usize) -> u32 {
    let on_frame = |r: u32| {
        (0..n_frames)
            .filter(|&i| {
                let k = i as f64 * frame_time * f64::from(r);
                (k - k.round()).abs() < 1e-3 * frame_time * f64::from(r)
            })
            .count()
    };
    [60, 30, 24].into_iter().max_by_key(|&r| (on_frame(r), r)).unwrap()
}

/// bvhkit's world positions with the channels interpolated linearly at `t`.
fn expected_at(bvh: &Bvh, fk: &Kinematics, t: f64, out: &mut [DVec3]) -> bool {
    let m = bvh.motion();
    let n = m.n_frames();
    let x = if n > 1 { t / m.frame_time() } else { 0.0 };
    let i = (x.floor().max(0.0) as usize).min(n - 1);
    let w = (x - i as f64).clamp(0.0, 1.0);
    let on_frame = !(1e-3..=1.0 - 1e-3).contains(&w);
    if w == 0.0 || i + 1 >= n {
        fk.positions(m.frame(i), out);
    } else {
        let row: Vec<f64> =
            m.frame(i).iter().zip(m.frame(i + 1)).map(|(a, b)| a + (b - a) * w).collect();
        fk.positions(&row, out);
    }
    on_frame
}

/// The rotation that turns a file whose up axis is `up` to Y up ([`to_y_up`]).
fn y_up_matrix(up: Option<SignedAxis>) -> DMat3 {
    DMat3::from_cols(to_y_up(up, DVec3::X), to_y_up(up, DVec3::Y), to_y_up(up, DVec3::Z))
}

/// The largest distance, relative to the skeleton's size, between a
/// vertex skinned by the glb (its joint's world matrix times its inverse
/// bind matrix) and the same vertex carried rigidly by its joint as
/// bvhkit moves it (the joint's world transform of the channels at `t`).
fn skinned_error(
    glb: &Glb,
    world: &[DAffine3],
    bvh: &Bvh,
    out: &bvhkit_fbx::Export,
    t: f64,
    index: &[usize],
) -> f64 {
    let j = &glb.json;
    let mesh_node = j["nodes"]
        .as_array()
        .unwrap()
        .iter()
        .position(|n| n.get("skin").is_some())
        .expect("a skinned mesh node");
    let node = &j["nodes"][mesh_node];
    let prim = &j["meshes"][node["mesh"].as_u64().unwrap() as usize]["primitives"][0];
    let skin = &j["skins"][node["skin"].as_u64().unwrap() as usize];
    let pos = glb.floats(prim["attributes"]["POSITION"].as_u64().unwrap() as usize);
    let joints = glb.ints(prim["attributes"]["JOINTS_0"].as_u64().unwrap() as usize);
    let weights = glb.floats(prim["attributes"]["WEIGHTS_0"].as_u64().unwrap() as usize);
    let ibm = glb.floats(skin["inverseBindMatrices"].as_u64().unwrap() as usize);
    let skin_joints: Vec<usize> =
        skin["joints"].as_array().unwrap().iter().map(|x| x.as_u64().unwrap() as usize).collect();
    // The bind pose: the mesh node's world transform on the vertices.
    let mesh_world = world[mesh_node];
    let s = bvh.skeleton();
    let fk = Kinematics::new(s, PositionChannels::Replace);
    let m = bvh.motion();
    let mut w = vec![DAffine3::IDENTITY; s.len()];
    if m.n_frames() > 0 {
        let x = t / m.frame_time();
        let i = (x.floor().max(0.0) as usize).min(m.n_frames() - 1);
        let f = (x - i as f64).clamp(0.0, 1.0);
        let row: Vec<f64> = if i + 1 < m.n_frames() {
            m.frame(i).iter().zip(m.frame(i + 1)).map(|(a, b)| a + (b - a) * f).collect()
        } else {
            m.frame(i).to_vec()
        };
        fk.world(&row, &mut w);
    } else {
        let rest = bvhkit::units::rest_pose(s, PositionChannels::Add);
        for (a, r) in w.iter_mut().zip(rest) {
            *a = DAffine3::from_translation(r);
        }
    }
    let rest = bvhkit::units::rest_pose(s, PositionChannels::Add);
    let to_y = y_up_matrix(out.applied.up);
    let factor = out.applied.factor;
    let size = out.applied.guess.size * factor;
    let mut worst = 0.0f64;
    for ((v, jn), wt) in pos.iter().zip(&joints).zip(&weights) {
        let k = (0..4).max_by(|&a, &b| wt[a].total_cmp(&wt[b])).unwrap();
        assert!((wt[k] - 1.0).abs() < 1e-6, "one joint per vertex, weight 1: {wt:?}");
        let node = skin_joints[jn[k] as usize];
        let joint = index.iter().position(|&n| n == node).expect("a skin joint is a joint");
        let v = DVec3::new(v[0], v[1], v[2]);
        let b = DMat4::from_cols_slice(&ibm[jn[k] as usize]);
        let skinned = (world[node] * DAffine3::from_mat4(b)).transform_point3(v);
        let bind_file = to_y.transpose() * mesh_world.transform_point3(v) / factor;
        let want = to_y * w[joint].transform_point3(bind_file - rest[joint]) * factor;
        worst = worst.max(skinned.distance(want) / size);
    }
    worst
}

/// Whether every frame is the rest pose (world positions equal).
fn warning_free_of_motion(bvh: &Bvh) -> bool {
    let s = bvh.skeleton();
    let rest = bvhkit::units::rest_pose(s, PositionChannels::Replace);
    let fk = Kinematics::new(s, PositionChannels::Replace);
    let mut p = vec![DVec3::ZERO; s.len()];
    bvh.motion().frames().all(|f| {
        fk.positions(f, &mut p);
        p == rest
    })
}

#[test]
fn fbx2gltf_reads_every_export() {
    check_corpus("fbx2gltf_reads_every_export", false);
}

/// With the mesh: FBX2glTF puts every node under its `RootNode` and the
/// unit's scale on the top nodes, so the validator warns of a skinned mesh
/// that is not a root node and has local transforms (warnings about the
/// layout FBX2glTF chose, which glTF readers ignore for a skinned mesh);
/// any other warning or error fails, and every skinned vertex must follow
/// its joint as bvhkit moves it.
#[test]
fn fbx2gltf_skins_the_boxes() {
    check_corpus("fbx2gltf_skins_the_boxes", true);
}

fn check_corpus(test: &str, mesh: bool) {
    const ALLOWED_WITH_MESH: [&str; 2] =
        ["NODE_SKINNED_MESH_NON_ROOT", "NODE_SKINNED_MESH_LOCAL_TRANSFORMS"];
    if bvhkit_testdata::corpus_or_skip(test).is_none() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let Some(exe) = fbx2gltf(test) else { return };
    let glbs = dir.path().join("glb");
    std::fs::create_dir(&glbs).unwrap();
    let mut cases = Vec::new();
    let mut stills = Vec::new();
    let mut rates = Vec::new();
    for path in bvhkit_testdata::corpus_files() {
        let name = path.file_stem().unwrap().to_string_lossy().into_owned();
        let bytes = std::fs::read(&path).unwrap();
        let Ok((bvh, _)) = ReadOptions::new().lenient(true).parse(&bytes) else { continue };
        let options =
            ExportOptions { common: Options { mesh, ..Default::default() }, ..Default::default() };
        let out = export(&bvh, &options).unwrap_or_else(|e| panic!("{name}: {e}"));
        let fbx = dir.path().join(format!("{name}.fbx"));
        std::fs::write(&fbx, &out.bytes).unwrap();
        let rate = bake_rate(bvh.motion().frame_time(), bvh.motion().n_frames());
        rates.push(rate);
        let run = Command::new(&exe)
            .args(["--binary", "--anim-framerate", &format!("bake{rate}"), "--input"])
            .arg(&fbx)
            .arg("--output")
            .arg(glbs.join(&name))
            .output()
            .unwrap();
        let text = format!(
            "{}{}",
            String::from_utf8_lossy(&run.stdout),
            String::from_utf8_lossy(&run.stderr)
        );
        assert!(run.status.success(), "{name}: FBX2glTF failed: {text}");
        // FBX2glTF drops an animation in which nothing moves, and says so;
        // that one warning is accepted for a motion that stays in the rest
        // pose at every frame (the corpus has one: a single frame of zeros).
        let still = warning_free_of_motion(&bvh);
        let warnings: Vec<&str> = text
            .lines()
            .filter(|l| l.to_ascii_lowercase().contains("warn"))
            .filter(|l| !(still && l.ends_with("has zero channels. Skipping.")))
            .collect();
        assert!(warnings.is_empty(), "{name}: FBX2glTF warns: {text}");
        if still {
            stills.push(name.clone());
        }
        cases.push((name, bvh, out));
    }
    assert!(cases.len() >= 30, "only {} corpus files read", cases.len());

    // The Khronos validator on every glb.
    let v = Command::new("node")
        .arg(js_dir().join("validate.mjs"))
        .arg(&glbs)
        .current_dir(js_dir())
        .output()
        .unwrap();
    assert!(v.status.success(), "validate.mjs: {}", String::from_utf8_lossy(&v.stderr));
    let mut validated = 0;
    for line in String::from_utf8_lossy(&v.stdout).lines() {
        let r: Value = serde_json::from_str(line).unwrap();
        // A motionless file's glb has neither animation nor mesh, and
        // FBX2glTF writes it an empty buffer, which the validator refuses.
        let file = r["file"].as_str().unwrap().trim_end_matches(".glb");
        let empty_buffer = r["errors"] == 1
            && r["messages"][0].as_str().is_some_and(|m| m.contains("/buffers/0/byteLength"));
        let still = stills.iter().any(|n| n == file);
        let allowed = |c: &Value| mesh && ALLOWED_WITH_MESH.contains(&c.as_str().unwrap_or(""));
        let warnings_ok = r["warnings"] == 0
            || r["codes"]
                .as_array()
                .unwrap()
                .iter()
                .all(|c| allowed(c) || (still && c.as_str() == Some("VALUE_NOT_IN_RANGE")));
        assert!(
            (r["errors"] == 0 || (still && empty_buffer)) && warnings_ok,
            "glTF-Validator: {r}"
        );
        validated += 1;
    }
    assert_eq!(validated, cases.len());

    // Forward kinematics over the glb against bvhkit's.
    let (mut worst, mut worst_name) = (0.0f64, String::new());
    let (mut keys, mut on_frames) = (0usize, 0usize);
    let (mut worst_skin, mut skin_checks) = (0.0f64, 0usize);
    for (name, bvh, out) in &cases {
        let glb = Glb::read(&std::fs::read(glbs.join(format!("{name}.glb"))).unwrap());
        let tracks = tracks_of(&glb);
        let node_names: Vec<&str> = glb.json["nodes"]
            .as_array()
            .unwrap()
            .iter()
            .map(|n| n["name"].as_str().unwrap_or(""))
            .collect();
        let index: Vec<usize> = out
            .names
            .iter()
            .map(|n| {
                let found: Vec<usize> =
                    (0..node_names.len()).filter(|&i| node_names[i] == n).collect();
                assert_eq!(found.len(), 1, "{name}: glb nodes named {n:?}");
                found[0]
            })
            .collect();
        let s = bvh.skeleton();
        let fk = Kinematics::new(s, PositionChannels::Replace);
        let factor = out.applied.factor;
        let size = out.applied.guess.size * factor;
        let mut p = vec![DVec3::ZERO; s.len()];
        let n = bvh.motion().n_frames();
        let times: Vec<f64> = match tracks.first() {
            Some(t) => t.times.clone(),
            None => vec![0.0],
        };
        let end = (n.max(1) - 1) as f64 * bvh.motion().frame_time();
        let mut file_worst = 0.0f64;
        let rate = f64::from(bake_rate(bvh.motion().frame_time(), n));
        let in_range: Vec<f64> = times.iter().copied().filter(|&t| t <= end + 1e-6).collect();
        let nk = in_range.len();
        let skin_keys = [0, nk / 4, nk / 2, 3 * nk / 4, nk.saturating_sub(1)];
        for (ki, &t32) in in_range.iter().enumerate() {
            // FBX2glTF samples at k / rate exactly and writes the time as
            // an f32: the expected pose is taken at the exact time (an
            // Euler channel that wraps from 179° to -179° between frames
            // turns 0.02° in the f32 rounding of a time of 20 s).
            let t = (t32 * rate).round() / rate;
            keys += 1;
            if n > 0 && expected_at(bvh, &fk, t, &mut p) {
                on_frames += 1;
            } else if n == 0 {
                // No motion: the OFFSETs (the FBX's Lcl Translation), as
                // position channels at zero would replace them.
                p = bvhkit::units::rest_pose(s, PositionChannels::Add);
            }
            let world = glb_world(&glb, &tracks, t32);
            if mesh && skin_keys.contains(&ki) {
                let e = skinned_error(&glb, &world, bvh, out, t, &index);
                assert!(e <= 1e-4, "{name}: t {t}: a skinned vertex is {e:e} of the size away");
                worst_skin = worst_skin.max(e);
                skin_checks += 1;
            }
            for (j, want) in p.iter().enumerate() {
                let want = to_y_up(out.applied.up, *want) * factor;
                let e = world[index[j]].translation.distance(want) / size;
                assert!(
                    e <= 1e-4,
                    "{name}: t {t}: joint {}: glb {} vs bvhkit {want} ({e:e} of the size)",
                    out.names[j],
                    world[index[j]].translation
                );
                file_worst = file_worst.max(e);
            }
        }
        if file_worst > worst {
            (worst, worst_name) = (file_worst, name.clone());
        }
    }
    eprintln!(
        "FBX2glTF{}: {} corpus files converted without warnings (but for the motionless {stills:?}), {validated} glbs valid (the motionless ones without a mesh: but for FBX2glTF's empty buffer); {keys} keys compared ({on_frames} on source frames), largest error {worst:e} of the size ({worst_name}); bake rates {rates:?}; {skin_checks} skinned poses checked, largest vertex error {worst_skin:e} of the size",
        if mesh { " (with the mesh)" } else { "" },
        cases.len()
    );
}
