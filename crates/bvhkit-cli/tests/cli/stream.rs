//! `bvh record` and `bvh replay` over sockets, and stopped by signals: TCP
//! sample lines, the Axis Neuron-style stream, `replay --to`, `--realtime`,
//! SIGINT and SIGTERM.

use std::io::{BufReader, Read, Write};
use std::path::Path;
use std::process::{Child, ChildStderr, Command, Stdio};
use std::time::{Duration, Instant};

use bvhkit::Bvh;

use super::record::{after, bvh, frame_lines, max_position_error, spawn_piped, workdir};

/// Starts `bvh` with piped standard input and error; returns it and its reader.
fn spawn(dir: &Path, args: &[&str]) -> (Child, BufReader<ChildStderr>) {
    let mut child = spawn_piped(dir, args);
    let err = BufReader::new(child.stderr.take().unwrap());
    (child, err)
}

/// The rest of standard error, once the process has ended; and its status.
fn finish(mut child: Child, mut err: BufReader<ChildStderr>) -> (std::process::ExitStatus, String) {
    let mut rest = String::new();
    err.read_to_string(&mut rest).unwrap();
    (child.wait().unwrap(), rest)
}

/// Sends `sig` (a name for kill -s) to the child, by its process id.
fn signal(child: &Child, sig: &str) {
    // The shell's built-in kill: no procps needed.
    let ok = Command::new("sh")
        .args(["-c", &format!("kill -s {sig} {}", child.id())])
        .status()
        .unwrap()
        .success();
    assert!(ok, "kill -s {sig}");
}

/// Waits until `path` holds at least `lines` lines.
fn wait_for_lines(path: &Path, lines: usize) {
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let body = std::fs::read_to_string(path).unwrap_or_default();
        if body.lines().count() >= lines {
            return;
        }
        assert!(Instant::now() < deadline, "{} lines wanted: {body}", lines);
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// The header of the two-joint fixture's take is 18 lines.
const HEADER_LINES: usize = 18;

#[test]
fn sigint_and_sigterm_end_the_recording_like_the_end_of_input() {
    for (sig, udp) in [("INT", false), ("TERM", true)] {
        let dir = workdir(&format!("sig{sig}"));
        let d = dir.path();
        let input = if udp { "udp://127.0.0.1:0" } else { "-" };
        let (mut child, mut err) = spawn(
            d,
            &["record", "--config", "two_sensors.toml", "--input", input, "-o", "take.bvh"],
        );
        // 30 complete frames, then one sample of frame 30: the frame being filled.
        let mut text = String::from("t,sensor,w,x,y,z\n");
        for i in 0..30 {
            text.push_str(&frame_lines(i));
        }
        text.push_str(frame_lines(30).lines().next().unwrap());
        text.push('\n');
        // The input stays open: only the signal ends the recording.
        let _stdin = child.stdin.take().unwrap();
        let mut _stdin = Some(_stdin);
        if udp {
            let addr = after(&mut err, "bvh: listening on udp://");
            let sock = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
            sock.send_to(text.as_bytes(), &addr).unwrap();
        } else {
            _stdin.as_mut().unwrap().write_all(text.as_bytes()).unwrap();
            _stdin.as_mut().unwrap().flush().unwrap();
        }
        wait_for_lines(&d.join("take.bvh"), HEADER_LINES + 30);
        signal(&child, sig);
        let (status, rest) = finish(child, err);
        assert!(status.success(), "SIG{sig}: {status:?} {rest}");
        assert!(rest.contains(&format!("bvh: SIG{sig}: recording stopped")), "{rest}");
        assert!(
            rest.contains("take.bvh: 31 frames; 61 samples used, 0 dropped"),
            "SIG{sig}: {rest}"
        );
        let body = std::fs::read_to_string(d.join("take.bvh")).unwrap();
        assert!(body.contains("\nFrames: 31 "), "the count is patched: {body:.400}");
        let take = Bvh::from_path(d.join("take.bvh")).unwrap();
        assert_eq!(take.motion().n_frames(), 31);
        // Frame i: the parent turned i/10 degrees about Y (ZXY: index 2); the
        // last frame, which only the parent's sensor reached, too.
        for (i, f) in take.motion().frames().enumerate() {
            assert!((f[2] - i as f64 / 10.0).abs() < 1e-9, "SIG{sig} frame {i}: {f:?}");
        }
    }
}

/// `height` of a clip: the largest extent of its rest pose, or 1.
fn height(bvh: &Bvh) -> f64 {
    use bvhkit::glam::DVec3;
    let fk = bvhkit::Kinematics::new(bvh.skeleton(), bvhkit::PositionChannels::Replace);
    let mut p = vec![DVec3::ZERO; fk.len()];
    fk.positions(&vec![0.0; bvh.motion().n_channels()], &mut p);
    let (lo, hi) =
        p.iter().fold((DVec3::INFINITY, DVec3::NEG_INFINITY), |(l, h), q| (l.min(*q), h.max(*q)));
    (hi - lo).max_element().max(1.0)
}

/// Well-formed corpus files with motion and a usable frame rate.
fn corpus_clips(test: &str) -> Vec<(std::path::PathBuf, Bvh)> {
    if bvhkit_testdata::corpus_or_skip(test).is_none() {
        return Vec::new();
    }
    let clips: Vec<_> = bvhkit_testdata::corpus_files()
        .into_iter()
        .filter(|p| !p.file_name().unwrap().to_string_lossy().starts_with("malformed_"))
        .filter_map(|p| Bvh::from_path(&p).ok().map(|b| (p, b)))
        .filter(|(_, b)| b.motion().n_frames() > 0 && b.motion().frame_time() > 0.0)
        .collect();
    assert!(clips.len() >= 20, "only {} corpus clips", clips.len());
    clips
}

/// Every well-formed corpus clip through `replay --as sensors --to SCHEME://`
/// into `record --input SCHEME://127.0.0.1:0`: no sample lost, world
/// positions within 1e-6 of the skeleton's height. `pace` gives the
/// `--realtime --speed` factor for a clip of that many sensors, if any.
fn sensor_round_trip(test: &str, scheme: &str, pace: impl Fn(&Bvh, usize) -> Option<f64>) {
    let dir = workdir(test);
    let d = dir.path();
    for (path, clip) in corpus_clips(test) {
        let name = path.file_name().unwrap().to_string_lossy().to_string();
        std::fs::write(
            d.join("all.toml"),
            format!(
                "skeleton = {:?}\nframe_rate = {}\nbind_all = true\n",
                path.to_str().unwrap(),
                clip.motion().fps()
            ),
        )
        .unwrap();
        let sensors = bvhkit_capture::Config::bind_all(
            clip.skeleton().clone(),
            path.clone(),
            clip.motion().fps(),
        )
        .bindings
        .len();
        let input = format!("{scheme}://127.0.0.1:0");
        let (child, mut err) =
            spawn(d, &["record", "--config", "all.toml", "--input", &input, "-o", "take.bvh"]);
        let addr = after(&mut err, &format!("bvh: listening on {scheme}://"));
        let mut replay = bvh();
        replay
            .current_dir(d)
            .args(["replay", path.to_str().unwrap(), "--as", "sensors"])
            .args(["--to", &format!("{scheme}://{addr}")]);
        if let Some(speed) = pace(&clip, sensors) {
            replay.args(["--realtime", "--speed", &speed.to_string()]);
        }
        let sent = replay.output().unwrap();
        assert!(sent.status.success(), "{name}: {}", String::from_utf8_lossy(&sent.stderr));
        let (status, rest) = finish(child, err);
        assert!(status.success(), "{name}: {rest}");
        let frames = clip.motion().n_frames();
        let want = format!(
            "take.bvh: {frames} frames; {} samples used, 0 dropped (malformed 0, unknown sensor 0, out of order 0, too far ahead 0); 0 sensor-frames held",
            frames * sensors
        );
        assert!(rest.contains(&want), "{name}: {rest}\nwant {want}");
        let take = Bvh::from_path(d.join("take.bvh")).unwrap();
        let worst = max_position_error(&clip, &take);
        assert!(worst <= 1e-6 * height(&clip), "{name}: worst position error {worst}");
    }
}

#[test]
fn tcp_corpus_round_trip_loses_no_sample() {
    sensor_round_trip("tcp_corpus_round_trip_loses_no_sample", "tcp", |_, _| None);
}

/// UDP has no flow control, so the sender is paced (`--realtime --speed`) at
/// about 25,000 samples a second whatever the clip's rate and size: several
/// times below what a debug-build recorder takes. A lost datagram shows in the
/// summary as held sensor-frames and fails the exact summary.
#[test]
fn udp_corpus_round_trip_loses_no_sample() {
    sensor_round_trip("udp_corpus_round_trip_loses_no_sample", "udp", |clip, sensors| {
        Some((25_000.0 / sensors as f64 * clip.motion().frame_time()).clamp(0.5, 40.0))
    });
}

#[test]
fn neuron_stream_round_trip_is_bit_identical_on_the_corpus() {
    let dir = workdir("neuron-corpus");
    let d = dir.path();
    for (path, clip) in corpus_clips("neuron_stream_round_trip_is_bit_identical_on_the_corpus") {
        let name = path.file_name().unwrap().to_string_lossy().to_string();
        let p = path.to_str().unwrap();
        let (server, mut serr) =
            spawn(d, &["replay", p, "--as", "neuron", "--to", "tcp://127.0.0.1:0"]);
        let addr = after(&mut serr, "bvh: listening on tcp://");
        let input = format!("neuron+tcp://{addr}");
        let o = bvh()
            .current_dir(d)
            .args(["record", "--skeleton", p, "--input", &input, "-o", "take.bvh"])
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(o.status.success(), "{name}: {err}");
        let (status, rest) = finish(server, serr);
        assert!(status.success(), "{name}: {rest}");
        let frames = clip.motion().n_frames();
        assert!(rest.contains(&format!("bvh: sent {frames} frames")), "{name}: {rest}");
        assert!(err.contains(&format!("take.bvh: {frames} frames; 0 malformed frames")), "{err}");
        let take = Bvh::from_path(d.join("take.bvh")).unwrap();
        assert_eq!(take.motion().n_channels(), clip.motion().n_channels(), "{name}");
        assert_eq!(take.motion().n_frames(), frames, "{name}");
        for (i, (a, b)) in clip.motion().values().iter().zip(take.motion().values()).enumerate() {
            assert_eq!(a.to_bits(), b.to_bits(), "{name}: value {i}: {a:e} vs {b:e}");
        }
    }
}

#[test]
fn neuron_stream_malformed_frames_are_counted_and_reported() {
    let dir = workdir("neuron-bad");
    let d = dir.path();
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    let input = format!("neuron+tcp://{addr}");
    let (child, err) =
        spawn(d, &["record", "--skeleton", "two_joints.bvh", "--input", &input, "-o", "take.bvh"]);
    let (mut stream, _) = listener.accept().unwrap();
    let frames = [
        "0 Avatar00 1 2 3 4 5 6 ||\n",
        "1 Avatar00 1 2 3 4 5 ||\n", // one value short: "Avatar00" is taken as a value
        "2 Avatar00 1 2 x 4 5 6 ||\n", // not a number
        "3 Avatar00 1 2 3 4 5 6 7 8 ||\n", // too many
        "7 8 9 10 11 12||",          // no prefix, glued bars
        "5 Avatar00 1 2",            // the server goes away mid-frame
    ];
    for f in frames {
        stream.write_all(f.as_bytes()).unwrap();
    }
    drop(stream);
    let (status, rest) = finish(child, err);
    assert!(status.success(), "{rest}");
    assert!(rest.contains("take.bvh: 2 frames; 4 malformed frames"), "{rest}");
    for want in [
        ":2:1: expected a number for value 1, found \"Avatar00\"",
        ":3:1: expected a number for value 3, found \"x\"",
        ":4:1: expected 6 values after an optional index and avatar name, found 10 tokens",
        ":5:17: the stream ended in the middle of a frame",
    ] {
        assert!(rest.contains(&format!("{input}{want}")), "{want}: {rest}");
    }
    let take = Bvh::from_path(d.join("take.bvh")).unwrap();
    assert_eq!(
        take.motion().values(),
        [1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0, 10.0, 11.0, 12.0]
    );
}

#[test]
fn tcp_hostile_lines_and_a_connection_closed_mid_line_are_counted() {
    let dir = workdir("tcp-bad");
    let d = dir.path();
    let (child, mut err) = spawn(
        d,
        &[
            "record",
            "--config",
            "two_sensors.toml",
            "--input",
            "tcp://127.0.0.1:0",
            "-o",
            "take.bvh",
        ],
    );
    let addr = after(&mut err, "bvh: listening on tcp://");
    let mut stream = std::net::TcpStream::connect(&addr).unwrap();
    let text = format!(
        "t,sensor,w,x,y,z\n{}x,s-child,1,0,0,0\n0.01,s-nobody,1,0,0,0\n0.01,s-child,nan,0,0,0\n{}0.0,s-child,1,0,0,0\n0.02,s-parent,1,0",
        frame_lines(0),
        frame_lines(1),
    );
    stream.write_all(text.as_bytes()).unwrap();
    drop(stream);
    let (status, rest) = finish(child, err);
    assert!(status.success(), "{rest}");
    assert!(
        rest.contains("take.bvh: 2 frames; 4 samples used, 5 dropped (malformed 3, unknown sensor 1, out of order 1, too far ahead 0); 0 sensor-frames held"),
        "{rest}"
    );
    assert!(rest.contains(&format!("tcp://{addr}:4:1: expected a number for t")), "{rest}");
    assert!(
        rest.contains(&format!("tcp://{addr}:10:1: the connection ended in the middle of a line")),
        "{rest}"
    );
}

#[test]
fn replay_to_udp_sends_whole_frames_paced_at_the_frame_rate() {
    let dir = workdir("pace");
    let d = dir.path();
    const FRAMES: usize = 21;
    const FT: f64 = 0.05;
    let mut clip = std::fs::read_to_string(d.join("two_joints.bvh")).unwrap();
    clip = clip.replace("Frames: 1\nFrame Time: 0.01\n0 0 0 0 0 0\n", "");
    clip.push_str(&format!("Frames: {FRAMES}\nFrame Time: {FT}\n"));
    for i in 0..FRAMES {
        clip.push_str(&format!("0 {} 0 0 0 {i}\n", i as f64 / 2.0));
    }
    std::fs::write(d.join("clip.bvh"), &clip).unwrap();
    let sock = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
    sock.set_read_timeout(Some(Duration::from_secs(60))).unwrap();
    let to = format!("udp://{}", sock.local_addr().unwrap());
    let child = bvh()
        .current_dir(d)
        .args(["replay", "clip.bvh", "--as", "sensors", "--to", &to, "--realtime"])
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut buf = [0u8; 65536];
    let mut got: Vec<(Instant, String)> = Vec::new();
    loop {
        let n = sock.recv(&mut buf).unwrap();
        let at = Instant::now();
        if n == 0 {
            break;
        }
        got.push((at, String::from_utf8(buf[..n].to_vec()).unwrap()));
    }
    let o = child.wait_with_output().unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert_eq!(got[0].1, "t,sensor,w,x,y,z,px,py,pz\n");
    let frames = &got[1..];
    assert_eq!(frames.len(), FRAMES, "one datagram per frame");
    for (i, (_, text)) in frames.iter().enumerate() {
        let lines: Vec<&str> = text.lines().collect();
        assert!(text.ends_with('\n') && lines.len() == 2, "whole lines of both sensors: {text:?}");
        let t = format!("{}", i as f64 * FT);
        assert!(lines.iter().all(|l| l.split(',').next() == Some(t.as_str())), "{text:?}");
    }
    // Pacing, from arrival times: frame i is sent no earlier than i frame
    // times after frame 0 (the sender sleeps until then; 20 ms allow for
    // frame 0 itself arriving late); the upper bound is only a sanity check.
    let t0 = frames[0].0;
    for (i, (at, _)) in frames.iter().enumerate() {
        let since = at.duration_since(t0).as_secs_f64();
        assert!(since >= i as f64 * FT - 0.02, "frame {i} arrived {since} s after frame 0");
    }
    let span = frames[FRAMES - 1].0.duration_since(t0).as_secs_f64();
    assert!(span < (FRAMES - 1) as f64 * FT + 30.0, "{span}");
}

/// The numbers of a sample recording's summary line:
/// frames, used, dropped, malformed, unknown, out of order, too far, held.
fn summary_numbers(err: &str) -> [u64; 8] {
    let line = err.lines().find(|l| l.contains(" frames; ")).unwrap_or_else(|| panic!("{err}"));
    let nums: Vec<u64> = line
        .split(|c: char| !c.is_ascii_digit())
        .filter(|s| !s.is_empty())
        .map(|s| s.parse().unwrap())
        .collect();
    nums[nums.len() - 8..].try_into().unwrap()
}

#[test]
fn an_unpaced_udp_burst_of_100000_samples_is_counted_in_bounded_memory() {
    let dir = workdir("udp-burst");
    let d = dir.path();
    // Under a 250 MB address-space limit, as the file burst test.
    let mut child = Command::new("sh")
        .current_dir(d)
        .args([
            "-c",
            "ulimit -v 250000 && exec \"$0\" record --config two_sensors.toml --input udp://127.0.0.1:0 --idle 5 -o take.bvh",
            env!("CARGO_BIN_EXE_bvh"),
        ])
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut err = BufReader::new(child.stderr.take().unwrap());
    let addr = after(&mut err, "bvh: listening on udp://");
    let sock = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
    sock.send_to(b"t,sensor,w,x,y,z\n", &addr).unwrap();
    // 1,000 datagrams of 50 frames (100 samples) and one malformed line each,
    // as fast as the socket takes them: the kernel may drop some.
    for k in 0..1000 {
        let mut text = String::new();
        for i in 50 * k..50 * (k + 1) {
            text.push_str(&frame_lines(i));
        }
        text.push_str("not,a,sample\n");
        sock.send_to(text.as_bytes(), &addr).unwrap();
    }
    sock.send_to(b"", &addr).unwrap();
    let (status, rest) = finish(child, err);
    assert!(status.success(), "{rest}");
    let [frames, used, dropped, malformed, unknown, out_of_order, too_far, held] =
        summary_numbers(&rest);
    // Every datagram that arrived brought 100 samples and one bad line (its
    // samples too far ahead after a gap of over 10 s of lost data).
    let arrived = used + too_far;
    assert!(arrived <= 100_000 && arrived % 100 == 0, "{rest}");
    assert_eq!(malformed, arrived / 100, "{rest}");
    assert_eq!((unknown, out_of_order), (0, 0), "{rest}");
    assert_eq!(dropped, malformed + too_far, "{rest}");
    assert!(frames <= 50_000, "{rest}");
    // Frames are those that arrived plus the held ones in the gaps.
    assert_eq!(2 * frames, used + held, "{rest}");
    let take = Bvh::from_path(d.join("take.bvh")).unwrap();
    assert_eq!(take.motion().n_frames() as u64, frames);
    eprintln!("udp burst: {arrived} of 100000 samples arrived, {used} used");
}

#[test]
fn neuron_input_without_a_server_is_an_error_and_leaves_no_file() {
    let dir = workdir("neuron-none");
    let d = dir.path();
    // A port that was free a moment ago.
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let input = format!("neuron+tcp://127.0.0.1:{port}");
    let o = bvh()
        .current_dir(d)
        .args(["record", "--skeleton", "two_joints.bvh", "--input", &input])
        .args(["--idle", "0.5", "-o", "take.bvh"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains(&format!("{input}: cannot connect")), "{err}");
    assert!(!d.join("take.bvh").exists());
    // --skeleton is for the neuron stream; samples need a configuration.
    std::fs::write(d.join("in.csv"), "t,sensor,w,x,y,z\n").unwrap();
    let o = bvh()
        .current_dir(d)
        .args(["record", "--skeleton", "two_joints.bvh", "--input", "in.csv", "-o", "take.bvh"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains("--skeleton is for neuron+tcp:// input"), "{err}");
    assert!(!d.join("take.bvh").exists());
}
