//! `bvh edit` end to end: command-line order, streaming against the whole
//! clip and against the library, outputs never over inputs.
use std::path::Path;

use bvhkit::Bvh;
use bvhkit::edit::axes::{Axes, AxesMap, SignedAxis};
use bvhkit::edit::order::OrderMap;
use bvhkit::edit::scale::ScaleMap;
use bvhkit::edit::{frames, map_frames, resample};
use bvhkit::rotation::RotationOrder;

use super::{bvh, corpus, refused, run, run_ok, run_with_stdin, stderr, stdout};

#[test]
fn edit_streams_the_per_frame_transforms_like_the_library_and_the_whole_clip() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("in.bvh");
    std::fs::write(&input, bvhkit_testdata::synth_text(5, 20, 300)).unwrap();
    let i = input.to_str().unwrap();
    let streamed = dir.path().join("streamed.bvh");
    let whole = dir.path().join("whole.bvh");
    let flags = [
        "--frames",
        "10..250",
        "--scale",
        "0.5",
        "--every",
        "2",
        "--order",
        "xyz",
        "--source-up",
        "y",
        "--up",
        "z",
    ];
    run_ok(&[&["edit", i, "-o", streamed.to_str().unwrap()][..], &flags].concat());
    // --reverse twice is the identity but makes the command load the whole clip.
    run_ok(
        &[&["edit", i, "-o", whole.to_str().unwrap(), "--reverse", "--reverse"][..], &flags]
            .concat(),
    );
    assert_eq!(std::fs::read(&streamed).unwrap(), std::fs::read(&whole).unwrap());
    // The library, step by step in the same order.
    let mut b = Bvh::from_path(&input).unwrap();
    b = frames::range(&b, 10..250).unwrap();
    b = map_frames(&b, &mut ScaleMap::new(b.skeleton(), 0.5).unwrap()).unwrap();
    b = frames::every(&b, 2).unwrap();
    b = map_frames(&b, &mut OrderMap::all(b.skeleton(), RotationOrder::XYZ)).unwrap();
    let to_z = AxesMap::new(
        b.skeleton(),
        Axes::with_up(SignedAxis::PosY),
        Axes::with_up(SignedAxis::PosZ),
    );
    b = map_frames(&b, &mut { to_z }).unwrap();
    assert_eq!(std::fs::read(&streamed).unwrap(), b.to_bytes().unwrap());
    assert_eq!(b.motion().n_frames(), 120);
    // The order on the command line matters: scaling after the frame range and
    // before resampling is not the same command as the other way round, but
    // both are applied exactly as written.
    let o = run_ok(&["edit", i, "-o", "-", "--every", "3", "--fps", "100"]);
    let expected =
        resample::to_fps(&frames::every(&Bvh::from_path(&input).unwrap(), 3).unwrap(), 100.0)
            .unwrap();
    assert_eq!(o.stdout, expected.to_bytes().unwrap());
}

#[test]
fn edit_example_from_the_issue_on_a_corpus_file() {
    let Some(dir) = corpus() else { return };
    let input = dir.join("cmu_01_01_walk_cgspeed_mb_names.bvh");
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("clip.bvh");
    let o = run_ok(&[
        "edit",
        input.to_str().unwrap(),
        "-o",
        out.to_str().unwrap(),
        "--frames",
        "100..400",
        "--fps",
        "30",
        "--up",
        "z",
        "--units",
        "m",
    ]);
    assert!(stderr(&o).contains("up axis detected: y ("), "{}", stderr(&o));
    let text = std::fs::read_to_string(&out).unwrap();
    // 300 frames at 120 fps are 75 frames at 30 fps, the first one frame 100 exactly.
    assert!(
        text.contains("\nFrames: 75\nFrame Time: 0.03333333333333333\n"),
        "{}",
        &text[text.find("MOTION").unwrap()..][..60]
    );
    let o = run(&["info", "--json", out.to_str().unwrap()]);
    let json: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(json["up_axis"], "z");
    assert_eq!(json["units"], "m");
    let o = run(&["info", "--json", input.to_str().unwrap()]);
    let json: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!((json["up_axis"].as_str(), json["units"].as_str()), (Some("y"), Some("cmu")));
}

#[test]
fn edit_never_writes_over_an_input_and_takes_several_files_and_stdin() {
    let dir = tempfile::tempdir().unwrap();
    let a = dir.path().join("a.bvh");
    let b = dir.path().join("b.bvh");
    let text = bvhkit_testdata::synth_text(2, 6, 30);
    std::fs::write(&a, &text).unwrap();
    std::fs::write(&b, &text).unwrap();
    let o = run(&["edit", a.to_str().unwrap(), "-o", a.to_str().unwrap(), "--scale", "2"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("refusing to overwrite it"), "{}", stderr(&o));
    assert_eq!(std::fs::read_to_string(&a).unwrap(), text);
    // Several inputs go into a folder, one output each, in parallel.
    let out = dir.path().join("out");
    run_ok(&[
        "edit",
        a.to_str().unwrap(),
        b.to_str().unwrap(),
        "-o",
        out.to_str().unwrap(),
        "--every",
        "2",
    ]);
    let half = frames::every(&Bvh::parse(&text).unwrap(), 2).unwrap().to_bytes().unwrap();
    assert_eq!(std::fs::read(out.join("a.bvh")).unwrap(), half);
    assert_eq!(std::fs::read(out.join("b.bvh")).unwrap(), half);
    // The folder of inputs as output is refused for the file that would be replaced.
    let o = run(&[
        "edit",
        a.to_str().unwrap(),
        b.to_str().unwrap(),
        "-o",
        dir.path().to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert_eq!(std::fs::read_to_string(&b).unwrap(), text);
    // Standard input to standard output, streamed.
    let args = ["edit", "-", "-o", "-", "--frames", "..3"];
    let o = run_with_stdin(Path::new("."), &args, text.as_bytes());
    assert!(o.status.success());
    assert_eq!(
        stdout(&o).into_bytes(),
        frames::range(&Bvh::parse(&text).unwrap(), 0..3).unwrap().to_bytes().unwrap()
    );
    // No temporary file is left behind.
    let left: Vec<_> =
        std::fs::read_dir(dir.path()).unwrap().map(|e| e.unwrap().file_name()).collect();
    assert!(left.iter().all(|n| !n.to_string_lossy().ends_with(".tmp")), "{left:?}");
    // A bad input is an error with its position, and writes nothing.
    let bad = dir.path().join("bad.bvh");
    std::fs::write(&bad, "HIERARCHY ROOT A { OFFSET 0 0 nope }").unwrap();
    let bad_out = dir.path().join("bad_out.bvh");
    let o = run(&["edit", bad.to_str().unwrap(), "-o", bad_out.to_str().unwrap(), "--scale", "2"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("bad.bvh:1:31:"), "{}", stderr(&o));
    assert!(!bad_out.exists());
}

/// `bvh edit` with `RAYON_NUM_THREADS=threads`, writing to `out`.
fn edit_with_threads(
    threads: usize,
    input: &str,
    out: &std::path::Path,
    flags: &[&str],
) -> Vec<u8> {
    let o = bvh()
        .env("RAYON_NUM_THREADS", threads.to_string())
        .args([&["edit", input, "-o", out.to_str().unwrap()][..], flags].concat())
        .output()
        .unwrap();
    assert!(o.status.success(), "{flags:?}: {}", stderr(&o));
    std::fs::read(out).unwrap()
}

#[test]
fn edit_output_does_not_depend_on_the_thread_count_nor_the_batches() {
    // Many batches of frames and many parts per batch: the spinning clip
    // (whose continuous angles leave their principal range, so the maps'
    // guessed states are wrong and parts are mapped again) and a larger
    // synthetic skeleton.
    let dir = tempfile::tempdir().unwrap();
    let spin = dir.path().join("spin.bvh");
    std::fs::write(&spin, bvhkit_testdata::spinning_text(70_000)).unwrap();
    let synth = dir.path().join("synth.bvh");
    std::fs::write(&synth, bvhkit_testdata::synth_text(9, 30, 12_000)).unwrap();
    let out = dir.path().join("out.bvh");
    let plans: [&[&str]; 5] = [
        &["--order", "xyz"],
        &["--source-up", "y", "--up", "z"],
        &["--layout", "yxz", "--layout-positions", "none", "--drop-motion"],
        &["--scale", "0.3", "--every", "3", "--order", "zyx"],
        &["--frames", "5000..20000", "--order", "yzx", "--every", "2"],
    ];
    for input in [&spin, &synth] {
        let i = input.to_str().unwrap();
        let bvh = Bvh::from_path(input).unwrap();
        for flags in plans {
            let one = edit_with_threads(1, i, &out, flags);
            let three = edit_with_threads(3, i, &out, flags);
            assert!(one == three, "{i} {flags:?}: 1 and 3 threads differ");
            // The library, one frame at a time.
            let expected = match flags[0] {
                "--order" => {
                    map_frames(&bvh, &mut OrderMap::all(bvh.skeleton(), RotationOrder::XYZ))
                }
                "--source-up" => map_frames(
                    &bvh,
                    &mut AxesMap::new(
                        bvh.skeleton(),
                        Axes::with_up(SignedAxis::PosY),
                        Axes::with_up(SignedAxis::PosZ),
                    ),
                ),
                "--layout" => map_frames(
                    &bvh,
                    &mut bvhkit::edit::layout::LayoutMap::new(
                        bvh.skeleton(),
                        RotationOrder::YXZ,
                        bvhkit::edit::layout::Positions::None,
                        bvhkit::PositionChannels::Replace,
                    )
                    .unwrap(),
                ),
                "--scale" => {
                    let b =
                        map_frames(&bvh, &mut ScaleMap::new(bvh.skeleton(), 0.3).unwrap()).unwrap();
                    let b = frames::every(&b, 3).unwrap();
                    map_frames(&b, &mut OrderMap::all(b.skeleton(), RotationOrder::ZYX))
                }
                _ => {
                    let b = frames::range(&bvh, 5000..20000.min(bvh.motion().n_frames())).unwrap();
                    let b = map_frames(&b, &mut OrderMap::all(b.skeleton(), RotationOrder::YZX))
                        .unwrap();
                    frames::every(&b, 2)
                }
            }
            .unwrap();
            assert!(one == expected.to_bytes().unwrap(), "{i} {flags:?}: not the library's frames");
        }
    }
}

#[test]
fn edit_on_the_corpus_does_not_depend_on_the_thread_count() {
    let Some(_) = corpus() else { return };
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out.bvh");
    let mut n = 0;
    for p in bvhkit_testdata::corpus_files() {
        let name = p.file_stem().unwrap().to_string_lossy().into_owned();
        if name.starts_with("malformed_") {
            continue;
        }
        let i = p.to_str().unwrap();
        let Ok(bvh) = Bvh::from_path(&p) else { continue };
        let one = edit_with_threads(1, i, &out, &["--order", "zyx"]);
        let two = edit_with_threads(2, i, &out, &["--order", "zyx"]);
        assert!(one == two, "{name}: 1 and 2 threads differ");
        let expected =
            map_frames(&bvh, &mut OrderMap::all(bvh.skeleton(), RotationOrder::ZYX)).unwrap();
        assert!(one == expected.to_bytes().unwrap(), "{name}: not the library's frames");
        n += 1;
    }
    assert!(n >= 25, "only {n} corpus files compared");
}

/// `bvh edit DIR -o OUT` recreates DIR's folders under OUT, as `bvh fmt`
/// does (files of one name in two folders both kept), and two inputs that
/// would land on one output are refused before anything is written.
#[test]
fn edit_directories_keep_their_folders_and_never_collide() {
    let src = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(src.path().join("a/deep")).unwrap();
    std::fs::create_dir_all(src.path().join("b")).unwrap();
    let text = bvhkit_testdata::synth_text(3, 4, 5);
    for f in ["a/x.bvh", "b/x.bvh", "a/deep/y.bvh"] {
        std::fs::write(src.path().join(f), &text).unwrap();
    }
    let d = src.path().to_str().unwrap();
    let out = tempfile::tempdir().unwrap();
    let o = out.path().join("o");
    run_ok(&["edit", d, "-o", o.to_str().unwrap(), "--scale", "2"]);
    let want = {
        let dir = tempfile::tempdir().unwrap();
        let one = dir.path().join("one.bvh");
        run_ok(&[
            "edit",
            src.path().join("a/x.bvh").to_str().unwrap(),
            "-o",
            one.to_str().unwrap(),
            "--scale",
            "2",
        ]);
        std::fs::read(one).unwrap()
    };
    for f in ["a/x.bvh", "b/x.bvh", "a/deep/y.bvh"] {
        assert_eq!(std::fs::read(o.join(f)).unwrap(), want, "{f}");
    }
    // A folder holding one file is still a folder: its file goes under -o.
    let o2 = out.path().join("o2");
    run_ok(&[
        "edit",
        src.path().join("b").to_str().unwrap(),
        "-o",
        o2.to_str().unwrap(),
        "--scale",
        "2",
    ]);
    assert_eq!(std::fs::read(o2.join("x.bvh")).unwrap(), want);

    // a/x.bvh and b/x.bvh named directly would both be OUT/x.bvh.
    let o3 = out.path().join("o3");
    let r = run(&[
        "edit",
        src.path().join("a/x.bvh").to_str().unwrap(),
        src.path().join("b/x.bvh").to_str().unwrap(),
        "-o",
        o3.to_str().unwrap(),
        "--scale",
        "2",
    ]);
    assert_eq!(r.status.code(), Some(2));
    let e = stderr(&r);
    assert!(e.contains("would both be written to"), "{e}");
    assert!(!o3.exists(), "nothing written");
    // Several inputs cannot go to standard output.
    let r = run(&["edit", d, "-o", "-", "--scale", "2"]);
    assert_eq!(r.status.code(), Some(2));
    assert!(stderr(&r).contains("standard output"), "{}", stderr(&r));
}

/// `--frames` past the clip's end is an error naming the range and the
/// frames reaching it (streamed, on the whole clip and from standard
/// input); a range that ends past them keeps what there is, with a note.
#[test]
fn edit_frames_past_the_end_is_an_error_and_partly_past_a_note() {
    let dir = tempfile::tempdir().unwrap();
    let text = "HIERARCHY\nROOT Hips\n{\n\tOFFSET 0 0 0\n\tCHANNELS 3 Zrotation Xrotation Yrotation\n\
                \tEnd Site\n\t{\n\t\tOFFSET 0 1 0\n\t}\n}\nMOTION\nFrames: 10\nFrame Time: 0.1\n";
    let text = text.to_string() + &"1 2 3\n".repeat(10);
    let input = dir.path().join("ten.bvh");
    std::fs::write(&input, &text).unwrap();
    let i = input.to_str().unwrap();
    let out = dir.path().join("out.bvh");
    let o = out.to_str().unwrap();
    let past = "ten.bvh: --frames 5000..: the clip has only 10 frames (0..10) here; the range \
                selects none of them";
    for extra in [&[][..], &["--reverse"], &["--scale", "2"]] {
        let mut args = vec!["edit", i, "--frames", "5000..", "-o", o];
        args.extend_from_slice(extra);
        let r = run(&args);
        assert_eq!(r.status.code(), Some(2), "{args:?}");
        assert!(stderr(&r).contains(past), "{args:?}: {}", stderr(&r));
        assert!(!out.exists());
    }
    let r = run_with_stdin(dir.path(), &["edit", "-", "--frames", "10", "-o", o], text.as_bytes());
    assert_eq!(r.status.code(), Some(2));
    assert!(
        stderr(&r).contains("--frames 10..11: the clip has only 10 frames (0..10) here"),
        "{}",
        stderr(&r)
    );
    // Counted in the frames reaching the step: 5 after --every 2.
    let r = run(&["edit", i, "--every", "2", "--frames", "5..", "-o", o]);
    assert_eq!(r.status.code(), Some(2));
    assert!(
        stderr(&r).contains("--frames 5..: the clip has only 5 frames (0..5) here"),
        "{}",
        stderr(&r)
    );
    // Partly past: the frames there are, and a note.
    for extra in [&[][..], &["--reverse"]] {
        let mut args = vec!["edit", i, "--frames", "8..20", "-o", o];
        args.extend_from_slice(extra);
        let r = run_ok(&args);
        assert!(
            stderr(&r)
                .contains("--frames 8..20: the clip has 10 frames (0..10) here; keeping 8..10"),
            "{args:?}: {}",
            stderr(&r)
        );
        assert_eq!(Bvh::from_path(&out).unwrap().motion().n_frames(), 2);
    }
    // Counted after --every 2 (5 frames) and on one frame.
    let r = run_ok(&["edit", i, "--every", "2", "--frames", "3..9", "-o", o]);
    assert!(
        stderr(&r).contains("--frames 3..9: the clip has 5 frames (0..5) here; keeping 3..5"),
        "{}",
        stderr(&r)
    );
    let r = run_ok(&["edit", i, "--frames", "9", "--frames", "..4", "-o", o]);
    assert!(
        stderr(&r).contains("--frames ..4: the clip has 1 frame (0) here; keeping 0..1"),
        "{}",
        stderr(&r)
    );
    // Within the clip: nothing said.
    let r = run_ok(&["edit", i, "--frames", "2..10", "-o", o]);
    assert!(stderr(&r).is_empty(), "{}", stderr(&r));
}

/// `positions` and `rotations --frames` say a range past the end as `edit`
/// does: one that selects no frame is an error (no output left; it was a
/// warning and exit 0, with an empty array written), one partly past a
/// note; and `render --frame N` past a shorter clip's end says that clip
/// is drawn at its last frame.
#[test]
fn positions_rotations_and_render_say_frames_past_the_end_as_edit_does() {
    let dir = tempfile::tempdir().unwrap();
    let fig = |n: usize| {
        let mut text = super::standing_figure_header(n);
        text += &"0 90 0 0 0 0 0 0 0 0 0 0 0 0 0\n".repeat(n);
        text
    };
    let (ten, three) = (dir.path().join("ten.bvh"), dir.path().join("three.bvh"));
    std::fs::write(&ten, fig(10)).unwrap();
    std::fs::write(&three, fig(3)).unwrap();
    let i = ten.to_str().unwrap();
    let npy = dir.path().join("p.npy");
    let o = npy.to_str().unwrap();
    let past = "ten.bvh: --frames 5000..: the clip has only 10 frames (0..10) here; the range \
                selects none of them";
    for cmd in ["positions", "rotations"] {
        for extra in [&[][..], &["--up", "auto"]] {
            let mut args = vec![cmd, i, "--frames", "5000..", "-o", o];
            args.extend_from_slice(extra);
            refused(&args, &[past], &npy);
            args[3] = "12";
            refused(&args, &["--frames 12..13: the clip has only 10 frames"], &npy);
            args[3] = "8..20";
            let r = run_ok(&args);
            let note = format!(
                "bvh: note: {i}: --frames 8..20: the clip has 10 frames (0..10) here; keeping 8..10"
            );
            assert!(stderr(&r).contains(&note), "{args:?}: {}", stderr(&r));
            args[3] = "2..10";
            let r = run_ok(&args);
            assert!(stderr(&r).is_empty(), "{args:?}: {}", stderr(&r));
            std::fs::remove_file(&npy).unwrap();
        }
        // From standard input, to standard output.
        let text = fig(10);
        let r = run_with_stdin(dir.path(), &[cmd, "-", "--frames", "10.."], text.as_bytes());
        assert_eq!(r.status.code(), Some(2), "{}", stderr(&r));
        assert!(stderr(&r).contains("the range selects none of them"), "{}", stderr(&r));
        // Nothing on standard output, not a CSV header or a JSON opening
        // alone; a range that selects frames still gets both.
        for format in ["csv", "json"] {
            let r = run(&[cmd, i, "--frames", "10..", "--format", format]);
            assert_eq!(r.status.code(), Some(2), "{format}: {}", stderr(&r));
            assert!(r.stdout.is_empty(), "{format}: {}", String::from_utf8_lossy(&r.stdout));
            let r = run_ok(&[cmd, i, "--frames", "8..", "--format", format]);
            let out = String::from_utf8(r.stdout).unwrap();
            let head = if format == "csv" { "frame,joint," } else { "{\"joints\":" };
            assert!(out.starts_with(head), "{format}: {out}");
        }
    }
    let png = dir.path().join("r.png");
    let p = png.to_str().unwrap();
    let r = run_ok(&["render", i, three.to_str().unwrap(), "-o", p, "--frame", "5"]);
    let note = "bvh: note: three: frame 5 is past its end (3 frames): its last frame, 2, is drawn";
    assert!(stderr(&r).contains(note), "{}", stderr(&r));
    assert!(!stderr(&r).contains("ten:"), "{}", stderr(&r));
}

/// `--scale` and `--height` take a millionth to a million: 0, negative,
/// NaN, infinite and 1e300 (which wrote 300-digit `OFFSET`s) are refused by
/// the option's name with the limits; the limits themselves are accepted.
#[test]
fn scale_and_height_have_sane_limits() {
    let Some(dir) = corpus() else { return };
    let f = dir.join("xia_style_angry_13_000.bvh");
    let f = f.to_str().unwrap();
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("out.bvh");
    let o = out.to_str().unwrap();
    for (opt, what) in [("--scale", "scale factor"), ("--height", "height")] {
        for v in ["1e300", "1e-300", "0", "-1", "-0.5", "nan", "inf", "1000001", "0.0000009"] {
            refused(
                &["edit", f, opt, v, "-o", o],
                &[
                    &format!("'{v}' for '{opt} <"),
                    &format!("not a valid {what}: expected a number from 0.000001 to 1000000"),
                ],
                &out,
            );
        }
    }
    for v in ["0.000001", "1000000"] {
        run_ok(&["edit", f, "--scale", v, "-o", o]);
        let text = std::fs::read_to_string(&out).unwrap();
        // No number of the hierarchy runs to hundreds of digits.
        let head = &text[..text.find("MOTION").unwrap()];
        let longest = head.split_whitespace().map(str::len).max();
        assert!(longest.unwrap() <= 32, "--scale {v}: {longest:?}");
        run_ok(&["edit", f, "--height", v, "-o", o]);
    }
}

/// The notes of lossy steps say their measurement with six significant
/// digits, not `0.0000039999999999762355`.
#[test]
fn lossy_notes_print_short_numbers() {
    let Some(dir) = corpus() else { return };
    let f = dir.join("makehuman_163_joints_6ch_every_joint_deep.bvh");
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("out.bvh");
    let o = out.to_str().unwrap();
    let r = run_ok(&["edit", f.to_str().unwrap(), "--layout", "ZXY", "-o", o]);
    assert!(
        stderr(&r)
            .contains("--layout dropped position channels: largest world position error 4e-6\n"),
        "{}",
        stderr(&r)
    );
    let f = dir.join("xia_style_angry_13_000.bvh");
    let r = run_ok(&["edit", f.to_str().unwrap(), "--remove-joints", "LeftUpLeg", "-o", o]);
    let e = stderr(&r);
    let n = e.split("largest world position error ").nth(1).unwrap_or_else(|| panic!("{e}"));
    let n = n.trim_end();
    assert!(n.parse::<f64>().is_ok() && n.len() <= 12, "{e}");
}

/// Rates and spans have documented limits: the error names the option, the
/// value and the limit, and no number is spelled in three hundred digits.
#[test]
fn rate_and_span_options_have_sane_limits() {
    let Some(dir) = corpus() else { return };
    let f = dir.join("xia_style_angry_13_000.bvh");
    let f = f.to_str().unwrap();
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("out.bvh");
    let o = out.to_str().unwrap();
    let refused = |args: &[&str], says: &[&str]| {
        let e = refused(args, says, &out);
        assert!(!e.contains("0000000000"), "{args:?}: {e}");
    };
    for v in ["1e-300", "1e300", "0.0009", "100001"] {
        refused(
            &["edit", f, "--fps", v, "-o", o],
            &[&format!("'{v}' for '--fps <N>'"), "from 0.001 to 100000 frames per second"],
        );
    }
    refused(
        &["edit", f, "--every", "1000001", "-o", o],
        &["--every <N>", "1000001", "1..=1000000"],
    );
    for opt in ["--crossfade", "--search"] {
        let fade: &[&str] = if opt == "--search" { &["--crossfade", "1s"] } else { &[] };
        refused(
            &[&["concat", f, f, opt, "1e300s", "-o", o][..], fade].concat(),
            &[opt, "1e300s", "at most 3600 seconds (3600s), found 1e300"],
        );
        refused(
            &["concat", f, f, opt, "1000001", "-o", o],
            &[opt, "at most 1000000 frames, found 1000001"],
        );
    }
    // At the limits: accepted.
    run_ok(&["edit", f, "--fps", "0.001", "-o", o]);
    assert!(std::fs::read_to_string(&out).unwrap().contains("Frame Time: 1000\n"));
    run_ok(&["edit", f, "--every", "1000000", "-o", o]);
    run_ok(&["concat", f, f, "--crossfade", "10", "--search", "3600s", "-o", o]);
}
