//! Export then import: every well-formed corpus file (and small fixtures)
//! comes back with the same skeleton (names, tree, offsets, rotation
//! orders) and world positions within 1e-6 of the skeleton's size at every
//! frame; and `ufbx`'s own evaluation of the exported scene (its node
//! world matrices, from the FBX `RotationOrder`s and curves) gives
//! bvhkit's forward kinematics, so the order mapping is checked by a reader
//! other than ours.

use bvhkit::glam::DVec3;
use bvhkit::units::UnitGuess;
use bvhkit::{Bvh, Kinematics, PositionChannels, ReadOptions};
use bvhkit_fbx::{ExportOptions, ImportOptions, Options, export, import};

const FIXTURE: &str = "HIERARCHY
ROOT Hips
{
  OFFSET 1 2 3
  CHANNELS 6 Xposition Yposition Zposition Zrotation Xrotation Yrotation
  JOINT Spine
  {
    OFFSET 0 10 0
    CHANNELS 3 Xrotation Yrotation Zrotation
    JOINT Neck Top
    {
      OFFSET 0 10 1
      CHANNELS 2 Zrotation Yrotation
      End Site
      {
        OFFSET 0 5 0
      }
    }
  }
  JOINT Arm:L
  {
    OFFSET 5 8 0
    CHANNELS 4 Yposition Yrotation Zrotation Xrotation
    End Site
    {
      OFFSET 7 0 0
    }
  }
}
ROOT Prop
{
  OFFSET 50 0 0
  CHANNELS 3 Yrotation Xrotation Zrotation
  End Site
  {
    OFFSET 0 0 3
  }
}
MOTION
Frames: 3
Frame Time: 0.0083333
1 2 3 10 20 30 5 -40 170 -80 20 12 2.5 90 45 -30 1 2
4 5 6 -170 89.9 30 6 -41 171 -81 21 13 2.5 91 46 -31 0 0
7 8 9 179.99 -89.99 -179 7 -42 172 -82 22 14 2.6 92 47 -32 -1 -2
";

/// Compares `back` with `bvh` and returns the largest position error
/// relative to the skeleton's size.
fn compare(name: &str, bvh: &Bvh, back: &Bvh) -> f64 {
    let (s, t) = (bvh.skeleton(), back.skeleton());
    assert_eq!(s.len(), t.len(), "{name}: joint count");
    for (a, b) in s.joints().iter().zip(t.joints()) {
        assert_eq!(a.is_end_site(), b.is_end_site(), "{name}: {}", a.name());
        if !a.is_end_site() {
            assert_eq!(a.name(), b.name(), "{name}: names");
        }
        assert_eq!(a.parent(), b.parent(), "{name}: {}: parent", a.name());
        assert_eq!(a.offset(), b.offset(), "{name}: {}: offset", a.name());
        let (ra, rb): (Vec<_>, Vec<_>) = (a.rotation_axes().collect(), b.rotation_axes().collect());
        assert_eq!(ra, rb, "{name}: {}: rotation channels", a.name());
    }
    let (m, n) = (bvh.motion(), back.motion());
    assert_eq!(m.n_frames(), n.n_frames(), "{name}: frames");
    if m.n_frames() > 1 {
        assert_eq!(m.frame_time(), n.frame_time(), "{name}: frame time");
    }
    let size = UnitGuess::of_bvh(bvh, PositionChannels::Replace).size.max(1e-9);
    let (fa, fb) = (
        Kinematics::new(s, PositionChannels::Replace),
        Kinematics::new(t, PositionChannels::Replace),
    );
    let (mut pa, mut pb) = (vec![DVec3::ZERO; s.len()], vec![DVec3::ZERO; t.len()]);
    let mut worst = 0.0f64;
    for f in 0..m.n_frames() {
        fa.positions(m.frame(f), &mut pa);
        fb.positions(n.frame(f), &mut pb);
        for (x, y) in pa.iter().zip(&pb) {
            worst = worst.max(x.distance(*y) / size);
        }
    }
    assert!(worst <= 1e-6, "{name}: position error {worst:e} of the size");
    worst
}

/// The world positions ufbx evaluates for the exported scene at a few
/// frames, against bvhkit's FK; returns the largest error relative to size.
fn ufbx_agrees(name: &str, bvh: &Bvh, fbx: &[u8], names: &[String]) -> f64 {
    // ufbx's strict mode refuses what it would otherwise repair quietly.
    let strict = ufbx::LoadOpts { strict: true, ..Default::default() };
    let scene =
        ufbx::load_memory(fbx, strict).unwrap_or_else(|e| panic!("{name}: ufbx (strict): {e:?}"));
    let warnings: Vec<String> =
        scene.metadata.warnings.iter().map(|w| w.description.to_string()).collect();
    assert!(warnings.is_empty(), "{name}: ufbx warns: {warnings:?}");
    assert_eq!((scene.metadata.ascii, scene.metadata.version), (false, 7400));
    let s = bvh.skeleton();
    let fk = Kinematics::new(s, PositionChannels::Replace);
    let size = UnitGuess::of_bvh(bvh, PositionChannels::Replace).size.max(1e-9);
    let n = bvh.motion().n_frames();
    let mut p = vec![DVec3::ZERO; s.len()];
    let mut worst = 0.0f64;
    let Some(stack) = scene.anim_stacks.first() else { return 0.0 };
    for f in [0, n / 3, n / 2, n.saturating_sub(1)] {
        if f >= n {
            continue;
        }
        let t = f as f64 * bvh.motion().frame_time();
        let ev =
            ufbx::evaluate_scene(&scene, &stack.anim, t, ufbx::EvaluateOpts::default()).unwrap();
        fk.positions(bvh.motion().frame(f), &mut p);
        for (i, want) in p.iter().enumerate() {
            let node = ufbx::find_node(&ev, &names[i])
                .unwrap_or_else(|| panic!("{name}: node {}", names[i]));
            let m = &node.node_to_world;
            let got = DVec3::new(m.m03, m.m13, m.m23);
            worst = worst.max(got.distance(*want) / size);
        }
    }
    assert!(
        worst <= 1e-5,
        "{name}: ufbx's evaluation is {worst:e} of the size away from bvhkit's FK"
    );
    worst
}

#[test]
fn the_fixture_comes_back() {
    let bvh = Bvh::parse(FIXTURE).unwrap();
    let out = export(&bvh, &ExportOptions::default()).unwrap();
    assert!(out.renamed.is_empty());
    assert_eq!(out.names[2], "Neck Top");
    let back = import(&out.bytes, &ImportOptions::default()).unwrap();
    compare("fixture", &bvh, &back.bvh);
    ufbx_agrees("fixture", &bvh, &out.bytes, &out.names);
    // Angles are the file's own, as 32-bit floats.
    for f in 0..3 {
        let (a, b) = (bvh.motion().frame(f), back.bvh.motion().frame(f));
        for (x, y) in a.iter().zip(b) {
            assert_eq!(*y, f64::from(*x as f32));
        }
    }
    assert_eq!(back.bvh.motion().frame_time(), 0.0083333);
}

#[test]
fn colliding_names_get_a_reported_suffix() {
    let text = FIXTURE.replace("JOINT Spine", "JOINT Hips");
    let bvh = Bvh::parse(text).unwrap();
    let out = export(&bvh, &ExportOptions::default()).unwrap();
    assert_eq!(out.renamed, [("Hips".to_string(), "Hips_2".to_string())]);
    let back = import(&out.bytes, &ImportOptions::default()).unwrap();
    assert_eq!(back.bvh.skeleton().joints()[1].name(), "Hips_2");
}

#[test]
fn a_file_without_frames_keeps_its_skeleton() {
    let text = FIXTURE.split("MOTION").next().unwrap().to_string()
        + "MOTION\nFrames: 0\nFrame Time: 0.1\n";
    let bvh = Bvh::parse(text).unwrap();
    let out = export(&bvh, &ExportOptions::default()).unwrap();
    let back = import(&out.bytes, &ImportOptions::default()).unwrap();
    let t = back.bvh.skeleton();
    assert_eq!(t.len(), bvh.skeleton().len());
    assert_eq!(back.bvh.motion().n_frames(), 0);
    for (a, b) in bvh.skeleton().joints().iter().zip(t.joints()) {
        assert_eq!((a.offset(), a.is_end_site()), (b.offset(), b.is_end_site()));
    }
}

#[test]
fn every_corpus_file_comes_back() {
    if bvhkit_testdata::corpus_or_skip("every_corpus_file_comes_back").is_none() {
        return;
    }
    let mut done = 0;
    let (mut worst, mut worst_ufbx) = (0.0f64, 0.0f64);
    for path in bvhkit_testdata::corpus_files() {
        let name = path.file_stem().unwrap().to_string_lossy().into_owned();
        let bytes = std::fs::read(&path).unwrap();
        let Ok((bvh, _)) = ReadOptions::new().lenient(true).parse(&bytes) else { continue };
        let out = export(&bvh, &ExportOptions::default()).unwrap_or_else(|e| panic!("{name}: {e}"));
        // The footer's padding puts its last 140 bytes at a multiple of 16.
        assert_eq!((out.bytes.len() - 140) % 16, 0, "{name}: footer padding");
        // export_to writes the same bytes through a writer.
        let mut streamed = Vec::new();
        bvhkit_fbx::export_to(&bvh, &ExportOptions::default(), &mut streamed).unwrap();
        assert!(streamed == out.bytes, "{name}: export_to's bytes differ from export's");
        let back =
            import(&out.bytes, &ImportOptions::default()).unwrap_or_else(|e| panic!("{name}: {e}"));
        worst = worst.max(compare(&name, &bvh, &back.bvh));
        worst_ufbx = worst_ufbx.max(ufbx_agrees(&name, &bvh, &out.bytes, &out.names));
        done += 1;
    }
    eprintln!(
        "round trip: {done} corpus files; largest position error {worst:e} of the size, ufbx's FK {worst_ufbx:e}"
    );
    assert!(done >= 30, "only {done} corpus files read");
}

#[test]
fn the_stated_unit_and_axes_are_what_ufbx_reads() {
    use bvhkit::edit::axes::SignedAxis;
    use bvhkit_fbx::{Scale, Up};
    use ufbx::CoordinateAxis as A;
    let bvh = Bvh::parse(FIXTURE).unwrap();
    for (up, want) in [
        (SignedAxis::PosZ, (A::PositiveX, A::PositiveZ, A::NegativeY)),
        (SignedAxis::PosY, (A::PositiveX, A::PositiveY, A::PositiveZ)),
        (SignedAxis::NegY, (A::PositiveX, A::NegativeY, A::NegativeZ)),
        (SignedAxis::PosX, (A::NegativeY, A::PositiveX, A::PositiveZ)),
    ] {
        let options = ExportOptions {
            common: Options {
                up: Up::From(up),
                scale: Scale::Factor(0.0254),
                ..Default::default()
            },
            ..Default::default()
        };
        let out = export(&bvh, &options).unwrap();
        let scene = ufbx::load_memory(&out.bytes, ufbx::LoadOpts::default()).unwrap();
        let a = scene.settings.axes;
        assert_eq!((a.right, a.up, a.front), want, "{up:?}");
        assert!((scene.settings.unit_meters - 0.0254).abs() < 1e-12);
        let back = import(&out.bytes, &ImportOptions::default()).unwrap();
        assert!((back.metres_per_unit - 0.0254).abs() < 1e-12);
        // The numbers are the file's, whatever is stated.
        compare("stated", &bvh, &back.bvh);
    }
}

#[test]
fn end_sites_can_be_left_out_and_keys_made_constant() {
    let bvh = Bvh::parse(FIXTURE).unwrap();
    let options = ExportOptions { end_sites: false, constant: true, ..Default::default() };
    let out = export(&bvh, &options).unwrap();
    let scene = ufbx::load_memory(&out.bytes, ufbx::LoadOpts::default()).unwrap();
    assert_eq!(scene.nodes.iter().filter(|n| n.bone.is_some()).count(), 5);
    let stack = &scene.anim_stacks[0];
    let layer = &stack.layers[0];
    let hips = ufbx::find_node(&scene, "Hips").unwrap();
    let prop = ufbx::find_anim_prop(layer, &hips.element, "Lcl Rotation").unwrap();
    let curve = prop.anim_value.curves[2].as_ref().unwrap();
    assert!(curve.keyframes.iter().all(|k| k.interpolation == ufbx::Interpolation::ConstantPrev));
    // Halfway between frames 0 and 1, a constant key holds frame 0's value.
    let t = 0.5 * bvh.motion().frame_time();
    assert_eq!(ufbx::evaluate_curve(curve, t, 0.0), 10.0);
    let back = import(&out.bytes, &ImportOptions::default()).unwrap();
    assert_eq!(back.bvh.skeleton().len(), 5);
    assert!(back.bvh.skeleton().joints().iter().all(|j| !j.is_end_site()));
}

#[test]
fn a_given_rate_samples_the_curves() {
    let bvh = Bvh::parse(FIXTURE.replace("Frame Time: 0.0083333", "Frame Time: 0.1")).unwrap();
    let out = export(&bvh, &ExportOptions::default()).unwrap();
    let back =
        import(&out.bytes, &ImportOptions { fps: Some(20.0), ..Default::default() }).unwrap();
    let m = back.bvh.motion();
    assert_eq!(m.n_frames(), 5);
    assert!((m.frame_time() - 0.05).abs() < 1e-15);
    assert!(
        back.notes.iter().any(|n| n.contains("sampled at 20 frames per second")),
        "{:?}",
        back.notes
    );
    let src = bvh.motion();
    for (k, row) in (0..5).map(|k| (k, m.frame(k))) {
        for (c, v) in row.iter().enumerate() {
            let (i, w) = (k / 2, if k % 2 == 1 { 0.5 } else { 0.0 });
            let a = f64::from(src.frame(i)[c] as f32);
            let b = if w > 0.0 { f64::from(src.frame(i + 1)[c] as f32) } else { a };
            assert!(
                (v - (a + (b - a) * w)).abs() < 1e-4,
                "frame {k}, channel {c}: {v} vs {a}..{b}"
            );
        }
    }
}

#[test]
fn a_rate_too_high_for_the_memory_is_refused_before_any_frame_is_made() {
    // 0.2 s at 1e9 frames per second: 2e8 frames of its channels, more
    // values than any clip may hold (the command once asked the allocator
    // for them and aborted); 1e300 overflowed the count to 0 frames.
    let bvh = Bvh::parse(FIXTURE.replace("Frame Time: 0.0083333", "Frame Time: 0.1")).unwrap();
    let out = export(&bvh, &ExportOptions::default()).unwrap();
    for fps in [1e9, 1e300] {
        let Err(e) = import(&out.bytes, &ImportOptions { fps: Some(fps), ..Default::default() })
        else {
            panic!("--fps {fps} was sampled");
        };
        let e = e.to_string();
        assert!(e.contains("more than the limit of 536870912 values"), "{e}");
        assert!(e.len() < 200, "{e}");
    }
}

#[test]
fn added_position_channels_come_back_as_translations() {
    let bvh = Bvh::parse(FIXTURE).unwrap();
    let options = ExportOptions {
        common: Options { position_channels: PositionChannels::Add, ..Default::default() },
        ..Default::default()
    };
    let out = export(&bvh, &options).unwrap();
    let back = import(&out.bytes, &ImportOptions::default()).unwrap().bvh;
    // The curves hold OFFSET + value: read with Replace, the positions of
    // the source read with Add.
    let (s, t) = (bvh.skeleton(), back.skeleton());
    let (fa, fb) =
        (Kinematics::new(s, PositionChannels::Add), Kinematics::new(t, PositionChannels::Replace));
    let (mut pa, mut pb) = (vec![DVec3::ZERO; s.len()], vec![DVec3::ZERO; t.len()]);
    for f in 0..bvh.motion().n_frames() {
        fa.positions(bvh.motion().frame(f), &mut pa);
        fb.positions(back.motion().frame(f), &mut pb);
        for (x, y) in pa.iter().zip(&pb) {
            assert!(x.distance(*y) < 1e-4, "frame {f}: {x} vs {y}");
        }
    }
    assert_eq!(back.motion().frame(0)[0], 1.0 + 1.0, "Xposition 1 added to OFFSET x 1");
}

/// A value beyond the 32-bit floats of the curves is an error naming its
/// joint and frame (the first such value in curve order), and nothing else.
#[test]
fn a_value_beyond_f32_is_refused_with_its_joint_and_frame() {
    let text = "HIERARCHY\nROOT Hips\n{\n  OFFSET 0 0 0\n  CHANNELS 6 Xposition Yposition Zposition Zrotation Xrotation Yrotation\n  JOINT Spine\n  {\n    OFFSET 0 10 0\n    CHANNELS 3 Zrotation Xrotation Yrotation\n    End Site\n    {\n      OFFSET 0 10 0\n    }\n  }\n}\nMOTION\nFrames: 3\nFrame Time: 0.033333\n0 0 0 0 0 0 0 0 0\n0 0 0 0 0 0 0 0 0\n0 0 0 0 0 0 0 1e39 0\n";
    let (bvh, _) = ReadOptions::new().parse(text.as_bytes()).unwrap();
    let err = export(&bvh, &ExportOptions::default()).unwrap_err();
    assert_eq!(err, bvhkit_fbx::Error::NotFinite { joint: "Spine".into(), frame: Some(2) });
    let mut sink = Vec::new();
    let err = bvhkit_fbx::export_to(&bvh, &ExportOptions::default(), &mut sink).unwrap_err();
    assert_eq!(err, bvhkit_fbx::Error::NotFinite { joint: "Spine".into(), frame: Some(2) });
}
