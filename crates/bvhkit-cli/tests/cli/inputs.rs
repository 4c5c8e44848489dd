//! One rule for inputs across commands: arguments that give no BVH file
//! at all (a folder without any) are the error `no input file` (exit 2)
//! after the walk's warning, for every command that takes files or
//! folders; an empty folder beside other inputs is only the warning.
use std::process::{Output, Stdio};
use std::time::{Duration, Instant};

use super::{bvh, run, run_ok, stderr};

/// `bvh ARGS`, killed after 20 s (`bvh serve` of no clips used to serve
/// forever): `None` if it had to be killed.
fn run_bounded(args: &[&str]) -> Option<Output> {
    let mut child = bvh().args(args).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().unwrap();
    let start = Instant::now();
    while child.try_wait().unwrap().is_none() {
        if start.elapsed() > Duration::from_secs(20) {
            child.kill().unwrap();
            child.wait().unwrap();
            return None;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    Some(child.wait_with_output().unwrap())
}

#[test]
fn an_empty_folder_is_no_input_file_for_every_command() {
    let dir = tempfile::tempdir().unwrap();
    let empty = dir.path().join("empty");
    std::fs::create_dir(&empty).unwrap();
    // A file that is not BVH: the folder is still without BVH files.
    std::fs::write(empty.join("notes.txt"), "no motion here\n").unwrap();
    let d = empty.to_str().unwrap();
    let out = dir.path().join("out");
    let o = |name: &str| out.join(name).to_string_lossy().into_owned();
    let (folder, glb, parquet, png) = (o("f/"), o("x.glb"), o("x.parquet"), o("x.png"));
    let lines: Vec<Vec<&str>> = vec![
        vec!["info", d],
        vec!["check", d],
        vec!["fmt", d],
        vec!["fmt", d, "-o", &folder],
        vec!["fmt", "--in-place", d],
        vec!["edit", d, "--scale", "2", "-o", &folder],
        vec!["clean", d, "--spikes", "-o", &folder],
        vec!["lint", d],
        vec!["lint", "--json", d],
        vec!["positions", d, "-o", &folder],
        vec!["rotations", d, "-o", &folder],
        vec!["export", d, "-o", &folder],
        vec!["export", d, "-o", &glb],
        vec!["export", d, "-o", &parquet],
        vec!["render", d, "-o", &png],
        vec!["serve", d, "--port", "0"],
    ];
    for args in &lines {
        let r = run_bounded(args).unwrap_or_else(|| panic!("{args:?}: still running after 20 s"));
        let e = stderr(&r);
        assert_eq!(r.status.code(), Some(2), "{args:?}: {e}");
        assert!(e.contains(&format!("bvh: warning: no *.bvh file under {d}")), "{args:?}: {e}");
        assert!(e.ends_with("bvh: error: no input file\n"), "{args:?}: {e}");
        assert!(r.stdout.is_empty(), "{args:?}: {}", String::from_utf8_lossy(&r.stdout));
        assert!(!out.exists(), "{args:?}: wrote {}", out.display());
    }

    // Beside other inputs an empty folder is only the warning.
    let clip = dir.path().join("a.bvh");
    std::fs::write(
        &clip,
        "HIERARCHY\nROOT Hips\n{\n\tOFFSET 0 0 0\n\tCHANNELS 6 Xposition Yposition Zposition Zrotation Xrotation Yrotation\n\
         \tEnd Site\n\t{\n\t\tOFFSET 0 10 0\n\t}\n}\nMOTION\nFrames: 2\nFrame Time: 0.1\n\
         0 0 0 0 0 0\n1 0 0 0 0 0\n",
    )
    .unwrap();
    let a = clip.to_str().unwrap();
    for args in [vec!["check", d, a], vec!["info", a, d]] {
        let r = run_ok(&args);
        assert!(stderr(&r).contains("no *.bvh file under"), "{args:?}: {}", stderr(&r));
    }
    // `bvh concat` counts clips over all its arguments, as before.
    let c = o("c.bvh");
    std::fs::create_dir(&out).unwrap();
    let r = run_ok(&["concat", a, d, a, "-o", &c]);
    assert!(stderr(&r).contains("no *.bvh file under"), "{}", stderr(&r));
    let r = run(&["concat", d, "-o", &c]);
    assert_eq!(r.status.code(), Some(2));
    assert!(stderr(&r).contains("concat needs at least two clips; found 0"), "{}", stderr(&r));
}

/// `bvh loop` and `bvh retarget` (its source and its target) refuse what
/// `bvh fmt` refuses (a repair that invents or discards values), with its
/// message, and write it with `--repair`, as edit, clean and the mixes do.
#[test]
fn loop_and_retarget_refuse_repairs_that_invent_or_discard_values_as_fmt_does() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out.bvh");
    let o = out.to_str().unwrap();
    // The fixtures' skeleton, read without a repair: a retarget's other side.
    let clean = dir.path().join("clean.bvh");
    let mut text = String::from(
        "HIERARCHY\nROOT Hips\n{\n\tOFFSET 0 0 0\n\tCHANNELS 6 Xposition Yposition Zposition Zrotation Xrotation Yrotation\n\
         \tJOINT Spine\n\t{\n\t\tOFFSET 0 10 0\n\t\tCHANNELS 3 Zrotation Xrotation Yrotation\n\
         \t\tEnd Site\n\t\t{\n\t\t\tOFFSET 0 10 0\n\t\t}\n\t}\n}\nMOTION\nFrames: 40\nFrame Time: 0.1\n",
    );
    for f in 0..40 {
        text.push_str(&format!("0 0 {f} 0 {} 0 0 0 0\n", f % 7));
    }
    std::fs::write(&clean, text).unwrap();
    let c = clean.to_str().unwrap();
    // `input` refused (`why`) by each command line, `--repair` writes.
    let check = |input: &str, other: &str, why: &str, loops: bool| {
        let mut lines: Vec<Vec<&str>> = vec![
            vec!["retarget", input, "--to", other],
            vec!["retarget", other, "--to", input],
            vec!["retarget", input, "--to", other, "--no-lock-feet"],
        ];
        if loops {
            lines.push(vec!["loop", input]);
        }
        for mut args in lines {
            args.extend(["-o", o]);
            let _ = std::fs::remove_file(&out);
            let r = run(&args);
            let e = stderr(&r);
            assert_eq!(r.status.code(), Some(2), "{args:?}: {e}");
            assert!(
                e.contains(&format!("bvh: error: {input}: not written: the repair {why}"))
                    && e.contains("; --repair writes it anyway"),
                "{args:?}: {e}"
            );
            assert!(!out.exists(), "{args:?}: written");
            args.push("--repair");
            let r = run(&args);
            assert!(!stderr(&r).contains("not written"), "{args:?}: {}", stderr(&r));
            if args[0] == "retarget" {
                assert!(r.status.success(), "{args:?}: {}", stderr(&r));
                assert!(out.exists(), "{args:?}: not written");
            }
        }
    };
    check(
        &super::fx("last_row_cut.bvh"),
        c,
        "discards 4 values of an incomplete last frame (line 21)",
        true,
    );
    check(&super::fx("frame_time_missing.bvh"), c, "invents a Frame Time of 1/30 s", true);
    // `--strict` and `--repair` contradict each other.
    let r = run(&["loop", c, "-o", o, "--strict", "--repair"]);
    assert_eq!(r.status.code(), Some(2), "{}", stderr(&r));
    // A clean clip loops as before.
    run_ok(&["loop", c, "-o", o]);

    // The corpus's malformed files: refused exactly as `bvh fmt` refuses them.
    let Some(corpus) = super::corpus() else { return };
    let walk = corpus.join("cmu_01_01_walk_cgspeed_mb_names.bvh");
    for name in [
        "malformed_132_channels_66_values_per_row.bvh",
        "malformed_no_motion_keyword_no_frame_time.bvh",
    ] {
        let f = corpus.join(name);
        let f = f.to_str().unwrap();
        let e = stderr(&run(&["fmt", f, "-o", o]));
        let (_, why) = e.split_once(": not written: the repair ").expect(&e);
        let why = why.split("; --repair").next().unwrap();
        check(f, walk.to_str().unwrap(), why, true);
    }
}
