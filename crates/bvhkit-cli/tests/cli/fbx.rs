//! `bvh export -o OUT.fbx` and `bvh import`: the library's bytes and
//! motion, through the command's options and atomic outputs.
use bvhkit::Bvh;
use bvhkit_fbx::{ExportOptions, ImportOptions, Options, Scale, Up, export, import};

use super::{corpus, refused, run, run_ok, run_with_stdin, standing_figure_header, stderr};

#[test]
fn fbx_export_and_import_are_the_library_s() {
    let Some(dir) = corpus() else { return };
    let src = dir.join("fair_zombie_animated_drawings_xyz_yxz.bvh");
    let tmp = tempfile::tempdir().unwrap();
    let (fbx, back) = (tmp.path().join("zombie.fbx"), tmp.path().join("back.bvh"));
    let (s, f, b) = (src.to_str().unwrap(), fbx.to_str().unwrap(), back.to_str().unwrap());
    let r = run_ok(&["export", s, "-o", f]);
    assert!(stderr(&r).contains("up axis detected z"), "{}", stderr(&r));
    let bvh = Bvh::from_path(&src).unwrap();
    let options = ExportOptions {
        common: Options {
            name: Some("fair_zombie_animated_drawings_xyz_yxz".into()),
            ..Default::default()
        },
        ..Default::default()
    };
    assert_eq!(std::fs::read(&fbx).unwrap(), export(&bvh, &options).unwrap().bytes);

    // --scale and --up are stated as given; --no-mesh leaves the boxes out.
    run_ok(&["export", s, "-o", f, "--scale", "0.01", "--up", "keep", "--no-mesh"]);
    let options = ExportOptions {
        common: Options {
            scale: Scale::Factor(0.01),
            up: Up::Keep,
            mesh: false,
            name: Some("fair_zombie_animated_drawings_xyz_yxz".into()),
            ..Default::default()
        },
        ..Default::default()
    };
    assert_eq!(std::fs::read(&fbx).unwrap(), export(&bvh, &options).unwrap().bytes);
    run_ok(&["export", s, "-o", f, "--up", "-y"]);
    let out = import(&std::fs::read(&fbx).unwrap(), &ImportOptions::default()).unwrap();
    assert_eq!(out.bvh.skeleton().len(), bvh.skeleton().len());

    // Import: the library's motion, written as BVH: each value (a 32-bit
    // curve value) as the shortest decimal of its float, so that read as a
    // 32-bit float it is the library's value exactly...
    let r = run_ok(&["import", f, "-o", b]);
    assert!(stderr(&r).contains("34 joints, 779 frames"), "{}", stderr(&r));
    let expected = import(&std::fs::read(&fbx).unwrap(), &ImportOptions::default()).unwrap().bvh;
    let read = Bvh::from_path(&back).unwrap();
    let m = read.motion();
    let widened: Vec<f64> = m.values().iter().map(|&v| f64::from(v as f32)).collect();
    let widened = bvhkit::Motion::new(m.frame_time(), m.n_channels(), widened).unwrap();
    let widened = Bvh::new(read.skeleton().clone(), widened).unwrap();
    bvhkit_testdata::assert_bit_identical(&widened, &expected, "import, read as f32");
    // ... which gives back the source's own numbers (four places here;
    // a -0 of the source is 0 in the FBX file's curves).
    for (i, (x, y)) in bvh.motion().values().iter().zip(m.values()).enumerate() {
        assert!(x == y, "value {i}: {x} written back as {y}");
    }
    // --precision 3 is three places.
    run_ok(&["import", f, "-o", b, "--precision", "3"]);
    let text = std::fs::read_to_string(&back).unwrap();
    let first = text.lines().skip_while(|l| !l.starts_with("Frame Time")).nth(1).unwrap();
    assert!(
        first.split(' ').all(|v| v.split_once('.').is_some_and(|(_, d)| d.len() == 3)),
        "{first}"
    );

    // Several inputs into a folder; never over an input.
    let out_dir = tmp.path().join("out");
    let o = format!("{}/", out_dir.display());
    let walk = dir.join("bvh_anim_test_simple.bvh");
    run_ok(&["export", s, walk.to_str().unwrap(), "-o", &o, "--format", "fbx"]);
    assert_eq!(
        bvhkit_testdata::file_names(&out_dir),
        ["bvh_anim_test_simple.fbx", "fair_zombie_animated_drawings_xyz_yxz.fbx"]
    );
    let r = run(&["import", f, "-o", f]);
    assert_eq!(r.status.code(), Some(2));
    assert!(stderr(&r).contains("refusing to overwrite"), "{}", stderr(&r));
    let r = run(&["import", b, "-o", tmp.path().join("x.bvh").to_str().unwrap()]);
    assert_eq!(r.status.code(), Some(2), "a BVH file is not FBX");
    assert!(stderr(&r).contains("reading the FBX file"), "{}", stderr(&r));
}

/// The FBX export of a standing figure of `frames` frames whose 15
/// channels all move.
fn moving_figure_fbx(frames: usize) -> Vec<u8> {
    let mut text = standing_figure_header(frames);
    for f in 0..frames {
        let t = f as f64 * 0.01;
        let row: Vec<String> =
            (0..15).map(|c| format!("{:.4}", (t * (c + 1) as f64).sin() * 20.0)).collect();
        text += &row.join(" ");
        text.push('\n');
    }
    export(&Bvh::parse(&text).unwrap(), &ExportOptions::default()).unwrap().bytes
}

/// `bvh import -` reads a whole FBX file from standard input (a pipe):
/// not only the first 128 KiB the BVH readers look at before reading on
/// (an FBX file never starts like BVH text, and was cut there: "Truncated
/// file").
#[test]
fn import_reads_standard_input_whole() {
    let fbx = moving_figure_fbx(4000);
    assert!(fbx.len() > 256 << 10, "{} bytes", fbx.len());
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    std::fs::write(d.join("walk.fbx"), &fbx).unwrap();
    let (f, out) = (d.join("walk.fbx"), d.join("file.bvh"));
    run_ok(&["import", f.to_str().unwrap(), "-o", out.to_str().unwrap()]);
    let o = run_with_stdin(d, &["import", "-", "-o", "stdin.bvh"], &fbx);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stderr(&o).contains("4000 frames"), "{}", stderr(&o));
    assert_eq!(std::fs::read(d.join("stdin.bvh")).unwrap(), std::fs::read(&out).unwrap());
}

/// `--fps` is a rate above 0 and at most 1000, as `bvh render`'s: a rate of
/// 1e9 once asked the allocator for 183 GB and aborted, 1e300 wrote a clip
/// of no frames.
#[test]
fn import_refuses_a_rate_out_of_range() {
    let tmp = tempfile::tempdir().unwrap();
    let (fbx, out) = (tmp.path().join("s.fbx"), tmp.path().join("s.bvh"));
    std::fs::write(&fbx, moving_figure_fbx(10)).unwrap();
    let (f, o) = (fbx.to_str().unwrap(), out.to_str().unwrap());
    for fps in ["1e9", "1e300", "0", "NaN", "inf", "1000.5"] {
        let err = refused(
            &["import", f, "-o", o, "--fps", fps],
            &["--fps", "above 0 and at most 1000 frames per second"],
            &out,
        );
        assert!(err.len() < 400, "{err}");
    }
    let r = run_ok(&["import", f, "-o", o, "--fps", "1000"]);
    assert!(stderr(&r).contains("361 frames"), "{}", stderr(&r));
}
