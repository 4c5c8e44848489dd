//! `bvh clean` end to end: every option gives the library's result byte for
//! byte, folders and several inputs go to an output folder, bad values are
//! precise errors (option, value, limit) without a panic, the input is never
//! replaced, nothing is left half-written, `--dry-run` writes nothing, the
//! summary's text; and `bvh record --one-euro` equals `bvh clean --one-euro`
//! of the take recorded without it.

use std::path::{Path, PathBuf};

use bvhkit::clean::{self, Butterworth, OneEuro, Options, SavGol};
use bvhkit::{Bvh, WriteOptions};

use super::{bvh, run, run_with_stdin, standing_figure_header, stderr, stdout};

/// A standing figure (`standing_figure_header`: Hips with position, Head,
/// LeftFoot, RightFoot) of `frames` frames at 25 fps: slow swings with a
/// deterministic wobble and one spike at frame 40 on the head.
fn wobbly(frames: usize, seed: u64) -> String {
    let mut s = standing_figure_header(frames);
    let mut x = seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1;
    let mut noise = || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        (x >> 11) as f64 / (1u64 << 53) as f64 - 0.5
    };
    for f in 0..frames {
        let t = f as f64 / 25.0;
        let spike = if f == 40 { 30.0 } else { 0.0 };
        let v = [
            2.0 * t + noise(),
            90.0 + (t * 3.0).sin() + 0.2 * noise(),
            0.5 * noise(),
            10.0 * (t * 2.0).sin() + noise(),
            5.0 * noise(),
            170.0 * t.sin() + noise(),
            20.0 * (t * 1.5).sin() + noise() + spike,
            noise(),
            noise(),
            15.0 * (t * 4.0).sin() + noise(),
            noise(),
            noise(),
            -15.0 * (t * 4.0).sin() + noise(),
            noise(),
            noise(),
        ];
        let row: Vec<String> = v.iter().map(|x| format!("{x:.6}")).collect();
        s += &row.join(" ");
        s.push('\n');
    }
    s
}

fn write(dir: &Path, name: &str, text: &str) -> String {
    let p = dir.join(name);
    if let Some(d) = p.parent() {
        std::fs::create_dir_all(d).unwrap();
    }
    std::fs::write(&p, text).unwrap();
    p.to_string_lossy().into_owned()
}

/// The bytes `bvh clean` must write for `text` cleaned with `opts`.
fn expected(text: &str, opts: &Options) -> Vec<u8> {
    let bvh = Bvh::parse(text).unwrap();
    let (out, _) = clean::clean(&bvh, opts).unwrap();
    let mut v = Vec::new();
    WriteOptions::new().write(&out, &mut v).unwrap();
    v
}

/// Every file below `d`, relative, sorted (temporary files would show).
fn tree(d: &Path) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> =
        walk(d).into_iter().map(|p| p.strip_prefix(d).unwrap().into()).collect();
    v.sort();
    v
}

fn walk(d: &Path) -> Vec<PathBuf> {
    let mut v = Vec::new();
    for e in std::fs::read_dir(d).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            v.extend(walk(&p));
        } else {
            v.push(p);
        }
    }
    v
}

/// Each option, alone or with the others it goes with, writes what the
/// library gives for the same options, byte for byte.
#[test]
fn clean_options_write_the_library_result() {
    let dir = tempfile::tempdir().unwrap();
    let text = wobbly(120, 1);
    let input = write(dir.path(), "in.bvh", &text);
    let out = dir.path().join("out.bvh");
    let out_s = out.to_string_lossy().into_owned();
    let d = Options::default();
    let bw = |c, o| Some(Butterworth { cutoff_hz: c, order: o });
    let strength = |v: &[(&str, f64)]| v.iter().map(|(s, f)| (s.to_string(), *f)).collect();
    let cases: Vec<(Vec<&str>, Options)> = vec![
        (vec!["--butterworth", "6"], Options { butterworth: bw(6.0, 4), ..d.clone() }),
        (vec!["--butterworth", "3,2"], Options { butterworth: bw(3.0, 2), ..d.clone() }),
        (
            vec!["--savgol", "9,2"],
            Options { savgol: Some(SavGol { window: 9, poly: 2 }), ..d.clone() },
        ),
        (
            vec!["--one-euro", "1.5,0.02"],
            Options {
                one_euro: Some(OneEuro { min_cutoff: 1.5, beta: 0.02, d_cutoff: 1.0 }),
                ..d.clone()
            },
        ),
        (
            vec!["--one-euro", "1,0.1,2"],
            Options {
                one_euro: Some(OneEuro { min_cutoff: 1.0, beta: 0.1, d_cutoff: 2.0 }),
                ..d.clone()
            },
        ),
        (vec!["--spikes"], Options { spikes: Some(40.0), ..d.clone() }),
        (vec!["--spikes=8"], Options { spikes: Some(8.0), ..d.clone() }),
        (
            vec!["--butterworth", "6", "--joints", "Head,LeftFoot"],
            Options {
                butterworth: bw(6.0, 4),
                joints: Some(vec!["Head".into(), "LeftFoot".into()]),
                ..d.clone()
            },
        ),
        (
            vec!["--butterworth", "6", "--strength", "*=0.5,Hips=1", "--strength", "Hips/*=0.25"],
            Options {
                butterworth: bw(6.0, 4),
                strength: strength(&[("*", 0.5), ("Hips", 1.0), ("Hips/*", 0.25)]),
                ..d.clone()
            },
        ),
        (vec!["--remove-drift"], Options { remove_drift: true, ..d.clone() }),
        (
            vec!["--ground", "--up", "y", "--feet", "LeftFoot,RightFoot"],
            Options {
                ground: true,
                quality: bvhkit::quality::Options {
                    up: Some(bvhkit::edit::axes::SignedAxis::from_name("y").unwrap()),
                    feet: Some(vec!["LeftFoot".into(), "RightFoot".into()]),
                    ..Default::default()
                },
                ..d.clone()
            },
        ),
        (vec!["--lock-feet"], Options { lock_feet: true, ..d.clone() }),
        (
            vec!["--lock-feet", "--flatten-feet"],
            Options { lock_feet: true, flatten_feet: true, ..d.clone() },
        ),
        (
            vec!["--spikes", "--savgol", "7,3", "--one-euro", "2,0.01", "--remove-drift"],
            Options {
                spikes: Some(40.0),
                savgol: Some(SavGol { window: 7, poly: 3 }),
                one_euro: Some(OneEuro { min_cutoff: 2.0, beta: 0.01, d_cutoff: 1.0 }),
                remove_drift: true,
                ..d.clone()
            },
        ),
    ];
    for (args, opts) in cases {
        let _ = std::fs::remove_file(&out);
        let o = run(&[&["clean", &input, "-o", &out_s][..], &args].concat());
        assert!(o.status.success(), "{args:?}: {}", stderr(&o));
        let got = std::fs::read(&out).unwrap();
        assert!(got == expected(&text, &opts), "{args:?}: not the library's result");
        assert_eq!(std::fs::read_to_string(&input).unwrap(), text, "{args:?}: input changed");
    }
    // Standard input to standard output: the same bytes.
    let o = run_with_stdin(
        dir.path(),
        &["clean", "-", "-o", "-", "--butterworth", "6"],
        text.as_bytes(),
    );
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(o.stdout == expected(&text, &Options { butterworth: bw(6.0, 4), ..d }));
}

/// The summary, on stdout with `--dry-run`, is the library report's text;
/// written, it goes to stderr after the file's name. `--dry-run` writes
/// nothing, not even the output's folder.
#[test]
fn clean_summary_and_dry_run() {
    let dir = tempfile::tempdir().unwrap();
    let text = wobbly(120, 2);
    let input = write(dir.path(), "walk.bvh", &text);
    let bvh_in = Bvh::parse(&text).unwrap();
    let opts = Options {
        spikes: Some(40.0),
        butterworth: Some(Butterworth { cutoff_hz: 6.0, order: 4 }),
        ..Options::default()
    };
    let report = clean::clean(&bvh_in, &opts).unwrap().1.to_string();
    assert!(report.starts_with("glitch frames (k = 40): "), "{report}");
    assert!(report.contains("\nspikes (k = 40): "), "{report}");
    assert!(report.contains("joint-frame(s) repaired in"), "{report}");
    assert!(report.contains("\nbutterworth 6 Hz, order 4: 4 joint(s) changed\n"), "{report}");
    assert!(report.contains("\n  Hips: up to "), "{report}");

    let out = dir.path().join("new/out.bvh");
    let out_s = out.to_string_lossy().into_owned();
    let args = ["clean", &input, "-o", &out_s, "--spikes", "--butterworth", "6", "--dry-run"];
    let o = run(&args);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(stdout(&o), report);
    assert!(!dir.path().join("new").exists(), "--dry-run created the output's folder");
    assert_eq!(tree(dir.path()), vec![PathBuf::from("walk.bvh")]);

    // Without --dry-run: written, the summary on stderr after the name.
    let o = run(&args[..args.len() - 1]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(stdout(&o), "");
    let want: String = report.lines().map(|l| format!("bvh: note: {input}: {l}\n")).collect();
    assert_eq!(stderr(&o), want);
    assert!(std::fs::read(&out).unwrap() == expected(&text, &opts));

    // Nothing asked for: a note, and the output is the input's canonical text.
    let o = run(&["clean", &input, "--dry-run"]);
    assert!(o.status.success());
    assert_eq!(stdout(&o), "");
    assert!(stderr(&o).contains("no cleaning step asked for"), "{}", stderr(&o));
}

/// A folder (with a subfolder) and several files go into the output folder,
/// the tree below the folder given kept; each output is the library's
/// result. `--dry-run` prints each file's summary after its name and writes
/// nothing. A bad file among good ones: the good ones written, the bad one
/// named in an error, nothing of it left, exit 2.
#[test]
fn clean_folders_and_several_inputs() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let texts = [wobbly(100, 3), wobbly(130, 4), wobbly(90, 5)];
    let a = write(d, "in/a.bvh", &texts[0]);
    write(d, "in/sub/b.bvh", &texts[1]);
    let c = write(d, "c.bvh", &texts[2]);
    let opts = Options {
        butterworth: Some(Butterworth { cutoff_hz: 5.0, order: 4 }),
        ..Options::default()
    };
    let ins = d.join("in").to_string_lossy().into_owned();
    let out = d.join("out").to_string_lossy().into_owned() + "/";

    // Dry run over the folder and a file: every summary, nothing written.
    let o = run(&["clean", &ins, &c, "-o", &out, "--butterworth", "5", "--dry-run", "-j", "2"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let s = stdout(&o);
    for (name, text) in
        [(a.clone(), &texts[0]), (format!("{ins}/sub/b.bvh"), &texts[1]), (c.clone(), &texts[2])]
    {
        let report = clean::clean(&Bvh::parse(text).unwrap(), &opts).unwrap().1.to_string();
        for l in report.lines() {
            assert!(s.contains(&format!("{name}: {l}\n")), "{name}: {l} missing from {s}");
        }
    }
    assert!(!d.join("out").exists(), "--dry-run wrote");

    let o = run(&["clean", &ins, &c, "-o", &out, "--butterworth", "5"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(tree(&d.join("out")), ["a.bvh", "c.bvh", "sub/b.bvh"].map(PathBuf::from).to_vec());
    for (rel, text) in [("a.bvh", &texts[0]), ("sub/b.bvh", &texts[1]), ("c.bvh", &texts[2])] {
        let got = std::fs::read(d.join("out").join(rel)).unwrap();
        assert!(got == expected(text, &opts), "{rel}: not the library's result");
    }

    // Several inputs need a folder: not standard output, not a file.
    let o = run(&["clean", &a, &c, "-o", "-", "--butterworth", "5"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("several inputs cannot all go to standard output"),
        "{}",
        stderr(&o)
    );
    let o = run(&["clean", &a, &c, "-o", &c, "--butterworth", "5"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("several inputs need -o to name a directory"), "{}", stderr(&o));
    assert_eq!(std::fs::read_to_string(&c).unwrap(), texts[2]);
    // Two inputs on one output: refused before anything is written.
    let o = run(&[
        "clean",
        &a,
        &ins,
        "-o",
        &(d.join("twice/").to_string_lossy() + ""),
        "--butterworth",
        "5",
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("would both be written to"), "{}", stderr(&o));
    assert!(!d.join("twice").exists());

    // A bad file and a clip too short for the filter among good ones.
    write(d, "mixed/good.bvh", &texts[0]);
    write(d, "mixed/bad.bvh", "HIERARCHY\nROOT Hips\n{\n  OFFSET 0 0\n");
    write(d, "mixed/short.bvh", &wobbly(10, 6));
    let mixed = d.join("mixed").to_string_lossy().into_owned();
    let out2 = d.join("out2").to_string_lossy().into_owned() + "/";
    let o = run(&["clean", &mixed, "-o", &out2, "--butterworth", "5"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    let e = stderr(&o);
    assert!(e.contains("bvh: error: ") && e.contains("bad.bvh"), "{e}");
    assert!(
        e.contains(
            "short.bvh: a Butterworth filter of order 4 needs more than 15 frames (the clip has 10)"
        ),
        "{e}"
    );
    assert!(!e.contains("panicked"), "{e}");
    assert_eq!(tree(&d.join("out2")), vec![PathBuf::from("good.bvh")]);
}

/// The input is never replaced: named as the output directly, through a
/// symbolic link, or as a folder cleaned into itself. A failing clean
/// leaves an existing output as it was.
#[test]
fn clean_never_replaces_its_input_nor_leaves_half_output() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let text = wobbly(100, 7);
    let input = write(d, "in/walk.bvh", &text);
    let o = run(&["clean", &input, "-o", &input, "--butterworth", "6"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("the output is the input"), "{}", stderr(&o));
    #[cfg(unix)]
    {
        let link = d.join("link.bvh");
        std::os::unix::fs::symlink(&input, &link).unwrap();
        let o = run(&["clean", &input, "-o", link.to_str().unwrap(), "--butterworth", "6"]);
        assert_eq!(o.status.code(), Some(2));
        assert!(stderr(&o).contains("the output is the input"), "{}", stderr(&o));
    }
    let ins = d.join("in").to_string_lossy().into_owned();
    let o = run(&["clean", &ins, "-o", &ins, "--butterworth", "6"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("the output is the input"), "{}", stderr(&o));
    assert_eq!(std::fs::read_to_string(&input).unwrap(), text);

    // An existing output survives a clean that fails, and nothing else
    // appears beside it.
    let out = write(d, "out/old.bvh", "old take\n");
    let o = run(&["clean", &input, "-o", &out, "--savgol", "101,2"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("window 101 is longer than the clip (100 frames)"),
        "{}",
        stderr(&o)
    );
    assert_eq!(std::fs::read_to_string(&out).unwrap(), "old take\n");
    assert_eq!(tree(&d.join("out")), vec![PathBuf::from("old.bvh")]);
}

/// Bad values: an error naming the option, the value and what is allowed;
/// exit 2, no panic, nothing written.
#[test]
fn clean_bad_values_are_precise_errors() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let input = write(d, "walk.bvh", &wobbly(60, 8));
    let out = d.join("out.bvh").to_string_lossy().into_owned();
    let smoothing = "--butterworth <CUTOFF_HZ[,ORDER]>|--savgol <WINDOW,POLYORDER>|--one-euro";
    let placing = "--remove-drift|--ground[=<MODE>]|--lock-feet";
    let cases: [(&[&str], &[&str]); 23] = [
        // Options that shape steps, without any of their steps: they were
        // ignored without a word (the output was the input).
        (&["--joints", "Hips"], &["--joints <LIST>", smoothing]),
        (&["--strength", "Hips=0.5"], &["--strength <SEL=FACTOR,...>", smoothing]),
        (&["--spikes", "--joints", "Hips"], &[smoothing]),
        (&["--feet", "LeftFoot"], &["--feet <LIST>", placing]),
        (&["--butterworth", "6", "--up", "z"], &["--up <AXIS>", placing]),
        (&["--butterworth", "abc"], &["'--butterworth", "'abc' is not a number"]),
        (&["--butterworth", "0"], &["Butterworth cut-off 0 Hz", "Nyquist frequency 12.5 Hz"]),
        (&["--butterworth", "13"], &["Butterworth cut-off 13 Hz", "Nyquist frequency 12.5 Hz"]),
        (&["--butterworth", "6,0"], &["Butterworth order 0 is not between 1 and 12"]),
        (
            &["--butterworth", "6,2.5"],
            &["'--butterworth", "the order must be a whole number (got 2.5)"],
        ),
        (&["--savgol", "61,2"], &["Savitzky-Golay window 61 is longer than the clip (60 frames)"]),
        (&["--savgol", "8,2"], &["Savitzky-Golay window 8 must be odd"]),
        (&["--savgol", "5,5"], &["polynomial order 5 must be less than the window 5"]),
        (&["--savgol", "5"], &["'--savgol", "expected WINDOW,POLYORDER"]),
        (&["--one-euro", "0,1"], &["one-euro needs MIN_CUTOFF > 0", "(got 0, 1, 1)"]),
        (&["--one-euro", "1"], &["'--one-euro", "expected MIN_CUTOFF,BETA[,D_CUTOFF]"]),
        (&["--spikes=0"], &["'--spikes", "'0' is not a positive number"]),
        (&["--flatten-feet"], &["--flatten-feet", "give --lock-feet with it"]),
        (
            &["--butterworth", "6", "--strength", "Hips=2"],
            &["'--strength", "'2' for Hips is not a factor from 0 to 1"],
        ),
        (
            &["--butterworth", "6", "--strength", "Hips"],
            &["'--strength", "'Hips' is not JOINT=FACTOR"],
        ),
        (
            &["--butterworth", "6", "--strength", "Tail/*=1"],
            &["no joint named \"Tail/*\" (--strength"],
        ),
        (&["--butterworth", "6", "--joints", "Tail"], &["no joint named \"Tail\" (--joints)"]),
        (&["--butterworth", "6", "-j", "0"], &["'--threads", "0 threads: expected 1 to 1024"]),
    ];
    for (args, want) in cases {
        let o = run(&[&["clean", &input, "-o", &out][..], args].concat());
        let e = stderr(&o);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {e}");
        for w in want {
            assert!(e.contains(w), "{args:?}: {w:?} not in {e}");
        }
        assert!(!e.contains("panicked"), "{args:?}: {e}");
        assert!(!Path::new(&out).exists(), "{args:?} wrote");
    }
    // No output and no --dry-run.
    let o = run(&["clean", &input, "--butterworth", "6"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("--output <OUT>"), "{}", stderr(&o));
}

/// A folder with `clip.bvh` (the synthetic clip of seed `seed`, 10
/// joints, 150 frames), `samples.csv` (its replay as sensor samples) and `all.toml` (a
/// config binding every joint at the clip's rate): what `record` needs to
/// record the clip again. Returns the folder and the clip.
fn take_fixture(name: &str, seed: u64) -> (tempfile::TempDir, Bvh) {
    let dir = crate::record::workdir(name);
    let d = dir.path();
    std::fs::write(d.join("clip.bvh"), bvhkit_testdata::synth_text(seed, 10, 150)).unwrap();
    let clip = Bvh::from_path(d.join("clip.bvh")).unwrap();
    ok_in(d, &["replay", "clip.bvh", "--as", "sensors", "-o", "samples.csv"]);
    let config =
        format!("skeleton = \"clip.bvh\"\nframe_rate = {}\nbind_all = true\n", clip.motion().fps());
    std::fs::write(d.join("all.toml"), config).unwrap();
    (dir, clip)
}

/// `bvh ARGS` run in `d`, which must succeed.
fn ok_in(d: &Path, args: &[&str]) {
    let o = bvh().current_dir(d).args(args).output().unwrap();
    assert!(o.status.success(), "{args:?}: {}", String::from_utf8_lossy(&o.stderr));
}

/// The take of [`take_fixture`]'s folder recorded into `out` with `extra`.
fn record_in(d: &Path, out: &str, extra: &[&str]) {
    let base = ["record", "--config", "all.toml", "--input", "samples.csv", "-o", out];
    ok_in(d, &[&base[..], extra].concat());
}

/// `bvh record --one-euro P` writes the take that `bvh clean --one-euro P`
/// makes of the same take recorded without it, value for value (bit for
/// bit, allowing 1e-9).
#[test]
fn record_one_euro_equals_clean_of_the_plain_take() {
    let (dir, _) = take_fixture("one-euro", 5);
    let d = dir.path();
    let ok = |args: &[&str]| ok_in(d, args);
    let rec = |out: &str, extra: &[&str]| record_in(d, out, extra);
    rec("plain.bvh", &[]);
    rec("live.bvh", &["--one-euro", "1.5,0.05"]);
    ok(&["clean", "plain.bvh", "-o", "cleaned.bvh", "--one-euro", "1.5,0.05"]);
    let (live, cleaned, plain) = (
        Bvh::from_path(d.join("live.bvh")).unwrap(),
        Bvh::from_path(d.join("cleaned.bvh")).unwrap(),
        Bvh::from_path(d.join("plain.bvh")).unwrap(),
    );
    assert_eq!(live.motion().n_frames(), plain.motion().n_frames());
    assert_eq!(live.motion().frame_time(), cleaned.motion().frame_time());
    let (mut worst, mut same_bits, mut changed) = (0.0f64, 0usize, 0usize);
    let values = live.motion().values().iter().zip(cleaned.motion().values());
    for ((a, b), p) in values.zip(plain.motion().values()) {
        worst = worst.max((a - b).abs());
        same_bits += usize::from(a.to_bits() == b.to_bits());
        changed += usize::from(a != p);
    }
    let n = live.motion().values().len();
    println!(
        "record --one-euro vs clean --one-euro: {same_bits}/{n} values same bits, worst {worst:e}"
    );
    assert!(worst <= 1e-9, "record --one-euro differs from clean --one-euro by {worst}");
    assert!(changed > n / 4, "the filter changed only {changed} of {n} values");
    // A bad value is refused before any file is made.
    let o = bvh()
        .current_dir(d)
        .args(["record", "--config", "all.toml", "--input", "samples.csv", "-o", "bad.bvh"])
        .args(["--one-euro", "1,-1"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    let e = String::from_utf8_lossy(&o.stderr);
    assert!(e.contains("--one-euro: one-euro needs MIN_CUTOFF > 0, BETA >= 0"), "{e}");
    assert!(!d.join("bad.bvh").exists());
}

/// `bvh record --one-euro P --joints LIST --strength S` writes the take that
/// `bvh clean --one-euro P --joints LIST --strength S` makes of the plain
/// take (bit for bit, allowing 1e-9); joints outside the mask and joints of
/// strength 0 are the plain take's bits, a joint at 0.5 moves; both options
/// need `--one-euro`, and a bad one is refused before any file is made.
#[test]
fn record_one_euro_joints_strength_equal_clean_of_the_plain_take() {
    let (dir, clip) = take_fixture("one-euro-joints", 6);
    let d = dir.path();
    let ok = |args: &[&str]| ok_in(d, args);
    let skel = clip.skeleton();
    let name = |j: usize| skel.joints()[j].name().to_string();
    let (root, half, off, outside) = (name(0), name(1), name(2), name(3));
    let joints = format!("{root},{half},{off}");
    let strength = format!("*=0.5,{root}=1,{off}=0");
    let rec = |out: &str, extra: &[&str]| record_in(d, out, extra);
    let filter = ["--one-euro", "1.5,0.05", "--joints", &joints, "--strength", &strength];
    rec("plain.bvh", &[]);
    rec("live.bvh", &filter);
    ok(&[&["clean", "plain.bvh", "-o", "cleaned.bvh"][..], &filter].concat());
    let read = |f: &str| Bvh::from_path(d.join(f)).unwrap();
    let (live, cleaned, plain) = (read("live.bvh"), read("cleaned.bvh"), read("plain.bvh"));
    assert_eq!(live.motion().n_frames(), plain.motion().n_frames());
    let worst = live
        .motion()
        .values()
        .iter()
        .zip(cleaned.motion().values())
        .map(|(a, b)| (a - b).abs())
        .fold(0.0, f64::max);
    assert!(worst <= 1e-9, "record differs from clean by {worst}");
    // Each joint's channels: changed or the plain take's bits.
    let channels = |b: &Bvh, j: usize| -> Vec<u64> {
        let range = skel.joints()[j].channel_range();
        b.motion().frames().flat_map(|fr| fr[range.clone()].iter().map(|v| v.to_bits())).collect()
    };
    for (j, moved) in [(0, true), (1, true), (2, false), (3, false)] {
        let same = channels(&live, j) == channels(&plain, j);
        assert_eq!(!same, moved, "joint {} ({}): moved {}", j, name(j), !same);
    }
    println!("masked joint {outside} and strength-0 joint {off} kept bit for bit");
    // Half strength moves the joint less than the full filter does.
    rec("full.bvh", &["--one-euro", "1.5,0.05"]);
    let full = read("full.bvh");
    let dist = |a: &Bvh| -> f64 {
        let (x, p) = (channels(a, 1), channels(&plain, 1));
        x.iter().zip(&p).map(|(a, b)| (f64::from_bits(*a) - f64::from_bits(*b)).abs()).sum()
    };
    let (h, f) = (dist(&live), dist(&full));
    assert!(h > 0.3 * f && h < 0.7 * f, "half strength moved {h}, full {f}");
    // Bad joints and factors fail before a file is made; both need --one-euro.
    let cases: [(&[&str], &str); 4] = [
        (&["--one-euro", "1,0", "--joints", "Tail"], "no joint named \"Tail\" (--joints)"),
        (&["--one-euro", "1,0", "--strength", "*=2"], "is not a factor from 0 to 1"),
        (&["--joints", &root], "--one-euro"),
        (&["--strength", "*=0.5"], "--one-euro"),
    ];
    for (extra, want) in cases {
        let o = bvh()
            .current_dir(d)
            .args(["record", "--config", "all.toml", "--input", "samples.csv", "-o", "bad.bvh"])
            .args(extra)
            .output()
            .unwrap();
        let e = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{extra:?}: {e}");
        assert!(e.contains(want), "{extra:?}: {want:?} not in {e}");
        assert!(!d.join("bad.bvh").exists(), "{extra:?} made a file");
    }
}

/// `bvh clean --one-euro`, `--spikes` and both of a regular file stream
/// (frame by frame, the file's pages dropped behind each read); standard
/// input is cleaned whole: both write the same bytes and the same summary. A stream that fails (the
/// motion cut inside a frame, read strictly) leaves the old output as it
/// was and nothing beside it.
#[test]
fn clean_one_euro_and_spikes_stream_a_file_as_the_whole_clip() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let text = wobbly(300, 11);
    let input = write(d, "in.bvh", &text);
    let out = d.join("out/streamed.bvh");
    let out_s = out.to_string_lossy().into_owned();
    let cases = [
        &["--one-euro", "1,0.05"][..],
        &["--one-euro", "2,0.01,2", "--joints", "Head"],
        &["--spikes"],
        &["--spikes=3", "--one-euro", "1,0.05"],
    ];
    for args in cases {
        let o = run(&[&["clean", &input, "-o", &out_s][..], args].concat());
        assert!(o.status.success(), "{args:?}: {}", stderr(&o));
        let whole =
            run_with_stdin(d, &[&["clean", "-", "-o", "-"][..], args].concat(), text.as_bytes());
        assert!(whole.status.success(), "{}", stderr(&whole));
        assert!(
            std::fs::read(&out).unwrap() == whole.stdout,
            "{args:?}: not the whole clip's bytes"
        );
        // The summary after each file's name.
        let lines = |o: &std::process::Output, name: &str| -> Vec<String> {
            stderr(o).lines().map(|l| l.replacen(name, "IN", 1)).collect()
        };
        assert_eq!(lines(&o, &input), lines(&whole, "<stdin>"), "{args:?}");
        let step = if args[0] == "--spikes" { "joint-frame(s) repaired" } else { "one-euro min" };
        assert!(stderr(&o).contains(step), "{}", stderr(&o));
    }
    // The spike at frame 40 repaired, by the stream as by the whole clip.
    let o = run(&["clean", &input, "-o", &out_s, "--spikes"]);
    assert!(
        stderr(&o).contains("spikes (k = 40): 1 joint(s) changed, 1 joint-frame(s)"),
        "{}",
        stderr(&o)
    );
    // Cut inside the last frame: read strictly, the reader's error at its
    // place, after frames were streamed; the old output kept.
    let cut = write(d, "cut.bvh", &text[..text.len() - 20]);
    std::fs::write(&out, "old take\n").unwrap();
    for step in [&["--one-euro", "1,0.05"][..], &["--spikes"]] {
        let o = run(&[&["clean", &cut, "-o", &out_s, "--strict"][..], step].concat());
        assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
        assert!(stderr(&o).contains("cut.bvh:336:"), "{}", stderr(&o));
        assert!(!stderr(&o).contains("panicked"), "{}", stderr(&o));
        assert_eq!(std::fs::read_to_string(&out).unwrap(), "old take\n");
    }
    assert_eq!(tree(&d.join("out")), vec![PathBuf::from("streamed.bvh")]);
}

/// A step's note in the summary on stderr is noted once: "bvh: note:
/// a.bvh: no feet found", not "bvh: note: a.bvh: note: no feet found";
/// --dry-run's summary on stdout keeps its "note:" lines.
#[test]
fn summary_notes_are_noted_once() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    let text = "HIERARCHY\nROOT Hips\n{\n\tOFFSET 0 0 0\n\tCHANNELS 6 Xposition Yposition Zposition Zrotation Xrotation Yrotation\n\
                \tJOINT Spine\n\t{\n\t\tOFFSET 0 10 0\n\t\tCHANNELS 3 Zrotation Xrotation Yrotation\n\
                \t\tEnd Site\n\t\t{\n\t\t\tOFFSET 0 10 0\n\t\t}\n\t}\n}\nMOTION\nFrames: 3\nFrame Time: 0.04\n"
        .to_string()
        + &"0 90 0 0 0 0 0 0 0\n".repeat(3);
    let a = write(d, "a.bvh", &text);
    let out = d.join("out.bvh");
    let o = run(&["clean", &a, "-o", out.to_str().unwrap(), "--lock-feet"]);
    let e = stderr(&o);
    assert!(o.status.success(), "{e}");
    assert!(e.contains(&format!("bvh: note: {a}: no feet found: nothing locked")), "{e}");
    assert!(!e.contains("note: note:"), "{e}");
    let o = run(&["clean", &a, "-o", out.to_str().unwrap(), "--lock-feet", "--dry-run"]);
    assert!(stdout(&o).contains("\nnote: no feet found: nothing locked"), "{}", stdout(&o));
}

/// `--contacts`: a file without a contact row says so (it said "no feet
/// found" of a figure with feet), and a joint that is not a foot's (the
/// head, whose "leg" the lock bent: the neck and the spine) is refused,
/// named with the feet found.
#[test]
fn contacts_name_feet_and_an_empty_file_says_so() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    let text = super::standing_figure_header(12) + &"0 90 0 0 0 0 0 0 0 0 0 0 0 0 0\n".repeat(12);
    let a = write(d, "a.bvh", &text);
    let out = d.join("out.bvh");
    let o = out.to_str().unwrap();
    let empty = write(d, "empty.csv", "joint,start,end\n# nothing\n");
    let r = run(&["clean", &a, "-o", o, "--lock-feet", "--contacts", &empty]);
    let e = stderr(&r);
    assert!(r.status.success(), "{e}");
    assert!(e.contains("the contacts given have no contact rows: nothing locked"), "{e}");
    assert!(!e.contains("no feet found"), "{e}");
    std::fs::remove_file(&out).unwrap();
    let head = write(d, "head.csv", "Head,2,6\n");
    let want = "\"Head\" is in no leg (not a foot, a toe or a leg's joint), so it cannot be \
                locked (feet found: LeftFoot, RightFoot; --feet names them) (--contacts)";
    super::refused(&["clean", &a, "-o", o, "--lock-feet", "--contacts", &head], &[want], &out);
    // A foot is taken (this one has no knee and hip to turn: said).
    let foot = write(d, "foot.csv", "LeftFoot,2,6\n");
    let r = run(&["clean", &a, "-o", o, "--lock-feet", "--contacts", &foot]);
    assert!(r.status.success(), "{}", stderr(&r));
    assert!(stderr(&r).contains("LeftFoot: no knee and hip above the foot"), "{}", stderr(&r));
}
