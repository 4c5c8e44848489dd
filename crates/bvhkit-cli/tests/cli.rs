//! End-to-end tests of the `bvh` binary.
#![allow(clippy::print_stderr)]

use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

fn bvh() -> Command {
    Command::new(env!("CARGO_BIN_EXE_bvh"))
}

fn run(args: &[&str]) -> Output {
    bvh().args(args).output().unwrap()
}

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../bvhkit/tests/data/quirks").join(name)
}

fn fx(name: &str) -> String {
    fixture(name).to_string_lossy().into_owned()
}

#[track_caller]
fn corpus() -> Option<PathBuf> {
    bvhkit_testdata::corpus_or_skip(std::panic::Location::caller().to_string().as_str())
}

fn stdout(o: &Output) -> String {
    String::from_utf8(o.stdout.clone()).unwrap()
}

fn stderr(o: &Output) -> String {
    String::from_utf8(o.stderr.clone()).unwrap()
}

#[test]
fn info_text_and_json() {
    let o = run(&["info", &fx("two_roots.bvh")]);
    assert!(o.status.success(), "{}", stderr(&o));
    let s = stdout(&o);
    assert!(s.contains("roots:           Hips, Prop"), "{s}");
    assert!(s.contains("joints:          3 (+ 1 End Sites)"), "{s}");
    assert!(s.contains("└─ Spine"), "{s}");

    let o = run(&["info", "--json", &fx("frames_too_many.bvh")]);
    assert!(o.status.success());
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["roots"], serde_json::json!(["Hips"]));
    assert_eq!(v["joints"], 2);
    assert_eq!(v["end_sites"], 1);
    assert_eq!(v["channels"], 9);
    assert_eq!(v["frames"], 2);
    assert_eq!(v["frame_time"], 0.0333333);
    assert_eq!(v["rotation_orders"], serde_json::json!(["ZXY"]));
    assert_eq!(v["warnings"][0]["line"], 17);
    assert_eq!(v["warnings"][0]["column"], 9);
    assert!(v["path"].as_str().unwrap().ends_with("frames_too_many.bvh"));

    // Several files: an array, in argument order.
    let o = run(&["info", "--json", &fx("crlf.bvh"), &fx("two_roots.bvh")]);
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v.as_array().unwrap().len(), 2);
    assert_eq!(v[1]["roots"], serde_json::json!(["Hips", "Prop"]));
}

#[test]
fn check_exit_codes_and_locations() {
    let o = run(&["check", &fx("crlf.bvh")]);
    assert_eq!(o.status.code(), Some(0));
    assert!(o.stdout.is_empty());

    let f = fx("last_row_cut.bvh");
    let o = run(&["check", &f]);
    assert_eq!(o.status.code(), Some(1));
    let s = stdout(&o);
    assert!(
        s.contains(&format!("{f}:21:1: the last frame has 4 of 9 values; it was dropped")),
        "{s}"
    );
    assert!(s.contains(&format!("{f}:17:9: Frames: declares 3")), "{s}");

    let o = run(&["check", "--strict", &f]);
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(stdout(&o).lines().count(), 1);

    let o = run(&["check", "/nonexistent/x.bvh"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).starts_with("bvh: error: /nonexistent/x.bvh"), "{}", stderr(&o));

    let o = run(&["check", "-q", &f]);
    assert_eq!(o.status.code(), Some(1));
    assert!(o.stdout.is_empty());
}

#[test]
fn check_notes_when_position_channels_matter() {
    let text = "HIERARCHY ROOT R { OFFSET 0 0 0 CHANNELS 3 Xposition Yposition Zposition\n\
        JOINT J { OFFSET 0 5 0 CHANNELS 3 Xposition Yposition Zposition End Site { OFFSET 0 1 0 } } }\n\
        MOTION\nFrames: 1\nFrame Time: 0.1\n0 0 0 0 5 0\n";
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("pos.bvh");
    std::fs::write(&p, text).unwrap();
    let o = run(&["check", p.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(0), "a note is not a problem");
    let s = stdout(&o);
    assert!(s.contains("note: joint 'J' has position channels"), "{s}");
    assert!(s.contains("repeats the OFFSET"), "{s}");
}

#[test]
fn fmt_to_stdout_file_and_in_place() {
    let o = run(&["fmt", &fx("one_line.bvh")]);
    assert!(o.status.success());
    let canonical = std::fs::read(fixture("crlf.bvh")).unwrap();
    let expected = String::from_utf8(canonical).unwrap().replace("\r\n", "\n");
    assert_eq!(stdout(&o), expected);
    assert!(stderr(&o).contains("one_line.bvh:1:246:"), "warnings go to stderr");

    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out.bvh");
    let o = run(&["fmt", &fx("crlf.bvh"), "-o", out.to_str().unwrap(), "--crlf"]);
    assert!(o.status.success());
    assert_eq!(std::fs::read(&out).unwrap(), std::fs::read(fixture("crlf.bvh")).unwrap());

    // In place: a good file is rewritten, a bad one is left untouched.
    let good = dir.path().join("good.bvh");
    let bad = dir.path().join("bad.bvh");
    std::fs::copy(fixture("no_indentation_spaces_tabs.bvh"), &good).unwrap();
    let bad_text = b"HIERARCHY ROOT A { OFFSET 0 0 nope }";
    std::fs::write(&bad, bad_text).unwrap();
    let o = run(&["fmt", "--in-place", good.to_str().unwrap(), bad.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("bad.bvh:1:31: expected a number (OFFSET), found 'nope'"),
        "{}",
        stderr(&o)
    );
    assert_eq!(std::fs::read_to_string(&good).unwrap(), expected);
    assert_eq!(std::fs::read(&bad).unwrap(), bad_text);
    // No temporary file is left behind.
    let left: Vec<_> =
        std::fs::read_dir(dir.path()).unwrap().map(|e| e.unwrap().file_name()).collect();
    assert!(left.iter().all(|n| !n.to_string_lossy().ends_with(".tmp")), "{left:?}");

    // Fixed precision.
    let o = run(&["fmt", &fx("number_spellings.bvh"), "--precision", "2"]);
    assert!(
        stdout(&o)
            .ends_with("1.00 2.00 0.30 -0.00 4.00 50.00 -0.65 0.00 123456789012345685803008.00\n"),
        "{}",
        stdout(&o)
    );
}

#[test]
fn fmt_reads_standard_input_and_walks_directories() {
    let mut child =
        bvh().args(["fmt", "-"]).stdin(Stdio::piped()).stdout(Stdio::piped()).spawn().unwrap();
    child.stdin.take().unwrap().write_all(&std::fs::read(fixture("cr_only.bvh")).unwrap()).unwrap();
    let o = child.wait_with_output().unwrap();
    assert!(o.status.success());
    assert!(stdout(&o).starts_with("HIERARCHY\nROOT Hips\n{\n\tOFFSET 0 0 0\n"));

    let src = tempfile::tempdir().unwrap();
    let sub = src.path().join("sub");
    std::fs::create_dir(&sub).unwrap();
    std::fs::copy(fixture("crlf.bvh"), sub.join("a.BVH")).unwrap();
    std::fs::copy(fixture("bom.bvh"), src.path().join("b.bvh")).unwrap();
    std::fs::write(src.path().join("notes.txt"), "not bvh").unwrap();
    let out = tempfile::tempdir().unwrap();
    let o = run(&["fmt", src.path().to_str().unwrap(), "-o", out.path().to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    let mut names: Vec<String> = std::fs::read_dir(out.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(names, ["a.BVH", "b.bvh"]);
}

#[test]
fn positions_csv_json_npy_agree_with_the_library() {
    let f = fx("two_roots.bvh");
    let bvh = bvhkit::Bvh::parse(std::fs::read(fixture("two_roots.bvh")).unwrap()).unwrap();
    let fk = bvhkit::Kinematics::new(bvh.skeleton(), bvhkit::PositionChannels::Replace);
    let all = fk.positions_all(bvh.motion());
    let n = bvh.skeleton().len();

    let o = run(&["positions", &f]);
    assert!(o.status.success(), "{}", stderr(&o));
    let s = stdout(&o);
    let lines: Vec<&str> = s.lines().collect();
    assert_eq!(lines[0], "frame,joint,x,y,z");
    assert_eq!(lines.len(), 1 + 2 * n);
    assert!(lines[3].starts_with("0,Spine_End,"), "{}", lines[3]);
    for (row, line) in lines[1..].iter().enumerate() {
        let c: Vec<&str> = line.split(',').collect();
        let p = all[row];
        assert_eq!([c[2], c[3], c[4]].map(|v| v.parse::<f64>().unwrap()), p.to_array(), "{line}");
    }

    let o = run(&["positions", &f, "--format", "json", "--frames", "1..", "--joints", "Prop,Hips"]);
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["joints"], serde_json::json!(["Hips", "Prop"]));
    assert_eq!(v["first_frame"], 1);
    assert_eq!(v["frames"].as_array().unwrap().len(), 1);
    assert_eq!(v["frames"][0][1][0].as_f64().unwrap(), all[n + 3].x);

    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("p.npy");
    let o = run(&["positions", &f, "-o", out.to_str().unwrap(), "--dtype", "f64"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let bytes = std::fs::read(&out).unwrap();
    assert_eq!(&bytes[..8], b"\x93NUMPY\x01\x00");
    let hlen = u16::from_le_bytes([bytes[8], bytes[9]]) as usize;
    let header = String::from_utf8_lossy(&bytes[10..10 + hlen]);
    assert!(
        header.contains("'descr': '<f8'") && header.contains(&format!("'shape': (2, {n}, 3)")),
        "{header}"
    );
    let data: Vec<f64> = bytes[10 + hlen..]
        .chunks_exact(8)
        .map(|c| f64::from_le_bytes(c.try_into().unwrap()))
        .collect();
    let expected: Vec<f64> = all.iter().flat_map(|p| p.to_array()).collect();
    assert_eq!(data, expected);
    let names = std::fs::read_to_string(dir.path().join("p.joints.txt")).unwrap();
    assert_eq!(names, "Hips\nSpine\nSpine_End\nProp\n");

    let o = run(&["positions", &f, "--format", "npy"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("needs an output file"));
    let o = run(&["positions", &f, "--joints", "Nope"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("no joint named 'Nope'"));
}

#[test]
fn rotations_in_every_representation() {
    use bvhkit::glam::DQuat;
    use bvhkit::rotation::{Axis, euler_to_quat};
    let f = fx("crlf.bvh");
    // Frame 1 of Spine: Zrotation 16, Xrotation 17, Yrotation 18.
    let q = euler_to_quat(&[Axis::Z, Axis::X, Axis::Y], &[16.0, 17.0, 18.0]);
    let row = |repr: &str, extra: &[&str]| -> Vec<f64> {
        let mut args =
            vec!["rotations", f.as_str(), "--repr", repr, "--frames", "1", "--joints", "Spine"];
        args.extend_from_slice(extra);
        let o = run(&args);
        assert!(o.status.success(), "{}", stderr(&o));
        let s = stdout(&o);
        let line = s.lines().nth(1).unwrap().to_string();
        line.split(',').skip(2).filter_map(|v| v.parse().ok()).collect()
    };
    let got = row("quat", &[]);
    let g = DQuat::from_xyzw(got[0], got[1], got[2], got[3]);
    assert!(g.dot(q).abs() > 1.0 - 1e-12, "{g} vs {q}");
    assert_eq!(
        row("euler", &[]),
        [16.0, 17.0, 18.0],
        "local Euler in the joint's own order is the file's values"
    );
    let e = row("euler", &["--order", "XYZ"]);
    let back = euler_to_quat(&[Axis::X, Axis::Y, Axis::Z], &e);
    assert!(back.dot(q).abs() > 1.0 - 1e-12);
    let m = row("matrix", &[]);
    let mq = bvhkit::glam::DMat3::from_quat(q);
    assert!((m[1] - mq.y_axis.x).abs() < 1e-12, "row-major: m01 is column 1, row 0");
    let six = row("6d", &[]);
    assert!((six[3] - mq.y_axis.x).abs() < 1e-12);
    let aa = row("axis-angle", &[]);
    let (axis, angle) = q.to_axis_angle();
    assert!((bvhkit::glam::DVec3::from_slice(&aa) - axis * angle).length() < 1e-12);
    let o = run(&[
        "rotations",
        &f,
        "--space",
        "world",
        "--repr",
        "euler",
        "--continuous",
        "--format",
        "json",
    ]);
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["orders"][0], "ZXY");
}

#[test]
fn broken_pipe_exits_quietly() {
    let mut child = bvh()
        .args(["positions", &fx("crlf.bvh"), "--format", "csv"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut first = [0u8; 5];
    child.stdout.as_mut().unwrap().read_exact(&mut first).unwrap();
    drop(child.stdout.take());
    let o = child.wait_with_output().unwrap();
    assert!(o.status.code() == Some(0) || o.status.code() == Some(141), "{:?}", o.status);
}

#[test]
fn the_whole_corpus() {
    let Some(dir) = corpus() else { return };
    let d = dir.to_str().unwrap();
    let o = run(&["info", "--json", d]);
    assert!(o.status.success(), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v.as_array().unwrap().len(), 41);
    let o = run(&["check", d]);
    assert_eq!(o.status.code(), Some(1));
    let s = stdout(&o);
    let flagged: std::collections::BTreeSet<&str> = s
        .lines()
        .filter(|l| !l.contains(": note: "))
        .map(|l| Path::new(l.split(':').next().unwrap()).file_stem().unwrap().to_str().unwrap())
        .collect();
    assert!(flagged.iter().all(|f| f.starts_with("malformed_")), "{flagged:?}");
    assert_eq!(flagged.len(), 5, "{s}");
    assert!(s.contains("bandai_namco_ds1_kick_6ch_every_joint.bvh: note:"), "{s}");
    let o = run(&["check", "--strict", d]);
    assert_eq!(o.status.code(), Some(1));

    let f = dir.join("bandai_namco_ds1_kick_6ch_every_joint.bvh");
    let out = tempfile::tempdir().unwrap();
    let npy = out.path().join("x.npy");
    let o = run(&["positions", f.to_str().unwrap(), "-o", npy.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    let bytes = std::fs::read(&npy).unwrap();
    assert!(String::from_utf8_lossy(&bytes[..128]).contains("'shape': (358, 27, 3)"));
}

#[test]
fn serve_answers_on_loopback() {
    use std::io::BufRead;
    let mut child = bvh()
        .args(["serve", &fx("two_roots.bvh"), "--port", "0"])
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut line = String::new();
    std::io::BufReader::new(child.stderr.take().unwrap()).read_line(&mut line).unwrap();
    let url = line
        .split_whitespace()
        .find(|w| w.starts_with("http://"))
        .unwrap()
        .trim_end_matches('/')
        .to_string();
    let host = url.trim_start_matches("http://").to_string();
    assert!(host.starts_with("127.0.0.1:"), "{line}");
    let mut s = std::net::TcpStream::connect(&host).unwrap();
    write!(s, "GET /clips.json HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n\r\n").unwrap();
    let mut resp = String::new();
    s.read_to_string(&mut resp).unwrap();
    child.kill().unwrap();
    let _ = child.wait();
    assert!(resp.starts_with("HTTP/1.1 200"), "{resp}");
    let body = &resp[resp.find("\r\n\r\n").unwrap() + 4..];
    let v: serde_json::Value = serde_json::from_str(body).unwrap();
    let text = v.to_string();
    assert!(text.contains("Spine_End") && text.contains("Prop"), "{text}");
}

fn decode_png(path: &Path) -> (u32, u32, Vec<u8>) {
    let dec = png::Decoder::new(std::io::BufReader::new(std::fs::File::open(path).unwrap()));
    let mut r = dec.read_info().unwrap();
    let mut buf = vec![0; r.output_buffer_size().unwrap()];
    let info = r.next_frame(&mut buf).unwrap();
    buf.truncate(info.buffer_size());
    (info.width, info.height, buf)
}

#[test]
fn render_png_gif_sheet_deterministically() {
    let dir = tempfile::tempdir().unwrap();
    let a = dir.path().join("a.png");
    let b = dir.path().join("b.png");
    for out in [&a, &b] {
        let o = run(&[
            "render",
            &fx("crlf.bvh"),
            &fx("two_roots.bvh"),
            "-o",
            out.to_str().unwrap(),
            "--frame",
            "1",
            "--size",
            "160x120",
            "--background",
            "#ffffff",
        ]);
        assert!(o.status.success(), "{}", stderr(&o));
    }
    assert_eq!(std::fs::read(&a).unwrap(), std::fs::read(&b).unwrap(), "same input, same bytes");
    let (w, h, px) = decode_png(&a);
    assert_eq!((w, h), (160, 120));
    let channels = px.len() / (w * h) as usize;
    let non_white = px.chunks(channels).filter(|p| p[..3] != [255, 255, 255]).count();
    assert!(non_white > 200, "something is drawn: {non_white} pixels");

    let gif = dir.path().join("a.gif");
    let o = run(&["render", &fx("crlf.bvh"), "-o", gif.to_str().unwrap(), "--size", "64x48"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(std::fs::read(&gif).unwrap().starts_with(b"GIF89a"));

    let sheet = dir.path().join("s.png");
    let o = run(&[
        "render",
        &fx("crlf.bvh"),
        "--contact-sheet",
        "--cells",
        "2",
        "--columns",
        "2",
        "--size",
        "50x40",
        "-o",
        sheet.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(decode_png(&sheet).0, 100);

    let o = run(&["render", &fx("crlf.bvh"), "-o", dir.path().join("x.jpg").to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains(".png, .gif or .mp4"));
    let o = run(&["render", &fx("crlf.bvh"), "-o", a.to_str().unwrap(), "--frame", "9"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("past the last frame"));
}

#[test]
fn mp4_without_ffmpeg_names_the_package() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("a.mp4");
    let o = bvh()
        .args(["render", &fx("crlf.bvh"), "-o", out.to_str().unwrap()])
        .env("PATH", dir.path())
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("ffmpeg"), "{}", stderr(&o));
    assert!(!out.exists());
}

/// `bvh view` on a corpus file in screenshot mode: a real window (needs a
/// display; `.ci/run` starts Xvfb), saved as PNG, with the skeleton drawn
/// wherever the sidecar JSON says a joint was projected.
#[cfg(feature = "view")]
#[test]
fn view_shows_the_skeleton_in_a_window() {
    if std::env::var_os("DISPLAY").is_none_or(|d| d.is_empty()) {
        assert!(
            std::env::var("BVHKIT_REQUIRE_DISPLAY").as_deref() != Ok("1"),
            "BVHKIT_REQUIRE_DISPLAY=1 but DISPLAY is unset"
        );
        bvhkit_testdata::skip("view_shows_the_skeleton_in_a_window", "no DISPLAY (run under Xvfb)");
        return;
    }
    let Some(c) = corpus() else { return };
    let file = c.join("bandai_namco_ds1_kick_6ch_every_joint.bvh");
    let dir = tempfile::tempdir().unwrap();
    let shot = dir.path().join("view.png");
    let o = run(&[
        "view",
        file.to_str().unwrap(),
        "--frame",
        "30",
        "--size",
        "800x600",
        "--screenshot",
        shot.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let side: serde_json::Value =
        serde_json::from_slice(&std::fs::read(dir.path().join("view.png.json")).unwrap()).unwrap();
    let (w, _h, rgba) = decode_png(&shot);
    let bg: Vec<u8> =
        side["background"].as_array().unwrap().iter().map(|v| v.as_u64().unwrap() as u8).collect();
    let px = |x: i64, y: i64| {
        let i = ((y * i64::from(w) + x) * 4) as usize;
        &rgba[i..i + 3]
    };
    let differs =
        |p: &[u8]| p.iter().zip(&bg).map(|(a, b)| u32::from(a.abs_diff(*b))).sum::<u32>() > 40;
    let joints = side["clips"][0]["joints"].as_array().unwrap();
    // Every joint and End Site of the file is in the sidecar.
    let bvh = bvhkit::Bvh::parse(std::fs::read(&file).unwrap()).unwrap();
    assert_eq!(joints.len(), bvh.skeleton().len());
    for j in joints {
        let (x, y) =
            (j["x"].as_f64().unwrap().round() as i64, j["y"].as_f64().unwrap().round() as i64);
        let drawn = (-2..=2).any(|dy| (-2..=2).any(|dx| differs(px(x + dx, y + dy))));
        assert!(drawn, "nothing drawn at joint {} ({x}, {y})", j["name"]);
    }
    // And the view is not simply filled: its top-left corner is background.
    let v = &side["view"];
    let (vx, vy) = (v["x"].as_f64().unwrap() as i64, v["y"].as_f64().unwrap() as i64);
    assert!(!differs(px(vx + 3, vy + 3)), "the view's corner is not background");
}

#[cfg(not(feature = "view"))]
#[test]
fn view_without_the_feature_says_how_to_get_it() {
    let o = run(&["view", &fx("two_roots.bvh")]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("--features view"), "{}", stderr(&o));
}

/// `bvh positions` end to end against the golden positions
/// (`../shared/golden`, checked against three.js, Blender and bvhio): for
/// every well-formed corpus file and both readings of position channels,
/// the CSV names every joint and End Site as the golden files do and puts
/// it within 1e-6 of the skeleton's height at every golden row.
#[test]
fn positions_csv_matches_the_golden_files() {
    let Some(dir) = corpus() else { return };
    let mut checked = 0;
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        let stem = path.file_stem().unwrap().to_string_lossy().into_owned();
        if path.extension().is_none_or(|e| e != "bvh") || stem.starts_with("malformed_") {
            continue;
        }
        for mode in ["replace", "add"] {
            let golden = bvhkit_testdata::golden_positions(&stem, mode)
                .unwrap_or_else(|| panic!("{stem}: golden {mode} file missing"));
            let o = run(&["positions", path.to_str().unwrap(), "--position-channels", mode]);
            assert!(o.status.success(), "{stem}: {}", stderr(&o));
            let ours = bvhkit_testdata::position_rows(&stdout(&o));
            let n_joints = golden.iter().take_while(|r| r.0 == golden[0].0).count();
            let (lo, hi) = golden
                .iter()
                .fold((bvhkit::glam::DVec3::MAX, bvhkit::glam::DVec3::MIN), |(lo, hi), r| {
                    (lo.min(r.2), hi.max(r.2))
                });
            let tol = 1e-6 * (hi - lo).max_element();
            for (i, (frame, name, p)) in golden.iter().enumerate() {
                let (f, got_name, q) = &ours[frame * n_joints + i % n_joints];
                assert_eq!((f, got_name), (frame, name), "{stem} ({mode}): row {i}");
                let d = (*p - *q).length();
                assert!(d <= tol, "{stem} ({mode}) frame {frame} {name}: off by {d}");
            }
            checked += 1;
        }
    }
    assert_eq!(checked, 72, "36 well-formed files, two readings each");
}

/// `bvh rotations` on the real corpus. World rotations agree with the world
/// positions that `positions_csv_matches_the_golden_files` checks: for every
/// joint without position channels, `pos[j] - pos[parent] =
/// R_world[parent] · OFFSET[j]` (first 40 frames of every well-formed file).
/// And every corpus file, malformed ones included, exports in every
/// representation with one row per joint per frame.
#[test]
fn rotations_on_the_corpus_agree_with_positions() {
    if corpus().is_none() {
        return;
    }
    let values = |text: &str| -> Vec<Vec<f64>> {
        // The last `k` columns of each row are numbers; names may hold commas.
        text.lines()
            .skip(1)
            .map(|l| l.split(',').rev().map_while(|v| v.parse::<f64>().ok()).collect::<Vec<_>>())
            .map(|mut v| {
                v.reverse();
                v
            })
            .collect()
    };
    let files = bvhkit_testdata::corpus_files();
    assert_eq!(files.len(), 41);
    let mut related = 0;
    for path in &files {
        let p = path.to_str().unwrap();
        let stem = path.file_stem().unwrap().to_string_lossy().into_owned();
        let (bvh, _) =
            bvhkit::ReadOptions::new().lenient(true).parse(&std::fs::read(path).unwrap()).unwrap();
        let s = bvh.skeleton();
        // The exports stream; the streaming reader sees the frames the
        // in-memory reading sees, repaired files included.
        let mut rdr = bvhkit::ReadOptions::new()
            .lenient(true)
            .frame_reader(std::fs::File::open(path).unwrap())
            .unwrap();
        let mut buf = vec![0.0; s.n_channels()];
        while rdr.read_frame(&mut buf).unwrap() {}
        assert_eq!(rdr.frames_read() as usize, bvh.motion().n_frames(), "{stem}: frames");
        let frames = bvh.motion().n_frames().min(40);
        for (repr, width) in
            [("euler", 3), ("quat", 4), ("matrix", 9), ("6d", 6), ("axis-angle", 3)]
        {
            let o = run(&["rotations", p, "--repr", repr, "--frames", "0..40"]);
            assert!(o.status.success(), "{stem} {repr}: {}", stderr(&o));
            let rows = values(&stdout(&o));
            assert_eq!(rows.len(), frames * s.len(), "{stem} {repr}: rows");
            // The frame column is numeric too, hence width + 1.
            assert!(rows.iter().all(|r| r.len() >= width), "{stem} {repr}: columns");
        }
        if stem.starts_with("malformed_") {
            continue;
        }
        let o = run(&["rotations", p, "--space", "world", "--repr", "matrix", "--frames", "0..40"]);
        assert!(o.status.success(), "{stem}: {}", stderr(&o));
        let rot = values(&stdout(&o));
        let o = run(&["positions", p, "--frames", "0..40"]);
        assert!(o.status.success(), "{stem}: {}", stderr(&o));
        let pos = values(&stdout(&o));
        let size = pos
            .iter()
            .map(|r| r[r.len() - 3..].iter().map(|v| v.abs()).fold(0.0, f64::max))
            .fold(1e-9, f64::max);
        for f in 0..frames {
            for (j, joint) in s.joints().iter().enumerate() {
                let Some(parent) = joint.parent() else { continue };
                if joint.channels().iter().any(|c| c.is_position()) {
                    continue;
                }
                let m = &rot[f * s.len() + parent.index()];
                let m = &m[m.len() - 9..];
                let off = joint.offset().to_array();
                let pj = &pos[f * s.len() + j];
                let pp = &pos[f * s.len() + parent.index()];
                for r in 0..3 {
                    let expected = (0..3).map(|c| m[3 * r + c] * off[c]).sum::<f64>();
                    let got = pj[pj.len() - 3 + r] - pp[pp.len() - 3 + r];
                    assert!(
                        (expected - got).abs() <= 1e-6 * size,
                        "{stem} frame {f} joint {}: axis {r}: {got} vs {expected}",
                        joint.name()
                    );
                }
                related += 1;
            }
        }
    }
    assert!(related > 10_000, "only {related} joint relations checked");
}

/// `bvh render` on every corpus file: a PNG of the requested size with a
/// figure in it (figures are drawn in saturated colours; background, grid
/// and shadow are grey), the same bytes twice; a file without motion gets a
/// clear error. Then two files in different units side by side: both
/// figures show, each in its own colour.
#[test]
fn render_draws_every_corpus_file() {
    let Some(dir) = corpus() else { return };
    let out = tempfile::tempdir().unwrap();
    let saturated = |rgba: &[u8]| {
        rgba.chunks_exact(4)
            .filter(|p| p[..3].iter().max().unwrap() - p[..3].iter().min().unwrap() > 50)
            .count()
    };
    let files = bvhkit_testdata::corpus_files();
    for (i, path) in files.iter().enumerate() {
        let stem = path.file_stem().unwrap().to_string_lossy().into_owned();
        let png = out.path().join(format!("{i}.png"));
        let o = run(&[
            "render",
            path.to_str().unwrap(),
            "-o",
            png.to_str().unwrap(),
            "--size",
            "160x120",
        ]);
        if stem == "malformed_hierarchy_only_no_motion_kinect" {
            assert_eq!(o.status.code(), Some(2), "{stem}");
            assert!(stderr(&o).contains("no motion frames"), "{}", stderr(&o));
            assert!(!png.exists(), "{stem}: no output on failure");
            continue;
        }
        assert!(o.status.success(), "{stem}: {}", stderr(&o));
        let (w, h, rgba) = decode_png(&png);
        assert_eq!((w, h), (160, 120), "{stem}");
        let n = saturated(&rgba);
        // The smallest is a figure rising three heights over its clip; a
        // framing thrown off by glitch frames gives about a dozen.
        assert!(n > 60, "{stem}: only {n} figure pixels");
        if i % 10 == 0 {
            let again = out.path().join("again.png");
            run(&[
                "render",
                path.to_str().unwrap(),
                "-o",
                again.to_str().unwrap(),
                "--size",
                "160x120",
            ]);
            assert_eq!(std::fs::read(&again).unwrap(), std::fs::read(&png).unwrap(), "{stem}");
        }
    }
    // A whole recording as a GIF (one image per frame at 10 fps: 120 for
    // the 12 s kick) and as a contact sheet (a figure in every cell).
    let kick = dir.join("bandai_namco_ds1_kick_6ch_every_joint.bvh");
    let gif = out.path().join("kick.gif");
    let o = run(&[
        "render",
        kick.to_str().unwrap(),
        "-o",
        gif.to_str().unwrap(),
        "--size",
        "80x60",
        "--fps",
        "10",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let bytes = std::fs::read(&gif).unwrap();
    assert!(bytes.starts_with(b"GIF89a"));
    assert_eq!(
        (u16::from_le_bytes([bytes[6], bytes[7]]), u16::from_le_bytes([bytes[8], bytes[9]])),
        (80, 60)
    );
    // Each frame starts with a graphic control extension (0x21 0xF9 0x04).
    let frames = bytes.windows(3).filter(|w| *w == [0x21, 0xF9, 0x04]).count();
    assert!((119..=121).contains(&frames), "{frames} GIF frames");
    let sheet = out.path().join("sheet.png");
    let o = run(&[
        "render",
        kick.to_str().unwrap(),
        "--contact-sheet",
        "--cells",
        "4",
        "--columns",
        "2",
        "--size",
        "100x80",
        "-o",
        sheet.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let (w, h, rgba) = decode_png(&sheet);
    assert_eq!((w, h), (200, 160));
    for cell in 0..4 {
        let (cx, cy) = ((cell % 2) * 100, (cell / 2) * 80);
        let cell_px: Vec<u8> = (cy..cy + 80)
            .flat_map(|y| rgba[(y * 200 + cx) * 4..(y * 200 + cx + 100) * 4].to_vec())
            .collect();
        let n = saturated(&cell_px);
        assert!(n > 60, "contact-sheet cell {cell}: only {n} figure pixels");
    }

    // A CMU walker (about 26 units tall) and an elephant in metres.
    let both = out.path().join("both.png");
    let o = run(&[
        "render",
        dir.join("cmu_01_01_walk_cgspeed_mb_names.bvh").to_str().unwrap(),
        dir.join("truebones_elephant_idle_6ch_every_joint.bvh").to_str().unwrap(),
        "-o",
        both.to_str().unwrap(),
        "--size",
        "320x180",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stderr(&o).contains("drawn at one scale"), "{}", stderr(&o));
    let (_, _, rgba) = decode_png(&both);
    // Shading varies each figure's colour, but not its hue: the first is
    // blue (blue over red), the second orange (red over blue).
    let (c0, c1) = (bvhkit_render::figure_color(0), bvhkit_render::figure_color(1));
    assert!(c0.b > c0.r && c1.r > c1.b);
    let hue = |blue: bool| {
        rgba.chunks_exact(4)
            .filter(|p| {
                let (r, b) = (i32::from(p[0]), i32::from(p[2]));
                if blue { b - r > 50 } else { r - b > 50 }
            })
            .count()
    };
    let (n0, n1) = (hue(true), hue(false));
    assert!(n0 > 100 && n1 > 100, "figure pixels: {n0} blue, {n1} orange");
}

/// `bvh render -o x.mp4` on a corpus file through a real ffmpeg (CI
/// installs it): H.264 at the asked size, one video frame per motion frame
/// of the range, as ffprobe counts them.
#[test]
fn render_mp4_of_a_corpus_file() {
    let on_path = |name: &str| {
        std::env::var_os("PATH")
            .is_some_and(|p| std::env::split_paths(&p).any(|d| d.join(name).is_file()))
    };
    if !(on_path("ffmpeg") && on_path("ffprobe")) {
        assert!(std::env::var("BVHKIT_REQUIRE_FFMPEG").as_deref() != Ok("1"), "ffmpeg required");
        bvhkit_testdata::skip(
            "render_mp4_of_a_corpus_file",
            "no ffmpeg on PATH (apt-get install ffmpeg)",
        );
        return;
    }
    let Some(dir) = corpus() else { return };
    let out = tempfile::tempdir().unwrap();
    let mp4 = out.path().join("kick.mp4");
    let kick = dir.join("bandai_namco_ds1_kick_6ch_every_joint.bvh");
    let o = run(&[
        "render",
        kick.to_str().unwrap(),
        "-o",
        mp4.to_str().unwrap(),
        "--size",
        "160x120",
        "--frames",
        "0..45",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let probe = Command::new("ffprobe")
        .args(["-v", "error", "-count_frames", "-select_streams", "v:0"])
        .args(["-show_entries", "stream=codec_name,width,height,nb_read_frames", "-of", "csv=p=0"])
        .arg(&mp4)
        .output()
        .unwrap();
    assert!(probe.status.success(), "{}", String::from_utf8_lossy(&probe.stderr));
    assert_eq!(String::from_utf8_lossy(&probe.stdout).trim(), "h264,160,120,45");
}

#[path = "cli/edit.rs"]
mod edit;
#[path = "cli/edit_b.rs"]
mod edit_b;
