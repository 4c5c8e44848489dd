//! Extreme rates, times and spans from the command line or a file: a
//! clean error naming the option or file, the value and the limit, never
//! a panic or an abort (they used to: "capacity overflow", terabyte
//! allocations, a panicking pacer, a crossfade of 1e308 s made 0 frames).

use super::{refused, run_ok, stderr};

/// A two-joint clip of `frames` frames at `frame_time`.
fn clip(frame_time: &str, frames: usize) -> String {
    let mut s = format!(
        "HIERARCHY\nROOT Hips\n{{\n\tOFFSET 0 0 0\n\tCHANNELS 6 Xposition Yposition Zposition Zrotation Xrotation Yrotation\n\
         \tJOINT Spine\n\t{{\n\t\tOFFSET 0 10 0\n\t\tCHANNELS 3 Zrotation Xrotation Yrotation\n\
         \t\tEnd Site\n\t\t{{\n\t\t\tOFFSET 0 10 0\n\t\t}}\n\t}}\n}}\n\
         MOTION\nFrames: {frames}\nFrame Time: {frame_time}\n"
    );
    for i in 0..frames {
        s.push_str(&format!("{i} 90 0 {} 0 0 0 {} 0\n", i * 3, i * 2));
    }
    s
}

#[test]
fn extreme_fps_is_refused_naming_the_option_and_the_limit() {
    let tmp = tempfile::tempdir().unwrap();
    let a = tmp.path().join("a.bvh");
    std::fs::write(&a, clip("0.0083333", 100)).unwrap();
    let out = tmp.path().join("out.bvh");
    let (a, o) = (a.to_str().unwrap(), out.to_str().unwrap());
    // "-inf" and "-1" too: the option takes a value that starts with a
    // hyphen (clap called "-inf" an unknown flag).
    for fps in ["1e300", "1e9", "1e-300", "-inf", "-1"] {
        refused(
            &["edit", a, "-o", o, "--fps", fps],
            &[&format!("'{fps}' for '--fps <N>'"), "from 0.001 to 100000 frames per second"],
            &out,
        );
    }
}

/// `bvh export --scale` takes what `bvh edit --scale` takes, a millionth to
/// a million, and says so by the option's name (it took 1e300 before).
#[test]
fn export_scale_has_the_limits_of_edit_scale() {
    let tmp = tempfile::tempdir().unwrap();
    let a = tmp.path().join("a.bvh");
    std::fs::write(&a, clip("0.0083333", 10)).unwrap();
    let a = a.to_str().unwrap();
    for ext in ["glb", "fbx", "parquet"] {
        let out = tmp.path().join(format!("out.{ext}"));
        let o = out.to_str().unwrap();
        for v in ["1e300", "0", "-inf", "-2", "nan", "1000001"] {
            refused(
                &["export", a, "-o", o, "--scale", v],
                &[&format!("'{v}' for '--scale <FACTOR>'"), "from 0.000001 to 1000000"],
                &out,
            );
        }
        if ext == "parquet" {
            // A table keeps the file's lengths: the flag is refused, not
            // ignored, like the glTF-only ones.
            for flag in [&["--scale", "2"][..], &["--no-mesh"], &["--bin-file"]] {
                let args = [&["export", a, "-o", o][..], flag].concat();
                refused(&args, &[&format!("{} applies to .glb, .gltf and .fbx", flag[0])], &out);
            }
            continue;
        }
        run_ok(&["export", a, "-o", o, "--scale", "1000000"]);
        assert!(out.exists(), "{ext}");
    }
    // NPZ has one layout: Parquet's --layout is refused there, not ignored.
    {
        let out = tmp.path().join("out.npz");
        let o = out.to_str().unwrap();
        refused(
            &["export", a, "-o", o, "--layout", "wide"],
            &["--layout applies to .parquet outputs"],
            &out,
        );
        run_ok(&["export", a, "-o", o, "--dtype", "f32"]);
        assert!(out.exists());
    }
    // And the other way: the tables' flags are refused by glTF and FBX
    // outputs (they exited 0, ignoring them).
    for ext in ["glb", "fbx"] {
        let out = tmp.path().join(format!("other.{ext}"));
        let o = out.to_str().unwrap();
        for flag in [
            &["--velocities"][..],
            &["--dtype", "f32"],
            &["--dtype", "f64"],
            &["--layout", "wide"],
            &["--rotations", "6d"],
            &["--contacts"],
            &["--contact-height", "0.1"],
            &["--root-relative"],
        ] {
            let args = [&["export", a, "-o", o][..], flag].concat();
            refused(&args, &[&format!("{} applies to .parquet and .npz outputs", flag[0])], &out);
        }
    }
    for v in ["-inf", "-2"] {
        let out = tmp.path().join("out.bvh");
        refused(
            &["edit", a, "-o", out.to_str().unwrap(), "--scale", v],
            &[&format!("'{v}' for '--scale <F>'"), "from 0.000001 to 1000000"],
            &out,
        );
    }
}

#[test]
fn extreme_frame_times_in_a_file_are_refused_by_every_command_that_resamples() {
    let tmp = tempfile::tempdir().unwrap();
    let p = |n: &str| tmp.path().join(n);
    std::fs::write(p("slow.bvh"), clip("1e300", 10)).unwrap();
    std::fs::write(p("fast.bvh"), clip("1e-300", 10)).unwrap();
    std::fs::write(p("a.bvh"), clip("0.0333333", 10)).unwrap();
    let out = p("out.bvh");
    let s = |n: &str| p(n).to_str().unwrap().to_string();
    let (slow, fast, a, o) = (s("slow.bvh"), s("fast.bvh"), s("a.bvh"), s("out.bvh"));
    refused(&["edit", &slow, "-o", &o, "--fps", "30"], &["(Frame Time 1e300) to 30 fps"], &out);
    let limit = "a resampled clip has at most 4294967295 frames";
    for (first, second, culprit) in
        [(&a, &slow, "(Frame Time 1e300)"), (&fast, &a, "(Frame Time 1e-300)")]
    {
        refused(&["concat", first, second, "-o", &o], &[culprit, limit], &out);
        refused(&["blend", first, second, "-o", &o, "--weight", "0.5"], &[culprit, limit], &out);
        refused(&["layer", first, second, "-o", &o], &[culprit, limit], &out);
    }
    // Every 10th frame of a Frame Time of 1e308 s: streamed, and whole.
    std::fs::write(p("huge.bvh"), clip("1e308", 10)).unwrap();
    let huge = s("huge.bvh");
    let every = "every 10 frames of a Frame Time of 1e308 s is more seconds per frame";
    refused(&["edit", &huge, "-o", &o, "--every", "10"], &["--every 10: ", every], &out);
    refused(&["edit", &huge, "-o", &o, "--every", "10", "--reverse"], &[every], &out);
    // Pacing one frame every 1e300 s: refused before anything is sent.
    refused(
        &["replay", &slow, "--as", "sensors", "--to", "udp://127.0.0.1:9", "--realtime"],
        &["Frame Time 1e300 s", "at most 86400 s"],
        &out,
    );
}

#[test]
fn a_crossfade_longer_than_any_clip_is_refused_not_made_zero_frames() {
    let tmp = tempfile::tempdir().unwrap();
    let a = tmp.path().join("a.bvh");
    std::fs::write(&a, clip("0.1", 10)).unwrap();
    let out = tmp.path().join("out.bvh");
    let (a, o) = (a.to_str().unwrap(), out.to_str().unwrap());
    // Beyond an hour: refused as it is read.
    for cmd in ["concat", "loop"] {
        let mut args = vec![cmd, a];
        if cmd == "concat" {
            args.push(a);
        }
        args.extend(["-o", o, "--crossfade", "1e308s"]);
        refused(
            &args,
            &["'1e308s' for '--crossfade", "at most 3600 seconds (3600s), found 1e308"],
            &out,
        );
    }
    refused(
        &["concat", a, a, "-o", o, "--crossfade", "3600s"],
        &["the crossfade (3600s = 36000 frames) is longer than"],
        &out,
    );
    refused(
        &["loop", a, "-o", o, "--crossfade", "3600s"],
        &["the crossfade (3600s = 36000 frames) is longer than half the clip (10 frames)"],
        &out,
    );
}

/// `-j` beyond 1,024 threads (or 0) is refused at once, naming the limit,
/// by every command that takes it (`-j 100000` ran 30 s before failing).
#[test]
fn thread_counts_beyond_the_limit_are_refused_at_once() {
    let tmp = tempfile::tempdir().unwrap();
    let a = tmp.path().join("a.bvh");
    std::fs::write(&a, clip("0.04", 3)).unwrap();
    let a = a.to_str().unwrap();
    let out = tmp.path().join("out");
    let o = out.to_str().unwrap();
    let (npz, glb) = (format!("{o}.npz"), format!("{o}.glb"));
    for j in ["100000", "0", "many"] {
        for args in [
            vec!["fmt", a, "-o", o, "-j", j],
            vec!["edit", a, "--scale", "2", "-o", o, "-j", j],
            vec!["positions", a, "-o", o, "-j", j],
            vec!["export", a, "-o", &npz, "-j", j],
            vec!["export", a, "-o", &glb, "-j", j],
        ] {
            let started = std::time::Instant::now();
            refused(&args, &["--threads", "1 to 1024"], &out);
            assert!(started.elapsed().as_secs() < 10, "bvh {}: slow refusal", args.join(" "));
        }
    }
}

/// A loop too short for its crossfade says what it needs: a 1-frame clip
/// (whose default 0.25 s crossfade rounded to 0 frames at a Frame Time of
/// 1 s, and the message asked for "a crossfade of at least one frame"
/// that no crossfade could give) needs 2 frames; a crossfade under one
/// frame, or longer than half the clip, names the frames it can be.
#[test]
fn a_loop_too_short_for_its_crossfade_says_what_it_needs() {
    let tmp = tempfile::tempdir().unwrap();
    let p = |n: &str| tmp.path().join(n);
    let out = p("out.bvh");
    let o = out.to_str().unwrap();
    for (name, ft, n) in [("one.bvh", "1", 1), ("one_fast.bvh", "0.01", 1), ("four.bvh", "0.1", 4)]
    {
        std::fs::write(p(name), clip(ft, n)).unwrap();
    }
    let s = |n: &str| p(n).to_str().unwrap().to_string();
    let need_two = "the clip has 1 frame: a loop needs at least 2";
    for file in ["one.bvh", "one_fast.bvh"] {
        refused(&["loop", &s(file), "-o", o], &[need_two], &out);
        refused(&["loop", &s(file), "-o", o, "--crossfade", "1"], &[need_two], &out);
    }
    refused(
        &["loop", &s("four.bvh"), "-o", o, "--crossfade", "0.01s"],
        &["the crossfade (0.01s = 0 frames) is under one frame (frame time 0.1 s)"],
        &out,
    );
    refused(
        &["loop", &s("four.bvh"), "-o", o, "--crossfade", "3"],
        &["the crossfade (3 frames) is longer than half the clip (4 frames)", "2 frames at most"],
        &out,
    );
    // Half the clip is the most: a loop of two frames, both crossfaded.
    let r = run_ok(&["loop", &s("four.bvh"), "-o", o, "--crossfade", "2"]);
    assert!(stderr(&r).contains("loop of 2 frames (2 crossfaded)"), "{}", stderr(&r));
}

/// An extreme value in a blend or layer weight, a filter's cut-off or a
/// spike threshold is shown as `1e300` in the error or the summary, not as
/// 301 digits (and a first key time out of range is not "after -inf").
#[test]
fn extreme_values_are_shown_short_in_errors_and_summaries() {
    let tmp = tempfile::tempdir().unwrap();
    let a = tmp.path().join("a.bvh");
    std::fs::write(&a, clip("0.0083333", 100)).unwrap();
    let out = tmp.path().join("out.bvh");
    let (a, o) = (a.to_str().unwrap(), out.to_str().unwrap());
    let short = |msg: &str| {
        assert!(!msg.contains("0000000000000000000"), "{msg}");
        assert!(!msg.contains("-inf"), "{msg}");
    };
    for w in ["1e300", "0:1e300", "5:1"] {
        let want = if w == "5:1" { "found 5" } else { "found 1e300" };
        short(&refused(&["blend", a, a, "-o", o, "--weight", w], &[want], &out));
        short(&refused(&["layer", a, a, "-o", o, "--weight", w], &[want], &out));
    }
    let err =
        refused(&["clean", a, "-o", o, "--butterworth", "1e300"], &["cut-off 1e300 Hz"], &out);
    short(&err);
    for (step, note) in
        [("--spikes=1e300", "(k = 1e300)"), ("--one-euro=1e300,1e-300", "1e300 Hz, beta 1e-300")]
    {
        let r = run_ok(&["clean", a, "-o", o, step]);
        assert!(stderr(&r).contains(note), "{}", stderr(&r));
        short(&stderr(&r));
    }
}

/// A frame number of an option says what a frame range says of it, not
/// Rust's "invalid digit found in string" (`layer --reference`), nor
/// clap's "unexpected argument '-1'" (`render --frame`).
#[test]
fn frame_numbers_of_options_are_refused_in_words() {
    let tmp = tempfile::tempdir().unwrap();
    let a = tmp.path().join("a.bvh");
    std::fs::write(&a, clip("0.0083333", 10)).unwrap();
    let (out, png) = (tmp.path().join("out.bvh"), tmp.path().join("out.png"));
    let (a, o, p) = (a.to_str().unwrap(), out.to_str().unwrap(), png.to_str().unwrap());
    for n in ["-1", "1e300", ""] {
        let want = format!("'{n}' is not a frame number (frames are counted from 0)");
        let err = refused(&["layer", a, a, "-o", o, "--reference", n], &[&want], &out);
        assert!(!err.contains("invalid digit") && !err.contains("empty string"), "{err}");
        refused(&["render", a, "-o", p, &format!("--frame={n}")], &[&want], &png);
    }
    refused(&["layer", a, a, "-o", o, "--reference", "4294967296"], &["is too large"], &out);
}
