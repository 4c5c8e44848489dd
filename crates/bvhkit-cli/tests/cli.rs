//! End-to-end tests of the `bvh` binary.
#![allow(clippy::print_stderr)]

use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

fn bvh() -> Command {
    Command::new(env!("CARGO_BIN_EXE_bvh"))
}

/// Runs `bvh ARGS` in `dir` with `input` on its standard input, its
/// standard output and error captured.
fn run_with_stdin(dir: &Path, args: &[&str], input: &[u8]) -> Output {
    let mut child = bvh()
        .current_dir(dir)
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(input).unwrap();
    child.wait_with_output().unwrap()
}

fn run(args: &[&str]) -> Output {
    // `bvh view` opens one window at a time: clients connecting to Xvfb at
    // once now and then got "Failed to open connection to X server".
    static ONE_WINDOW: std::sync::Mutex<()> = std::sync::Mutex::new(());
    let _one = (args.first() == Some(&"view"))
        .then(|| ONE_WINDOW.lock().unwrap_or_else(std::sync::PoisonError::into_inner));
    bvh().args(args).output().unwrap()
}

/// [`run`], failing the test with the command's stderr unless it succeeded.
#[track_caller]
fn run_ok(args: &[&str]) -> Output {
    let o = run(args);
    assert!(o.status.success(), "bvh {}: {}", args.join(" "), stderr(&o));
    o
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

/// Runs `bvh args`, which must fail with a message (not a panic: exit 2,
/// not 101 or a signal) containing every one of `want`, and leave no `out`;
/// returns the message.
#[track_caller]
fn refused(args: &[&str], want: &[&str], out: &Path) -> String {
    let o = run(args);
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(2), "bvh {}: {err}", args.join(" "));
    assert!(!err.contains("panicked"), "{err}");
    for w in want {
        assert!(err.contains(w), "bvh {}: {w:?} not in {err}", args.join(" "));
    }
    assert!(!out.exists(), "{} was written", out.display());
    err
}

/// The hierarchy and motion header of a Y-up figure of 15 channels (a
/// root with its position, a head above it and two feet below), for
/// `frames` frames of up-axis tests to follow.
fn standing_figure_header(frames: usize) -> String {
    format!(
        "HIERARCHY\nROOT Hips\n{{\n\tOFFSET 0 90 0\n\tCHANNELS 6 Xposition Yposition Zposition Zrotation Xrotation Yrotation\n\
         \tJOINT Head\n\t{{\n\t\tOFFSET 0 60 0\n\t\tCHANNELS 3 Zrotation Xrotation Yrotation\n\
         \t\tEnd Site\n\t\t{{\n\t\t\tOFFSET 0 10 0\n\t\t}}\n\t}}\n\
         \tJOINT LeftFoot\n\t{{\n\t\tOFFSET 10 -85 0\n\t\tCHANNELS 3 Zrotation Xrotation Yrotation\n\
         \t\tEnd Site\n\t\t{{\n\t\t\tOFFSET 0 0 10\n\t\t}}\n\t}}\n\
         \tJOINT RightFoot\n\t{{\n\t\tOFFSET -10 -85 0\n\t\tCHANNELS 3 Zrotation Xrotation Yrotation\n\
         \t\tEnd Site\n\t\t{{\n\t\t\tOFFSET 0 0 10\n\t\t}}\n\t}}\n}}\n\
         MOTION\nFrames: {frames}\nFrame Time: 0.04\n"
    )
}

#[test]
fn info_text_and_json() {
    let o = run_ok(&["info", &fx("two_roots.bvh")]);
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

    // Strict: the first problem makes the file unparsable.
    let o = run(&["check", "--strict", &f]);
    assert_eq!(o.status.code(), Some(2));
    assert_eq!(stdout(&o).lines().count(), 1);

    let o = run(&["check", "/nonexistent/x.bvh"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).starts_with("bvh: error: /nonexistent/x.bvh"), "{}", stderr(&o));

    let o = run(&["check", "-q", &f]);
    assert_eq!(o.status.code(), Some(1));
    assert!(o.stdout.is_empty());
}

#[test]
fn check_exit_2_when_a_file_does_not_parse() {
    let dir = tempfile::tempdir().unwrap();
    let good = fx("crlf.bvh");
    let warned = fx("last_row_cut.bvh");
    let png = dir.path().join("picture.bvh");
    std::fs::write(&png, b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR\0\0\0\x01").unwrap();
    let empty = dir.path().join("empty.bvh");
    std::fs::write(&empty, b"").unwrap();
    let nan = dir.path().join("nan.bvh");
    let text = std::fs::read_to_string(fixture("crlf.bvh")).unwrap();
    let cut = text.rfind("\r\n1").unwrap() + 2;
    std::fs::write(&nan, format!("{}nan{}", &text[..cut], &text[cut + 1..])).unwrap();
    for bad in [&png, &empty, &nan] {
        let b = bad.to_str().unwrap();
        let o = run(&["check", "--summary", b]);
        assert_eq!(o.status.code(), Some(2), "{b}: {}", stdout(&o));
        let s = stdout(&o);
        assert!(s.starts_with(&format!("{b}:")) && s.lines().count() == 1, "{s}");
        assert_eq!(stderr(&o), "bvh: 1 file: 0 clean, 0 with warnings, 1 unreadable\n");
        // Beside clean and warned files, an unparsable one still gives 2.
        let o = run(&["check", &good, &warned, b]);
        assert_eq!(o.status.code(), Some(2));
        assert!(o.stderr.is_empty(), "no summary unless asked or on a terminal");
    }
    let o = run(&["check", &nan.to_string_lossy()]);
    let s = stdout(&o);
    assert!(s.contains(":20:1: expected a number (motion value), found 'nan0'"), "{s}");
    let o = run(&["check", &empty.to_string_lossy()]);
    assert!(stdout(&o).contains("found the end of the input"), "{}", stdout(&o));

    let o = run(&["check", &good, &warned, "--summary"]);
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(stderr(&o), "bvh: 2 files: 1 clean, 1 with warnings, 0 unreadable\n");
    let o = run(&["check", &good, &good, "--summary", "-q"]);
    assert_eq!(o.status.code(), Some(0));
    assert!(o.stdout.is_empty());
    assert_eq!(stderr(&o), "bvh: 2 files: 2 clean, 0 with warnings, 0 unreadable\n");
    // A device is read as it comes and refused at its first bad byte (it
    // was read up to --max-size, 4 GiB, before anything was parsed).
    if Path::new("/dev/zero").exists() {
        let o = run(&["check", "/dev/zero", "--max-size", "1k"]);
        assert_eq!(o.status.code(), Some(2));
        let s = stdout(&o);
        assert!(s.starts_with("/dev/zero:1:1: expected a token of at most 65536 bytes"), "{s}");
        assert!(!s.contains("--max-size") && o.stderr.is_empty(), "{s}{}", stderr(&o));
        // The commands that read a clip whole stop reading a device that
        // cannot start a BVH text after its first 128 KiB (they read 4 GiB).
        let o =
            run(&["concat", "/dev/zero", &good, "-o", &dir.path().join("c.bvh").to_string_lossy()]);
        assert_eq!(o.status.code(), Some(2));
        let e = stderr(&o);
        assert!(e.contains("/dev/zero:1:1: expected a token of at most 65536 bytes"), "{e}");
        assert!(!dir.path().join("c.bvh").exists());
    }
}

#[test]
fn check_summary_on_a_terminal() {
    // `script` (util-linux) runs the command on a pseudo-terminal.
    if Command::new("script").arg("--version").output().is_err() {
        bvhkit_testdata::skip("check_summary_on_a_terminal", "`script` (util-linux) is missing");
        return;
    }
    let on_tty = |args: &str| -> String {
        let cmd = format!("'{}' check {args}", env!("CARGO_BIN_EXE_bvh"));
        let o = Command::new("script").args(["-qec", &cmd, "/dev/null"]).output().unwrap();
        String::from_utf8_lossy(&o.stdout).replace('\r', "")
    };
    let files = format!("'{}' '{}'", fx("crlf.bvh"), fx("last_row_cut.bvh"));
    let s = on_tty(&files);
    assert!(s.ends_with("bvh: 2 files: 1 clean, 1 with warnings, 0 unreadable\n"), "{s:?}");
    let s = on_tty(&format!("-q {files}"));
    assert!(!s.contains("clean"), "-q prints nothing: {s:?}");
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
    assert!(o.stdout.is_empty(), "notes only with -v: {}", stdout(&o));
    let o = run(&["check", "-v", p.to_str().unwrap()]);
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
    let input = std::fs::read(fixture("cr_only.bvh")).unwrap();
    let o = run_with_stdin(Path::new("."), &["fmt", "-"], &input);
    assert!(o.status.success());
    assert!(stdout(&o).starts_with("HIERARCHY\nROOT Hips\n{\n\tOFFSET 0 0 0\n"));

    let src = tempfile::tempdir().unwrap();
    let sub = src.path().join("sub");
    std::fs::create_dir(&sub).unwrap();
    std::fs::copy(fixture("crlf.bvh"), sub.join("a.BVH")).unwrap();
    std::fs::copy(fixture("bom.bvh"), src.path().join("b.bvh")).unwrap();
    std::fs::write(src.path().join("notes.txt"), "not bvh").unwrap();
    let out = tempfile::tempdir().unwrap();
    run_ok(&["fmt", src.path().to_str().unwrap(), "-o", out.path().to_str().unwrap()]);
    let mut names: Vec<String> = std::fs::read_dir(out.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(names, ["b.bvh", "sub"], "folders are kept");
    assert!(out.path().join("sub/a.BVH").is_file());
}

#[test]
fn fmt_directories_keep_their_folders_and_never_collide() {
    let src = tempfile::tempdir().unwrap();
    for sub in ["a", "b", "a/deep"] {
        std::fs::create_dir_all(src.path().join(sub)).unwrap();
    }
    for f in ["a/x.bvh", "b/x.bvh", "a/deep/y.bvh", "z.bvh"] {
        std::fs::copy(fixture("one_line.bvh"), src.path().join(f)).unwrap();
    }
    let d = src.path().to_str().unwrap();
    // A directory without -o or --in-place: one error, nothing written.
    let o = run(&["fmt", d]);
    assert_eq!(o.status.code(), Some(2));
    assert_eq!(stderr(&o).lines().count(), 1, "{}", stderr(&o));
    assert!(stderr(&o).contains("needs -o OUTDIR"), "{}", stderr(&o));
    assert!(o.stdout.is_empty());
    let o = run(&["fmt", &fx("crlf.bvh"), &fx("bom.bvh")]);
    assert_eq!(o.status.code(), Some(2));
    assert_eq!(stderr(&o).lines().count(), 1, "{}", stderr(&o));

    // -o OUT recreates the folders.
    let out = tempfile::tempdir().unwrap();
    run_ok(&["fmt", d, "-o", out.path().to_str().unwrap()]);
    let canonical = std::fs::read_to_string(fixture("crlf.bvh")).unwrap().replace("\r\n", "\n");
    for f in ["a/x.bvh", "b/x.bvh", "a/deep/y.bvh", "z.bvh"] {
        assert_eq!(std::fs::read_to_string(out.path().join(f)).unwrap(), canonical, "{f}");
    }

    // Two inputs that would land on one output: an error before anything is written.
    let out = tempfile::tempdir().unwrap();
    let a = src.path().join("a");
    let b = src.path().join("b");
    let o = run(&[
        "fmt",
        &fx("crlf.bvh"),
        a.to_str().unwrap(),
        b.to_str().unwrap(),
        "-o",
        out.path().to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(2));
    let e = stderr(&o);
    assert!(e.contains("a/x.bvh and ") && e.contains("b/x.bvh would both be written to"), "{e}");
    assert_eq!(std::fs::read_dir(out.path()).unwrap().count(), 0, "nothing written");

    // Several inputs and -o naming an existing file: one error.
    let file = out.path().join("file.bvh");
    std::fs::write(&file, "x").unwrap();
    let o = run(&["fmt", d, "-o", file.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2));
    assert_eq!(stderr(&o).lines().count(), 1, "{}", stderr(&o));
    assert!(stderr(&o).contains("need -o to name a directory"), "{}", stderr(&o));
}

#[test]
fn fmt_refuses_repairs_that_invent_or_discard_values() {
    let dir = tempfile::tempdir().unwrap();
    let cut = fx("last_row_cut.bvh");
    let out = dir.path().join("out.bvh");
    let o = run(&["fmt", &cut, "-o", out.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("not written: the repair discards 4 values of an incomplete last frame (line 21); --repair writes it anyway"),
        "{}",
        stderr(&o)
    );
    assert!(!out.exists());
    run_ok(&["fmt", &cut, "-o", out.to_str().unwrap(), "--repair"]);
    let repaired = bvhkit::Bvh::parse(std::fs::read(&out).unwrap()).unwrap();
    assert_eq!(repaired.motion().n_frames(), 2);
    // Lossless repairs need no option.
    run_ok(&["fmt", &fx("frames_too_many.bvh")]);
    run_ok(&["fmt", &fx("no_final_newline.bvh")]);

    let Some(corpus) = corpus() else { return };
    let f = corpus.join("malformed_132_channels_66_values_per_row.bvh");
    let f = f.to_str().unwrap();
    let out = dir.path().join("out132.bvh");
    let o = run(&["fmt", f, "-o", out.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains(
            "the repair invents 2970 values: sets the last 66 of 132 channels to 0 on each of \
             the 45 motion lines from line 276, which hold 66 values"
        ),
        "{}",
        stderr(&o)
    );
    assert!(!out.exists());
    run_ok(&["fmt", f, "-o", out.to_str().unwrap(), "--repair"]);
    let repaired = bvhkit::Bvh::parse(std::fs::read(&out).unwrap()).unwrap();
    assert_eq!(repaired.motion().n_frames(), 45);
    assert!(repaired.motion().frame(0)[66..].iter().all(|&v| v == 0.0));
    // The whole corpus: exactly the two files whose repair invents values are refused.
    let all = tempfile::tempdir().unwrap();
    let o = run(&["fmt", corpus.to_str().unwrap(), "-o", all.path().to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2));
    let e = stderr(&o);
    let refused: Vec<&str> = e.lines().filter(|l| l.contains("not written")).collect();
    assert_eq!(refused.len(), 2, "{}", stderr(&o));
    assert!(refused[1].contains("malformed_no_motion_keyword_no_frame_time.bvh: not written: the repair invents a Frame Time of 1/30 s"));
    assert_eq!(std::fs::read_dir(all.path()).unwrap().count(), 39);
}

/// `bvh edit`, `clean`, `concat`, `blend` and `layer` refuse what `bvh fmt`
/// refuses (a repair that invents or discards values), with its message,
/// and write it with `--repair`; streamed or on the whole clip.
#[test]
fn writing_commands_refuse_repairs_that_invent_or_discard_values_as_fmt_does() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out.bvh");
    let o = out.to_str().unwrap();
    // Each command line with `{}` for the malformed input.
    let lines: [&[&str]; 9] = [
        &["edit", "{}", "--scale", "2"],
        &["edit", "{}", "--rest-pose", "0"],
        &["edit", "{}", "--reverse"],
        &["clean", "{}", "--spikes"],
        &["clean", "{}", "--one-euro", "1,0.1"],
        &["clean", "{}", "--remove-drift"],
        &["concat", "{}", "{}"],
        &["blend", "{}", "{}", "--weight", "0.5"],
        &["layer", "{}", "{}"],
    ];
    let check = |input: &str, refused: Option<&str>| {
        for line in lines {
            let mut args: Vec<&str> =
                line.iter().map(|a| if *a == "{}" { input } else { *a }).collect();
            args.extend(["-o", o]);
            let _ = std::fs::remove_file(&out);
            let r = run(&args);
            match refused {
                Some(why) => {
                    assert_eq!(r.status.code(), Some(2), "{args:?}: {}", stderr(&r));
                    let e = stderr(&r);
                    assert!(
                        e.contains(&format!("{input}: not written: the repair {why}"))
                            && e.contains("; --repair writes it anyway"),
                        "{args:?}: {e}"
                    );
                    assert!(!out.exists(), "{args:?}: written");
                    args.push("--repair");
                    run_ok(&args);
                    assert!(out.exists(), "{args:?}: not written");
                }
                None => {
                    // Some (a crossfade of a one-frame clip, ...) refuse for
                    // reasons of their own, never this one.
                    let e = stderr(&r);
                    assert!(!e.contains("not written"), "{args:?}: {e}");
                }
            }
        }
        // `--dry-run` writes nothing: nothing to refuse.
        let r = run(&["clean", input, "--remove-drift", "--dry-run"]);
        assert!(!stderr(&r).contains("not written"), "{}", stderr(&r));
    };
    check(&fx("last_row_cut.bvh"), Some("discards 4 values of an incomplete last frame (line 21)"));
    check(&fx("frame_time_missing.bvh"), Some("invents a Frame Time of 1/30 s"));
    // Repairs that lose nothing are made without asking.
    check(&fx("frames_too_many.bvh"), None);

    // The corpus's malformed files: refused exactly where `bvh fmt` refuses them.
    let Some(corpus) = corpus() else { return };
    let mut refusals = 0;
    for name in [
        "malformed_132_channels_66_values_per_row.bvh",
        "malformed_frames_1352_but_1_row.bvh",
        "malformed_frames_3069_rows_3070_boxing_toes.bvh",
        "malformed_hierarchy_only_no_motion_kinect.bvh",
        "malformed_no_motion_keyword_no_frame_time.bvh",
    ] {
        let f = corpus.join(name);
        let f = f.to_str().unwrap();
        let fmt = run(&["fmt", f, "-o", o]);
        let e = stderr(&fmt);
        match e.split_once(": not written: the repair ") {
            Some((_, why)) => {
                refusals += 1;
                check(f, Some(why.split("; --repair").next().unwrap()));
            }
            None => check(f, None),
        }
    }
    assert_eq!(refusals, 2);
}

#[test]
fn no_command_writes_over_its_input() {
    let dir = tempfile::tempdir().unwrap();
    let a = dir.path().join("a.bvh");
    std::fs::copy(fixture("crlf.bvh"), &a).unwrap();
    let original = std::fs::read(&a).unwrap();
    let link = dir.path().join("hard.csv");
    std::fs::hard_link(&a, &link).unwrap();
    std::fs::hard_link(&a, dir.path().join("hard.gif")).unwrap();
    #[cfg(unix)]
    std::os::unix::fs::symlink(&a, dir.path().join("soft.bvh")).unwrap();
    let same = |name: &str| dir.path().join(name).to_string_lossy().into_owned();
    let dotted = format!("{}/./a.bvh", dir.path().display());
    let a = a.to_string_lossy().into_owned();
    let cases: Vec<Vec<String>> = vec![
        vec!["positions".into(), a.clone(), "-o".into(), a.clone()],
        vec!["positions".into(), a.clone(), "-o".into(), dotted.clone()],
        vec!["positions".into(), a.clone(), "-o".into(), same("hard.csv")],
        vec![
            "rotations".into(),
            a.clone(),
            "-o".into(),
            same("soft.bvh"),
            "--format".into(),
            "csv".into(),
        ],
        vec!["render".into(), a.clone(), "-o".into(), same("hard.gif")],
        vec!["fmt".into(), a.clone(), "-o".into(), dotted.clone()],
        vec!["fmt".into(), a.clone(), "-o".into(), same("soft.bvh")],
        vec![
            "fmt".into(),
            dir.path().to_string_lossy().into_owned(),
            "-o".into(),
            dir.path().to_string_lossy().into_owned(),
        ],
    ];
    for args in cases {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let o = run(&args);
        assert_eq!(o.status.code(), Some(2), "{args:?}");
        assert!(stderr(&o).contains("refusing to overwrite it"), "{args:?}: {}", stderr(&o));
        assert_eq!(std::fs::read(&a).unwrap(), original, "{args:?}");
    }
    // --in-place is the one way to rewrite an input (this one has hard
    // links, which --break-links lets go: tests/cli/outputs.rs).
    run_ok(&["fmt", "--in-place", &a, "--break-links"]);
}

#[test]
fn unknown_output_extensions_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let f = fx("crlf.bvh");
    for (cmd, ext, planned) in [
        ("positions", "parquet", true),
        ("positions", "gltf", true),
        ("rotations", "glb", true),
        ("rotations", "npz", true),
        ("positions", "txt", false),
        ("rotations", "bvh", false),
    ] {
        let out = dir.path().join(format!("x.{ext}"));
        let o = run(&[cmd, &f, "-o", out.to_str().unwrap()]);
        assert_eq!(o.status.code(), Some(2), "{cmd} .{ext}");
        let e = stderr(&o);
        assert!(
            e.contains(&format!(
                "`.{ext}` is not an output of `bvh {cmd}`; accepted: .csv, .json, .npy (or --format)"
            )),
            "{e}"
        );
        assert_eq!(e.contains("`bvh export` writes .glb and .gltf"), planned, "{e}");
        assert!(!out.exists(), "{cmd} .{ext}");
    }
    // Accepted spellings, any case, and an explicit --format, still work.
    for (name, extra) in [("x.CSV", None), ("x.Json", None), ("x.dat", Some("csv"))] {
        let out = dir.path().join(name);
        let mut args = vec!["positions", f.as_str(), "-o", out.to_str().unwrap()];
        if let Some(fmt) = extra {
            args.extend(["--format", fmt]);
        }
        let o = run(&args);
        assert!(o.status.success(), "{name}: {}", stderr(&o));
    }
    assert!(std::fs::read_to_string(dir.path().join("x.Json")).unwrap().starts_with('{'));
    let o = run(&["render", &f, "-o", dir.path().join("x.webp").to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("must end in .png, .gif or .mp4"), "{}", stderr(&o));
    let csv = dir.path().join("x.csv");
    let o = run(&["fmt", &f, "-o", csv.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("`.csv` is not an output of `bvh fmt`"), "{}", stderr(&o));
    assert!(!csv.exists());
    // A directory spelled with a final slash is a directory, even before it exists.
    let sub = format!("{}/new/", dir.path().display());
    run_ok(&["fmt", &f, "-o", &sub]);
    assert!(dir.path().join("new/crlf.bvh").is_file());
}

#[test]
fn bad_ranges_and_numbers_are_refused_with_the_valid_range() {
    let f = fx("crlf.bvh");
    let dir = tempfile::tempdir().unwrap();
    let gif = dir.path().join("x.gif");
    let gif = gif.to_str().unwrap();
    let max = u64::MAX.to_string();
    let cases: Vec<(Vec<&str>, String)> = vec![
        (
            vec!["positions", &f, "--frames", "10..5"],
            "frame range 10..5 is empty: B must be greater than A".into(),
        ),
        (
            vec!["rotations", &f, "--frames", &max],
            format!("frame number {max} is too large (at most 4294967295)"),
        ),
        (vec!["positions", &f, "--frames=-3.."], "'-3' is not a frame number".into()),
        (vec!["render", &f, "-o", gif, "--frames", "4..=2"], "frame range 4..=2 is empty".into()),
        (
            vec!["render", &f, "-o", gif, "--frames", "5..9"],
            "frame range 5..9 selects no frame: the clip has 2 frames (0..2)".into(),
        ),
    ];
    let mut cases = cases;
    for (flag, value, what, range) in [
        ("--fps", "nan", "frame rate", "above 0 and at most 1000 frames per second"),
        ("--fps", "inf", "frame rate", "above 0 and at most 1000 frames per second"),
        ("--fps", "-24", "frame rate", "above 0 and at most 1000 frames per second"),
        ("--fps", "0", "frame rate", "above 0 and at most 1000 frames per second"),
        ("--azimuth", "NaN", "azimuth", "from -360 to 360 degrees"),
        ("--azimuth", "720", "azimuth", "from -360 to 360 degrees"),
        ("--elevation", "-inf", "elevation", "from -89 to 89 degrees"),
        ("--elevation", "95", "elevation", "from -89 to 89 degrees"),
    ] {
        cases.push((
            vec!["render", &f, "-o", gif, flag, value],
            format!("'{value}' is not a valid {what}: expected a number {range}"),
        ));
    }
    for (args, message) in cases {
        let o = run(&args);
        assert_eq!(o.status.code(), Some(2), "{args:?}");
        let e = stderr(&o);
        assert!(e.contains(&message), "{args:?}: {e}");
        assert!(!e.contains("18446744073709551615") || message.contains(&max), "{e}");
        assert!(!e.contains("panicked"), "{e}");
    }
    assert!(!Path::new(gif).exists());
    run_ok(&["render", &f, "-o", gif, "--fps", "12.5", "--azimuth", "-360", "--elevation", "89"]);
}

/// Runs `bvh ARGS` with standard output to a file and at most 1 GB of
/// address space (`ulimit -v`), killing it after `limit`.
fn run_bounded(args: &[&str], out: &Path, limit: std::time::Duration) -> std::process::ExitStatus {
    let mut child = Command::new("sh")
        .args(["-c", "ulimit -v 1000000 && exec \"$0\" \"$@\"", env!("CARGO_BIN_EXE_bvh")])
        .args(args)
        .stdout(std::fs::File::create(out).unwrap())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let start = std::time::Instant::now();
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            return status;
        }
        if start.elapsed() > limit {
            child.kill().unwrap();
            child.wait().unwrap();
            panic!("bvh {args:?} ran longer than {limit:?}");
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
}

#[test]
fn info_of_a_hierarchy_100000_deep_is_linear() {
    let n = 100_000;
    let mut text = String::from(
        "HIERARCHY\nROOT J0\n{\nOFFSET 0 0 0\nCHANNELS 3 Zrotation Xrotation Yrotation\n",
    );
    for i in 1..n {
        text.push_str(&format!("JOINT J{i}\n{{\nOFFSET 0 1 0\nCHANNELS 0\n"));
    }
    text.push_str("End Site\n{\nOFFSET 0 1 0\n}\n");
    text.push_str(&"}\n".repeat(n));
    text.push_str("MOTION\nFrames: 1\nFrame Time: 0.1\n1 2 3\n");
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("deep.bvh");
    std::fs::write(&f, text).unwrap();
    let out = dir.path().join("out.txt");
    let f = f.to_str().unwrap();
    // Debug build on a shared 2-core machine: a generous limit; the quadratic
    // drawing took minutes and 23 GB.
    let limit = std::time::Duration::from_secs(120);
    let status = run_bounded(&["info", f], &out, limit);
    assert!(status.success(), "{status:?}");
    let joints = n + 1;
    let size = std::fs::metadata(&out).unwrap().len();
    // At most 64 levels of indentation (3 bytes each) plus prefix and name per line.
    assert!(size < 260 * joints as u64, "{size} bytes for {joints} joints");
    let s = std::fs::read_to_string(&out).unwrap();
    let tree: Vec<&str> = s.lines().skip_while(|l| *l != "  hierarchy:").skip(1).collect();
    assert_eq!(tree.len(), joints);
    assert_eq!(tree[0], "    J0  [Zrot Xrot Yrot]");
    assert_eq!(tree[1], "    └─ J1");
    assert_eq!(tree[64], format!("    {}└─ J64", "   ".repeat(63)));
    assert_eq!(tree[65], format!("    {}[depth 65] └─ J65", "   ".repeat(63)));
    assert_eq!(tree[n], format!("    {}[depth {n}] └─ J{}_End", "   ".repeat(63), n - 1));
    assert!(tree.iter().all(|l| l.chars().count() < 260));

    let status = run_bounded(&["info", "--json", f], &out, limit);
    assert!(status.success(), "{status:?}");
    let v: serde_json::Value = serde_json::from_slice(&std::fs::read(&out).unwrap()).unwrap();
    assert_eq!(v["hierarchy"].as_array().unwrap().len(), joints);
    assert_eq!(v["hierarchy"][n]["parent"], n - 1);
}

#[test]
fn text_from_files_never_reaches_the_terminal_raw() {
    let dir = tempfile::tempdir().unwrap();
    // Joint names with a screen-clearing escape, a C1 CSI, a bell and a
    // right-to-left override; a file name with an escape; a bad token with one.
    let evil = "HIERARCHY\nROOT Hips\u{1b}[2J\u{9b}31m\u{202e}\n{\nOFFSET 0 0 0\n\
                CHANNELS 3 Zrotation Xrotation Yrotation\nJOINT A\u{7}b\n{\nOFFSET 0 1 0\n\
                CHANNELS 0\nEnd Site\n{\nOFFSET 0 1 0\n}\n}\n}\nMOTION\nFrames: 2\n\
                Frame Time: 0.1\n1 2 3\n";
    let f = dir.path().join("evil\u{1b}]0;owned\u{7}.bvh");
    std::fs::write(&f, evil).unwrap();
    let bad = dir.path().join("bad.bvh");
    std::fs::write(&bad, "HIERARCHY\nROOT A\n{\nOFFSET 0 0 \u{202e}\u{1b}[2Jx\n}").unwrap();
    let f = f.to_str().unwrap();
    let b = bad.to_str().unwrap();
    let d = dir.path().to_str().unwrap();
    let out = dir.path().join("out");
    let o_out = out.to_str().unwrap();
    // Messages are escaped; data (BVH from fmt, CSV) is the file's text, exactly,
    // so only standard error is looked at when standard output is data.
    let runs: Vec<(Vec<&str>, bool)> = vec![
        (vec!["info", f], true),
        (vec!["info", b], true),
        (vec!["check", "-v", d], true),
        (vec!["fmt", f], false),
        (vec!["fmt", d, "-o", o_out], true),
        (vec!["positions", f, "--joints", "Nope"], true),
        (vec!["positions", f], false),
        (vec!["rotations", f, "--repr", "euler"], false),
        (vec!["positions", b], true),
    ];
    let unsafe_char =
        |c: char| (c.is_control() && c != '\n') || ('\u{202a}'..='\u{202e}').contains(&c);
    let mut seen = String::new();
    for (args, messages_on_stdout) in runs {
        let o = run(&args);
        let printed =
            if messages_on_stdout { String::from_utf8_lossy(&o.stdout) } else { "".into() };
        let both = format!("{printed}{}", stderr(&o));
        if let Some(c) = both.chars().find(|&c| unsafe_char(c)) {
            panic!("{args:?} printed {c:?} raw: {both:?}");
        }
        seen.push_str(&both);
    }
    assert!(seen.contains("Hips\\x1b[2J\\u{9b}31m\\u{202e}"), "{seen}");
    assert!(seen.contains("A\\x07b"), "{seen}");
    assert!(seen.contains("evil\\x1b]0;owned\\x07.bvh"), "{seen}");
    assert!(seen.contains("found '\\u{202e}\\x1b[2Jx'"), "{seen}");
    // JSON carries the exact name, every unsafe character as a \u escape.
    for args in [vec!["info", "--json", f], vec!["positions", f, "--format", "json"]] {
        let o = run(&args);
        let s = stdout(&o);
        assert!(!s.chars().any(unsafe_char), "{args:?}: {s:?}");
        assert!(s.contains(r"Hips\u001b[2J\u009b31m\u202e"), "{args:?}: {s}");
        let v: serde_json::Value = serde_json::from_str(&s).unwrap();
        let name = if args[0] == "info" { &v["roots"][0] } else { &v["joints"][0] };
        assert_eq!(name, "Hips\u{1b}[2J\u{9b}31m\u{202e}");
    }
}

#[test]
fn positions_csv_json_npy_agree_with_the_library() {
    let f = fx("two_roots.bvh");
    let bvh = bvhkit::Bvh::parse(std::fs::read(fixture("two_roots.bvh")).unwrap()).unwrap();
    let fk = bvhkit::Kinematics::new(bvh.skeleton(), bvhkit::PositionChannels::Replace);
    let all = fk.positions_all(bvh.motion());
    let n = bvh.skeleton().len();

    let o = run_ok(&["positions", &f]);
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
    run_ok(&["positions", &f, "-o", out.to_str().unwrap(), "--dtype", "f64"]);
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
    let side: serde_json::Value =
        serde_json::from_slice(&std::fs::read(dir.path().join("p.npy.json")).unwrap()).unwrap();
    assert_eq!(side["joints"], serde_json::json!(["Hips", "Spine", "Spine_End", "Prop"]));
    assert_eq!(side["dtype"], "float64");

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
        let o = run_ok(&args);
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
fn rotations_continuous_in_the_joints_own_order() {
    use bvhkit::rotation::{Axis, euler_to_mat3};
    // Zrotation jumps 0 -> 359 (that is, -1) -> 358 (-2) -> -2.
    let text = "HIERARCHY\nROOT Hips\n{\n\tOFFSET 0 0 0\n\tCHANNELS 3 Zrotation Xrotation Yrotation\n\
        \tEnd Site\n\t{\n\t\tOFFSET 0 1 0\n\t}\n}\nMOTION\nFrames: 4\nFrame Time: 0.1\n\
        0 10 20\n359 10 20\n358 10 20\n-2 10 20\n";
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("jump.bvh");
    std::fs::write(&f, text).unwrap();
    let f = f.to_str().unwrap();
    let rows = |extra: &[&str]| -> Vec<[f64; 3]> {
        let mut args = vec!["rotations", f, "--repr", "euler", "--joints", "Hips"];
        args.extend_from_slice(extra);
        let o = run_ok(&args);
        stdout(&o)
            .lines()
            .skip(1)
            .map(|l| {
                let v: Vec<f64> = l.split(',').skip(3).map(|x| x.parse().unwrap()).collect();
                [v[0], v[1], v[2]]
            })
            .collect()
    };
    // Without --continuous: the file's values, exactly.
    assert_eq!(
        rows(&[]),
        [[0.0, 10.0, 20.0], [359.0, 10.0, 20.0], [358.0, 10.0, 20.0], [-2.0, 10.0, 20.0]]
    );
    let cont = rows(&["--continuous"]);
    let expected = [[0.0, 10.0, 20.0], [-1.0, 10.0, 20.0], [-2.0, 10.0, 20.0], [-2.0, 10.0, 20.0]];
    let zxy = [Axis::Z, Axis::X, Axis::Y];
    for (k, (got, want)) in cont.iter().zip(expected).enumerate() {
        assert!(got.iter().zip(want).all(|(a, b)| (a - b).abs() < 1e-9), "frame {k}: {got:?}");
        // Still the file's rotation.
        let file =
            [[0.0, 10.0, 20.0], [359.0, 10.0, 20.0], [358.0, 10.0, 20.0], [-2.0, 10.0, 20.0]];
        let d = euler_to_mat3(&zxy, got) - euler_to_mat3(&zxy, &file[k]);
        assert!(d.to_cols_array().iter().all(|x| x.abs() < 1e-12), "frame {k}");
    }
    // Where the file's values are already continuous they are kept exactly.
    assert_eq!(cont[0], [0.0, 10.0, 20.0]);
    assert_eq!(cont[3], [-2.0, 10.0, 20.0]);
    // Every step is small.
    assert!(cont.windows(2).all(|w| (w[1][0] - w[0][0]).abs() <= 1.0 + 1e-9), "{cont:?}");
}

#[test]
fn long_help_explains_and_gives_an_example() {
    for cmd in ["info", "check", "fmt", "positions", "rotations", "render"] {
        let o = run(&[cmd, "--help"]);
        assert!(o.status.success());
        let s = stdout(&o);
        let paragraphs: Vec<&str> = s.split("\n\n").collect();
        assert!(paragraphs[1].len() > 300, "{cmd}: a paragraph that explains: {s}");
        assert!(
            paragraphs[2].starts_with(&format!("Example: bvh {cmd} ")),
            "{cmd}: an example: {s}"
        );
        let short = stdout(&run(&[cmd, "-h"]));
        assert!(!short.contains("Example:"), "-h stays short");
    }
    let s = stdout(&run(&["fmt", "--help"]));
    assert!(s.contains("--repair"), "{s}");
    // The capture commands end their long help with examples.
    for cmd in ["record", "replay"] {
        let s = stdout(&run(&[cmd, "--help"]));
        let examples = s.split("\n\nExamples:\n").nth(1).unwrap_or_else(|| panic!("{cmd}: {s}"));
        assert!(examples.starts_with(&format!("  bvh {cmd} ")), "{cmd}: {s}");
    }
    // replay needs -o or --to, and says both.
    let o = run(&["replay", &fx("crlf.bvh"), "--as", "sensors"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("<--output <OUT>|--to <ADDR>>"), "{}", stderr(&o));
    let o = run(&[
        "replay",
        &fx("crlf.bvh"),
        "--as",
        "sensors",
        "-o",
        "-",
        "--to",
        "udp://127.0.0.1:9",
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("cannot be used with"), "{}", stderr(&o));
}

#[test]
fn rotations_continuous_on_corpus_files_with_jumps() {
    use bvhkit::rotation::{RotationOrder, euler_to_mat3};
    let Some(dir) = corpus() else { return };
    // Rows of `frame,joint,order,a1,a2,a3` (joint names here hold no commas).
    let rows = |text: &str| -> Vec<(String, [f64; 3])> {
        text.lines()
            .skip(1)
            .map(|l| {
                let c: Vec<&str> = l.rsplitn(4, ',').collect();
                let order = c[3].rsplit(',').next().unwrap().to_string();
                (order, [c[2], c[1], c[0]].map(|v| v.parse::<f64>().unwrap()))
            })
            .collect()
    };
    for name in [
        "bvhio_test_example_tab_separated",
        "xia_style_angry_13_000",
        "fair_zombie_animated_drawings_xyz_yxz",
    ] {
        let f = dir.join(format!("{name}.bvh"));
        let f = f.to_str().unwrap();
        let joints = bvhkit::Bvh::parse(std::fs::read(f).unwrap()).unwrap().skeleton().len();
        let plain = run(&["rotations", f, "--repr", "euler"]);
        let cont = run(&["rotations", f, "--repr", "euler", "--continuous"]);
        assert!(plain.status.success() && cont.status.success(), "{name}");
        let (plain, cont) = (rows(&stdout(&plain)), rows(&stdout(&cont)));
        assert_eq!(plain.len(), cont.len());
        let jumps = |r: &[(String, [f64; 3])]| -> usize {
            (joints..r.len())
                .filter(|&i| r[i].1.iter().zip(r[i - joints].1).any(|(a, b)| (a - b).abs() > 180.0))
                .count()
        };
        assert!(jumps(&plain) > 0, "{name}: the file's angles jump");
        assert_eq!(jumps(&cont), 0, "{name}: continuous angles do not");
        for ((order, p), (_, c)) in plain.iter().zip(&cont) {
            let axes = RotationOrder::from_name(order).unwrap().axes();
            let d = euler_to_mat3(&axes, p) - euler_to_mat3(&axes, c);
            assert!(d.to_cols_array().iter().all(|x| x.abs() < 1e-9), "{name}: same rotation");
        }
    }
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
    let o = run_ok(&["info", "--json", d]);
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v.as_array().unwrap().len(), 41);
    let o = run(&["check", d]);
    assert_eq!(o.status.code(), Some(1));
    assert!(!stdout(&o).contains(": note: "), "notes only with -v");
    let o = run(&["check", "-v", "--summary", d]);
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(
        stderr(&o).trim_end(),
        "bvh: 41 files: 36 clean, 5 with warnings, 0 unreadable",
        "the summary is the last line"
    );
    let s = stdout(&o);
    let flagged: std::collections::BTreeSet<&str> = s
        .lines()
        .filter(|l| !l.contains(": note: "))
        .map(|l| Path::new(l.split(':').next().unwrap()).file_stem().unwrap().to_str().unwrap())
        .collect();
    assert!(flagged.iter().all(|f| f.starts_with("malformed_")), "{flagged:?}");
    assert_eq!(flagged.len(), 5, "{s}");
    assert!(s.contains("bandai_namco_ds1_kick_6ch_every_joint.bvh: note:"), "{s}");
    let o = run(&["check", "--strict", "--summary", d]);
    assert_eq!(o.status.code(), Some(2), "strict: the malformed files do not parse");
    assert!(stderr(&o).ends_with("36 clean, 0 with warnings, 5 unreadable\n"), "{}", stderr(&o));

    let f = dir.join("bandai_namco_ds1_kick_6ch_every_joint.bvh");
    let out = tempfile::tempdir().unwrap();
    let npy = out.path().join("x.npy");
    run_ok(&["positions", f.to_str().unwrap(), "-o", npy.to_str().unwrap()]);
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
    // `--port 0` prints the port it really got.
    let port: u16 = host.rsplit_once(':').unwrap().1.parse().unwrap();
    assert_ne!(port, 0, "{line}");
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

/// A port in use is an error that names a free port, which then works.
#[test]
fn serve_on_a_busy_port_names_a_free_one() {
    use std::io::BufRead;
    let busy = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = busy.local_addr().unwrap().port().to_string();
    let o = run(&["serve", &fx("two_roots.bvh"), "--port", &port]);
    assert_eq!(o.status.code(), Some(2));
    let err = stderr(&o);
    assert!(err.contains(&format!("port {port} on 127.0.0.1 is in use")), "{err}");
    let free = err.split("try --port ").nth(1).and_then(|r| r.split_whitespace().next());
    let free: u16 = free.unwrap_or_else(|| panic!("no port suggested: {err}")).parse().unwrap();
    assert_ne!(free.to_string(), port);
    // The suggestion is a port `bvh serve` can really listen on.
    let mut child = bvh()
        .args(["serve", &fx("two_roots.bvh"), "--port", &free.to_string()])
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut line = String::new();
    std::io::BufReader::new(child.stderr.take().unwrap()).read_line(&mut line).unwrap();
    child.kill().unwrap();
    let _ = child.wait();
    assert!(line.contains(&format!("http://127.0.0.1:{free}/")), "{line}");
    drop(busy);
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
        run_ok(&[
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
    }
    assert_eq!(std::fs::read(&a).unwrap(), std::fs::read(&b).unwrap(), "same input, same bytes");
    let (w, h, px) = decode_png(&a);
    assert_eq!((w, h), (160, 120));
    let channels = px.len() / (w * h) as usize;
    let non_white = px.chunks(channels).filter(|p| p[..3] != [255, 255, 255]).count();
    assert!(non_white > 200, "something is drawn: {non_white} pixels");

    let gif = dir.path().join("a.gif");
    run_ok(&["render", &fx("crlf.bvh"), "-o", gif.to_str().unwrap(), "--size", "64x48"]);
    assert!(std::fs::read(&gif).unwrap().starts_with(b"GIF89a"));

    let sheet = dir.path().join("s.png");
    run_ok(&[
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
    assert_eq!(decode_png(&sheet).0, 100);

    let o = run(&["render", &fx("crlf.bvh"), "-o", dir.path().join("x.jpg").to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains(".png, .gif or .mp4"));
    let o = run(&["render", &fx("crlf.bvh"), "-o", a.to_str().unwrap(), "--frame", "9"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("past the last frame"));
}

/// A contact sheet of no cells is refused before any file is read (it drew
/// one cell), and the help says what each default is: `--columns` is about
/// square (it showed `[default: 0]`), `loop --linear` replaces the quintic
/// weight (it said smoothstep, the cubic of `concat` and `blend`).
#[test]
fn render_cells_and_the_help_of_defaults() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("s.png");
    let args = ["render", "missing.bvh", "--contact-sheet", "--cells", "0", "-o"];
    let o = run(&[&args[..], &[out.to_str().unwrap()]].concat());
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("invalid value '0' for '--cells <N>'"), "{}", stderr(&o));
    assert!(!out.exists());
    // An option the output does not use is refused, not ignored (a still
    // drew frame 0 whatever --frames said; a GIF animated all of them
    // whatever --frame said; --columns 0 was taken).
    let walk = fx("crlf.bvh");
    let (gif, o) = (dir.path().join("a.gif"), out.to_str().unwrap());
    let g = gif.to_str().unwrap();
    let cases: [(&[&str], &[&str], &Path); 7] = [
        (
            &[&walk, "-o", o, "--frames", "1..3"],
            &["--frames", "a still .png draws one --frame N"],
            &out,
        ),
        (&[&walk, "-o", o, "--fps", "30"], &["--fps", "a .png has none"], &out),
        (&[&walk, "-o", g, "--frame", "2"], &["--frame N", "a .gif animates --frames"], &gif),
        (&[&walk, "-o", o, "--cells", "4"], &["--cells <N>", "--contact-sheet"], &out),
        (&[&walk, "-o", o, "--columns", "2"], &["--columns <N>", "--contact-sheet"], &out),
        (
            &[&walk, "-o", o, "--contact-sheet", "--columns", "0"],
            &["'0' for '--columns <N>'"],
            &out,
        ),
        (&["missing.bvh", "-o", o, "--frames", "1..3"], &["a still .png"], &out),
    ];
    for (args, want, written) in cases {
        refused(&[&["render"][..], args].concat(), want, written);
    }
    run_ok(&["render", &walk, "-o", o, "--contact-sheet", "--cells", "4", "--columns", "2"]);
    // A rate above a GIF's 50 fps is drawn at 50, with a note (it was
    // lowered without a word); 50 itself has none.
    let r = run_ok(&["render", &walk, "-o", g, "--size", "32x24", "--fps", "120"]);
    assert!(
        stderr(&r).contains("--fps 120: a .gif is drawn at 50 frames per second at most"),
        "{}",
        stderr(&r)
    );
    let r = run_ok(&["render", &walk, "-o", g, "--size", "32x24", "--fps", "50"]);
    assert!(!stderr(&r).contains("--fps"), "{}", stderr(&r));
    // Words as printed, whatever the wrapping.
    let words = |s: &str| s.split_whitespace().collect::<Vec<_>>().join(" ");
    let help = words(&stdout(&run_ok(&["render", "--help"])));
    let columns = help.split("--columns <N>").nth(1).unwrap().split("--size").next().unwrap();
    assert!(columns.contains("about square") && !columns.contains("[default: 0]"), "{columns}");
    let help = words(&stdout(&run_ok(&["loop", "--help"])));
    // The option's own line (the long text names --linear too).
    let linear =
        help.split("--linear A linear").nth(1).unwrap().split("--in-place").next().unwrap();
    assert!(
        linear.contains("10x^3 - 15x^4 + 6x^5") && !linear.contains("of smoothstep"),
        "{linear}"
    );
    // The edit's closing paragraph is filled, not cut into ragged lines
    // (one line of 127 characters, wrapped by clap, then ones of 40-54).
    let help = stdout(&run_ok(&["edit", "--help"]));
    let para = help.split("Every transform but").nth(1).unwrap();
    let lines: Vec<&str> = para.split("whole clip.").next().unwrap().lines().skip(1).collect();
    let (last, rest) = lines.split_last().unwrap();
    assert!(rest.iter().all(|l| (60..=80).contains(&l.len())) && last.len() <= 80, "{lines:#?}");
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
    run_ok(&[
        "view",
        file.to_str().unwrap(),
        "--frame",
        "30",
        "--size",
        "800x600",
        "--screenshot",
        shot.to_str().unwrap(),
    ]);
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
/// and shadow are grey), the same bytes twice; a file without motion is
/// drawn in its rest pose, with a note. Then two files in different units side by side: both
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
        assert!(o.status.success(), "{stem}: {}", stderr(&o));
        if stem == "malformed_hierarchy_only_no_motion_kinect" {
            assert!(
                stderr(&o).contains("no motion frames; drawing the rest pose"),
                "{}",
                stderr(&o)
            );
        }
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
    run_ok(&[
        "render",
        kick.to_str().unwrap(),
        "-o",
        gif.to_str().unwrap(),
        "--size",
        "80x60",
        "--fps",
        "10",
    ]);
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
    run_ok(&[
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
    let o = run_ok(&[
        "render",
        dir.join("cmu_01_01_walk_cgspeed_mb_names.bvh").to_str().unwrap(),
        dir.join("truebones_elephant_idle_6ch_every_joint.bvh").to_str().unwrap(),
        "-o",
        both.to_str().unwrap(),
        "--size",
        "320x180",
    ]);
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
    run_ok(&[
        "render",
        kick.to_str().unwrap(),
        "-o",
        mp4.to_str().unwrap(),
        "--size",
        "160x120",
        "--frames",
        "0..45",
    ]);
    let probe = Command::new("ffprobe")
        .args(["-v", "error", "-count_frames", "-select_streams", "v:0"])
        .args(["-show_entries", "stream=codec_name,width,height,nb_read_frames", "-of", "csv=p=0"])
        .arg(&mp4)
        .output()
        .unwrap();
    assert!(probe.status.success(), "{}", String::from_utf8_lossy(&probe.stderr));
    assert_eq!(String::from_utf8_lossy(&probe.stdout).trim(), "h264,160,120,45");
    // ffmpeg wrote the output's anonymous temporary file: no other name.
    let names: Vec<_> =
        std::fs::read_dir(out.path()).unwrap().map(|e| e.unwrap().file_name()).collect();
    assert_eq!(names, ["kick.mp4"]);
    // Through a symbolic link: the file it names is replaced, the link kept.
    let link = out.path().join("link.mp4");
    std::os::unix::fs::symlink(&mp4, &link).unwrap();
    let before = std::fs::read(&mp4).unwrap();
    run_ok(&["render", kick.to_str().unwrap(), "-o", link.to_str().unwrap(), "--size", "96x64"]);
    assert!(std::fs::symlink_metadata(&link).unwrap().file_type().is_symlink());
    assert_ne!(std::fs::read(&mp4).unwrap(), before);
}

/// Waits for `child` at most `secs` seconds; kills it and fails past that.
fn wait_bounded(mut child: std::process::Child, secs: u64) -> Output {
    let start = std::time::Instant::now();
    while child.try_wait().unwrap().is_none() {
        if start.elapsed().as_secs() > secs {
            let _ = child.kill();
            panic!("the child ran longer than {secs} s");
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    child.wait_with_output().unwrap()
}

/// `bvh ARGS` in a shell with its address space limited to `mib` MiB, so
/// that an unbounded read fails the test instead of filling the machine.
fn bvh_limited(mib: u64, args: &str) -> Command {
    let mut c = Command::new("sh");
    c.arg("-c").arg(format!(
        "ulimit -v {}; exec '{}' {args}",
        mib * 1024,
        env!("CARGO_BIN_EXE_bvh")
    ));
    c
}

#[test]
fn endless_input_stops_at_the_size_limit() {
    // `HIERARCHY` and then endless lines of numbers, from a child process.
    fn endless_header() -> std::process::Child {
        Command::new("sh")
            .args(["-c", "echo HIERARCHY; exec yes '0.5 1.5 2.5'"])
            .stdout(Stdio::piped())
            .spawn()
            .unwrap()
    }
    // A device that can start a BVH text, named as a file: read up to
    // --max-size only (one that cannot, such as /dev/zero, is refused
    // after its first 128 KiB: `io::input`'s tests and
    // `check_exit_2_when_a_file_does_not_parse`).
    let mut text = endless_header();
    let child = bvh_limited(512, "fmt --max-size 16M /dev/stdin")
        .stdin(text.stdout.take().unwrap())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let o = wait_bounded(child, 60);
    let _ = text.kill();
    let _ = text.wait();
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("/dev/stdin: more than 16 MiB (the --max-size limit"),
        "{}",
        stderr(&o)
    );

    // An endless pipe from a child process on standard input.
    let mut yes = endless_header();
    let pipe = yes.stdout.take().unwrap();
    let child = bvh_limited(512, "fmt --max-size 8M -")
        .stdin(pipe)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let o = wait_bounded(child, 60);
    let _ = yes.kill();
    let _ = yes.wait();
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("standard input: more than 8 MiB"), "{}", stderr(&o));
    assert!(o.stdout.is_empty(), "nothing is written");

    // The default limit is 4 GiB, and sizes take binary suffixes.
    let o = run(&["check", "--max-size", "lots", &fx("crlf.bvh")]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("'lots' is not a size"), "{}", stderr(&o));
    let help = stdout(&run(&["check", "--help"]));
    assert!(help.contains("--max-size") && help.contains("[default: 4G]"), "{help}");

    // Streaming commands stop at the first bad byte of an endless device.
    let child = bvh_limited(512, "positions /dev/zero")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let o = wait_bounded(child, 60);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).starts_with("bvh: error: /dev/zero:1:1:"), "{}", stderr(&o));
}

fn canonical(name: &str) -> Vec<u8> {
    let o = run_ok(&["fmt", &fx(name)]);
    o.stdout
}

#[cfg(unix)]
#[test]
fn outputs_to_devices_fifos_and_descriptors_are_written_through() {
    use std::os::unix::fs::FileTypeExt;
    let f = fx("crlf.bvh");
    let want = canonical("crlf.bvh");

    // /dev/null stays a device (as root, a rename would replace it).
    for args in [
        vec!["fmt", &f, "-o", "/dev/null"],
        vec!["positions", &f, "-o", "/dev/null", "--format", "npy"],
        vec!["rotations", &f, "-o", "/dev/null"],
    ] {
        let o = run(&args);
        assert!(o.status.success(), "{args:?}: {}", stderr(&o));
        let m = std::fs::symlink_metadata("/dev/null").unwrap();
        assert!(m.file_type().is_char_device(), "{args:?} replaced /dev/null");
    }

    // /dev/stdout is standard output.
    let o = run_ok(&["fmt", &f, "-o", "/dev/stdout"]);
    assert_eq!(o.stdout, want);

    // What `-o >(cmd)` passes: /dev/fd/N of a pipe.
    let o = Command::new("sh")
        .arg("-c")
        .arg(format!(
            "exec '{}' fmt '{f}' -o /dev/fd/3 3>&1 1>/dev/null",
            env!("CARGO_BIN_EXE_bvh")
        ))
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(o.stdout, want);

    // A FIFO is written into, and stays a FIFO; NPY too (it cannot seek).
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("fifo");
    assert!(Command::new("mkfifo").arg(&fifo).status().unwrap().success());
    for (args, check) in [
        (vec!["fmt", f.as_str()], Some(want.clone())),
        (vec!["positions", f.as_str(), "--format", "npy", "--dtype", "f64"], None),
    ] {
        let reader = {
            let fifo = fifo.clone();
            std::thread::spawn(move || std::fs::read(fifo).unwrap())
        };
        let mut args = args.clone();
        args.extend(["-o", fifo.to_str().unwrap()]);
        let o = run(&args);
        assert!(o.status.success(), "{args:?}: {}", stderr(&o));
        let got = reader.join().unwrap();
        match check {
            Some(w) => assert_eq!(got, w),
            None => {
                let (shape, data) = read_npy_f64(&got);
                let bvh = bvhkit::Bvh::parse(std::fs::read(fixture("crlf.bvh")).unwrap()).unwrap();
                let fk = bvhkit::Kinematics::new(bvh.skeleton(), bvhkit::PositionChannels::Replace);
                let all: Vec<f64> =
                    fk.positions_all(bvh.motion()).iter().flat_map(|p| p.to_array()).collect();
                assert_eq!(shape, vec![bvh.motion().n_frames(), bvh.skeleton().len(), 3]);
                assert_eq!(data, all);
            }
        }
        assert!(std::fs::symlink_metadata(&fifo).unwrap().file_type().is_fifo());
        let names: Vec<_> =
            std::fs::read_dir(dir.path()).unwrap().map(|e| e.unwrap().file_name()).collect();
        assert_eq!(names, vec![std::ffi::OsString::from("fifo")], "no sidecar or temporary file");
    }
}

#[cfg(unix)]
#[test]
fn symlinked_outputs_replace_the_target_and_keep_the_link_owner_and_mode() {
    use std::os::unix::fs::{MetadataExt, PermissionsExt};
    let dir = tempfile::tempdir().unwrap();
    let real_dir = dir.path().join("real");
    std::fs::create_dir(&real_dir).unwrap();
    let real = real_dir.join("walk.bvh");
    std::fs::copy(fixture("one_line.bvh"), &real).unwrap();
    std::fs::set_permissions(&real, std::fs::Permissions::from_mode(0o640)).unwrap();
    let root = rustix_uid() == 0;
    if root {
        std::os::unix::fs::chown(&real, Some(12345), Some(23456)).unwrap();
    } else {
        bvhkit_testdata::skip(
            "symlinked outputs keep the owner",
            "not root: cannot chown to another user",
        );
    }
    // A relative link in another folder, through a second link.
    let link = dir.path().join("link.bvh");
    std::os::unix::fs::symlink("real/walk.bvh", &link).unwrap();
    let link2 = dir.path().join("link2.bvh");
    std::os::unix::fs::symlink("link.bvh", &link2).unwrap();

    run_ok(&["fmt", "--in-place", link2.to_str().unwrap()]);
    for l in [&link, &link2] {
        assert!(std::fs::symlink_metadata(l).unwrap().file_type().is_symlink(), "the link stays");
    }
    assert_eq!(std::fs::read_link(&link).unwrap(), Path::new("real/walk.bvh"));
    assert_eq!(std::fs::read(&real).unwrap(), canonical("one_line.bvh"));
    let m = std::fs::metadata(&real).unwrap();
    assert_eq!(m.mode() & 0o7777, 0o640);
    if root {
        assert_eq!((m.uid(), m.gid()), (12345, 23456));
    }
    let names: Vec<_> =
        std::fs::read_dir(&real_dir).unwrap().map(|e| e.unwrap().file_name()).collect();
    assert_eq!(names, vec![std::ffi::OsString::from("walk.bvh")]);

    // -o through a link whose target does not exist yet creates the target.
    let dangling = dir.path().join("new.csv");
    std::os::unix::fs::symlink("real/new.csv", &dangling).unwrap();
    run_ok(&["positions", &fx("crlf.bvh"), "-o", dangling.to_str().unwrap()]);
    assert!(std::fs::symlink_metadata(&dangling).unwrap().file_type().is_symlink());
    assert!(
        std::fs::read_to_string(real_dir.join("new.csv"))
            .unwrap()
            .starts_with("frame,joint,x,y,z\n")
    );

    // A link loop is an error, and nothing is written.
    let a = dir.path().join("a.bvh");
    let b = dir.path().join("b.bvh");
    std::os::unix::fs::symlink("b.bvh", &a).unwrap();
    std::os::unix::fs::symlink("a.bvh", &b).unwrap();
    let o = run(&["fmt", &fx("crlf.bvh"), "-o", a.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("too many levels of symbolic links"), "{}", stderr(&o));
}

/// This process's real user id, from /proc (no libc in the tests).
fn rustix_uid() -> u32 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix("Uid:"))
        .and_then(|v| v.split_whitespace().next()?.parse().ok())
        .unwrap_or(u32::MAX)
}

#[cfg(target_os = "linux")]
#[test]
fn a_killed_writer_leaves_only_the_old_file() {
    let src = tempfile::tempdir().unwrap();
    let input = src.path().join("big.bvh");
    std::fs::write(&input, bvhkit_testdata::synth_text_of_size(3, 20_000_000)).unwrap();
    let dir = tempfile::tempdir().unwrap();
    for (cmd, name) in [("positions", "out.csv"), ("fmt", "out.bvh")] {
        let out = dir.path().join(name);
        std::fs::write(&out, "the old file\n").unwrap();
        let mut child = bvh()
            .args([cmd, input.to_str().unwrap(), "-o", out.to_str().unwrap()])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        // Wait until the child holds an unnamed file in `dir` with data in it.
        let fds = format!("/proc/{}/fd", child.id());
        let start = std::time::Instant::now();
        let mut seen = None;
        while seen.is_none() && start.elapsed().as_secs() < 120 {
            assert!(child.try_wait().unwrap().is_none(), "{cmd} finished before it was killed");
            for e in std::fs::read_dir(&fds).into_iter().flatten().flatten() {
                let Ok(target) = std::fs::read_link(e.path()) else { continue };
                let t = target.to_string_lossy().into_owned();
                let size = std::fs::metadata(e.path()).map(|m| m.len()).unwrap_or(0);
                if t.starts_with(dir.path().to_str().unwrap()) && size > 100_000 {
                    seen = Some(t);
                }
            }
        }
        child.kill().unwrap();
        child.wait().unwrap();
        let t = seen.expect("the child never wrote into the output folder");
        assert!(t.ends_with("(deleted)"), "the file being written has no name: {t}");
        let names: Vec<_> =
            std::fs::read_dir(dir.path()).unwrap().map(|e| e.unwrap().file_name()).collect();
        assert_eq!(names, vec![std::ffi::OsString::from(name)], "{cmd}: only the old file");
        assert_eq!(std::fs::read_to_string(&out).unwrap(), "the old file\n");
        std::fs::remove_file(&out).unwrap();
    }
}

#[cfg(unix)]
#[test]
fn walking_reports_and_skips_what_it_cannot_follow() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    let d = dir.path().join("mocap");
    std::fs::create_dir(&d).unwrap();
    std::fs::copy(fixture("last_row_cut.bvh"), d.join("cut.bvh")).unwrap();
    std::fs::copy(fixture("crlf.bvh"), d.join("ok.bvh")).unwrap();
    std::os::unix::fs::symlink("nowhere.bvh", d.join("broken.bvh")).unwrap();
    std::os::unix::fs::symlink(".", d.join("loop")).unwrap();
    let locked = d.join("locked");
    std::fs::create_dir(&locked).unwrap();
    std::fs::copy(fixture("crlf.bvh"), locked.join("hidden.bvh")).unwrap();
    std::fs::set_permissions(&locked, std::fs::Permissions::from_mode(0o000)).unwrap();
    let ds = d.to_str().unwrap();

    let o = run(&["check", ds]);
    assert_eq!(o.status.code(), Some(2), "something was skipped: {}", stderr(&o));
    let err = stderr(&o);
    assert!(
        err.contains(&format!(
            "bvh: warning: {ds}/broken.bvh: broken symbolic link (to nowhere.bvh); skipped"
        )),
        "{err}"
    );
    assert!(err.contains(&format!("bvh: warning: {ds}/loop: symbolic link loop")), "{err}");
    assert!(stdout(&o).contains("cut.bvh:21:1:"), "the other files are checked: {}", stdout(&o));

    // fmt and positions go on with the rest too.
    let out = dir.path().join("out");
    let o = run(&["fmt", ds, "-o", out.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert_eq!(std::fs::read(out.join("ok.bvh")).unwrap(), canonical("crlf.bvh"));
    let o = run(&["positions", ds, "-o", dir.path().join("pos/").to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(dir.path().join("pos/ok.csv").is_file() && dir.path().join("pos/cut.csv").is_file());

    // An unreadable folder: root reads anything, so check as `nobody`.
    let nobody = Command::new("setpriv")
        .args([
            "--reuid=65534",
            "--regid=65534",
            "--clear-groups",
            env!("CARGO_BIN_EXE_bvh"),
            "check",
            ds,
        ])
        .output();
    match nobody {
        Ok(o) if !stderr(&o).contains("setpriv:") => {
            assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
            let err = stderr(&o);
            assert!(
                err.contains(&format!("bvh: warning: {ds}/locked: permission denied; skipped")),
                "{err}"
            );
            assert!(stdout(&o).contains("cut.bvh:21:1:"), "{}", stdout(&o));
        }
        Ok(o) => bvhkit_testdata::skip("walking an unreadable folder", &stderr(&o)),
        Err(e) => bvhkit_testdata::skip("walking an unreadable folder", &format!("setpriv: {e}")),
    }
    std::fs::set_permissions(&locked, std::fs::Permissions::from_mode(0o755)).unwrap();
}

/// A tiny NPY reader: shape and `<f8` data.
fn read_npy_f64(bytes: &[u8]) -> (Vec<usize>, Vec<f64>) {
    assert_eq!(&bytes[..8], b"\x93NUMPY\x01\x00");
    let hlen = u16::from_le_bytes([bytes[8], bytes[9]]) as usize;
    let header = std::str::from_utf8(&bytes[10..10 + hlen]).unwrap();
    assert!(
        header.contains("'descr': '<f8'") && header.contains("'fortran_order': False"),
        "{header}"
    );
    let shape = header.split("'shape': (").nth(1).unwrap().split(')').next().unwrap();
    let shape: Vec<usize> = shape
        .split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(|s| s.parse().unwrap())
        .collect();
    let data: Vec<f64> = bytes[10 + hlen..]
        .chunks_exact(8)
        .map(|c| f64::from_le_bytes(c.try_into().unwrap()))
        .collect();
    assert_eq!(data.len(), shape.iter().product::<usize>());
    (shape, data)
}

#[test]
fn positions_and_rotations_of_folders_into_an_output_folder() {
    let dir = tempfile::tempdir().unwrap();
    let inp = dir.path().join("in");
    std::fs::create_dir_all(inp.join("sub/deeper")).unwrap();
    std::fs::copy(fixture("two_roots.bvh"), inp.join("two_roots.bvh")).unwrap();
    std::fs::copy(fixture("crlf.bvh"), inp.join("sub/deeper/crlf.BVH")).unwrap();
    std::fs::write(inp.join("sub/notes.txt"), "not BVH").unwrap();
    let extra = fixture("one_line.bvh");
    let out = dir.path().join("out");
    run_ok(&[
        "positions",
        inp.to_str().unwrap(),
        extra.to_str().unwrap(),
        "-o",
        &format!("{}/", out.display()),
        "--format",
        "npy",
        "--dtype",
        "f64",
        "-j",
        "2",
    ]);
    let mut made: Vec<String> = walk_names(&out);
    made.sort();
    assert_eq!(
        made,
        [
            "one_line.npy",
            "one_line.npy.json",
            "sub/deeper/crlf.npy",
            "sub/deeper/crlf.npy.json",
            "two_roots.npy",
            "two_roots.npy.json"
        ]
    );
    for (src, npy) in [
        (inp.join("two_roots.bvh"), "two_roots.npy"),
        (inp.join("sub/deeper/crlf.BVH"), "sub/deeper/crlf.npy"),
        (extra.clone(), "one_line.npy"),
    ] {
        // Against `bvh positions FILE` as CSV, the single-file form.
        let o = run(&["positions", src.to_str().unwrap()]);
        assert!(o.status.success());
        let rows = bvhkit_testdata::position_rows(&stdout(&o));
        let (shape, data) = read_npy_f64(&std::fs::read(out.join(npy)).unwrap());
        let side: serde_json::Value =
            serde_json::from_slice(&std::fs::read(out.join(format!("{npy}.json"))).unwrap())
                .unwrap();
        let joints: Vec<String> = side["joints"]
            .as_array()
            .unwrap()
            .iter()
            .map(|j| j.as_str().unwrap().to_string())
            .collect();
        assert_eq!(shape.len(), 3);
        assert_eq!(side["shape"], serde_json::json!(shape));
        assert_eq!(side["axes"], serde_json::json!(["frame", "joint", "component"]));
        assert_eq!(side["components"], serde_json::json!(["x", "y", "z"]));
        assert_eq!(
            side["array"],
            serde_json::json!(Path::new(npy).file_name().unwrap().to_str().unwrap())
        );
        assert_eq!(rows.len(), shape[0] * shape[1]);
        for (r, (frame, name, p)) in rows.iter().enumerate() {
            let (f, j) = (r / shape[1], r % shape[1]);
            assert_eq!((*frame, name.as_str()), (f, joints[j].as_str()));
            assert_eq!(&data[r * 3..r * 3 + 3], &p.to_array(), "{npy} frame {f} joint {name}");
        }
        // Parents, offsets and frame time against the library.
        let (bvh, _) =
            bvhkit::ReadOptions::new().lenient(true).parse(&std::fs::read(&src).unwrap()).unwrap();
        let s = bvh.skeleton();
        assert_eq!(joints, s.display_names());
        let parents: Vec<i64> =
            s.joints().iter().map(|j| j.parent().map_or(-1, |p| p.index() as i64)).collect();
        assert_eq!(side["parents"], serde_json::json!(parents));
        let offsets: Vec<[f64; 3]> = s.joints().iter().map(|j| j.offset().to_array()).collect();
        assert_eq!(side["offsets"], serde_json::json!(offsets));
        assert_eq!(side["frame_time"].as_f64(), Some(bvh.motion().frame_time()));
        let guess = bvhkit_render_guess(&bvh);
        assert_eq!(side["units"]["guess"].as_str(), Some(guess.as_str()), "{npy}");
    }

    // Rotations: one CSV per input, each the same as the single-file output.
    let rot = dir.path().join("rot");
    std::fs::create_dir(&rot).unwrap();
    run_ok(&[
        "rotations",
        inp.to_str().unwrap(),
        "-o",
        rot.to_str().unwrap(),
        "--repr",
        "euler",
        "-j",
        "1",
    ]);
    let single =
        run(&["rotations", inp.join("sub/deeper/crlf.BVH").to_str().unwrap(), "--repr", "euler"]);
    assert_eq!(std::fs::read(rot.join("sub/deeper/crlf.csv")).unwrap(), single.stdout);

    // A subset of joints: parents point at the nearest exported ancestor.
    let sub = dir.path().join("subset.npy");
    run_ok(&[
        "positions",
        &fx("two_roots.bvh"),
        "--joints",
        "Hips,Spine_End,Prop",
        "-o",
        sub.to_str().unwrap(),
    ]);
    let side: serde_json::Value =
        serde_json::from_slice(&std::fs::read(dir.path().join("subset.npy.json")).unwrap())
            .unwrap();
    assert_eq!(side["joints"], serde_json::json!(["Hips", "Spine_End", "Prop"]));
    assert_eq!(side["parents"], serde_json::json!([-1, 0, -1]));
    assert!(!dir.path().join("subset.joints.txt").exists(), "the sidecar replaces .joints.txt");

    // Several inputs need an output folder; two inputs never share an output.
    let o = run(&["positions", inp.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("several inputs need -o OUTDIR/"), "{}", stderr(&o));
    let o = run(&["positions", &fx("crlf.bvh"), &fx("crlf.bvh"), "-o", rot.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("would both be written to"), "{}", stderr(&o));
    // -o naming an existing file is not a folder: it gave "File exists (os
    // error 17)" once per input. (A new name becomes the folder.)
    let (two, out) = ([fx("crlf.bvh"), fx("bom.bvh")], dir.path().join("subset.npy"));
    let before = std::fs::read(&out).unwrap();
    for cmd in ["positions", "rotations"] {
        let r = run(&[cmd, &two[0], &two[1], "-o", out.to_str().unwrap()]);
        let e = stderr(&r);
        assert_eq!(r.status.code(), Some(2), "{e}");
        let want =
            format!("{}: several inputs need -o to name a folder, not a file", out.display());
        assert!(e.contains(&want) && !e.contains("os error"), "{e}");
        assert_eq!(std::fs::read(&out).unwrap(), before);
    }
    // One bad file among several: the others are written, the status says so.
    std::fs::write(inp.join("bad.bvh"), "HIERARCHY\nROOT\n").unwrap();
    let o = run(&[
        "positions",
        inp.to_str().unwrap(),
        "-o",
        dir.path().join("again/").to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("bad.bvh"), "{}", stderr(&o));
    assert!(dir.path().join("again/two_roots.csv").is_file());
    assert!(!dir.path().join("again/bad.csv").exists());
}

fn walk_names(root: &Path) -> Vec<String> {
    let mut out = Vec::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                stack.push(p);
            } else {
                out.push(p.strip_prefix(root).unwrap().to_string_lossy().into_owned());
            }
        }
    }
    out
}

/// The renderer's unit guess for a file, as the sidecar names it.
fn bvhkit_render_guess(bvh: &bvhkit::Bvh) -> String {
    bvhkit_render::units::UnitGuess::of_bvh(bvh, bvhkit::PositionChannels::Replace)
        .units
        .to_string()
}

#[test]
fn export_gltf_files_and_folders() {
    let dir = tempfile::tempdir().unwrap();
    let f = fx("crlf.bvh");
    let d = |n: &str| dir.path().join(n).to_string_lossy().into_owned();
    let o = run_ok(&["export", &f, "-o", &d("a.glb")]);
    assert!(stderr(&o).contains("to metres"), "the unit applied is said: {}", stderr(&o));
    let glb = std::fs::read(d("a.glb")).unwrap();
    assert_eq!(&glb[..4], b"glTF");
    assert_eq!(u32::from_le_bytes(glb[8..12].try_into().unwrap()) as usize, glb.len());
    // JSON with a side buffer, file numbers kept.
    run_ok(&["export", &f, "-o", &d("b.gltf"), "--bin-file", "--scale", "1", "--no-mesh"]);
    let doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(d("b.gltf")).unwrap()).unwrap();
    assert_eq!(doc["buffers"][0]["uri"], "b.bin");
    assert_eq!(doc["buffers"][0]["byteLength"], std::fs::metadata(d("b.bin")).unwrap().len());
    assert_eq!(doc["extras"]["bvhkit"]["metres_per_unit"], 1.0);
    assert!(doc.get("skins").is_none(), "--no-mesh");
    // Embedded buffer.
    run_ok(&["export", &f, "-o", &d("c.gltf")]);
    assert!(
        std::fs::read_to_string(d("c.gltf"))
            .unwrap()
            .contains("data:application/octet-stream;base64,")
    );
    // Several inputs: one file each under a folder.
    run_ok(&["export", &f, &fx("bom.bvh"), "-o", &format!("{}/out/", dir.path().display())]);
    assert!(dir.path().join("out/crlf.glb").is_file() && dir.path().join("out/bom.glb").is_file());
    let o = run(&["export", &f, &fx("bom.bvh"), "-o", &d("one.glb")]);
    assert_eq!(o.status.code(), Some(2), "several inputs to one file");
    // The dataset formats go to bvhkit-dataset (tested there); never over an input.
    for ext in ["parquet", "npz"] {
        run_ok(&["export", &f, "-o", &d(&format!("x.{ext}"))]);
        assert!(std::fs::metadata(d(&format!("x.{ext}"))).unwrap().len() > 0);
    }
    let a = d("in.glb");
    std::fs::copy(fixture("crlf.bvh"), &a).unwrap();
    let o = run(&["export", &a, "-o", &a]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("refusing to overwrite it"), "{}", stderr(&o));
    assert_eq!(std::fs::read(&a).unwrap(), std::fs::read(fixture("crlf.bvh")).unwrap());
}

/// `bvh export -o x.glb` streams the binary chunk into the file as its
/// frames are computed (pieces of 512 frames, each track sought to): its
/// chunks are the `.gltf --bin-file` pair's, made in memory (the same
/// document and the same buffer). A value that is not finite in a late
/// frame stops it with the joint and frame named, the old output kept
/// and no temporary file left.
#[test]
fn export_glb_streams_the_buffer_of_the_gltf_pair() {
    let dir = tempfile::tempdir().unwrap();
    let d = |n: &str| dir.path().join(n).to_string_lossy().into_owned();
    let frames = 3 * 512 + 100;
    let mut text = standing_figure_header(frames);
    for f in 0..frames {
        let t = f as f64;
        text.push_str(&format!(
            "{} 90 {} {} {} 3 {} 0 0 {} 1 2 0 0 {}\n",
            t * 0.1,
            (t * 0.05).sin(),
            7.0 * t - 3000.0,
            10.0 * (t * 0.05).sin(),
            11.0 * t,
            -5.0 * t,
            30.0 * (t * 0.02).cos(),
        ));
    }
    std::fs::write(d("walk.bvh"), &text).unwrap();
    run_ok(&["export", &d("walk.bvh"), "-o", &d("walk.glb")]);
    run_ok(&["export", &d("walk.bvh"), "-o", &d("walk.gltf"), "--bin-file"]);
    let glb = std::fs::read(d("walk.glb")).unwrap();
    assert_eq!(&glb[..4], b"glTF");
    assert_eq!(u32::from_le_bytes(glb[8..12].try_into().unwrap()) as usize, glb.len());
    let json_len = u32::from_le_bytes(glb[12..16].try_into().unwrap()) as usize;
    let mut json: serde_json::Value = serde_json::from_slice(&glb[20..20 + json_len]).unwrap();
    let bin_at = 20 + json_len;
    assert_eq!(&glb[bin_at + 4..bin_at + 8], b"BIN\0");
    let bin = std::fs::read(d("walk.bin")).unwrap();
    assert_eq!(u32::from_le_bytes(glb[bin_at..bin_at + 4].try_into().unwrap()) as usize, bin.len());
    assert!(glb[bin_at + 8..] == bin[..], "the streamed binary chunk is the .bin");
    let mut gltf: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(d("walk.gltf")).unwrap()).unwrap();
    assert_eq!(gltf["buffers"][0]["uri"], "walk.bin");
    gltf["buffers"][0].as_object_mut().unwrap().remove("uri");
    json["buffers"][0].as_object_mut().unwrap().remove("uri");
    assert_eq!(json, gltf);
    assert_eq!(json["animations"][0]["samplers"].as_array().unwrap().len(), 5);
    // Frame 1300's root X beyond f32: refused, the old .glb kept, nothing left.
    let lines: Vec<&str> = text.lines().collect();
    let at = lines.len() - frames + 1300;
    let bad: Vec<String> = lines
        .iter()
        .enumerate()
        .map(
            |(i, l)| {
                if i == at { l.replacen(&format!("{}", 130.0), "1e39", 1) } else { l.to_string() }
            },
        )
        .collect();
    assert!(bad[at].starts_with("1e39 "), "{}", bad[at]);
    std::fs::write(d("bad.bvh"), bad.join("\n") + "\n").unwrap();
    std::fs::copy(d("walk.glb"), d("bad.glb")).unwrap();
    let before: Vec<_> =
        std::fs::read_dir(dir.path()).unwrap().map(|e| e.unwrap().file_name()).collect();
    let o = run(&["export", &d("bad.bvh"), "-o", &d("bad.glb"), "--scale", "1", "--up", "keep"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("joint Hips, frame 1300: a value is not finite as a 32-bit float"),
        "{}",
        stderr(&o)
    );
    assert!(std::fs::read(d("bad.glb")).unwrap() == glb, "the old output is kept");
    let after: Vec<_> =
        std::fs::read_dir(dir.path()).unwrap().map(|e| e.unwrap().file_name()).collect();
    assert_eq!(before.len(), after.len(), "nothing left: {after:?}");
}

#[cfg(unix)]
#[test]
fn render_through_links_and_fifos() {
    use std::os::unix::fs::FileTypeExt;
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("real")).unwrap();
    let f = fx("two_roots.bvh");
    let mut exts = vec!["png", "gif"];
    let has_ffmpeg =
        Command::new("ffmpeg").arg("-version").output().is_ok_and(|o| o.status.success());
    if has_ffmpeg {
        exts.push("mp4");
    } else {
        bvhkit_testdata::skip(
            "render_through_links_and_fifos (mp4)",
            "no ffmpeg on PATH (apt-get install ffmpeg)",
        );
    }
    for ext in exts {
        // A link: its target is written, the link stays.
        let link = dir.path().join(format!("out.{ext}"));
        std::os::unix::fs::symlink(format!("real/out.{ext}"), &link).unwrap();
        let o = run(&["render", &f, "-o", link.to_str().unwrap(), "--size", "200x150"]);
        assert!(o.status.success(), "{ext}: {}", stderr(&o));
        assert!(std::fs::symlink_metadata(&link).unwrap().file_type().is_symlink(), "{ext}");
        let bytes = std::fs::read(dir.path().join(format!("real/out.{ext}"))).unwrap();
        let magic_ok = match ext {
            "png" => bytes.starts_with(b"\x89PNG"),
            "gif" => bytes.starts_with(b"GIF8"),
            _ => bytes.get(4..8) == Some(b"ftyp"),
        };
        assert!(magic_ok, "{ext}: not the expected file");
        // A FIFO: written into, never replaced.
        let fifo = dir.path().join(format!("fifo.{ext}"));
        assert!(Command::new("mkfifo").arg(&fifo).status().unwrap().success());
        let reader = {
            let fifo = fifo.clone();
            std::thread::spawn(move || std::fs::read(fifo).unwrap())
        };
        let o = run(&["render", &f, "-o", fifo.to_str().unwrap(), "--size", "200x150"]);
        assert!(o.status.success(), "{ext}: {}", stderr(&o));
        assert_eq!(reader.join().unwrap(), bytes, "{ext}: the same file through the FIFO");
        assert!(std::fs::symlink_metadata(&fifo).unwrap().file_type().is_fifo(), "{ext}");
    }
    let mut left: Vec<_> = std::fs::read_dir(dir.path().join("real"))
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    left.sort();
    assert!(
        left.iter().all(|n| !n.to_string_lossy().starts_with(".bvh-")),
        "no temporary file left: {left:?}"
    );
}

/// The pixels of `rgba` (`w` wide) whose hue is figure 0's (blue over red)
/// or figure 1's (orange: red over blue): the figure, its label's ink.
fn hue_pixels(rgba: &[u8], w: u32, blue: bool) -> Vec<(u32, u32)> {
    rgba.chunks_exact(4)
        .enumerate()
        .filter(|(_, p)| {
            let (r, b) = (i32::from(p[0]), i32::from(p[2]));
            if blue { b - r > 50 } else { r - b > 50 }
        })
        .map(|(i, _)| (i as u32 % w, i as u32 / w))
        .collect()
}

/// Bounding box `(x0, y0, x1, y1)` (inclusive) of `px`.
fn bbox(px: &[(u32, u32)]) -> (u32, u32, u32, u32) {
    px.iter().fold((u32::MAX, u32::MAX, 0, 0), |(x0, y0, x1, y1), &(x, y)| {
        (x0.min(x), y0.min(y), x1.max(x), y1.max(y))
    })
}

pub(crate) fn render_to(args: &[&str], png: &Path) -> Output {
    let mut all = vec!["render"];
    all.extend_from_slice(args);
    all.extend_from_slice(&["-o", png.to_str().unwrap()]);
    run(&all)
}

/// A still late in a long walk (the CMU walker travels about 90 units) is
/// framed on the figure in that frame: centred, and most of the picture's
/// height, where framing the whole path made it a small figure at one end.
/// Its file name is written right over it, and the frame number in the
/// corner; `--no-labels` leaves both out.
#[test]
fn a_still_is_framed_on_the_figure_and_labelled() {
    let Some(dir) = corpus() else { return };
    let walk = dir.join("cmu_01_01_walk_cgspeed_mb_names.bvh");
    let out = tempfile::tempdir().unwrap();
    let (bare, labelled) = (out.path().join("bare.png"), out.path().join("labelled.png"));
    let common = [walk.to_str().unwrap(), "--frame", "2500", "--size", "320x240"];
    let o = render_to(&[&common[..], &["--no-labels"]].concat(), &bare);
    assert!(o.status.success(), "{}", stderr(&o));
    let o = render_to(&common, &labelled);
    assert!(o.status.success(), "{}", stderr(&o));
    let (w, h, plain) = decode_png(&bare);
    let figure = hue_pixels(&plain, w, true);
    let (x0, y0, x1, y1) = bbox(&figure);
    let (cx, cy) = (f64::from(x0 + x1) / 2.0, f64::from(y0 + y1) / 2.0);
    assert!((cx - f64::from(w) / 2.0).abs() < 0.1 * f64::from(w), "figure x {x0}..{x1} of {w}");
    assert!((cy - f64::from(h) / 2.0).abs() < 0.15 * f64::from(h), "figure y {y0}..{y1} of {h}");
    assert!(f64::from(y1 - y0) > 0.6 * f64::from(h), "figure {y0}..{y1} of {h} high");
    // The label: what the labelled picture adds outside the figure.
    let (_, _, with) = decode_png(&labelled);
    let added: Vec<(u32, u32)> = hue_pixels(&with, w, true)
        .into_iter()
        .filter(|&(x, y)| !(x0..=x1).contains(&x) || !(y0..=y1).contains(&y))
        .collect();
    assert!(added.len() > 100, "only {} label pixels", added.len());
    let (lx0, ly0, lx1, ly1) = bbox(&added);
    let label_cx = f64::from(lx0 + lx1) / 2.0;
    assert!((label_cx - cx).abs() < 20.0, "label {lx0}..{lx1}, figure {x0}..{x1}");
    assert!(ly1 < y0 && y0 - ly1 < 20, "label rows {ly0}..{ly1} just over the figure at {y0}");
    // The frame number, dark grey, in the top-left corner.
    let ink = |rgba: &[u8]| {
        (0..20u32)
            .flat_map(|y| (0..60u32).map(move |x| (x, y)))
            .filter(|&(x, y)| rgba[((y * w + x) * 4) as usize] < 80)
            .count()
    };
    assert!(ink(&with) > 20 && ink(&plain) == 0, "{} {}", ink(&with), ink(&plain));
}

/// Two corpus files side by side: each figure has its file name over it,
/// in its own colour, shortened so that the two do not overlap.
#[test]
fn side_by_side_figures_are_labelled_with_their_file_names() {
    let Some(dir) = corpus() else { return };
    let out = tempfile::tempdir().unwrap();
    let files = [
        dir.join("cmu_01_01_walk_cgspeed_mb_names.bvh"),
        dir.join("pymo_demo_av_8walk_meredith.bvh"),
    ];
    let (bare, labelled) = (out.path().join("bare.png"), out.path().join("labelled.png"));
    let common = [files[0].to_str().unwrap(), files[1].to_str().unwrap(), "--frame", "300"];
    assert!(render_to(&[&common[..], &["--no-labels"]].concat(), &bare).status.success());
    let o = render_to(&common, &labelled);
    assert!(o.status.success(), "{}", stderr(&o));
    let (w, _, plain) = decode_png(&bare);
    let (_, _, with) = decode_png(&labelled);
    let mut spans = Vec::new();
    for blue in [true, false] {
        let (x0, y0, x1, y1) = bbox(&hue_pixels(&plain, w, blue));
        let added: Vec<(u32, u32)> = hue_pixels(&with, w, blue)
            .into_iter()
            .filter(|&(x, y)| !(x0..=x1).contains(&x) || !(y0..=y1).contains(&y))
            .collect();
        assert!(added.len() > 100, "figure {blue}: only {} label pixels", added.len());
        let (lx0, _, lx1, ly1) = bbox(&added);
        let (cx, lcx) = (f64::from(x0 + x1) / 2.0, f64::from(lx0 + lx1) / 2.0);
        assert!((lcx - cx).abs() < 40.0, "label {lx0}..{lx1}, figure {x0}..{x1}");
        assert!(ly1 < y0 && y0 - ly1 < 30, "label over the figure");
        spans.push((lx0, lx1));
    }
    assert!(spans[0].1 < spans[1].0, "labels overlap: {spans:?}");
}

/// One broken file in a directory is reported and skipped: the others are
/// drawn and the exit code is 2 (an input not read, as for every command;
/// 1 would say findings, as `check` and `lint` use it); with nothing left
/// to draw it is 2 too and no output is written. A file without motion
/// draws its rest pose.
#[test]
fn a_broken_file_in_a_directory_is_skipped() {
    let Some(dir) = corpus() else { return };
    let tmp = tempfile::tempdir().unwrap();
    let input = tmp.path().join("in");
    std::fs::create_dir(&input).unwrap();
    std::fs::copy(dir.join("cmu_01_01_walk_cgspeed_mb_names.bvh"), input.join("a_walk.bvh"))
        .unwrap();
    std::fs::copy(
        dir.join("malformed_hierarchy_only_no_motion_kinect.bvh"),
        input.join("c_still.bvh"),
    )
    .unwrap();
    std::fs::write(input.join("b_broken.bvh"), "HIERARCHY\nROOT Hips\n{\n  OFFSET 0 0\n").unwrap();
    let png = tmp.path().join("out.png");
    let o = render_to(&[input.to_str().unwrap(), "--size", "320x240"], &png);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    let err = stderr(&o);
    assert!(
        err.contains("b_broken.bvh:5:1: expected a number") && err.contains("skipped"),
        "{err}"
    );
    assert!(err.contains("c_still.bvh: no motion frames; drawing the rest pose"), "{err}");
    let (w, _, rgba) = decode_png(&png);
    assert!(hue_pixels(&rgba, w, true).len() > 200, "the walker is drawn");
    assert!(hue_pixels(&rgba, w, false).len() > 200, "the rest pose is drawn");
    // The same for an animation.
    let gif = tmp.path().join("out.gif");
    let o = render_to(&[input.to_str().unwrap(), "--size", "80x60", "--frames", "0..3"], &gif);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(std::fs::read(&gif).unwrap().starts_with(b"GIF89a"));
    // Nothing left.
    std::fs::remove_file(input.join("a_walk.bvh")).unwrap();
    std::fs::remove_file(input.join("c_still.bvh")).unwrap();
    let none = tmp.path().join("none.png");
    let o = render_to(&[input.to_str().unwrap()], &none);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("nothing to draw"), "{}", stderr(&o));
    assert!(!none.exists());
}

/// `clips.json` from `bvh serve FILE...`.
pub(crate) fn served_clips(files: &[&Path]) -> serde_json::Value {
    use std::io::BufRead;
    let mut child = bvh()
        .arg("serve")
        .args(files)
        .args(["--port", "0"])
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut err = std::io::BufReader::new(child.stderr.take().unwrap());
    let mut line = String::new();
    while !line.contains("http://") {
        line.clear();
        assert!(err.read_line(&mut line).unwrap() > 0, "bvh serve ended without serving");
    }
    let url = line.split_whitespace().find(|w| w.starts_with("http://")).unwrap();
    let host = url.trim_start_matches("http://").trim_end_matches('/').to_string();
    let mut s = std::net::TcpStream::connect(&host).unwrap();
    write!(s, "GET /clips.json HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n\r\n").unwrap();
    let mut resp = String::new();
    s.read_to_string(&mut resp).unwrap();
    child.kill().unwrap();
    let _ = child.wait();
    serde_json::from_str(&resp[resp.find("\r\n\r\n").unwrap() + 4..]).unwrap()
}

/// One unit guess everywhere: for corpus files whose rest pose, first
/// frame and typical frame differ in size (the Rokoko dance is 130 units
/// at rest, 154 in its first frame and 160 in its median frame; the
/// MakeHuman bind pose collapses when every channel is 0), `bvh render`
/// (its note on drawing files at one scale), `bvh serve` (`clips.json`) and
/// `bvh view` (its screenshot sidecar) report the same unit and size, the
/// library's guess from the positions drawn.
#[test]
fn render_serve_and_view_guess_the_same_units() {
    use bvhkit_render::units::of_clip;
    let Some(dir) = corpus() else { return };
    let metres = dir.join("shadermotion_vrchat_tab_separated.bvh");
    for stem in [
        "rokoko_jesse_dance_yxz_fingers",
        "makehuman_163_joints_6ch_every_joint_deep",
        "kinect_v1_custom_writer_nonzero_root_offset",
        "cmu_01_01_walk_cgspeed_mb_names",
    ] {
        let file = dir.join(format!("{stem}.bvh"));
        let (bvh, _) =
            bvhkit::ReadOptions::new().lenient(true).parse(&std::fs::read(&file).unwrap()).unwrap();
        let mode = bvhkit::PositionChannels::Replace;
        let guess = of_clip(&bvhkit_render::Clip::from_bvh(&bvh, stem, mode));
        // The same unit, size and label; a limb length that decided it is
        // measured on the drawn pose, the skeleton's within rounding.
        let read = bvhkit::units::UnitGuess::of_bvh(&bvh, mode);
        assert_eq!((guess.units, guess.size), (read.units, read.size), "{stem}");
        let label = guess.label();
        assert_eq!(label, read.label(), "{stem}");
        // serve
        let served = served_clips(&[&file]);
        let units = &served["clips"][0]["units"];
        assert_eq!(units["label"], label.as_str(), "{stem}: serve");
        assert_eq!(units["symbol"], guess.units.symbol(), "{stem}: serve");
        let m = units["metres_per_unit"].as_f64().unwrap();
        assert!((m / guess.metres_per_unit() - 1.0).abs() < 1e-5, "{stem}: serve {m}");
        // render: the note names each file's guess when units differ.
        let png = tempfile::NamedTempFile::with_suffix(".png").unwrap();
        let o = render_to(&[file.to_str().unwrap(), metres.to_str().unwrap()], png.path());
        assert!(o.status.success(), "{}", stderr(&o));
        assert!(stderr(&o).contains(&format!("{stem}: {label}")), "{stem}: {}", stderr(&o));
        // view
        #[cfg(feature = "view")]
        if std::env::var_os("DISPLAY").is_some_and(|d| !d.is_empty()) {
            let shot = tempfile::tempdir().unwrap();
            let png = shot.path().join("v.png");
            run_ok(&[
                "view",
                file.to_str().unwrap(),
                "--size",
                "400x300",
                "--screenshot",
                png.to_str().unwrap(),
            ]);
            let side: serde_json::Value =
                serde_json::from_slice(&std::fs::read(shot.path().join("v.png.json")).unwrap())
                    .unwrap();
            let u = &side["clips"][0]["units"];
            assert_eq!(u["label"], label.as_str(), "{stem}: view");
            let drawn = u["drawn_size_m"].as_f64().unwrap();
            assert!((drawn - guess.drawn_size_m()).abs() < 1e-9, "{stem}: view {drawn}");
        } else {
            bvhkit_testdata::skip(
                "render_serve_and_view_guess_the_same_units (view part)",
                "no DISPLAY (run under Xvfb)",
            );
        }
    }
}

#[path = "cli/clean.rs"]
mod clean;
mod record;
#[path = "cli/stream.rs"]
mod stream;

#[path = "cli/edit.rs"]
mod edit;
#[path = "cli/edit_b.rs"]
mod edit_b;
#[path = "cli/edit_stream.rs"]
mod edit_stream;
#[path = "cli/fbx.rs"]
mod fbx;
#[path = "cli/mix.rs"]
mod mix;
#[path = "cli/outputs.rs"]
mod outputs;
#[path = "cli/portable.rs"]
mod portable;
#[path = "cli/quality.rs"]
mod quality;
/// `bvh view` with a broken file beside a good one plays the good one,
/// lists the broken one in the window (the sidecar's `errors`) and on
/// stderr, and exits 2 (an input not read), as with only the broken one.
#[cfg(feature = "view")]
#[test]
fn view_skips_a_file_it_cannot_load() {
    if std::env::var_os("DISPLAY").is_none_or(|d| d.is_empty()) {
        bvhkit_testdata::skip("view_skips_a_file_it_cannot_load", "no DISPLAY (run under Xvfb)");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let broken = dir.path().join("broken.bvh");
    std::fs::write(&broken, "HIERARCHY\nROOT Hips\n{\n  OFFSET 0 0\n").unwrap();
    let shot = dir.path().join("v.png");
    let args = ["--size", "400x300", "--screenshot", shot.to_str().unwrap()];
    let o = run(&[&["view", &fx("two_roots.bvh"), broken.to_str().unwrap()][..], &args].concat());
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("broken.bvh") && stderr(&o).contains("skipped"), "{}", stderr(&o));
    let side: serde_json::Value =
        serde_json::from_slice(&std::fs::read(dir.path().join("v.png.json")).unwrap()).unwrap();
    assert_eq!(side["clips"].as_array().unwrap().len(), 1);
    assert!(side["errors"][0].as_str().unwrap().contains("broken.bvh"), "{side}");
    let o = run(&[&["view", broken.to_str().unwrap()][..], &args].concat());
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
}
#[path = "cli/retarget.rs"]
mod retarget;
#[path = "cli/up.rs"]
mod up;
#[path = "cli/up_sampled.rs"]
mod up_sampled;

/// The NPY sidecar's unit guess takes each frame's size from the positions
/// already computed for the array (one forward kinematics per frame), also
/// when only some joints are written: its size is the library's guess on
/// the whole clip, exactly, and with a frame range, the guess on the
/// frames read (every frame before the end of the range).
#[test]
fn npy_sidecar_unit_guess_reuses_the_positions() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../samples/walk.bvh");
    let (bvh, _) =
        bvhkit::ReadOptions::new().lenient(true).parse(&std::fs::read(&src).unwrap()).unwrap();
    let mode = bvhkit::PositionChannels::Replace;
    let fk = bvhkit::Kinematics::new(bvh.skeleton(), mode);
    let sizes: Vec<f64> = (0..bvh.motion().n_frames())
        .map(|f| {
            let mut p = vec![bvhkit::glam::DVec3::ZERO; fk.len()];
            fk.positions(bvh.motion().frame(f), &mut p);
            bvhkit::units::pose_size(&p)
        })
        .collect();
    let dir = tempfile::tempdir().unwrap();
    for (frames, read) in [("..", sizes.len()), ("3..7", 7)] {
        let npy = dir.path().join(format!("p{read}.npy"));
        let o = run(&[
            "positions",
            src.to_str().unwrap(),
            "--joints",
            "Spine",
            "--frames",
            frames,
            "-o",
            npy.to_str().unwrap(),
        ]);
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        let side: serde_json::Value =
            serde_json::from_slice(&std::fs::read(format!("{}.json", npy.display())).unwrap())
                .unwrap();
        let want = bvhkit::units::UnitGuess::of_pose_sizes(sizes[..read].to_vec());
        assert_eq!(side["units"]["size"].as_f64(), Some(want.size), "--frames {frames}");
        assert_eq!(side["units"]["guess"].as_str(), Some(want.units.to_string().as_str()));
        if read == sizes.len() {
            assert_eq!(want.size, bvhkit::units::UnitGuess::of_bvh(&bvh, mode).size);
        }
    }
}

/// `bvh export` converts a Z-up file to glTF's Y up by default, says so and
/// records it; `--up keep` and `--scale 1 --up y` keep the file's numbers.
#[test]
fn export_gltf_up_axis() {
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path().join("zup.bvh");
    std::fs::write(
        &src,
        "HIERARCHY\nROOT Hips\n{\n OFFSET 0 0 100\n CHANNELS 6 Xposition Yposition Zposition Zrotation Xrotation Yrotation\n \
         JOINT Head\n {\n  OFFSET 0 0 60\n  CHANNELS 3 Zrotation Xrotation Yrotation\n  End Site\n  {\n   OFFSET 0 0 20\n  }\n }\n \
         JOINT LeftFoot\n {\n  OFFSET 10 5 -90\n  CHANNELS 3 Zrotation Xrotation Yrotation\n  End Site\n  {\n   OFFSET 0 10 0\n  }\n }\n}\n\
         MOTION\nFrames: 1\nFrame Time: 0.1\n0 0 100 0 0 0 0 0 0 0 0 0\n",
    )
    .unwrap();
    let f = src.to_string_lossy().into_owned();
    let d = |n: &str| dir.path().join(n).to_string_lossy().into_owned();
    let doc = |n: &str| -> serde_json::Value {
        serde_json::from_str(&std::fs::read_to_string(d(n)).unwrap()).unwrap()
    };
    let o = run_ok(&["export", &f, "-o", &d("auto.gltf"), "--scale", "1"]);
    assert!(stderr(&o).contains("up axis detected z"), "{}", stderr(&o));
    assert!(stderr(&o).contains("converted from z to Y up"), "{}", stderr(&o));
    let a = doc("auto.gltf");
    assert_eq!(a["extras"]["bvhkit"]["source_up_axis"], "z");
    assert_eq!(a["nodes"][3]["translation"], serde_json::json!([10.0, -90.0, -5.0]));
    let o = run_ok(&["export", &f, "-o", &d("given.gltf"), "--scale", "1", "--up", "z"]);
    assert!(stderr(&o).contains("up axis z given, converted to Y up"), "{}", stderr(&o));
    assert_eq!(doc("given.gltf")["nodes"], a["nodes"]);
    for up in ["keep", "y"] {
        let n = format!("{up}.gltf");
        run_ok(&["export", &f, "-o", &d(&n), "--scale", "1", "--up", up]);
        assert_eq!(doc(&n)["nodes"][3]["translation"], serde_json::json!([10.0, 5.0, -90.0]));
    }
    let o = run(&["export", &f, "-o", &d("bad.glb"), "--up", "w"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("is not auto, keep or an axis"), "{}", stderr(&o));
}

/// `bvh positions` and `bvh rotations` read on one thread while the frames
/// are computed on another, in batches: the output is the library's,
/// frame for frame, whatever the thread count, over many batches.
#[test]
fn positions_and_rotations_do_not_depend_on_the_thread_count_nor_the_batches() {
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path().join("synth.bvh");
    // About 100 channels: a batch is about 2,600 frames, so 12,000 frames
    // are several batches.
    std::fs::write(&src, bvhkit_testdata::synth_text(3, 30, 12_000)).unwrap();
    let clip = bvhkit::Bvh::from_path(&src).unwrap();
    let fk = bvhkit::Kinematics::new(clip.skeleton(), bvhkit::PositionChannels::Replace);
    let expected: Vec<f64> =
        fk.positions_all(clip.motion()).iter().flat_map(|p| p.to_array()).collect();
    let s = src.to_str().unwrap();
    let mut outputs = Vec::new();
    for threads in [1, 3] {
        let npy = dir.path().join(format!("p{threads}.npy"));
        let rot = dir.path().join(format!("r{threads}.csv"));
        for (args, out) in [
            (vec!["positions", s, "--dtype", "f64", "-o"], &npy),
            (vec!["rotations", s, "--space", "world", "--repr", "6d", "-o"], &rot),
        ] {
            let o = bvh()
                .env("RAYON_NUM_THREADS", threads.to_string())
                .args(args)
                .arg(out)
                .output()
                .unwrap();
            assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        }
        let bytes = std::fs::read(&npy).unwrap();
        let (shape, data) = read_npy_f64(&bytes);
        assert_eq!(shape, [12_000, fk.len(), 3]);
        assert!(
            data.iter().zip(&expected).all(|(a, b)| a.to_bits() == b.to_bits()),
            "{threads} threads: positions differ from the library's"
        );
        outputs.push((bytes, std::fs::read(&rot).unwrap()));
    }
    assert!(outputs[0] == outputs[1], "1 and 3 threads differ");
    // World rotations, 6D, against the library's world transforms.
    let text = String::from_utf8(outputs[0].1.clone()).unwrap();
    let mut world = vec![bvhkit::glam::DAffine3::IDENTITY; fk.len()];
    let last = clip.motion().n_frames() - 1;
    fk.world(clip.motion().frame(last), &mut world);
    let names = clip.skeleton().display_names();
    let row = text
        .lines()
        .find(|l| l.starts_with(&format!("{last},{},", names[5])))
        .expect("the last frame's row of joint 5");
    let got: Vec<f64> = row.split(',').skip(2).map(|v| v.parse().unwrap()).collect();
    let m = world[5].matrix3;
    let want = [m.x_axis.x, m.x_axis.y, m.x_axis.z, m.y_axis.x, m.y_axis.y, m.y_axis.z];
    assert_eq!(got, want, "{row}");
}

/// `bvh positions` scans a regular file of 1 MiB or more in place (mapped)
/// and reads standard input a chunk at a time: both give the same NPY bytes
/// (which the library's forward kinematics gives too), the same warnings and
/// the same error at the same line and column, and an error leaves no file.
#[test]
fn positions_of_a_mapped_file_and_of_standard_input_agree() {
    let lines = 120_000; // about 2.6 MB: mapped, several windows
    let text = |edit: &dyn Fn(usize) -> Option<String>| {
        let mut s = String::from(
            "HIERARCHY\nROOT Hips\n{\nOFFSET 0 0 0\nCHANNELS 6 Xposition Yposition Zposition Zrotation Xrotation Yrotation\nJOINT Leg\n{\nOFFSET 0 -10 0\nCHANNELS 3 Zrotation Xrotation Yrotation\nEnd Site\n{\nOFFSET 0 -10 0\n}\n}\n}\nMOTION\n",
        );
        s.push_str(&format!("Frames: {lines}\nFrame Time: 0.01\n"));
        for k in 0..lines {
            match edit(k) {
                Some(l) => s.push_str(&l),
                None => s.push_str(&format!(
                    "{}.5 90 -{}.25 {} 12.5 -{} {} 3 {}.75",
                    k % 100,
                    k % 9,
                    k % 360,
                    k % 180,
                    k % 45,
                    k % 30
                )),
            }
            s.push('\n');
        }
        s.into_bytes()
    };
    let dir = tempfile::tempdir().unwrap();
    let at = |n: &str| dir.path().join(n).to_str().unwrap().to_string();
    let via_stdin = |input: &[u8], out: &str| {
        let mut child = bvh()
            .args(["positions", "-", "-o", out])
            .stdin(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let mut pipe = child.stdin.take().unwrap();
        let input = input.to_vec();
        let feeder = std::thread::spawn(move || {
            let _ = pipe.write_all(&input);
        });
        let o = child.wait_with_output().unwrap();
        feeder.join().unwrap();
        o
    };
    // Well-formed: the same array, and the library's positions.
    let good = text(&|_| None);
    assert!(good.len() > 2 << 20);
    std::fs::write(at("good.bvh"), &good).unwrap();
    run_ok(&["positions", &at("good.bvh"), "-o", &at("mapped.npy")]);
    let o = via_stdin(&good, &at("piped.npy"));
    assert!(o.status.success(), "{}", stderr(&o));
    let mapped = std::fs::read(at("mapped.npy")).unwrap();
    assert!(mapped == std::fs::read(at("piped.npy")).unwrap(), "mapped and piped NPY differ");
    let (model, _) = bvhkit::ReadOptions::new().parse(&good).unwrap();
    let fk = bvhkit::Kinematics::new(model.skeleton(), bvhkit::PositionChannels::Replace);
    let expected: Vec<u8> = fk
        .positions_all(model.motion())
        .iter()
        .flat_map(|p| p.to_array())
        .flat_map(|v| (v as f32).to_le_bytes())
        .collect();
    assert!(mapped.ends_with(&expected) && mapped.len() - expected.len() < 256);

    // A bad token in the middle of the file, and a short last frame (a
    // warning): the same message, located the same, from both.
    let header_lines = 18; // motion line k is line header_lines + k + 1
    for (k, line, expect) in [
        (70_001, "1 2 3 4 5 x6 7 8 9", format!(":{}:11: ", header_lines + 70_001 + 1)),
        (lines - 1, "1 2 3", format!(":{}:1: ", header_lines + lines)),
    ] {
        let bad = text(&|i| (i == k).then(|| line.to_string()));
        std::fs::write(at("bad.bvh"), &bad).unwrap();
        let m = run(&["positions", &at("bad.bvh"), "-o", &at("bad-mapped.npy")]);
        let p = via_stdin(&bad, &at("bad-piped.npy"));
        let (me, pe) = (stderr(&m), stderr(&p));
        assert!(me.contains(&format!("bad.bvh{expect}")), "{me}");
        assert!(pe.contains(&format!("<stdin>{expect}")), "{pe}");
        assert_eq!(me.replace(&at("bad.bvh"), "<stdin>"), pe);
        assert_eq!(m.status.code(), p.status.code());
        if m.status.success() {
            assert!(
                std::fs::read(at("bad-mapped.npy")).unwrap()
                    == std::fs::read(at("bad-piped.npy")).unwrap()
            );
        } else {
            assert_eq!(m.status.code(), Some(2));
            assert!(!dir.path().join("bad-mapped.npy").exists());
            assert!(!dir.path().join("bad-piped.npy").exists());
        }
    }
}

/// `bvh positions` computes the frames of each batch in pieces on rayon's
/// pool (positions eight frames at a time on SIMD lanes) and `bvh
/// rotations` without --continuous does too: on the whole corpus (folder
/// in, folder out), one thread (`-j 1`, a pool of one) and two (`-j 2`, a
/// pool of two) write the same bytes, NPY, sidecars and CSV, and every
/// well-formed file's f64 positions are the library's frame-by-frame
/// forward kinematics, bit for bit, in both position-channel readings.
#[test]
fn positions_and_rotations_of_the_corpus_do_not_depend_on_the_thread_count() {
    let Some(corpus) = corpus() else { return };
    let dir = tempfile::tempdir().unwrap();
    let c = corpus.to_str().unwrap();
    let runs: [(&str, Vec<&str>); 4] = [
        ("replace", vec!["positions", c, "--format", "npy", "--dtype", "f64"]),
        (
            "add",
            vec!["positions", c, "--format", "npy", "--dtype", "f64", "--position-channels", "add"],
        ),
        ("rot", vec!["rotations", c, "--space", "world", "--repr", "6d"]),
        ("cont", vec!["rotations", c, "--repr", "euler", "--continuous", "--format", "npy"]),
    ];
    for (name, args) in &runs {
        let mut outputs = Vec::new();
        for threads in ["1", "2"] {
            let out = dir.path().join(format!("{name}{threads}/"));
            let o = bvh()
                .env("RAYON_NUM_THREADS", threads)
                .args(args)
                .args(["-j", threads, "-o"])
                .arg(&out)
                .output()
                .unwrap();
            let mut files: Vec<(String, Vec<u8>)> = walkdir(&out)
                .into_iter()
                .map(|p| {
                    let rel = p.strip_prefix(&out).unwrap().to_string_lossy().into_owned();
                    (rel, std::fs::read(&p).unwrap())
                })
                .collect();
            files.sort();
            assert!(files.len() >= 2 * 36 || *name == "rot", "{name}: {} outputs", files.len());
            outputs.push((
                o.status.code(),
                stderr(&o).replace(out.to_str().unwrap(), "OUT/"),
                files,
            ));
        }
        assert!(outputs[0] == outputs[1], "{name}: -j 1 and -j 2 differ");
    }
    // Against the library, frame by frame.
    let mut compared = 0;
    for path in bvhkit_testdata::corpus_files() {
        let stem = path.file_stem().unwrap().to_string_lossy().into_owned();
        if stem.starts_with("malformed_") {
            continue;
        }
        let (bvh, _) =
            bvhkit::ReadOptions::new().lenient(true).parse(&std::fs::read(&path).unwrap()).unwrap();
        for (name, mode) in
            [("replace", bvhkit::PositionChannels::Replace), ("add", bvhkit::PositionChannels::Add)]
        {
            let fk = bvhkit::Kinematics::new(bvh.skeleton(), mode);
            let mut scratch = fk.scratch();
            let mut pos = vec![bvhkit::glam::DVec3::ZERO; fk.len()];
            let bytes = std::fs::read(dir.path().join(format!("{name}2/{stem}.npy"))).unwrap();
            let (shape, data) = read_npy_f64(&bytes);
            assert_eq!(shape, [bvh.motion().n_frames(), fk.len(), 3], "{stem}");
            for f in 0..bvh.motion().n_frames() {
                fk.positions_with(bvh.motion().frame(f), &mut scratch, &mut pos);
                let got = &data[f * fk.len() * 3..(f + 1) * fk.len() * 3];
                let want = pos.iter().flat_map(|p| p.to_array());
                assert!(
                    got.iter().zip(want).all(|(a, b)| a.to_bits() == b.to_bits()),
                    "{stem} ({name}) frame {f}"
                );
            }
            compared += 1;
        }
    }
    assert_eq!(compared, 72, "36 well-formed files, two readings each");
}

/// Every file under `dir`, recursively.
fn walkdir(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() { stack.push(p) } else { out.push(p) }
        }
    }
    out
}
#[path = "cli/dataset_outputs.rs"]
mod dataset_outputs;
#[path = "cli/extreme.rs"]
mod extreme;
#[path = "cli/inputs.rs"]
mod inputs;

/// Small mends of the user tour: an empty folder is an error for `check`
/// and `info` as for `edit` and `clean`; the `--portable` note's singular;
/// the placeholders and scope of help texts.
#[test]
fn empty_folders_singular_notes_and_help_texts() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().to_str().unwrap();
    for cmd in ["check", "info", "edit", "clean"] {
        let out = dir.path().join("out").to_string_lossy().into_owned();
        let args: Vec<&str> = match cmd {
            "check" | "info" => vec![cmd, d],
            _ => vec![cmd, d, "-o", &out],
        };
        let r = run(&args);
        assert_eq!(r.status.code(), Some(2), "{cmd}: {}", stderr(&r));
        let e = stderr(&r);
        assert!(e.contains(&format!("no *.bvh file under {d}")), "{cmd}: {e}");
        assert!(e.contains("bvh: error: no input file"), "{cmd}: {e}");
    }
    // One joint with varying position channels: "1 joint", "1 ... channel".
    let one = dir.path().join("one.bvh");
    std::fs::write(
        &one,
        "HIERARCHY\nROOT Hips\n{\n\tOFFSET 0 0 0\n\tCHANNELS 3 Zrotation Xrotation Yrotation\n\
         \tJOINT Arm\n\t{\n\t\tOFFSET 0 5 0\n\t\tCHANNELS 6 Xposition Yposition Zposition Zrotation Xrotation Yrotation\n\
         \t\tEnd Site\n\t\t{\n\t\t\tOFFSET 0 1 0\n\t\t}\n\t}\n}\nMOTION\nFrames: 2\nFrame Time: 0.1\n\
         0 0 0 0 1 0 0 0 0\n0 0 0 1 2 0 0 0 0\n",
    )
    .unwrap();
    let r = run_ok(&["fmt", "--portable", one.to_str().unwrap()]);
    let e = stderr(&r);
    assert!(e.contains("varying position channels of 1 joint (Arm)"), "{e}");
    assert!(e.contains("1 constant position channel that repeats the OFFSET dropped"), "{e}");
    let help = stdout(&run_ok(&["clean", "--help"]));
    assert!(help.contains("--ground[=<MODE>]"), "{help}");
    let help = stdout(&run_ok(&["check", "--help"]));
    assert!(help.contains("For commands that write files"), "{help}");
}
