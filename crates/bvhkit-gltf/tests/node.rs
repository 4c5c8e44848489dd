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

use bvhkit::glam::DVec3;
use bvhkit::{Bvh, Kinematics, PositionChannels, ReadOptions};
use bvhkit_gltf::{ExportOptions, export};
use bvhkit_testdata::to_y_up;

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
/// The `.glb` is the streamed one of `bvh export` (`Plan::write_glb` into
/// a file), which must be the bytes of the one made in memory.
fn write_case(dir: &Path, name: &str, bvh: &Bvh, options: &ExportOptions) {
    let out = export(bvh, options).unwrap_or_else(|e| panic!("{name}: {e}"));
    let path = dir.join(format!("{name}.glb"));
    let mut file = std::fs::File::create(&path).unwrap();
    bvhkit_gltf::plan(bvh, options).unwrap().write_glb(&mut file).unwrap();
    drop(file);
    assert!(
        std::fs::read(&path).unwrap() == out.to_glb().unwrap(),
        "{name}: streamed .glb differs"
    );
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

/// Serves `root` (and `/three/` from the npm package) over loopback HTTP,
/// one connection at a time, until dropped.
struct Server {
    port: u16,
    stop: std::sync::Arc<std::sync::atomic::AtomicBool>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Server {
    fn start(root: PathBuf) -> Server {
        use std::io::{BufRead, BufReader, Write};
        use std::sync::atomic::Ordering;
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let flag = stop.clone();
        let three = js_dir().join("node_modules/three");
        let thread = std::thread::spawn(move || {
            for conn in listener.incoming() {
                if flag.load(Ordering::SeqCst) {
                    break;
                }
                let Ok(mut conn) = conn else { continue };
                let _ = conn.set_read_timeout(Some(std::time::Duration::from_secs(10)));
                let mut line = String::new();
                let mut reader = BufReader::new(conn.try_clone().unwrap());
                if reader.read_line(&mut line).is_err() {
                    continue;
                }
                // Skip the headers.
                let mut h = String::new();
                while reader.read_line(&mut h).is_ok_and(|n| n > 2) {
                    h.clear();
                }
                let path = line.split(' ').nth(1).unwrap_or("/").split('?').next().unwrap_or("/");
                let file = if path.split('/').any(|p| p == "..") {
                    None
                } else if let Some(rest) = path.strip_prefix("/three/") {
                    Some(three.join(rest))
                } else {
                    Some(root.join(path.trim_start_matches('/')))
                };
                let body = file.as_ref().and_then(|f| std::fs::read(f).ok());
                let kind = match file.as_ref().and_then(|f| f.extension()).and_then(|e| e.to_str())
                {
                    Some("html") => "text/html; charset=utf-8",
                    Some("js") => "text/javascript",
                    Some("glb") => "model/gltf-binary",
                    _ => "application/octet-stream",
                };
                let _ = match body {
                    Some(b) => conn
                        .write_all(
                            format!(
                                "HTTP/1.1 200 OK\r\nContent-Type: {kind}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
                                b.len()
                            )
                            .as_bytes(),
                        )
                        .and_then(|()| conn.write_all(&b)),
                    None => conn.write_all(
                        b"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n",
                    ),
                };
            }
        });
        Server { port, stop, thread: Some(thread) }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.stop.store(true, std::sync::atomic::Ordering::SeqCst);
        let _ = std::net::TcpStream::connect(("127.0.0.1", self.port));
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// Headless Chromium on `url`: a screenshot into `png` and the page's title.
fn chromium_shot(chromium: &Path, url: &str, png: &Path) -> String {
    let extra = [
        // WebGL on the CPU: SwiftShader, which Chromium only enables for
        // WebGL when told to.
        "--use-gl=swiftshader".to_string(),
        "--enable-unsafe-swiftshader".to_string(),
        "--window-size=800,600".to_string(),
        // Virtual time: the screenshot waits for the page's loads and render.
        "--virtual-time-budget=20000".to_string(),
        "--dump-dom".to_string(),
        format!("--screenshot={}", png.display()),
    ];
    let dom = bvhkit_testdata::run_headless_chromium(
        chromium,
        url,
        &extra,
        std::time::Duration::from_secs(120),
    );
    dom.split("<title>")
        .nth(1)
        .and_then(|t| t.split("</title>").next())
        .unwrap_or_default()
        .replace("&quot;", "\"")
        .replace("&amp;", "&")
}

/// RGB pixels of a PNG: (width, height, pixels).
fn decode_png(path: &Path) -> (u32, u32, Vec<[u8; 3]>) {
    let decoder = png::Decoder::new(std::io::BufReader::new(std::fs::File::open(path).unwrap()));
    let mut reader = decoder.read_info().unwrap();
    let mut buf = vec![0; reader.output_buffer_size().unwrap()];
    let info = reader.next_frame(&mut buf).unwrap();
    assert_eq!(info.bit_depth, png::BitDepth::Eight);
    let n = info.color_type.samples();
    let rgb = buf[..info.buffer_size()].chunks_exact(n).map(|p| [p[0], p[1], p[2]]).collect();
    (info.width, info.height, rgb)
}

/// Several corpus clips (Y up, Z up, Y down, a quadruped) exported and drawn
/// by three.js in headless Chromium (WebGL on SwiftShader, `tests/js/view.html`):
/// the screenshot has the figure's colour, where the page projected the
/// joints, covering their extent, with the head above the feet.
/// `BVHKIT_KEEP_SCREENSHOT=DIR` keeps the pictures for a look.
#[test]
fn three_js_draws_the_figure_in_chromium() {
    let test = "three_js_draws_the_figure_in_chromium";
    let Some(chromium) = bvhkit_testdata::chromium_or_skip(test) else { return };
    if !js_dir().join("node_modules/three").is_dir() {
        bvhkit_testdata::skip(test, &format!("run `npm ci` in {}", js_dir().display()));
        return;
    }
    let Some(corpus) = bvhkit_testdata::corpus_or_skip(test) else { return };
    let dir = tempfile::tempdir().unwrap();
    std::fs::copy(js_dir().join("view.html"), dir.path().join("view.html")).unwrap();
    let server = Server::start(dir.path().to_path_buf());
    let keep = std::env::var_os("BVHKIT_KEEP_SCREENSHOT").map(PathBuf::from);
    let clips = [
        ("cmu_01_01_walk_cgspeed_mb_names", 240, true),
        ("fair_zombie_animated_drawings_xyz_yxz", 100, true),
        ("azure_kinect_xyz_no_end_sites", 300, true),
        ("truebones_elephant_idle_6ch_every_joint", 50, false),
    ];
    for (name, frame, human) in clips {
        let bytes = std::fs::read(corpus.join(format!("{name}.bvh"))).unwrap();
        let (bvh, _) = ReadOptions::new().lenient(true).parse(&bytes).unwrap();
        let x = export(&bvh, &ExportOptions::default()).unwrap();
        std::fs::write(dir.path().join(format!("{name}.glb")), x.to_glb().unwrap()).unwrap();
        let t = frame as f64 * bvh.motion().frame_time();
        let url = format!("http://127.0.0.1:{}/view.html?file={name}.glb&t={t}", server.port);
        let png = dir.path().join(format!("{name}.png"));
        let title = chromium_shot(&chromium, &url, &png);
        if let Some(k) = &keep {
            std::fs::create_dir_all(k).unwrap();
            std::fs::copy(&png, k.join(format!("{name}.gltf.frame{frame}.png"))).unwrap();
        }
        let Some(state) = title.strip_prefix("rendered ") else {
            panic!("{name}: the page did not render: {title}");
        };
        let state: serde_json::Value = serde_json::from_str(state).unwrap();
        let pt = |v: &serde_json::Value| (v[0].as_f64().unwrap(), v[1].as_f64().unwrap());
        let bones: Vec<(f64, f64)> = state["bones"].as_array().unwrap().iter().map(pt).collect();
        let (mut lo, mut hi) = ((f64::MAX, f64::MAX), (f64::MIN, f64::MIN));
        for &(x, y) in &bones {
            lo = (lo.0.min(x), lo.1.min(y));
            hi = (hi.0.max(x), hi.1.max(y));
        }
        // The figure's pixels: the boxes' orange, lit or shaded.
        let (w, h, rgb) = decode_png(&png);
        assert_eq!((w, h), (800, 600), "{name}");
        let figure = |p: &[u8; 3]| {
            let [r, g, b] = p.map(i32::from);
            r >= 90 && r - g >= 40 && g - b >= 5 && r - b >= 80
        };
        let (mut n, mut plo, mut phi) = (0usize, (u32::MAX, u32::MAX), (0u32, 0u32));
        let mut other = 0usize;
        for (i, p) in rgb.iter().enumerate() {
            let (x, y) = (i as u32 % w, i as u32 / w);
            if figure(p) {
                n += 1;
                plo = (plo.0.min(x), plo.1.min(y));
                phi = (phi.0.max(x), phi.1.max(y));
            } else if *p != [255, 255, 255] {
                other += 1;
            }
        }
        eprintln!(
            "{name} at frame {frame}: {n} figure pixels in x {}..{}, y {}..{}; joints x {:.0}..{:.0}, y {:.0}..{:.0}; {other} other non-white",
            plo.0, phi.0, plo.1, phi.1, lo.0, hi.0, lo.1, hi.1
        );
        assert!(n >= 2000, "{name}: only {n} pixels of the figure's colour");
        // The boxes are centred on the bones, at most 5% of the figure thick.
        let margin = 0.1 * (hi.0 - lo.0).max(hi.1 - lo.1) + 4.0;
        assert!(
            f64::from(plo.0) >= lo.0 - margin
                && f64::from(phi.0) <= hi.0 + margin
                && f64::from(plo.1) >= lo.1 - margin
                && f64::from(phi.1) <= hi.1 + margin,
            "{name}: figure pixels outside the projected joints"
        );
        assert!(
            f64::from(phi.1 - plo.1) >= 0.7 * (hi.1 - lo.1)
                && f64::from(phi.0 - plo.0) >= 0.7 * (hi.0 - lo.0),
            "{name}: the figure's pixels do not span its joints"
        );
        assert!(hi.1 - lo.1 >= 200.0, "{name}: framed too small");
        if human {
            let head = pt(&state["head"][0]);
            let feet: Vec<(f64, f64)> = state["feet"].as_array().unwrap().iter().map(pt).collect();
            let feet_y = feet.iter().map(|f| f.1).sum::<f64>() / feet.len() as f64;
            assert!(
                head.1 < feet_y - 100.0,
                "{name}: head at y {} not above the feet ({feet_y})",
                head.1
            );
        }
    }
}
