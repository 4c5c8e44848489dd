//! `bvh lint` and `bvh diff` end to end: exit codes, the line and JSON
//! forms, the HTML report in headless Chromium, errors.
use super::{corpus, run, standing_figure_header, stderr, stdout};

/// A standing figure of `n` frames at 25 fps; `angle(f)` is the head's
/// first rotation channel at frame `f`.
fn standing(n: usize, angle: impl Fn(usize) -> f64) -> String {
    let mut s = standing_figure_header(n);
    for f in 0..n {
        s.push_str(&format!("0 90 {} 0 0 0 {} 0 0 0 0 0 0 0 0\n", f as f64 * 0.5, angle(f)));
    }
    s
}

fn write(dir: &std::path::Path, name: &str, text: &str) -> String {
    let p = dir.join(name);
    std::fs::write(&p, text).unwrap();
    p.to_string_lossy().into_owned()
}

#[test]
fn lint_exit_codes_lines_and_json() {
    let dir = tempfile::tempdir().unwrap();
    let clean = write(dir.path(), "clean.bvh", &standing(60, |f| 10.0 * (f as f64 * 0.1).sin()));
    let o = run(&["lint", &clean]);
    assert_eq!(o.status.code(), Some(0), "{}{}", stdout(&o), stderr(&o));
    assert!(stdout(&o).contains("no findings"), "{}", stdout(&o));
    // A 360° wrap of the head's channel from frame 30: an Euler jump there.
    let wrap = write(
        dir.path(),
        "wrap.bvh",
        &standing(60, |f| 10.0 * (f as f64 * 0.1).sin() + if f >= 30 { 360.0 } else { 0.0 }),
    );
    let o = run(&["lint", &wrap]);
    assert_eq!(o.status.code(), Some(1), "{}", stdout(&o));
    let out = stdout(&o);
    assert!(
        out.contains(&format!("{wrap}:29-30: euler_jump: Head rotation channel jumps 359.0°")),
        "{out}"
    );
    assert!(out.contains("1 finding(s): 1 euler_jump"), "{out}");
    // --ignore makes it clean again.
    assert_eq!(run(&["lint", &wrap, "--ignore", "euler_jump"]).status.code(), Some(0));
    // JSON: one object per file with the documented keys.
    let o = run(&["lint", "--json", &clean, &wrap]);
    assert_eq!(o.status.code(), Some(1));
    let lines: Vec<serde_json::Value> =
        stdout(&o).lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert_eq!(lines.len(), 2);
    for key in ["file", "units", "up_axis", "fps", "feet", "ground", "metrics", "findings"] {
        assert!(lines[0].get(key).is_some(), "{key}: {}", lines[0]);
    }
    for key in [
        "skate_ratio",
        "skate_ratio_kimodo",
        "foot_slide",
        "jitter",
        "pops",
        "euler_jumps",
        "bone_stretch",
        "far_joints",
        "ground_penetration",
        "floating",
        "nan",
    ] {
        assert!(lines[0]["metrics"].get(key).is_some(), "{key}");
    }
    assert_eq!(lines[0]["up_axis"], "y");
    assert_eq!(lines[0]["feet"].as_array().unwrap().len(), 2);
    assert_eq!(lines[1]["metrics"]["euler_jumps"], 1.0);
    let f = &lines[1]["findings"][0];
    assert_eq!(f["kind"], "euler_jump");
    assert_eq!(f["frames"], serde_json::json!([29, 30]));
    assert_eq!(f["joints"], serde_json::json!(["Head"]));
    // --ground sets the ground; unreadable files exit 2 and the others go on.
    let o = run(&["lint", "--json", "--ground", "0.25", &clean]);
    let v: serde_json::Value = serde_json::from_str(stdout(&o).trim()).unwrap();
    assert_eq!(v["ground"], 0.25);
    let bad = write(dir.path(), "bad.bvh", "HIERARCHY\nROOT Hips\n{\n  OFFSET 0 0\n");
    let o = run(&["lint", &bad, &clean]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("bad.bvh:5:1: expected a number (OFFSET)"), "{}", stderr(&o));
    assert!(stdout(&o).contains("clean.bvh: 60 frames"), "{}", stdout(&o));
}

#[test]
fn lint_refuses_bad_options_with_the_option_and_value() {
    let dir = tempfile::tempdir().unwrap();
    let clean = write(dir.path(), "clean.bvh", &standing(10, |_| 0.0));
    for (args, says) in [
        (vec!["--spike-k", "-1"], "-1"),
        (vec!["--contact-height", "nan"], "nan"),
        (vec!["--ground", "floor"], "floor"),
        (vec!["--ignore", "wobble"], "wobble"),
        (vec!["--units", "furlong"], "furlong"),
        (vec!["--up", "w"], "'w'"),
        // A window of 90° or more would flag every frame; a ground of
        // 1e300 m printed 300 digits in the summary line.
        (vec!["--gimbal", "90"], "below 90"),
        (vec!["--ground", "1e300"], "at most 1e6"),
        (vec!["--ground", "-2e6"], "at most 1e6"),
    ] {
        let o = run(&[&["lint", &clean][..], &args].concat());
        assert_eq!(o.status.code(), Some(2), "{args:?}");
        assert!(
            stderr(&o).contains(says) && stderr(&o).contains(args[0]),
            "{args:?}: {}",
            stderr(&o)
        );
    }
    // Just inside the limits is accepted.
    for args in [["--gimbal", "89.9"], ["--ground", "-1e6"]] {
        let o = run(&[&["lint", &clean][..], &args].concat());
        assert!(matches!(o.status.code(), Some(0 | 1)), "{args:?}: {}", stderr(&o));
    }
    let o = run(&["lint", &clean, "--feet", "LeftFoot,Tail"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("--feet: no joint named \"Tail\""), "{}", stderr(&o));
    // --html never replaces an input.
    let o = run(&["lint", &clean, "--html", &clean]);
    assert_eq!(o.status.code(), Some(2));
    assert_eq!(std::fs::read_to_string(&clean).unwrap(), standing(10, |_| 0.0));
}

#[test]
fn lint_walks_the_corpus_and_writes_an_html_report_chromium_draws() {
    let Some(dir) = corpus() else { return };
    let tmp = tempfile::tempdir().unwrap();
    let html = tmp.path().join("report.html");
    let o = run(&["lint", dir.to_str().unwrap(), "-q", "--html", html.to_str().unwrap()]);
    // Every file is read leniently (the malformed ones repaired) and has a
    // summary line; real mocap has findings: exit 1.
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let summaries = stdout(&o).lines().filter(|l| l.contains(" frames at ")).count();
    assert_eq!(summaries, bvhkit_testdata::corpus_files().len(), "{}", stdout(&o));
    let page = std::fs::read_to_string(&html).unwrap();
    assert!(page.starts_with("<!DOCTYPE html>"));
    assert!(
        !page.contains("http://") && !page.contains("https://") && !page.contains("<script"),
        "self-contained"
    );
    assert!(page.matches("<h2>").count() >= 36);
    let Some(chromium) = bvhkit_testdata::chromium_or_skip("lint html report") else { return };
    let url = format!("file://{}", html.display());
    let dom = bvhkit_testdata::run_headless_chromium(
        &chromium,
        &url,
        &["--dump-dom".into()],
        std::time::Duration::from_secs(60),
    );
    assert!(
        dom.contains("findings by frame") && dom.contains("<svg"),
        "{}",
        &dom[..dom.len().min(500)]
    );
    assert!(dom.contains("cmu_12_01_walk_cgspeed_pybvh.bvh"));
    let shot = tmp.path().join("report.png");
    bvhkit_testdata::run_headless_chromium(
        &chromium,
        &url,
        &[format!("--screenshot={}", shot.display()), "--window-size=1200,900".into()],
        std::time::Duration::from_secs(60),
    );
    let png = std::fs::read(&shot).unwrap();
    assert!(png.starts_with(b"\x89PNG") && png.len() > 10_000, "{} bytes", png.len());
    if let Some(keep) = std::env::var_os("BVHKIT_KEEP_REPORT") {
        std::fs::copy(&shot, keep).unwrap();
    }
}

#[test]
fn diff_of_a_file_with_itself_and_with_a_moved_copy() {
    let dir = tempfile::tempdir().unwrap();
    let a = write(dir.path(), "a.bvh", &standing(40, |f| f as f64));
    let o = run(&["diff", &a, &a]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(
        stdout(&o).contains(
            "MPJPE 0.000000 m, root-aligned 0.000000 m, PA-MPJPE 0.000000 m, rotation 0.0000°"
        ),
        "{}",
        stdout(&o)
    );
    // The same clip 30 cm (the file is in centimetres) along X.
    let moved = standing(40, |f| f as f64).replace("\n0 90 ", "\n30 90 ");
    let b = write(dir.path(), "b.bvh", &moved);
    let o = run(&["diff", &a, &b, "--json", "--units", "cm"]);
    let v: serde_json::Value = serde_json::from_str(stdout(&o).trim()).unwrap();
    assert!((v["mpjpe"].as_f64().unwrap() - 0.3).abs() < 1e-12, "{v}");
    assert!(v["mpjpe_root"].as_f64().unwrap() < 1e-12);
    assert!(v["pa_mpjpe"].as_f64().unwrap() < 1e-12);
    assert_eq!(v["pairs"], 7);
    assert_eq!(v["per_frame"].as_array().unwrap().len(), 40);
    // Another rate is interpolated, with a note.
    let half = standing(40, |f| f as f64).replace("Frame Time: 0.04", "Frame Time: 0.08");
    let c = write(dir.path(), "c.bvh", &half);
    let o = run(&["diff", &a, &c]);
    assert!(stdout(&o).contains("note: frame rates differ"), "{}", stdout(&o));
    // No shared joint and no family: a clear error.
    let other = write(
        dir.path(),
        "o.bvh",
        "HIERARCHY\nROOT Thing\n{\n OFFSET 0 0 0\n CHANNELS 3 Xposition Yposition Zposition\n End Site\n {\n  OFFSET 0 1 0\n }\n}\nMOTION\nFrames: 1\nFrame Time: 0.04\n0 0 0\n",
    );
    let o = run(&["diff", &a, &other, "--map", "auto"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let missing = dir.path().join("missing.map");
    let o = run(&["diff", &a, &other, "--map", missing.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("--map"), "{}", stderr(&o));
}

/// `bvh lint --json` with `RAYON_NUM_THREADS` of 1, 2 and 3 on a clip of
/// several pieces of frames (the passes split over frames and joints) and
/// on the corpus, streamed and on the parsed clip (`--loop`): the same
/// bytes.
#[test]
fn lint_json_does_not_depend_on_the_thread_count() {
    let dir = tempfile::tempdir().unwrap();
    let synth = write(dir.path(), "synth.bvh", &bvhkit_testdata::synth_text(11, 40, 3_000));
    let mut inputs = vec![synth];
    if let Some(c) = corpus() {
        inputs.push(c.to_string_lossy().into_owned());
    }
    // With `--loop` the parsed clip is measured; without it, a file is
    // streamed.
    for (input, seam) in inputs.iter().flat_map(|i| [(i, &["--loop"][..]), (i, &[][..])]) {
        let lint = |threads: usize| {
            let o = super::bvh()
                .env("RAYON_NUM_THREADS", threads.to_string())
                .args(["lint", "--json"])
                .args(seam)
                .arg(input)
                .output()
                .unwrap();
            assert!(matches!(o.status.code(), Some(0..=2)), "{}", stderr(&o));
            stdout(&o)
        };
        let one = lint(1);
        assert!(
            one.lines().any(|l| l.contains("\"jitter\":") && !l.contains("\"jitter\":null")),
            "{input}: nothing measured to compare: {one}"
        );
        assert_eq!(lint(2), one, "{input}: 2 threads");
        assert_eq!(lint(3), one, "{input}: 3 threads");
    }
}

/// A file is linted as it streams (`quality::LintStream`); standard input
/// is parsed whole and linted (`quality::lint`): the same JSON, but for
/// the file's name, on a synthetic clip of several batches and on every
/// corpus file, with the default options and with the ground, unit and up
/// axis given.
#[test]
fn lint_of_a_streamed_file_is_the_lint_of_the_parsed_clip() {
    let dir = tempfile::tempdir().unwrap();
    let synth = write(dir.path(), "synth.bvh", &bvhkit_testdata::synth_text(11, 40, 3_000));
    let mut inputs = vec![std::path::PathBuf::from(synth)];
    if let Some(c) = corpus() {
        let mut files: Vec<_> = std::fs::read_dir(c)
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.extension().is_some_and(|e| e == "bvh"))
            .collect();
        files.sort();
        inputs.extend(files);
    }
    let mut compared = 0;
    for input in &inputs {
        let bytes = std::fs::read(input).unwrap();
        for opts in [&[][..], &["--ground", "lowest", "--units", "cm", "--up", "z"]] {
            let file =
                super::bvh().args(["lint", "--json"]).args(opts).arg(input).output().unwrap();
            let mut piped = super::bvh()
                .args(["lint", "--json"])
                .args(opts)
                .arg("-")
                .stdin(std::process::Stdio::piped())
                .stdout(std::process::Stdio::piped())
                .stderr(std::process::Stdio::piped())
                .spawn()
                .unwrap();
            let mut stdin = piped.stdin.take().unwrap();
            let bytes = bytes.clone();
            let feed = std::thread::spawn(move || {
                use std::io::Write;
                let _ = stdin.write_all(&bytes);
            });
            let piped = piped.wait_with_output().unwrap();
            feed.join().unwrap();
            assert_eq!(file.status.code(), piped.status.code(), "{}", input.display());
            if file.status.code() == Some(2) {
                continue;
            }
            let name = serde_json::to_string(&input.to_string_lossy()).unwrap();
            let want =
                stdout(&piped).replacen("\"file\":\"<stdin>\"", &format!("\"file\":{name}"), 1);
            assert_eq!(stdout(&file), want, "{} {opts:?}", input.display());
            compared += 1;
        }
    }
    assert!(compared >= 2);
}

/// A file read leniently (here: a frame count other than the one declared)
/// is linted and diffed as it reads, each repair on standard error as
/// `FILE:LINE:COL: message` (as every command prints them); `--strict`
/// refuses it (exit 2). On the corpus, every file `bvh positions` warns
/// about, lint and diff warn about with the same lines.
#[test]
fn lint_and_diff_say_what_lenient_reading_repaired() {
    let dir = tempfile::tempdir().unwrap();
    let text = standing(30, |f| f as f64);
    let short = write(dir.path(), "short.bvh", &text.replace("Frames: 30", "Frames: 31"));
    let full = write(dir.path(), "full.bvh", &text);
    // Line 35 is `Frames: 31`; the count is at column 9.
    let warning = format!("{short}:35:9: Frames: declares 31 frames but the file holds 30");
    let o = run(&["lint", &short]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(stderr(&o).contains(&warning), "{}", stderr(&o));
    // The same report as the well-formed file's, but for the name.
    let same = stdout(&run(&["lint", &full])).replace(&full, &short);
    assert_eq!(stdout(&o), same);
    let o = run(&["lint", "--json", &short]);
    assert!(stderr(&o).contains(&warning), "{}", stderr(&o));
    let o = run(&["lint", "--strict", &short]);
    assert_eq!(o.status.code(), Some(2), "{}", stdout(&o));
    assert!(stderr(&o).contains(&format!("{short}:35:9:")), "{}", stderr(&o));
    // diff: each side's warnings, A's first.
    for (a, b) in [(&short, &full), (&full, &short), (&short, &short)] {
        let o = run(&["diff", a, b]);
        assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
        assert!(stdout(&o).contains("MPJPE 0.000000 m"), "{}", stdout(&o));
        let warned = stderr(&o).lines().filter(|l| l.starts_with(&warning)).count();
        assert_eq!(warned, usize::from(a == &short) + usize::from(b == &short), "{}", stderr(&o));
        let o = run(&["diff", "--strict", a, b]);
        assert_eq!(o.status.code(), Some(2), "{}", stdout(&o));
    }
    assert!(run(&["diff", "--strict", &full, &full]).status.success());

    let Some(corpus) = corpus() else { return };
    let mut warned = 0;
    for entry in std::fs::read_dir(&corpus).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_none_or(|e| e != "bvh") {
            continue;
        }
        let p = path.to_string_lossy().into_owned();
        let npy = dir.path().join("p.npy");
        let positions = run(&["positions", &p, "-o", npy.to_str().unwrap()]);
        let said = stderr(&positions);
        let expected: Vec<&str> =
            said.lines().filter(|l| l.starts_with(&format!("{p}:"))).collect();
        let lint = run(&["lint", "-q", &p]);
        let got = stderr(&lint);
        assert_eq!(got.lines().collect::<Vec<_>>(), expected, "lint {p}");
        if positions.status.success() {
            warned += usize::from(!expected.is_empty());
            let diff = stderr(&run(&["diff", &p, &p]));
            let twice: Vec<&str> = expected.iter().chain(&expected).copied().collect();
            let lines: Vec<&str> = diff.lines().filter(|l| !l.starts_with("bvh: error:")).collect();
            assert_eq!(lines, twice, "diff {p}");
        }
    }
    assert!(warned >= 4, "{warned} corpus files read leniently");
}
