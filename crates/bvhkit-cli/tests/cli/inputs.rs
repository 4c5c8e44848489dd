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
