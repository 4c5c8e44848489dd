//! The document itself, against references written plainly here: the
//! quaternion of each frame from the half-angle formula, key times, node
//! names and rest translations, units, and errors.

use bvhkit::Bvh;
use bvhkit::edit::axes::SignedAxis;
use bvhkit_gltf::{Error, Export, ExportOptions, Scale, Up, export};
use gltf_json::animation::Property;
use gltf_json::validation::Checked::Valid;

/// The f32 values of accessor `i`.
fn floats(x: &Export, i: u32) -> Vec<f32> {
    let a = &x.root.accessors[i as usize];
    let v = &x.root.buffer_views[a.buffer_view.unwrap().value()];
    let start = v.byte_offset.unwrap().0 as usize;
    let bytes = &x.buffer[start..start + v.byte_length.0 as usize];
    bytes.chunks_exact(4).map(|c| f32::from_le_bytes(c.try_into().unwrap())).collect()
}

/// The output values of the sampler animating `path` of node `node`.
fn track(x: &Export, node: u32, path: Property) -> (Vec<f32>, Vec<f32>) {
    let anim = &x.root.animations[0];
    let ch = anim
        .channels
        .iter()
        .find(|c| c.target.node.value() as u32 == node && c.target.path == Valid(path))
        .expect("channel");
    let s = &anim.samplers[ch.sampler.value()];
    (floats(x, s.input.value() as u32), floats(x, s.output.value() as u32))
}

/// q = w + (x, y, z): rotation by `deg` about a unit axis, from the half-angle formula.
fn axis_quat(axis: [f64; 3], deg: f64) -> [f64; 4] {
    let h = deg.to_radians() / 2.0;
    [axis[0] * h.sin(), axis[1] * h.sin(), axis[2] * h.sin(), h.cos()]
}

/// Hamilton product of (x, y, z, w) quaternions.
fn mul(a: [f64; 4], b: [f64; 4]) -> [f64; 4] {
    let [ax, ay, az, aw] = a;
    let [bx, by, bz, bw] = b;
    [
        aw * bx + ax * bw + ay * bz - az * by,
        aw * by - ax * bz + ay * bw + az * bx,
        aw * bz + ax * by - ay * bx + az * bw,
        aw * bw - ax * bx - ay * by - az * bz,
    ]
}

const ONE_JOINT: &str = "HIERARCHY
ROOT Hips
{
  OFFSET 1 2 3
  CHANNELS 6 Xposition Yposition Zposition Zrotation Xrotation Yrotation
  End Site
  {
    OFFSET 0 100 0
  }
}
MOTION
Frames: 5
Frame Time: 0.1
10 20 30 30 45 60
11 21 31 170 0 0
12 22 32 -170 0 0
13 23 33 -100 0 0
14 24 34 0 -90 179
";

#[test]
fn rotations_are_the_channel_product_with_continuous_signs() {
    let bvh = Bvh::parse(ONE_JOINT).unwrap();
    let opts = ExportOptions { scale: Scale::Factor(1.0), mesh: false, ..Default::default() };
    let x = export(&bvh, &opts).unwrap();
    let (times, q) = track(&x, 0, Property::Rotation);
    assert_eq!(times.len(), 5);
    let (z, xa, y) = ([0.0, 0.0, 1.0], [1.0, 0.0, 0.0], [0.0, 1.0, 0.0]);
    let mut prev: Option<[f32; 4]> = None;
    for (i, frame) in bvh.motion().frames().enumerate() {
        // ZXY as listed: R = Rz * Rx * Ry.
        let want =
            mul(mul(axis_quat(z, frame[3]), axis_quat(xa, frame[4])), axis_quat(y, frame[5]));
        let got = &q[4 * i..4 * i + 4];
        let same: f64 = (0..4).map(|k| (f64::from(got[k]) - want[k]).abs()).fold(0.0, f64::max);
        let flipped: f64 = (0..4).map(|k| (f64::from(got[k]) + want[k]).abs()).fold(0.0, f64::max);
        assert!(same.min(flipped) < 1e-6, "frame {i}: {got:?} vs ±{want:?}");
        if let Some(p) = prev {
            let dot: f32 = (0..4).map(|k| p[k] * got[k]).sum();
            assert!(dot >= 0.0, "frame {i}: sign jumps (dot {dot})");
        }
        prev = Some([got[0], got[1], got[2], got[3]]);
    }
    // 170° then -170° about Z: the same hemisphere only after a flip.
    assert!(q[4 * 2 + 3] < 0.0, "frame 2 was flipped to stay near frame 1");
}

/// A clip long enough to be computed in several pieces, turning 7° a frame
/// about Z (its quaternion's sign must be carried across the pieces' edges)
/// with a wobble about X and Y: every frame's quaternion is the reference's
/// with the reference's sign, chosen frame after frame by the dot product
/// with the one before. And a value that is not finite in two pieces: the
/// first is the one reported.
#[test]
fn long_clips_keep_continuous_signs_across_pieces() {
    let frames = 3 * 512 + 17;
    let mut text = ONE_JOINT.replace("Frames: 5", &format!("Frames: {frames}"));
    let motion_at = text.find("10 20 30 30 45 60").unwrap();
    text.truncate(motion_at);
    // About Z 200° at frame 512 and 184° at 1024, where a matrix's
    // quaternion has w < 0 next to a frame whose own is on the same side:
    // a piece that started from the identity instead of the frame before
    // would choose the other sign there.
    let angles = |f: usize| {
        (7.0 * f as f64 - 3384.0, 10.0 * (f as f64 * 0.05).sin(), 3.0 * (f as f64 * 0.02).cos())
    };
    for f in 0..frames {
        let (z, x, y) = angles(f);
        text.push_str(&format!("1 2 3 {z} {x} {y}\n"));
    }
    let bvh = Bvh::parse(&text).unwrap();
    let opts = ExportOptions { scale: Scale::Factor(1.0), mesh: false, ..Default::default() };
    let x = export(&bvh, &opts).unwrap();
    let (_, q) = track(&x, 0, Property::Rotation);
    let (zax, xax, yax) = ([0.0, 0.0, 1.0], [1.0, 0.0, 0.0], [0.0, 1.0, 0.0]);
    let mut prev: Option<[f64; 4]> = None;
    let mut negative_w = Vec::new();
    for f in 0..frames {
        let (z, xa, y) = angles(f);
        let mut want = mul(mul(axis_quat(zax, z), axis_quat(xax, xa)), axis_quat(yax, y));
        if let Some(p) = prev
            && (0..4).map(|k| p[k] * want[k]).sum::<f64>() < 0.0
        {
            want = want.map(|v| -v);
        }
        prev = Some(want);
        if want[3] < 0.0 {
            negative_w.push(f);
        }
        let got = &q[4 * f..4 * f + 4];
        let err: f64 = (0..4).map(|k| (f64::from(got[k]) - want[k]).abs()).fold(0.0, f64::max);
        assert!(err < 1e-6, "frame {f}: {got:?} vs {want:?}");
    }
    // The continuous quaternions run through both signs of w in every
    // piece (a rotation matrix alone gives one sign), so a sign lost at a
    // piece's edge would show.
    for piece in 0..3 {
        assert!(negative_w.iter().any(|f| f / 512 == piece), "piece {piece} never has w < 0");
    }
    // Not finite in the second and the third piece: the second's is said.
    let line = |f: usize| format!("1 2 3 {} ", angles(f).0);
    let bad = text
        .replace(&line(700), &line(700).replacen('1', "1e39", 1))
        .replace(&line(1100), &line(1100).replacen('1', "1e39", 1));
    let bvh = Bvh::parse(&bad).unwrap();
    assert!(matches!(export(&bvh, &opts), Err(Error::NotFinite { frame: Some(700), .. })));
}

#[test]
fn times_translations_names_and_rest_pose() {
    let bvh = Bvh::parse(ONE_JOINT).unwrap();
    let opts = ExportOptions { scale: Scale::Factor(0.5), mesh: false, ..Default::default() };
    let x = export(&bvh, &opts).unwrap();
    let (times, t) = track(&x, 0, Property::Translation);
    for (i, &ti) in times.iter().enumerate() {
        assert_eq!(ti, (i as f64 * 0.1) as f32);
    }
    let input = &x.root.accessors[x.root.animations[0].samplers[0].input.value()];
    assert_eq!(input.min.as_ref().unwrap()[0].as_f64(), Some(0.0));
    assert_eq!(input.max.as_ref().unwrap()[0].as_f64(), Some(f64::from((0.4f64) as f32)));
    // Replace: the channels are the translation, scaled.
    assert_eq!(&t[..3], &[5.0, 10.0, 15.0]);
    assert_eq!(&t[12..15], &[7.0, 12.0, 17.0]);
    let names: Vec<_> = x.root.nodes.iter().map(|n| n.name.clone().unwrap()).collect();
    assert_eq!(names, bvh.skeleton().display_names());
    assert_eq!(x.root.nodes[0].translation, Some([0.5, 1.0, 1.5]));
    assert_eq!(x.root.nodes[1].translation, Some([0.0, 50.0, 0.0]));
    assert_eq!(x.root.scenes[0].nodes.len(), 1);
    // Add: channels added to the OFFSET.
    let add = ExportOptions { position_channels: bvhkit::PositionChannels::Add, ..opts };
    let x = export(&bvh, &add).unwrap();
    let (_, t) = track(&x, 0, Property::Translation);
    assert_eq!(&t[..3], &[5.5, 11.0, 16.5]);
}

#[test]
fn unit_guess_is_applied_and_recorded() {
    // 170 units tall: centimetres.
    let text = ONE_JOINT.replace("OFFSET 0 100 0", "OFFSET 0 170 0");
    let bvh = Bvh::parse(&text).unwrap();
    let x = export(&bvh, &ExportOptions::default()).unwrap();
    assert_eq!(x.applied.factor, 0.01);
    assert!(x.applied.guessed);
    let extras: serde_json::Value =
        serde_json::from_str(x.root.extras.as_ref().unwrap().get()).unwrap();
    assert_eq!(extras["bvhkit"]["metres_per_unit"], 0.01);
    assert_eq!(extras["bvhkit"]["source_units"], "cm");
    assert_eq!(x.root.nodes[1].translation, Some([0.0, 1.7, 0.0]));
    // The mesh: a skin over the joints, its node a scene root.
    assert_eq!(x.root.skins.len(), 1);
    assert_eq!(x.root.skins[0].joints.len(), 2);
    assert_eq!(x.root.scenes[0].nodes.len(), 2);
    let glb = x.to_glb().unwrap();
    assert_eq!(u32::from_le_bytes(glb[8..12].try_into().unwrap()) as usize, glb.len());
}

#[test]
fn bad_input_is_an_error() {
    // Key times must increase as 32-bit floats.
    let text = ONE_JOINT.replace("Frame Time: 0.1", "Frame Time: 1e-50");
    let bvh = Bvh::parse(&text).unwrap();
    assert_eq!(export(&bvh, &ExportOptions::default()).unwrap_err(), Error::FrameTime(1e-50));
    // ... and be finite: a Frame Time of 1e300 gave an infinite key time
    // (five validator errors, exit 0).
    let text = ONE_JOINT.replace("Frame Time: 0.1", "Frame Time: 1e300");
    let bvh = Bvh::parse(&text).unwrap();
    let e = export(&bvh, &ExportOptions::default()).unwrap_err();
    assert_eq!(e, Error::FrameTime(1e300));
    assert!(e.to_string().starts_with("frame time 1e300 s cannot give glTF key times"), "{e}");
    let huge = ONE_JOINT.replace("10 20 30 30 45 60", "1e300 20 30 30 45 60");
    let bvh = Bvh::parse(&huge).unwrap();
    let opts = ExportOptions { scale: Scale::Factor(1.0), mesh: false, ..Default::default() };
    assert!(matches!(export(&bvh, &opts), Err(Error::NotFinite { frame: Some(0), .. })));
    let bad = ExportOptions { scale: Scale::Factor(-1.0), ..Default::default() };
    assert_eq!(export(&bvh, &bad).unwrap_err(), Error::Scale(-1.0));
}

/// A Z-up figure in metres: Head above Hips above LeftFoot along +Z.
const Z_UP: &str = "HIERARCHY
ROOT Hips
{
  OFFSET 0 0 1
  CHANNELS 6 Xposition Yposition Zposition Zrotation Xrotation Yrotation
  JOINT Head
  {
    OFFSET 0 0 0.6
    CHANNELS 3 Zrotation Xrotation Yrotation
    End Site
    {
      OFFSET 0 0 0.2
    }
  }
  JOINT LeftFoot
  {
    OFFSET 0.1 0.05 -0.9
    CHANNELS 3 Zrotation Xrotation Yrotation
    End Site
    {
      OFFSET 0 0.1 0
    }
  }
}
MOTION
Frames: 2
Frame Time: 0.1
0.5 0.25 1 0 0 0 0 0 0 0 0 0
0.5 0.25 1 90 0 0 0 0 0 0 0 0
";

#[test]
fn up_axis_is_detected_converted_and_recorded() {
    let bvh = Bvh::parse(Z_UP).unwrap();
    let extras = |x: &Export| -> serde_json::Value {
        serde_json::from_str(x.root.extras.as_ref().unwrap().get()).unwrap()
    };
    // Default: +Z detected, converted to Y up as Blender does (x, y, z) -> (x, z, -y).
    let x =
        export(&bvh, &ExportOptions { scale: Scale::Factor(1.0), ..Default::default() }).unwrap();
    assert_eq!(x.applied.source_up, Some(SignedAxis::PosZ));
    assert!(x.applied.detected.is_some());
    assert_eq!(extras(&x)["bvhkit"]["source_up_axis"], "z");
    assert_eq!(extras(&x)["bvhkit"]["up"], "detected, converted to y");
    assert!(x.applied.to_string().contains("converted from z to Y up"), "{}", x.applied);
    assert_eq!(x.root.nodes[0].translation, Some([0.0, 1.0, 0.0]));
    assert_eq!(x.root.nodes[1].translation, Some([0.0, 0.6, 0.0]));
    assert_eq!(x.root.nodes[3].translation, Some([0.1, -0.9, -0.05]));
    // The root's translation track is converted too: (0.5, 0.25, 1) -> (0.5, 1, -0.25).
    let (_, t) = track(&x, 0, Property::Translation);
    assert_eq!(&t[..3], &[0.5, 1.0, -0.25]);
    // The second frame's 90° about the file's Z (its up) is 90° about glTF's Y.
    let (_, r) = track(&x, 0, Property::Rotation);
    let want = axis_quat([0.0, 1.0, 0.0], 90.0);
    for k in 0..4 {
        assert!((f64::from(r[4 + k]) - want[k]).abs() < 1e-6, "{:?} vs {want:?}", &r[4..8]);
    }
    // Given: the same conversion, nothing detected.
    let given = ExportOptions {
        scale: Scale::Factor(1.0),
        up: Up::From(SignedAxis::PosZ),
        ..Default::default()
    };
    let g = export(&bvh, &given).unwrap();
    assert_eq!(g.applied.detected, None);
    assert_eq!(g.buffer, x.buffer);
    assert_eq!(extras(&g)["bvhkit"]["up"], "given, converted to y");
    // --scale 1 --up y and --up keep: the file's own numbers.
    for up in [Up::From(SignedAxis::PosY), Up::Keep] {
        let k =
            export(&bvh, &ExportOptions { scale: Scale::Factor(1.0), up, ..Default::default() })
                .unwrap();
        assert_eq!(k.root.nodes[3].translation, Some([0.1, 0.05, -0.9]));
        let (_, t) = track(&k, 0, Property::Translation);
        assert_eq!(&t[..3], &[0.5, 0.25, 1.0]);
    }
    let keep = export(&bvh, &ExportOptions { up: Up::Keep, ..Default::default() }).unwrap();
    assert_eq!(extras(&keep)["bvhkit"]["source_up_axis"], serde_json::Value::Null);
    assert_eq!(extras(&keep)["bvhkit"]["up"], "kept");
}

/// A clip of four pieces and a bit with a joint that has position channels
/// only, one with rotations only and a Z-up root (converted to Y up).
fn long_clip(frames: usize) -> String {
    let mut text = String::from(
        "HIERARCHY\nROOT Hips\n{\n OFFSET 0 0 90\n CHANNELS 6 Xposition Yposition Zposition Zrotation Xrotation Yrotation\n \
         JOINT Slide\n {\n  OFFSET 0 0 40\n  CHANNELS 3 Xposition Yposition Zposition\n  \
         JOINT Head\n  {\n   OFFSET 0 0 20\n   CHANNELS 3 Zrotation Xrotation Yrotation\n   \
         End Site\n   {\n    OFFSET 0 0 10\n   }\n  }\n }\n \
         JOINT LeftFoot\n {\n  OFFSET 10 5 -85\n  CHANNELS 3 Zrotation Xrotation Yrotation\n  \
         End Site\n  {\n   OFFSET 0 10 0\n  }\n }\n}\nMOTION\n",
    );
    text.push_str(&format!("Frames: {frames}\nFrame Time: 0.0333333\n"));
    for f in 0..frames {
        let t = f as f64;
        text.push_str(&format!(
            "{} {} 90 {} {} 3 0.5 {} 40 {} 5 {} {} {} 2\n",
            t * 0.1,
            (t * 0.05).sin(),
            7.0 * t - 3000.0,
            10.0 * (t * 0.05).sin(),
            (t * 0.01).cos(),
            11.0 * t,
            (t * 0.3).sin() * 20.0,
            -5.0 * t,
            30.0 * (t * 0.02).cos(),
        ));
    }
    text
}

/// `Plan::write_glb` computes the frames as it writes them, piece by piece
/// in frame order on rayon's pool: its bytes are those of the `.glb` made
/// in memory from `export` (whose values the tests above check against
/// references), from where the writer stands, on any number of threads.
#[test]
fn streamed_glb_is_the_glb_made_in_memory_on_any_thread_count() {
    use std::io::{Cursor, Write};
    let bvh = Bvh::parse(long_clip(4 * 512 + 77)).unwrap();
    for options in [
        ExportOptions::default(),
        ExportOptions { mesh: false, up: Up::Keep, ..Default::default() },
    ] {
        let want = export(&bvh, &options).unwrap().to_glb().unwrap();
        assert_eq!(u32::from_le_bytes(want[8..12].try_into().unwrap()) as usize, want.len());
        for threads in [1, 2, 3, 8] {
            let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap();
            let plan = bvhkit_gltf::plan(&bvh, &options).unwrap();
            assert_eq!(plan.buffer_len() + plan_head_len(&want), want.len());
            let mut out = Cursor::new(Vec::new());
            out.write_all(b"abc").unwrap();
            pool.install(|| plan.write_glb(&mut out)).unwrap();
            let got = out.into_inner();
            assert_eq!(&got[..3], b"abc");
            assert!(got[3..] == want[..], "{threads} threads: the streamed .glb differs");
            let again = pool.install(|| export(&bvh, &options)).unwrap().to_glb().unwrap();
            assert!(again == want, "{threads} threads: the .glb in memory differs");
        }
    }
    // The Head's track against its reference, sign-continuous from frame 0:
    // turning 11° a frame, its sign changes every 33 frames or so, so the
    // sign carried across the pieces' edges is negative at some (checked).
    let options = ExportOptions { mesh: false, up: Up::Keep, ..Default::default() };
    let x = export(&bvh, &options).unwrap();
    let (_, q) = track(&x, 2, Property::Rotation);
    let (zax, xax, yax) = ([0.0, 0.0, 1.0], [1.0, 0.0, 0.0], [0.0, 1.0, 0.0]);
    let mut prev: Option<[f64; 4]> = None;
    let mut turned_at_edges = 0;
    for f in 0..bvh.motion().n_frames() {
        let t = f as f64;
        let mut want = mul(
            mul(axis_quat(zax, 11.0 * t), axis_quat(xax, 5.0)),
            axis_quat(yax, (t * 0.3).sin() * 20.0),
        );
        if let Some(p) = prev
            && (0..4).map(|k| p[k] * want[k]).sum::<f64>() < 0.0
        {
            want = want.map(|v| -v);
        }
        prev = Some(want);
        let got = &q[4 * f..4 * f + 4];
        let err: f64 = (0..4).map(|k| (f64::from(got[k]) - want[k]).abs()).fold(0.0, f64::max);
        assert!(err < 1e-6, "frame {f}: {got:?} vs {want:?}");
        let own = mul(
            mul(axis_quat(zax, (11.0 * t) % 360.0), axis_quat(xax, 5.0)),
            axis_quat(yax, (t * 0.3).sin() * 20.0),
        );
        if f > 0 && f % 512 == 0 && (0..4).map(|k| own[k] * want[k]).sum::<f64>() < 0.0 {
            turned_at_edges += 1;
        }
    }
    assert!(turned_at_edges > 0, "no piece starts turned: the carried sign is not checked");
}

/// The length of a `.glb`'s header, JSON chunk and binary chunk header.
fn plan_head_len(glb: &[u8]) -> usize {
    12 + 8 + u32::from_le_bytes(glb[12..16].try_into().unwrap()) as usize + 8
}

/// A writer that fails once `limit` bytes were written.
struct Failing {
    inner: std::io::Cursor<Vec<u8>>,
    limit: u64,
}

impl std::io::Write for Failing {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        if self.inner.position() + buf.len() as u64 > self.limit {
            return Err(std::io::Error::other("disk full"));
        }
        self.inner.write(buf)
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl std::io::Seek for Failing {
    fn seek(&mut self, pos: std::io::SeekFrom) -> std::io::Result<u64> {
        self.inner.seek(pos)
    }
}

/// A value that is not finite in a later piece, or a writer that fails in
/// the middle, stops the stream with that error (the first in frame order,
/// as in memory), on any number of threads, without a hang or a panic.
#[test]
fn streaming_stops_at_the_first_bad_value_or_write_error() {
    use bvhkit_gltf::GlbError;
    let frames = 6 * 512;
    let text = long_clip(frames);
    let lines: Vec<&str> = text.lines().collect();
    let motion = lines.len() - frames;
    // Frame 1300: the Slide joint's translation (a joint with position
    // channels only); frame 2900: the root's.
    let mut bad: Vec<String> = lines.iter().map(|l| l.to_string()).collect();
    let mut v: Vec<String> = bad[motion + 1300].split(' ').map(String::from).collect();
    v[6] = "1e39".into();
    bad[motion + 1300] = v.join(" ");
    let mut v: Vec<String> = bad[motion + 2900].split(' ').map(String::from).collect();
    v[0] = "1e39".into();
    bad[motion + 2900] = v.join(" ");
    let bvh = Bvh::parse(&(bad.join("\n") + "\n")).unwrap();
    let options = ExportOptions { up: Up::Keep, scale: Scale::Factor(1.0), ..Default::default() };
    let in_memory = export(&bvh, &options).unwrap_err();
    assert_eq!(in_memory, Error::NotFinite { joint: "Slide".into(), frame: Some(1300) });
    for threads in [1, 2, 8] {
        let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap();
        for _ in 0..5 {
            let plan = bvhkit_gltf::plan(&bvh, &options).unwrap();
            let mut out = std::io::Cursor::new(Vec::new());
            match pool.install(|| plan.write_glb(&mut out)) {
                Err(GlbError::Export(e)) => assert_eq!(e, in_memory, "{threads} threads"),
                other => panic!("{threads} threads: {other:?}"),
            }
        }
    }
    // A writer that fails in the middle of the binary chunk.
    let good = Bvh::parse(&text).unwrap();
    let whole = export(&good, &options).unwrap().to_glb().unwrap();
    for threads in [1, 2, 8] {
        let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap();
        let plan = bvhkit_gltf::plan(&good, &options).unwrap();
        let mut out =
            Failing { inner: std::io::Cursor::new(Vec::new()), limit: whole.len() as u64 / 2 };
        match pool.install(|| plan.write_glb(&mut out)) {
            Err(GlbError::Io(e)) => assert_eq!(e.to_string(), "disk full"),
            other => panic!("{threads} threads: {other:?}"),
        }
    }
}
