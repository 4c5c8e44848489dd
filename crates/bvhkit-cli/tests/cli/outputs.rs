//! Outputs shared by every writing command: a `.gltf` and its `.bin` are
//! published together or not at all, hard-linked outputs are refused
//! unless `--break-links`, and `bvh concat` takes folders in natural order.
use std::path::Path;
use std::process::Command;

use super::{fixture, fx, run, run_ok, stderr};

use bvhkit_testdata::file_names as listing;

/// A fresh folder, and a name in it as an argument.
fn scratch() -> (tempfile::TempDir, impl Fn(&str) -> String) {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().to_path_buf();
    (tmp, move |n: &str| root.join(n).to_string_lossy().into_owned())
}

#[cfg(unix)]
#[test]
fn gltf_and_its_bin_are_published_together_or_not_at_all() {
    let (tmp, s) = scratch();
    let d = tmp.path();
    // The .bin path is a folder: nothing is written, no .gltf without its .bin.
    std::fs::create_dir(d.join("x.bin")).unwrap();
    let o = run(&["export", &fx("crlf.bvh"), "-o", &s("x.gltf"), "--bin-file"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("x.bin: is a directory"), "{}", stderr(&o));
    assert_eq!(listing(d), ["x.bin"]);
    assert_eq!(listing(&d.join("x.bin")), Vec::<String>::new());

    // An existing pair, then failures injected after the new .bin is
    // complete: the old pair stays whole, and no temporary file is left.
    run_ok(&["export", &fx("crlf.bvh"), "-o", &s("p.gltf"), "--bin-file"]);
    let (old_gltf, old_bin) =
        (std::fs::read(d.join("p.gltf")).unwrap(), std::fs::read(d.join("p.bin")).unwrap());
    let other = fx("two_roots.bvh");
    // (a) The .gltf cannot be replaced (another hard link to it).
    std::fs::hard_link(d.join("p.gltf"), d.join("p-copy.gltf")).unwrap();
    let o = run(&["export", &other, "-o", &s("p.gltf"), "--bin-file"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("has 2 hard links"), "{}", stderr(&o));
    assert_eq!(std::fs::read(d.join("p.gltf")).unwrap(), old_gltf);
    assert_eq!(std::fs::read(d.join("p.bin")).unwrap(), old_bin);
    assert_eq!(listing(d), ["p-copy.gltf", "p.bin", "p.gltf", "x.bin"]);
    std::fs::remove_file(d.join("p-copy.gltf")).unwrap();
    // (b) Writing the .gltf fails (a full device at the end of a link).
    std::fs::rename(d.join("p.gltf"), d.join("keep.gltf")).unwrap();
    std::os::unix::fs::symlink("/dev/full", d.join("p.gltf")).unwrap();
    let o = run(&["export", &other, "-o", &s("p.gltf"), "--bin-file"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert_eq!(std::fs::read(d.join("p.bin")).unwrap(), old_bin, "the new .bin is not published");
    assert_eq!(listing(d), ["keep.gltf", "p.bin", "p.gltf", "x.bin"]);
    std::fs::remove_file(d.join("p.gltf")).unwrap();
    std::fs::rename(d.join("keep.gltf"), d.join("p.gltf")).unwrap();
    // Success replaces both, and the new .gltf names the new .bin's size.
    run_ok(&["export", &other, "-o", &s("p.gltf"), "--bin-file"]);
    let doc: serde_json::Value =
        serde_json::from_slice(&std::fs::read(d.join("p.gltf")).unwrap()).unwrap();
    let bin = std::fs::read(d.join("p.bin")).unwrap();
    assert_ne!(bin, old_bin);
    assert_eq!(doc["buffers"][0]["byteLength"], bin.len());
    assert_eq!(listing(d), ["p.bin", "p.gltf", "x.bin"]);
}

/// Every writing command refuses an output with other hard links (naming
/// the count), leaving both names as they were; `--break-links` replaces
/// the named one only.
#[cfg(unix)]
#[test]
fn hard_linked_outputs_are_refused_unless_break_links() {
    let (tmp, s) = scratch();
    let d = tmp.path();
    let input = fx("crlf.bvh");
    let cases: Vec<(Vec<String>, &str)> = vec![
        (vec!["fmt".into(), input.clone()], "out.bvh"),
        (vec!["edit".into(), input.clone(), "--every".into(), "2".into()], "out.bvh"),
        (vec!["concat".into(), input.clone(), input.clone()], "out.bvh"),
        (vec!["positions".into(), input.clone()], "out.csv"),
        (vec!["rotations".into(), input.clone(), "--format".into(), "npy".into()], "out.npy"),
        (vec!["render".into(), input.clone(), "--size".into(), "64x48".into()], "out.png"),
        (vec!["export".into(), input.clone()], "out.glb"),
    ];
    for (args, out) in cases {
        let _ = std::fs::remove_file(d.join(out));
        let _ = std::fs::remove_file(d.join("other"));
        std::fs::write(d.join(out), "old").unwrap();
        std::fs::hard_link(d.join(out), d.join("other")).unwrap();
        let mut all: Vec<&str> = args.iter().map(String::as_str).collect();
        let target = s(out);
        all.extend(["-o", &target]);
        let o = run(&all);
        assert_eq!(o.status.code(), Some(2), "{all:?}: {}", stderr(&o));
        assert!(
            stderr(&o).contains(&format!(
                "{target}: has 2 hard links; replacing it would leave the other name with the old contents"
            )) && stderr(&o).contains("--break-links"),
            "{all:?}: {}",
            stderr(&o)
        );
        assert_eq!(std::fs::read_to_string(d.join(out)).unwrap(), "old", "{all:?}");
        assert_eq!(std::fs::read_to_string(d.join("other")).unwrap(), "old", "{all:?}");
        all.push("--break-links");
        run_ok(&all);
        assert_ne!(std::fs::read(d.join(out)).unwrap(), b"old", "{all:?}");
        assert_eq!(std::fs::read_to_string(d.join("other")).unwrap(), "old", "{all:?}");
    }
    // `fmt --in-place` of a hard-linked input too.
    let a = d.join("a.bvh");
    std::fs::copy(fixture("crlf.bvh"), &a).unwrap();
    std::fs::hard_link(&a, d.join("b.bvh")).unwrap();
    std::fs::hard_link(&a, d.join("c.bvh")).unwrap();
    let o = run(&["fmt", "--in-place", &s("a.bvh")]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("has 3 hard links; replacing it would leave the other 2 names"),
        "{}",
        stderr(&o)
    );
    run_ok(&["fmt", "--in-place", &s("a.bvh"), "--break-links"]);
    assert_eq!(
        std::fs::read(d.join("b.bvh")).unwrap(),
        std::fs::read(fixture("crlf.bvh")).unwrap()
    );
    assert_ne!(std::fs::read(&a).unwrap(), std::fs::read(d.join("b.bvh")).unwrap());
}

/// `bvh concat DIR` takes the folder's `*.bvh` files in natural order
/// (take2 before take10), says so, and gives the same bytes as naming
/// them in that order; a folder with one clip is refused.
#[test]
fn concat_takes_a_folders_clips_in_natural_order() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    let takes = d.join("takes");
    std::fs::create_dir_all(takes.join("sub")).unwrap();
    let clip = bvhkit::Bvh::parse(bvhkit_testdata::synth_text(3, 4, 40).as_bytes()).unwrap();
    // Different lengths, so the order shows in the output.
    for (name, n) in [("take10.bvh", 7), ("take2.bvh", 5), ("take1.bvh", 3), ("sub/take3.BVH", 4)] {
        let part = bvhkit::edit::frames::range(&clip, 0..n).unwrap();
        std::fs::write(takes.join(name), part.to_bytes().unwrap()).unwrap();
    }
    std::fs::write(takes.join("notes.txt"), "not a clip").unwrap();
    let s = |p: &Path| p.to_string_lossy().into_owned();
    let o = run_ok(&["concat", &s(&takes), "-o", &s(&d.join("all.bvh")), "--keep-position"]);
    assert!(
        stderr(&o)
            .contains("4 clips in this order: sub/take3.BVH, take1.bvh, take2.bvh, take10.bvh"),
        "{}",
        stderr(&o)
    );
    let named: Vec<String> = ["sub/take3.BVH", "take1.bvh", "take2.bvh", "take10.bvh"]
        .iter()
        .map(|n| s(&takes.join(n)))
        .collect();
    let mut args: Vec<&str> = vec!["concat"];
    args.extend(named.iter().map(String::as_str));
    let one_by_one = s(&d.join("named.bvh"));
    args.extend(["-o", &one_by_one, "--keep-position"]);
    run_ok(&args);
    let all = std::fs::read(d.join("all.bvh")).unwrap();
    assert_eq!(all, std::fs::read(d.join("named.bvh")).unwrap());
    assert_eq!(bvhkit::Bvh::parse(&all).unwrap().motion().n_frames(), 4 + 3 + 5 + 7);
    // A folder beside files, in argument order.
    let o = run_ok(&[
        "concat",
        &s(&takes.join("take2.bvh")),
        &s(&takes.join("sub")),
        "-o",
        &s(&d.join("two.bvh")),
    ]);
    assert!(stderr(&o).contains("1 clip in this order: take3.BVH"), "{}", stderr(&o));
    // An empty folder among the clips is said plainly, not as "0 clips in
    // this order: " with nothing after it.
    let empty = d.join("empty");
    std::fs::create_dir(&empty).unwrap();
    let o = run_ok(&[
        "concat",
        &s(&takes.join("take2.bvh")),
        &s(&empty),
        &s(&takes.join("take1.bvh")),
        "-o",
        &s(&d.join("skip.bvh")),
    ]);
    let e = stderr(&o);
    assert!(e.contains("empty: no *.bvh file in this folder; nothing taken from it"), "{e}");
    assert!(!e.contains("0 clips"), "{e}");
    // One clip in all is refused, with the count.
    let o = run(&["concat", &s(&takes.join("sub")), "-o", &s(&d.join("one.bvh"))]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("concat needs at least two clips; found 1"), "{}", stderr(&o));
    assert!(!d.join("one.bvh").exists());
}

/// A full disk (`/dev/full`, behind a link with the output's name, which
/// the commands write through): every writing command names the output
/// and says the system's reason once, exits 2, and nothing else speaks on
/// standard error (the NPZ archive does not complain again when dropped).
#[cfg(target_os = "linux")]
#[test]
fn a_full_disk_is_said_once_naming_the_output() {
    if !Path::new("/dev/full").exists() {
        bvhkit_testdata::skip("a_full_disk_is_said_once_naming_the_output", "no /dev/full");
        return;
    }
    let (tmp, s) = scratch();
    let input = fixture("crlf.bvh");
    let input = input.to_str().unwrap();
    // (Datasets refuse devices: a full disk under a dataset is in the
    // dataset crate's tests.)
    let cases: [(&str, &[&str]); 7] = [
        ("o.bvh", &["fmt", input]),
        ("e.bvh", &["edit", input, "--order", "zxy"]),
        ("r.bvh", &["edit", input, "--reverse"]),
        ("p.csv", &["positions", input]),
        ("p.npy", &["positions", input]),
        ("x.glb", &["export", input]),
        ("c.bvh", &["concat", input, input]),
    ];
    for (name, args) in cases {
        std::os::unix::fs::symlink("/dev/full", tmp.path().join(name)).unwrap();
        let out = s(name);
        let o = run(&[args, &["-o", &out]].concat());
        let err = stderr(&o);
        assert_eq!(o.status.code(), Some(2), "{name}: {err}");
        let errors: Vec<&str> = err.lines().filter(|l| l.starts_with("bvh: error:")).collect();
        assert_eq!(errors.len(), 1, "{name}: {err}");
        assert_eq!(errors[0].matches(&format!("writing {out}")).count(), 1, "{name}: {err}");
        assert_eq!(err.matches("No space left on device").count(), 1, "{name}: {err}");
        assert!(err.lines().all(|l| l.starts_with("bvh: ") || l.contains(" → ")), "{name}: {err}");
    }
    // `-o -` onto a full device is named as standard output ("writing -"
    // before).
    let full = std::fs::File::options().write(true).open("/dev/full").unwrap();
    for args in [&["replay", input, "--as", "sensors", "-o", "-"][..], &["fmt", input, "-o", "-"]] {
        let o = Command::new(env!("CARGO_BIN_EXE_bvh"))
            .args(args)
            .stdout(full.try_clone().unwrap())
            .output()
            .unwrap();
        let err = stderr(&o);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
        assert_eq!(
            err.matches("writing standard output: No space left on device").count(),
            1,
            "{args:?}: {err}"
        );
        assert!(!err.contains("writing -"), "{args:?}: {err}");
    }
}

/// One rule for the folders of an output (`docs/commands.md`): every
/// writing command makes the missing folders of `-o`, as `mkdir -p` (the
/// mix commands, retarget, render and record refused them).
#[test]
fn every_writing_command_makes_the_folders_of_its_output() {
    let (_tmp, at) = scratch();
    let f = at("fig.bvh");
    let mut text = super::standing_figure_header(60);
    for i in 0..60 {
        text += &format!("{} 90 0 0 {} 0 0 0 0 0 0 0 0 0 0\n", i as f64 * 0.5, (i % 7) as f64);
    }
    std::fs::write(&f, text).unwrap();
    let cases: [&[&str]; 10] = [
        &["retarget", &f, "--to", &f],
        &["blend", &f, &f, "--weight", "0.5"],
        &["layer", &f, &f, "--weight", "0.5"],
        &["concat", &f, &f],
        &["loop", &f],
        &["edit", &f],
        &["fmt", &f],
        &["clean", &f, "--butterworth", "6"],
        &["export", &f],
        &["positions", &f],
    ];
    for (k, args) in cases.iter().enumerate() {
        let ext = match args[0] {
            "export" => "glb",
            "positions" => "csv",
            _ => "bvh",
        };
        let out = at(&format!("m{k}/a/b/out.{ext}"));
        let mut all = args.to_vec();
        all.extend(["-o", &out]);
        run_ok(&all);
        assert!(Path::new(&out).is_file(), "bvh {}: {out} not made", all.join(" "));
    }
    let html = at("lint/a/report.html");
    run_ok(&["lint", &f, "-q", "--html", &html]);
    assert!(Path::new(&html).is_file());
}

/// The mix commands refuse an output that cannot be made (a folder, a path
/// under a file) before they read their clips, where they found it only
/// after the whole mix (the unreadable second clip is never reported).
#[test]
fn the_mix_commands_refuse_an_unplaceable_output_before_the_work() {
    let (_tmp, at) = scratch();
    let f = fx("crlf.bvh");
    let bad = at("bad.bvh");
    std::fs::write(&bad, "not a bvh").unwrap();
    let dir = at("dir");
    std::fs::create_dir(&dir).unwrap();
    let under = format!("{f}/out.bvh");
    let mixes: [&[&str]; 4] = [
        &["blend", &f, &bad, "--weight", "0.5"],
        &["layer", &f, &bad, "--weight", "0.5"],
        &["concat", &f, &bad],
        &["loop", &bad],
    ];
    for args in mixes {
        for (o, want) in
            [(&dir, format!("{dir}: is a directory")), (&under, format!("{f} is not a folder"))]
        {
            let mut all = args.to_vec();
            all.extend(["-o", o]);
            let err = super::refused(&all, &[&want], Path::new(&under));
            assert!(!err.contains("bad.bvh"), "bvh {}: {err}", all.join(" "));
        }
    }
}
