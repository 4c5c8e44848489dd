//! `bvh positions --up auto` and `bvh rotations --up auto` into a file
//! detect the up axis on the sampled frames read from their own lines, and
//! the export checks them as it reads every frame: they write what the
//! exact path (a first pass over every frame) writes, which standard
//! input (read whole) and standard output (which cannot be taken back)
//! still take.
use std::path::Path;
use std::process::{Output, Stdio};

use super::{bvh, corpus, standing_figure_header, stderr};

/// `bvh COMMAND INPUT -o OUT --up auto ARGS`, with `input` on standard
/// input when `INPUT` is `-`.
fn export(command: &[&str], input: &Path, name: &str, out: &Path, args: &[&str]) -> Output {
    let mut c = bvh();
    c.args(command).arg(name).arg("-o").arg(out).args(["--up", "auto"]).args(args);
    if name == "-" {
        c.stdin(Stdio::from(std::fs::File::open(input).unwrap()));
    }
    c.output().unwrap()
}

/// What a run left: its exit code, its stderr (`<stdin>` named as
/// `input`, the output's name as `OUT`), and the bytes of `out` and of its
/// NPY sidecar (its `source` named as `input`, its `array` as `OUT`), if
/// any.
fn outcome(o: &Output, input: &Path, out: &Path) -> (Option<i32>, String, Vec<u8>, String) {
    let name = input.to_str().unwrap();
    let err = stderr(o).replace("<stdin>", name).replace(out.to_str().unwrap(), "OUT");
    let bytes = std::fs::read(out).unwrap_or_default();
    let mut side = out.as_os_str().to_owned();
    side.push(".json");
    let side = std::fs::read(side).map_or_else(
        |_| String::new(),
        |b| {
            let mut v: serde_json::Value = serde_json::from_slice(&b).unwrap();
            v["source"] = name.into();
            v["array"] = "OUT".into();
            v.to_string()
        },
    );
    (o.status.code(), err, bytes, side)
}

/// Asserts that `bvh COMMAND INPUT -o OUT.npy --up auto ARGS` (sampled,
/// checked) and the same from standard input (the exact path) end alike,
/// and so do CSV into a file and to standard output.
fn assert_same_as_exact(input: &Path, dir: &Path, command: &[&str], args: &[&str]) {
    let file = input.to_str().unwrap();
    let what = format!("{command:?} {file} {args:?}");
    let (a_npy, b_npy, a_csv) = (dir.join("a.npy"), dir.join("b.npy"), dir.join("a.csv"));
    for n in ["a.npy", "a.npy.json", "b.npy", "b.npy.json", "a.csv"] {
        let _ = std::fs::remove_file(dir.join(n));
    }
    let sampled = export(command, input, file, &a_npy, args);
    let exact = export(command, input, "-", &b_npy, args);
    let (a, b) = (outcome(&sampled, input, &a_npy), outcome(&exact, input, &b_npy));
    assert_eq!(a.0, b.0, "{what}: exit codes; {}", a.1);
    assert_eq!(a.1, b.1, "{what}: notes");
    assert!(a.2 == b.2, "{what}: NPY arrays differ");
    assert_eq!(a.3, b.3, "{what}: sidecars");
    let sampled = export(command, input, file, &a_csv, args);
    let exact = export(command, input, file, Path::new("-"), args);
    assert_eq!(sampled.status.code(), exact.status.code(), "{what}: CSV exit codes");
    assert_eq!(stderr(&sampled).replace(a_csv.to_str().unwrap(), "-"), stderr(&exact), "{what}");
    // A failed export leaves no file; standard output, written through,
    // keeps what went out before the error (the header of a range past the
    // end).
    if exact.status.success() {
        let csv = std::fs::read(&a_csv).unwrap_or_default();
        assert!(csv == exact.stdout, "{what}: CSV bytes differ");
    } else {
        assert!(!a_csv.exists(), "{what}: a failed export left {}", a_csv.display());
    }
}

/// Every corpus file: the same arrays, sidecars, CSV and notes (or the
/// same error) as the exact path, for `positions` and `rotations`, with
/// frame ranges that stop the reading early, that do not, and none.
#[test]
fn sampled_up_axis_exports_equal_the_exact_paths_on_the_corpus() {
    let Some(dir) = corpus() else { return };
    let tmp = tempfile::tempdir().unwrap();
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "bvh"))
        .collect();
    files.sort();
    assert!(files.len() >= 41, "{}", files.len());
    for f in &files {
        assert_same_as_exact(f, tmp.path(), &["positions"], &[]);
        assert_same_as_exact(f, tmp.path(), &["rotations", "--space", "world"], &[]);
        assert_same_as_exact(f, tmp.path(), &["positions"], &["--frames", "1..4"]);
        assert_same_as_exact(f, tmp.path(), &["rotations"], &["--frames", "2..=1000000"]);
    }
}

/// A clip of 20 frames whose lines are not its frames: line 3 holds a
/// value too few and line 18 one too many, so that frames 4 to 17 are one
/// value later than their lines. Those lines stand upright (turned about
/// Y), the frames lie on their backs (the root's X rotation is 90: Z up).
/// The up axis is detected on frames 0, 1, 2, 4, 5, 6, 8, 9, 10, 12, 13,
/// 14, 16, 17, 19: their lines say Y up in all 15, the clip says Z up in
/// 11 of them.
fn shifted_z_lines_text() -> String {
    let mut t = standing_figure_header(20);
    for line in 0..20 {
        t.push_str(match line {
            3 => "0 90 0 0 0 0 1 2 3 4 5 6 7 8",
            // Upright as a line (a turn about Y), on its back one value on.
            4..=17 => "0 90 0 0 0 90 0 0 0 0 0 0 0 0 0",
            18 => "0 0 90 0 0 0 1 2 3 4 5 6 7 8 9 10",
            _ => "0 90 0 0 0 0 1 2 3 4 5 6 7 8 9",
        });
        t.push('\n');
    }
    t
}

/// The sampled lines of a file whose lines are not its frames give
/// another up axis than its frames; the export's check sees the frames
/// differ and the exact path writes the output: Z converted to Y, with the
/// note, for arrays, sidecars and CSV alike, with and without a frame
/// range.
#[test]
fn lines_that_are_not_the_frames_give_the_exact_paths_output() {
    use bvhkit::edit::axes::{SignedAxis, detect_up, detect_up_sampled, sampled_frames};
    let tmp = tempfile::tempdir().unwrap();
    let input = tmp.path().join("shifted.bvh");
    let text = shifted_z_lines_text();
    std::fs::write(&input, &text).unwrap();
    let file = input.to_str().unwrap();
    // The file fools the sample: its lines say Y up, its frames Z up.
    let mut opts = bvhkit::ReadOptions::new();
    opts.lenient(true);
    let bvh = opts.parse(text.as_bytes()).unwrap().0;
    assert_eq!(bvh.motion().n_frames(), 20);
    let lines = opts.sample_frames(text.as_bytes(), &sampled_frames(20)).unwrap().unwrap();
    let lines: Vec<&[f64]> = lines.chunks_exact(15).collect();
    assert_eq!(detect_up_sampled(bvh.skeleton(), &lines).axis, Some(SignedAxis::PosY));
    assert_eq!(detect_up(&bvh).axis, Some(SignedAxis::PosZ));
    for command in [&["positions"][..], &["rotations", "--space", "world"][..]] {
        for args in [&[][..], &["--frames", "..20"], &["--frames", "5.."], &["--frames", "0..3"]] {
            assert_same_as_exact(&input, tmp.path(), command, args);
            let err = stderr(&export(command, &input, file, &tmp.path().join("c.csv"), args));
            assert!(
                err.contains("detected up axis z (") && err.contains("in 11 of 15 frames"),
                "{err}"
            );
        }
    }
}
