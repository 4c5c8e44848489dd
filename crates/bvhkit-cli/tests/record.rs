//! `bvh record` and `bvh replay --as sensors`.

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStderr, Command, Stdio};

use bvhkit::glam::DVec3;
use bvhkit::{Bvh, Kinematics, PositionChannels};

pub(crate) use super::bvh;
use super::run_with_stdin;

/// Starts `bvh ARGS` in `dir`, standard input and standard error piped.
pub(crate) fn spawn_piped(dir: &Path, args: &[&str]) -> Child {
    bvh().current_dir(dir).args(args).stdin(Stdio::piped()).stderr(Stdio::piped()).spawn().unwrap()
}

/// Reads standard-error lines until one starts with `prefix`; returns the rest of it.
pub(crate) fn after(err: &mut BufReader<ChildStderr>, prefix: &str) -> String {
    let mut seen = String::new();
    loop {
        let mut line = String::new();
        assert!(err.read_line(&mut line).unwrap() > 0, "no {prefix:?} in {seen}");
        if let Some(rest) = line.trim_end().strip_prefix(prefix) {
            return rest.to_string();
        }
        seen.push_str(&line);
    }
}

pub(crate) fn capture_data(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../bvhkit-capture/tests/data").join(name)
}

/// A fresh folder holding the two-joint fixture and its config.
pub(crate) fn workdir(tag: &str) -> tempfile::TempDir {
    let dir = tempfile::Builder::new().prefix(&format!("bvh-record-{tag}-")).tempdir().unwrap();
    for f in ["two_joints.bvh", "two_sensors.toml"] {
        std::fs::copy(capture_data(f), dir.path().join(f)).unwrap();
    }
    dir
}

pub(crate) fn max_position_error(a: &Bvh, b: &Bvh) -> f64 {
    let fk = Kinematics::new(a.skeleton(), PositionChannels::Replace);
    let (mut pa, mut pb) = (vec![DVec3::ZERO; fk.len()], vec![DVec3::ZERO; fk.len()]);
    assert_eq!(a.motion().n_frames(), b.motion().n_frames());
    let mut worst: f64 = 0.0;
    for (fa, fb) in a.motion().frames().zip(b.motion().frames()) {
        fk.positions(fa, &mut pa);
        fk.positions(fb, &mut pb);
        for (p, q) in pa.iter().zip(&pb) {
            worst = worst.max((*p - *q).length());
        }
    }
    worst
}

#[test]
fn replay_then_record_gives_the_clip_back() {
    let dir = workdir("roundtrip");
    let d = dir.path();
    // A synthetic clip with root translation and three-axis joints.
    std::fs::write(d.join("clip.bvh"), bvhkit_testdata::synth_text(7, 12, 40)).unwrap();
    let clip = Bvh::from_path(d.join("clip.bvh")).unwrap();
    let o = bvh()
        .current_dir(d)
        .args(["replay", "clip.bvh", "--as", "sensors", "-o", "samples.csv"])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let csv = std::fs::read_to_string(d.join("samples.csv")).unwrap();
    assert!(csv.starts_with("t,sensor,w,x,y,z,px,py,pz\n"), "{csv:.80}");
    // `-` reads the clip from standard input ("-: No such file or
    // directory" before): the same samples.
    let clip_text = std::fs::read(d.join("clip.bvh")).unwrap();
    let o = run_with_stdin(d, &["replay", "-", "--as", "sensors", "-o", "stdin.csv"], &clip_text);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert_eq!(std::fs::read_to_string(d.join("stdin.csv")).unwrap(), csv);
    std::fs::write(
        d.join("all.toml"),
        format!("skeleton = \"clip.bvh\"\nframe_rate = {}\nbind_all = true\n", clip.motion().fps()),
    )
    .unwrap();
    // Standard input as the source.
    let args = ["record", "--config", "all.toml", "--input", "-", "-o", "take.bvh"];
    let o = run_with_stdin(d, &args, csv.as_bytes());
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{err}");
    assert!(err.contains("take.bvh: 40 frames;") && err.contains(" 0 dropped"), "{err}");
    let take = Bvh::from_path(d.join("take.bvh")).unwrap();
    assert_eq!(take.motion().n_frames(), 40);
    let worst = max_position_error(&clip, &take);
    assert!(worst < 1e-6, "worst position error {worst}");
}

#[test]
fn json_lines_with_bad_samples_are_counted() {
    let dir = workdir("json");
    let d = dir.path();
    let lines = [
        r#"{"t": 0.00, "sensor": "s-parent", "w": 1, "x": 0, "y": 0, "z": 0}"#,
        r#"{"t": 0.00, "sensor": "s-child", "w": 0.9238795325112867, "x": 0.3826834323650898, "y": 0, "z": 0}"#,
        r#"{"t": 0.01, "sensor": "s-thumb", "w": 1, "x": 0, "y": 0, "z": 0}"#,
        r#"{"t": 0.01, "sensor": "s-child", "w": 0, "x": 0, "y": 0, "z": 0}"#,
        r#"{"t": 0.01, "sensor": "s-child", "w": "one"}"#,
        r#"not json"#,
        r#"{"t": 0.01, "sensor": "s-parent", "w": 1, "x": 0, "y": 0, "z": 0}"#,
    ];
    std::fs::write(d.join("in.jsonl"), lines.join("\n")).unwrap();
    let o = record_two_sensors(d, "in.jsonl", "take.bvh", &[]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{err}");
    assert!(err.contains("in.jsonl:5:"), "{err}");
    assert!(err.contains("in.jsonl:6:"), "{err}");
    assert!(
        err.contains("take.bvh: 2 frames; 3 samples used, 4 dropped (malformed 3, unknown sensor 1, out of order 0, too far ahead 0); 1 sensor-frames held"),
        "{err}"
    );
    let take = Bvh::from_path(d.join("take.bvh")).unwrap();
    // Frame 0: child bent 45 degrees about X (ZXY order: [z, x, y]); frame 1 holds it.
    for f in take.motion().frames() {
        assert!((f[4] - 45.0).abs() < 1e-9 && f[3].abs() < 1e-9 && f[5].abs() < 1e-9, "{f:?}");
    }
}

#[test]
fn a_bad_header_is_an_error_and_leaves_no_output() {
    let dir = workdir("header");
    let d = dir.path();
    std::fs::write(d.join("in.csv"), "time,sensor,w,x,y,z\n0,s-parent,1,0,0,0\n").unwrap();
    let o = record_two_sensors(d, "in.csv", "take.bvh", &[]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains("in.csv:1:1: expected a CSV header"), "{err}");
    assert!(!d.join("take.bvh").exists());
    // A folder as the input is named (its read said "Is a directory (os
    // error 21)" and nothing else).
    std::fs::create_dir(d.join("takes")).unwrap();
    let o = record_two_sensors(d, "takes", "take.bvh", &[]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains("takes: is a directory"), "{err}");
    assert!(!d.join("take.bvh").exists());
    // Nor may the output be an input.
    let o = bvh()
        .current_dir(d)
        .args([
            "record",
            "--config",
            "two_sensors.toml",
            "--input",
            "in.csv",
            "-o",
            "two_joints.bvh",
        ])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert_eq!(
        std::fs::read(d.join("two_joints.bvh")).unwrap(),
        std::fs::read(capture_data("two_joints.bvh")).unwrap()
    );
}

#[test]
fn killed_recording_keeps_every_completed_frame_and_fmt_repairs_the_count() {
    let dir = workdir("kill");
    let d = dir.path();
    let mut child = bvh()
        .current_dir(d)
        .args(["record", "--config", "two_sensors.toml", "--input", "-", "-o", "take.bvh"])
        .stdin(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let mut text = String::from("t,sensor,w,x,y,z\n");
    for i in 0..30 {
        let t = i as f64 / 100.0;
        let h = (i as f64).to_radians() / 2.0;
        text.push_str(&format!("{t},s-parent,{},0,{},0\n", h.cos(), h.sin()));
        if i < 29 {
            text.push_str(&format!("{t},s-child,1,0,0,0\n"));
        }
    }
    stdin.write_all(text.as_bytes()).unwrap();
    stdin.flush().unwrap();
    // Frames 0..=28 are complete (both sensors have reported); frame 29, which
    // only the parent's sensor reached, is being filled. The header is 18 lines.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    loop {
        let body = std::fs::read_to_string(d.join("take.bvh")).unwrap_or_default();
        if body.lines().count() >= 18 + 29 {
            break;
        }
        assert!(std::time::Instant::now() < deadline, "no frames written: {body}");
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    child.kill().unwrap(); // SIGKILL
    child.wait().unwrap();
    drop(stdin);
    let body = std::fs::read_to_string(d.join("take.bvh")).unwrap();
    assert!(body.contains("\nFrames: 0 "), "{body:.400}");
    assert_eq!(body.lines().count(), 18 + 29, "every frame but the last");
    let o = bvh().current_dir(d).args(["fmt", "take.bvh", "-o", "fixed.bvh"]).output().unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let fixed = Bvh::from_path(d.join("fixed.bvh")).unwrap();
    assert_eq!(fixed.motion().n_frames(), 29);
    // Frame i: parent turned i degrees about Y (ZXY: index 2).
    for (i, f) in fixed.motion().frames().enumerate() {
        assert!((f[2] - i as f64).abs() < 1e-9, "frame {i}: {f:?}");
    }
}

/// `bvh record` of the fixture config from UDP on a free loopback port
/// (`--idle 30`, `extra` flags, `-o take.bvh`) in `d`: the child, its
/// stderr, and the address it said it listens on.
fn record_udp(d: &Path, extra: &[&str]) -> (Child, BufReader<ChildStderr>, String) {
    let mut child = bvh()
        .current_dir(d)
        .args(["record", "--config", "two_sensors.toml", "--input", "udp://127.0.0.1:0"])
        .args(["--idle", "30"])
        .args(extra)
        .args(["-o", "take.bvh"])
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut err = BufReader::new(child.stderr.take().unwrap());
    let addr = after(&mut err, "bvh: listening on udp://");
    (child, err, addr)
}

/// Two samples (parent turned `i` degrees about Y, child at rest) per frame.
pub(crate) fn frame_lines(i: usize) -> String {
    let t = i as f64 / 100.0;
    let h = (i as f64 / 10.0).to_radians() / 2.0;
    format!("{t},s-parent,{},0,{},0\n{t},s-child,1,0,0,0\n", h.cos(), h.sin())
}

#[test]
fn udp_on_loopback_loses_nothing() {
    let dir = workdir("udp");
    let d = dir.path();
    let (mut child, mut err, addr) = record_udp(d, &[]);
    let sock = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
    sock.send_to(b"t,sensor,w,x,y,z\n", &addr).unwrap();
    const FRAMES: usize = 1000;
    for i in 0..FRAMES {
        // One frame per datagram; some datagrams carry two frames.
        if i % 7 == 3 && i + 1 < FRAMES {
            continue;
        }
        let text = if i % 7 == 4 {
            format!("{}{}", frame_lines(i - 1), frame_lines(i))
        } else {
            frame_lines(i)
        };
        sock.send_to(text.as_bytes(), &addr).unwrap();
        if i % 50 == 0 {
            // Stay well inside the receive buffer of a slow (debug, busy) receiver.
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
    }
    sock.send_to(b"", &addr).unwrap(); // the end
    let mut rest = String::new();
    std::io::Read::read_to_string(&mut err, &mut rest).unwrap();
    assert!(child.wait().unwrap().success(), "{rest}");
    assert!(
        rest.contains(&format!(
            "take.bvh: {FRAMES} frames; {} samples used, 0 dropped",
            2 * FRAMES
        )),
        "{rest}"
    );
    let take = Bvh::from_path(d.join("take.bvh")).unwrap();
    assert_eq!(take.motion().n_frames(), FRAMES);
    for (i, f) in take.motion().frames().enumerate() {
        assert!((f[2] - i as f64 / 10.0).abs() < 1e-9, "frame {i}: {f:?}");
    }
}

#[test]
fn a_burst_of_hostile_samples_is_counted_in_bounded_memory() {
    let dir = workdir("burst");
    let d = dir.path();
    let mut text = String::from("t,sensor,w,x,y,z\n");
    let mut good = 0;
    for i in 0..100_000usize {
        let t = (i / 2) as f64 / 100.0;
        match i % 10 {
            0 => text.push_str(&format!("{t},s-parent,0,0,0,0\n")), // zero quaternion
            1 => text.push_str(&format!("{t},s-child,nan,0,0,1\n")), // NaN
            2 => text.push_str(&format!("{t},s-nobody,1,0,0,0\n")), // unknown sensor
            3 => text.push_str(&format!("{t},s-child,1,0,0\n")),    // too few fields
            4 => text.push_str(&format!("{t},s-child,1,0,0,0,9\n")), // too many fields
            _ => {
                text.push_str(&format!(
                    "{t},s-{},1,0,0,0\n",
                    if i % 2 == 0 { "parent" } else { "child" }
                ));
                good += 1;
            }
        }
    }
    std::fs::write(d.join("burst.csv"), &text).unwrap();
    // Then a 150 MB line with no line end at all, through standard input,
    // under a 250 MB address-space limit: holding that line would not fit.
    let status = Command::new("sh")
        .current_dir(d)
        .args([
            "-c",
            "{ cat burst.csv; head -c 150000000 /dev/zero | tr '\\0' 9; } | \
             (ulimit -v 250000 && exec \"$0\" record --config two_sensors.toml --input - -o take.bvh 2> err.txt)",
            env!("CARGO_BIN_EXE_bvh"),
        ])
        .status()
        .unwrap();
    let err = std::fs::read_to_string(d.join("err.txt")).unwrap();
    assert!(status.success(), "{err}");
    assert_eq!(
        err.matches("bvh: warning:").count(),
        10,
        "only the first ten bad lines are shown: {err}"
    );
    // 20,000 malformed quaternions + 20,000 bad lines + 1 overlong line; 10,000 unknown.
    // The first accepted sample is at t = 0.02 (i = 5): frames 2..=49999 of the times.
    let want = format!(
        "49998 frames; {good} samples used, 50001 dropped (malformed 40001, unknown sensor 10000, out of order 0, too far ahead 0)"
    );
    assert!(err.contains(&want), "{err}\nwant {want}");
    assert_eq!(Bvh::from_path(d.join("take.bvh")).unwrap().motion().n_frames(), 49_998);
}

#[test]
fn live_view_receives_every_frame() {
    use std::io::{BufRead, Read};
    let dir = workdir("live");
    let d = dir.path();
    let (mut child, mut err, udp) = record_udp(d, &["--live", "0"]);
    let mut http = String::new();
    err.read_line(&mut http).unwrap();
    let http =
        http.trim().strip_prefix("bvh: live view at http://").unwrap_or_else(|| panic!("{http}"));
    let host = http.split('/').next().unwrap().to_string();
    let mut stream = std::net::TcpStream::connect(&host).unwrap();
    stream.set_read_timeout(Some(std::time::Duration::from_secs(60))).unwrap();
    write!(stream, "GET /live/events HTTP/1.1\r\nHost: {host}\r\n\r\n").unwrap();
    // Wait for the skeleton event before sending, so every frame reaches this page.
    let mut got = Vec::new();
    let mut buf = [0u8; 4096];
    while !String::from_utf8_lossy(&got).contains("event: skeleton") {
        let n = stream.read(&mut buf).unwrap();
        assert!(n > 0, "{}", String::from_utf8_lossy(&got));
        got.extend_from_slice(&buf[..n]);
    }
    let sock = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
    sock.send_to(b"t,sensor,w,x,y,z\n", &udp).unwrap();
    for i in 0..5 {
        sock.send_to(frame_lines(i).as_bytes(), &udp).unwrap();
    }
    sock.send_to(b"", &udp).unwrap();
    while !String::from_utf8_lossy(&got).contains("event: end") {
        let n = stream.read(&mut buf).unwrap();
        if n == 0 {
            break;
        }
        got.extend_from_slice(&buf[..n]);
    }
    let mut rest = String::new();
    err.read_to_string(&mut rest).unwrap();
    assert!(child.wait().unwrap().success(), "{rest}");
    let text = String::from_utf8_lossy(&got);
    assert_eq!(text.matches("event: frame").count(), 5, "{text}");
    assert!(text.contains("event: end"), "{text}");
    // Frame 4's time on the recording's clock.
    assert!(text.contains("\"seq\":5,\"time\":0.04"), "{text}");
}

/// `bvh EXTRA record --config two_sensors.toml --input INPUT -o OUT` in `d`.
fn record_two_sensors(d: &Path, input: &str, out: &str, extra: &[&str]) -> std::process::Output {
    bvh()
        .current_dir(d)
        .args(extra)
        .args(["record", "--config", "two_sensors.toml", "--input", input, "-o", out])
        .output()
        .unwrap()
}

/// The file names in `d`, sorted.
fn names(d: &Path) -> Vec<String> {
    bvhkit_testdata::file_names(d)
}

/// An existing take is the output until the new take's first frame is
/// written: a bad header, a recording killed before its first frame, or
/// one that ends with no frame leave it as it was (they used to truncate
/// it, or remove it).
#[test]
fn an_existing_take_is_kept_until_the_first_frame() {
    let dir = workdir("keep");
    let d = dir.path();
    let old = "the take of yesterday\n";
    std::fs::write(d.join("take.bvh"), old).unwrap();
    let before = names(d);
    let record = |input: &str| record_two_sensors(d, input, "take.bvh", &[]);
    // A bad header.
    std::fs::write(d.join("bad.csv"), "time,sensor,w,x,y,z\n0,s-parent,1,0,0,0\n").unwrap();
    let o = record("bad.csv");
    assert_eq!(o.status.code(), Some(2), "{}", String::from_utf8_lossy(&o.stderr));
    assert_eq!(std::fs::read_to_string(d.join("take.bvh")).unwrap(), old);
    // No sample at all: exit 0, the take left as it was, and said so.
    std::fs::write(d.join("empty.csv"), "t,sensor,w,x,y,z\n").unwrap();
    let o = record("empty.csv");
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{err}");
    assert!(err.contains("no frame recorded; take.bvh left as it was"), "{err}");
    assert_eq!(std::fs::read_to_string(d.join("take.bvh")).unwrap(), old);
    // Killed while the first frame is being filled (one sensor of two).
    let args = ["record", "--config", "two_sensors.toml", "--input", "-", "-o", "take.bvh"];
    let mut child = spawn_piped(d, &args);
    let mut stdin = child.stdin.take().unwrap();
    stdin.write_all(b"t,sensor,w,x,y,z\n0,s-parent,1,0,0,0\n").unwrap();
    stdin.flush().unwrap();
    std::thread::sleep(std::time::Duration::from_millis(500));
    assert_eq!(std::fs::read_to_string(d.join("take.bvh")).unwrap(), old);
    child.kill().unwrap(); // SIGKILL
    child.wait().unwrap();
    drop(stdin);
    assert_eq!(std::fs::read_to_string(d.join("take.bvh")).unwrap(), old);
    let mut want = before.clone();
    want.extend(["bad.csv".to_string(), "empty.csv".to_string()]);
    want.sort();
    assert_eq!(names(d), want, "nothing left behind");
    // A recording with frames replaces it, keeping its mode.
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let p = std::fs::Permissions::from_mode(0o640);
        std::fs::set_permissions(d.join("take.bvh"), p).unwrap();
    }
    std::fs::write(d.join("in.csv"), "t,sensor,w,x,y,z\n0,s-parent,1,0,0,0\n0,s-child,1,0,0,0\n")
        .unwrap();
    let o = record("in.csv");
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let take = Bvh::from_path(d.join("take.bvh")).unwrap();
    assert_eq!(take.motion().n_frames(), 1);
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(d.join("take.bvh")).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o640);
    }
    // A new output with no frame is still written (header, Frames: 0).
    let o = record_two_sensors(d, "empty.csv", "new.bvh", &[]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert_eq!(Bvh::from_path(d.join("new.bvh")).unwrap().motion().n_frames(), 0);
}

/// `record` follows the rule of every command that writes: an output with
/// other hard links is refused unless --break-links, and a symbolic link
/// is followed to the file it names.
#[cfg(unix)]
#[test]
fn record_refuses_a_hard_linked_output_and_follows_symbolic_links() {
    let dir = workdir("links");
    let d = dir.path();
    std::fs::write(d.join("take.bvh"), "old\n").unwrap();
    std::fs::hard_link(d.join("take.bvh"), d.join("backup.bvh")).unwrap();
    std::fs::write(d.join("in.csv"), "t,sensor,w,x,y,z\n0,s-parent,1,0,0,0\n0,s-child,1,0,0,0\n")
        .unwrap();
    let record = |out: &str, extra: &[&str]| record_two_sensors(d, "in.csv", out, extra);
    let o = record("take.bvh", &[]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains("take.bvh: has 2 hard links"), "{err}");
    assert!(err.contains("--break-links"), "{err}");
    assert_eq!(std::fs::read_to_string(d.join("take.bvh")).unwrap(), "old\n");
    let o = record("take.bvh", &["--break-links"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert_eq!(Bvh::from_path(d.join("take.bvh")).unwrap().motion().n_frames(), 1);
    assert_eq!(std::fs::read_to_string(d.join("backup.bvh")).unwrap(), "old\n");
    // Through a symbolic link: the link stays, its target gets the take.
    std::fs::create_dir(d.join("takes")).unwrap();
    std::os::unix::fs::symlink("takes/real.bvh", d.join("link.bvh")).unwrap();
    let o = record("link.bvh", &[]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(std::fs::symlink_metadata(d.join("link.bvh")).unwrap().file_type().is_symlink());
    assert_eq!(Bvh::from_path(d.join("takes/real.bvh")).unwrap().motion().n_frames(), 1);
}

/// Through the command: one bad time stamp on both sensors in the middle
/// of a 30 s take drops those two samples and nothing else (it used to end
/// the take: 451 of 900 frames, exit 0), and samples 9.9 s apart make a
/// bounded number of held frames (400 made 1.97 million at 500 fps).
#[test]
fn bad_time_stamps_and_sparse_samples_through_record() {
    let dir = workdir("stamps");
    let d = dir.path();
    let mut csv = String::from("t,sensor,w,x,y,z\n");
    for i in 0..3000 {
        let t = if i == 1500 { "1e6".to_string() } else { format!("{}", i as f64 / 100.0) };
        csv.push_str(&format!("{t},s-parent,1,0,0,0\n{t},s-child,1,0,0,0\n"));
    }
    std::fs::write(d.join("stamps.csv"), csv).unwrap();
    let o = record_two_sensors(d, "stamps.csv", "a.bvh", &[]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{err}");
    assert!(err.contains("a.bvh: 3000 frames; 5998 samples used, 2 dropped"), "{err}");
    assert!(err.contains("out of order 0, too far ahead 2"), "{err}");
    assert_eq!(Bvh::from_path(d.join("a.bvh")).unwrap().motion().n_frames(), 3000);
    // 400 samples of one sensor 9.9 s apart at 100 fps: 990 frames a gap
    // would be 396,000 frames; at most 101 per sample plus 10,000.
    let mut csv = String::from("t,sensor,w,x,y,z\n");
    for i in 0..400 {
        csv.push_str(&format!("{},s-parent,1,0,0,0\n", i as f64 * 9.9));
    }
    std::fs::write(d.join("sparse.csv"), csv).unwrap();
    let o = record_two_sensors(d, "sparse.csv", "b.bvh", &[]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{err}");
    assert!(err.contains("gaps not filled with held frames"), "{err}");
    let n = Bvh::from_path(d.join("b.bvh")).unwrap().motion().n_frames();
    assert!((400 + 989 * 10..=400 * 101 + 10_000).contains(&n), "{n} frames");
}

/// `replay` reads a clip as `bvh edit` does: a `Frames:` count that
/// disagrees or a zero Frame Time are repaired with a warning (they were
/// errors worded as warnings); `--strict` refuses them.
#[test]
fn replay_reads_leniently_unless_strict() {
    let dir = workdir("lenient");
    let d = dir.path();
    let text = "HIERARCHY\nROOT a\n{\n OFFSET 0 0 0\n CHANNELS 3 Xposition Yposition Zposition\n End Site\n {\n  OFFSET 0 1 0\n }\n}\nMOTION\nFrames: 3\nFrame Time: 0\n0 0 0\n1 2 3\n";
    std::fs::write(d.join("bad.bvh"), text).unwrap();
    let o = bvh()
        .current_dir(d)
        .args(["replay", "bad.bvh", "--as", "sensors", "-o", "s.csv"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{err}");
    assert!(err.contains("bad.bvh:13:13: Frame Time is 0; 1/30 s (30 fps) assumed"), "{err}");
    assert!(err.contains("bad.bvh:12:9: Frames: declares 3 frames but the file holds 2; the frames present are kept"), "{err}");
    let csv = std::fs::read_to_string(d.join("s.csv")).unwrap();
    // Two frames of one sensor, the second 1/30 s after the first.
    let lines: Vec<&str> = csv.lines().collect();
    assert_eq!(lines.len(), 3, "{csv}");
    assert!(lines[2].starts_with("0.0333") && lines[2].ends_with(",1,2,3"), "{csv}");
    let o = bvh()
        .current_dir(d)
        .args(["replay", "bad.bvh", "--strict", "--as", "sensors", "-o", "t.csv"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.starts_with("bvh: error: bad.bvh:"), "{err}");
    assert!(!d.join("t.csv").exists());
}

/// A configuration's skeleton file is read for its skeleton only: a motion
/// section lenient reading repairs (a `Frames:` count that disagrees, a
/// zero Frame Time) no longer stops the recording.
#[test]
fn a_config_skeleton_with_a_repairable_motion_section_records() {
    let dir = workdir("skeleton-motion");
    let d = dir.path();
    let skel = std::fs::read_to_string(d.join("two_joints.bvh")).unwrap();
    let skel = skel.replace("Frames: 1", "Frames: 5").replace("Frame Time: 0.01", "Frame Time: 0");
    assert!(skel.contains("Frames: 5") && skel.contains("Frame Time: 0\n"), "{skel}");
    std::fs::write(d.join("two_joints.bvh"), skel).unwrap();
    let lines = [
        r#"{"t": 0.00, "sensor": "s-parent", "w": 1, "x": 0, "y": 0, "z": 0}"#,
        r#"{"t": 0.00, "sensor": "s-child", "w": 1, "x": 0, "y": 0, "z": 0}"#,
        r#"{"t": 0.01, "sensor": "s-parent", "w": 1, "x": 0, "y": 0, "z": 0}"#,
    ];
    std::fs::write(d.join("in.jsonl"), lines.join("\n")).unwrap();
    let o = record_two_sensors(d, "in.jsonl", "take.bvh", &[]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{err}");
    assert_eq!(Bvh::from_path(d.join("take.bvh")).unwrap().motion().n_frames(), 2, "{err}");
}

/// A root whose OFFSET is not zero under its position channels and a spine
/// with six channels that repeat its OFFSET: the files three.js draws
/// floating or with doubled bones unless written portable.
const SIX_CHANNELS: &str = "HIERARCHY
ROOT Hips
{
	OFFSET 5 90 0
	CHANNELS 6 Xposition Yposition Zposition Zrotation Xrotation Yrotation
	JOINT Spine
	{
		OFFSET 0 10 0
		CHANNELS 6 Xposition Yposition Zposition Zrotation Xrotation Yrotation
		JOINT Head
		{
			OFFSET 0 20 0
			CHANNELS 3 Zrotation Xrotation Yrotation
			End Site
			{
				OFFSET 0 8 0
			}
		}
	}
}
MOTION
Frames: 4
Frame Time: 0.01
5 90 0 0 0 0 0 10 0 0 0 0 0 0 0
6 91 1 10 0 0 0 10 0 0 20 0 0 0 15
7 92 2 20 5 0 0 10 0 0 30 0 5 0 0
8 91 3 30 5 5 0 10 0 0 40 0 10 0 0
";

/// `record --portable`: the take has the plain take's channels and the very
/// same frame values, every OFFSET component a position channel names is
/// 0, and its world positions are the plain take's in both readings of
/// position channels (replace, add), where the plain take's differ between
/// them; a note names the joints whose OFFSET was zeroed.
#[test]
fn record_portable_zeroes_offsets_under_position_channels_and_keeps_the_frames() {
    let dir = workdir("portable");
    let d = dir.path();
    std::fs::write(d.join("clip.bvh"), SIX_CHANNELS).unwrap();
    std::fs::write(
        d.join("all.toml"),
        "skeleton = \"clip.bvh\"\nframe_rate = 100\nbind_all = true\n",
    )
    .unwrap();
    let o = bvh()
        .current_dir(d)
        .args(["replay", "clip.bvh", "--as", "sensors", "-o", "samples.csv"])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let record = |out: &str, extra: &[&str]| {
        let o = bvh()
            .current_dir(d)
            .args(["record", "--config", "all.toml", "--input", "samples.csv", "-o", out])
            .args(extra)
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&o.stderr).into_owned();
        assert!(o.status.success(), "{err}");
        (Bvh::from_path(d.join(out)).unwrap(), err)
    };
    let (plain, plain_err) = record("plain.bvh", &[]);
    let (port, err) = record("portable.bvh", &["--portable"]);
    assert!(!plain_err.contains("--portable"), "{plain_err}");
    assert!(
        err.contains(
            "portable.bvh: --portable: OFFSET zeroed under the position channels of 2 joints"
        ),
        "{err}"
    );
    let clip = Bvh::from_path(d.join("clip.bvh")).unwrap();
    assert!(max_position_error(&clip, &plain) < 1e-6);
    // The plain take is ambiguous: the two readings put the figure apart.
    let world = |b: &Bvh, mode| Kinematics::new(b.skeleton(), mode).positions_all(b.motion());
    let before = world(&plain, PositionChannels::Replace);
    let dist = |a: &[DVec3], b: &[DVec3]| {
        assert_eq!(a.len(), b.len());
        a.iter().zip(b).map(|(p, q)| p.distance(*q)).fold(0.0, f64::max)
    };
    assert!(dist(&world(&plain, PositionChannels::Add), &before) > 50.0);
    // The same channels and values; only the OFFSETs differ.
    assert_eq!(port.motion(), plain.motion());
    for (a, b) in port.skeleton().joints().iter().zip(plain.skeleton().joints()) {
        assert_eq!(a.channels(), b.channels(), "{}", a.name());
        for c in a.channels().iter().filter(|c| c.is_position()) {
            assert_eq!(a.offset()[c.axis().index()], 0.0, "{} {c}", a.name());
        }
    }
    assert_eq!(port.skeleton().joints()[2].offset(), DVec3::new(0.0, 20.0, 0.0));
    for mode in [PositionChannels::Replace, PositionChannels::Add] {
        let e = dist(&world(&port, mode), &before);
        assert!(e <= 1e-9 * 130.0, "{mode:?}: {e}");
    }
}
