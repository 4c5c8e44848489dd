//! The edit-b transforms (mirror, root motion, joints, rest pose) against
//! the plain 4x4-matrix forward kinematics of `tests/fk.rs`, on synthetic clips and
//! on every well-formed corpus file.
use bvhkit::edit::mirror::{Mirror, MirrorOptions};
use bvhkit::glam::{DMat3, DMat4, DVec3};
use bvhkit::{Bvh, Channel, PositionChannels, ReadOptions};

use crate::util::{corpus_files, local_matrix, stem};

/// World matrices of every joint of one frame: the plain 4x4-matrix
/// reference of `tests/fk.rs`, straight from the format texts.
fn world(bvh: &Bvh, frame: usize, mode: PositionChannels) -> Vec<DMat4> {
    crate::fk::reference_world(bvh, frame, mode)
}

fn position(m: &DMat4) -> DVec3 {
    m.w_axis.truncate()
}

fn rotation(m: &DMat4) -> DMat3 {
    DMat3::from_mat4(*m)
}

/// The size of the figure: the largest extent of its joints over the frames
/// checked, at least 1e-3 so that degenerate clips still get a tolerance.
fn height(bvh: &Bvh, frames: &[usize]) -> f64 {
    let (mut lo, mut hi) = (DVec3::splat(f64::INFINITY), DVec3::splat(f64::NEG_INFINITY));
    for &f in frames {
        for m in world(bvh, f, PositionChannels::Replace) {
            lo = lo.min(position(&m));
            hi = hi.max(position(&m));
        }
    }
    let e = hi - lo;
    e.x.max(e.y).max(e.z).max(1e-3)
}

/// At most about 200 frames spread over the clip.
fn sample(bvh: &Bvh) -> Vec<usize> {
    let n = bvh.motion().n_frames();
    let step = n.div_ceil(200).max(1);
    (0..n).step_by(step).collect()
}

fn well_formed() -> Vec<(String, Bvh)> {
    corpus_files()
        .into_iter()
        .filter(|p| !stem(p).starts_with("malformed_"))
        .map(|p| {
            let bvh =
                ReadOptions::new().lenient(true).parse(&std::fs::read(&p).unwrap()).unwrap().0;
            (stem(&p), bvh)
        })
        .collect()
}

fn reflect(v: DVec3, a: usize) -> DVec3 {
    let mut v = v;
    v[a] = -v[a];
    v
}

#[test]
fn mirror_pairs_on_the_corpus() {
    // Printed so that a human can read every pair the finder makes.
    for (name, bvh) in well_formed() {
        let m = Mirror::new(&bvh, &MirrorOptions::default()).unwrap();
        let names = bvh.skeleton().display_names();
        let pairs: Vec<String> = m
            .pairs()
            .iter()
            .filter(|(l, _)| !bvh.skeleton().joint(*l).is_end_site())
            .map(|(l, r)| format!("{}|{}", names[l.index()], names[r.index()]))
            .collect();
        println!(
            "{name}: world {} rest {} pairs {}: {}",
            m.world_axis(),
            m.rest_axis(),
            pairs.len(),
            pairs.join(" ")
        );
        for (l, r, why) in m.rejected() {
            println!("    rejected {}|{}: {why}", names[l.index()], names[r.index()]);
        }
    }
}

#[test]
fn mirror_reflects_world_motion_and_twice_is_identity() {
    let mut checked = 0;
    for (name, bvh) in well_formed() {
        let m = Mirror::new(&bvh, &MirrorOptions::default()).unwrap();
        let mirrored = m.apply(&bvh).unwrap();
        let back = Mirror::new(&mirrored, &MirrorOptions::default()).unwrap();
        assert_eq!(back.pairs(), m.pairs(), "{name}: the mirrored skeleton pairs the same way");
        let twice = back.apply(&mirrored).unwrap();
        let frames = sample(&bvh);
        let h = height(&bvh, &frames);
        let a = m.world_axis().index();
        let frames_of: Vec<usize> = m.joint_axes().iter().map(|x| x.index()).collect();
        let partner: Vec<usize> = m.partners().map(|p| p.index()).collect();
        assert_eq!(twice.skeleton(), bvh.skeleton(), "{name}: skeleton mirrored twice");
        if m.is_sign_flip() {
            bvhkit_testdata::assert_bit_identical(&twice, &bvh, &name);
        }
        println!("{name}: sign flips only: {}", m.is_sign_flip());
        for &f in &frames {
            for mode in [PositionChannels::Replace, PositionChannels::Add] {
                let orig = world(&bvh, f, mode);
                let mir = world(&mirrored, f, mode);
                let tw = world(&twice, f, mode);
                for j in 0..orig.len() {
                    let expected = reflect(position(&orig[partner[j]]), a);
                    let got = position(&mir[j]);
                    assert!(
                        (got - expected).length() <= 1e-9 * h,
                        "{name} frame {f} joint {j}: mirrored at {got}, reflected partner at {expected}"
                    );
                    let sw = DMat3::from_diagonal(reflect(DVec3::ONE, a));
                    let sr = DMat3::from_diagonal(reflect(DVec3::ONE, frames_of[j]));
                    let r_expected = sw * rotation(&orig[partner[j]]) * sr;
                    assert!(
                        rotation(&mir[j]).abs_diff_eq(r_expected, 1e-9),
                        "{name} frame {f} joint {j}: rotation"
                    );
                    assert!(
                        (position(&tw[j]) - position(&orig[j])).length() <= 1e-9 * h,
                        "{name} frame {f} joint {j}: mirrored twice"
                    );
                }
            }
        }
        checked += 1;
    }
    println!("mirrored {checked} corpus files");
}

/// Issue #27: the Kinect-family writers store a captured pose as the rest
/// pose (a pair's offsets point different ways), yet the mirror swaps every
/// name pair, across the vertical plane of the first frame's lateral axis.
#[test]
fn mirror_swaps_every_pair_of_the_kinect_rigs() {
    use bvhkit::edit::mirror::side_swaps;
    let Some(dir) = crate::util::corpus_dir() else { return };
    for name in [
        "kinect_v1_custom_writer_nonzero_root_offset",
        "azure_kinect_xyz_no_end_sites",
        "openni_nite_kinect_hash_in_joint_names",
    ] {
        let bytes = std::fs::read(dir.join(format!("{name}.bvh"))).unwrap();
        let bvh = ReadOptions::new().lenient(true).parse(&bytes).unwrap().0;
        let m = Mirror::new(&bvh, &MirrorOptions::default()).unwrap();
        assert!(m.rejected().is_empty(), "{name}: rejected {:?}", m.rejected());
        assert!(!m.confirmed_by_length().is_empty(), "{name}: confirmed by length");
        assert!(!m.rest_pose_decides(), "{name}: the first frame decides the plane");
        // Every name pair is swapped.
        let joints = bvh.skeleton().joints();
        let partner: Vec<usize> = m.partners().map(|p| p.index()).collect();
        let mut swapped = 0;
        for (i, j) in joints.iter().enumerate().filter(|(_, j)| !j.is_end_site()) {
            for (_, other) in side_swaps(j.name()) {
                if let Some(k) = joints.iter().position(|q| !q.is_end_site() && q.name() == other) {
                    assert_eq!(partner[i], k, "{name}: {} not swapped with {other}", j.name());
                    swapped += 1;
                }
            }
        }
        assert!(swapped >= 12, "{name}: {swapped} joints swapped");
        println!(
            "{name}: {swapped} joints swapped, world axis {}, {} frames",
            m.world_axis(),
            bvh.motion().n_frames()
        );
        // The up axis is kept: the plane is vertical.
        let up = bvhkit::edit::axes::detect_up(&bvh).axis.expect("an up axis").axis();
        assert_ne!(m.world_axis(), up, "{name}: the mirror plane must contain the up axis");
        // Each joint's world position is its partner's reflected, every frame;
        // mirroring twice gives back the input.
        let mirrored = m.apply(&bvh).unwrap();
        let back = Mirror::new(&mirrored, &MirrorOptions::default()).unwrap();
        assert_eq!(back.world_axis(), m.world_axis(), "{name}: the mirror's plane");
        let twice = back.apply(&mirrored).unwrap();
        assert_eq!(twice.skeleton(), bvh.skeleton(), "{name}: skeleton mirrored twice");
        let all: Vec<usize> = (0..bvh.motion().n_frames()).collect();
        let h = height(&bvh, &all);
        let a = m.world_axis().index();
        for f in all {
            let (orig, mir, tw) = (
                world(&bvh, f, PositionChannels::Replace),
                world(&mirrored, f, PositionChannels::Replace),
                world(&twice, f, PositionChannels::Replace),
            );
            for j in 0..orig.len() {
                let expected = reflect(position(&orig[partner[j]]), a);
                assert!(
                    (position(&mir[j]) - expected).length() <= 1e-9 * h,
                    "{name} frame {f} joint {j}: not the reflected partner"
                );
                assert!(
                    (position(&tw[j]) - position(&orig[j])).length() <= 1e-9 * h,
                    "{name} frame {f} joint {j}: mirrored twice"
                );
            }
        }
        if name.starts_with("kinect_v1") {
            // The plane's normal is the axis the hips and shoulders lie
            // apart along in frame 0 (Z: the shoulder line runs along
            // (12.7, 2.9, -30.4)), not the rest pose's X.
            let w = world(&bvh, 0, PositionChannels::Replace);
            let at = |n: &str| position(&w[joints.iter().position(|j| j.name() == n).unwrap()]);
            let d = (at("ShoulderLeft") - at("ShoulderRight")).abs()
                + (at("HipLeft") - at("HipRight")).abs();
            let along = if d.x > d.z { 0 } else { 2 };
            assert_eq!(a, along, "{name}: plane normal vs the frame-0 lines {d}");
            assert_eq!(a, 2, "{name}: the lateral axis is Z");
        }
    }
}

fn max_error(a: &[DMat4], b: &[DMat4], map: impl Fn(usize) -> usize) -> f64 {
    b.iter()
        .enumerate()
        .map(|(j, m)| (position(m) - position(&a[map(j)])).length())
        .fold(0.0, f64::max)
}

#[test]
fn root_in_place_keeps_height_and_local_pose() {
    use bvhkit::edit::{axes::SignedAxis, root};
    for (name, bvh) in well_formed() {
        let Some(c) = root::carrier(&bvh) else { continue };
        let out = match root::in_place(&bvh, SignedAxis::PosY) {
            Ok(out) => out,
            Err(e) => panic!("{name}: {e}"),
        };
        let frames = sample(&bvh);
        let h = height(&bvh, &frames);
        let c = c.index();
        let first = position(&world(&out, 0, PositionChannels::Replace)[c]);
        let cj = &bvh.skeleton().joints()[c];
        for &f in &frames {
            let (a, b) = (
                world(&bvh, f, PositionChannels::Replace),
                world(&out, f, PositionChannels::Replace),
            );
            let (pa, pb) = (position(&a[c]), position(&b[c]));
            assert!((pa.y - pb.y).abs() <= 1e-9 * h, "{name} frame {f}: height changed");
            assert!(
                (pb.x - first.x).abs() <= 1e-9 * h && (pb.z - first.z).abs() <= 1e-9 * h,
                "{name} frame {f}: travels"
            );
            // Every channel but the carrier's horizontal positions is kept bit for bit.
            for (k, (x, y)) in bvh.motion().frame(f).iter().zip(out.motion().frame(f)).enumerate() {
                let own = cj.channel_range().contains(&k)
                    && cj.channels()[k - cj.first_channel()].is_position()
                    && cj.channels()[k - cj.first_channel()] != Channel::Yposition;
                if !own {
                    assert_eq!(x.to_bits(), y.to_bits(), "{name} frame {f} channel {k}");
                }
            }
            // The pose relative to the carrier is unchanged.
            for j in c..bvh.skeleton().subtree_end(bvhkit::JointId::new(c)) {
                let ra = position(&a[j]) - pa;
                let rb = position(&b[j]) - pb;
                assert!((ra - rb).length() <= 1e-9 * h, "{name} frame {f} joint {j}: pose changed");
            }
        }
    }
}

#[test]
fn root_to_origin_and_extract_keep_the_pose() {
    use bvhkit::edit::{axes::SignedAxis, root};
    for (name, bvh) in well_formed() {
        let Some(c) = root::carrier(&bvh) else { continue };
        let c = c.index();
        let frames = sample(&bvh);
        let h = height(&bvh, &frames);
        match root::to_origin(&bvh, SignedAxis::PosY) {
            Ok(out) => {
                let w0 = world(&out, 0, PositionChannels::Replace);
                let p = position(&w0[c]);
                assert!(
                    p.x.abs() <= 1e-9 * h && p.z.abs() <= 1e-9 * h,
                    "{name}: not at the origin: {p}"
                );
                // A rigid motion of the carrier's subtree: distances to the carrier kept.
                let end = bvh.skeleton().subtree_end(bvhkit::JointId::new(c));
                for &f in &frames {
                    let (a, b) = (
                        world(&bvh, f, PositionChannels::Replace),
                        world(&out, f, PositionChannels::Replace),
                    );
                    for j in c..end {
                        let da = (position(&a[j]) - position(&a[c])).length();
                        let db = (position(&b[j]) - position(&b[c])).length();
                        assert!((da - db).abs() <= 1e-9 * h, "{name} frame {f} joint {j}");
                        assert!(
                            (position(&a[j]).y - position(&b[j]).y).abs() <= 1e-9 * h,
                            "{name}: height"
                        );
                    }
                }
            }
            Err(e) => println!("{name}: to_origin refused: {e}"),
        }
        match root::extract(&bvh, SignedAxis::PosY, "RootMotion") {
            Ok(out) => {
                for &f in &frames {
                    let (a, b) = (
                        world(&bvh, f, PositionChannels::Replace),
                        world(&out, f, PositionChannels::Replace),
                    );
                    let top = {
                        let mut t = c;
                        while let Some(p) = bvh.skeleton().joints()[t].parent() {
                            t = p.index();
                        }
                        t
                    };
                    // Joints keep their world motion (shifted by one after the new
                    // root), except a still chain above the carrier when the old root
                    // cannot hold the compensation (Godot's 0-channel root).
                    let holds = bvh.skeleton().joints()[top].channels().len() == 6;
                    let riding = |j: usize| {
                        !holds
                            && j != c
                            && bvh.skeleton().subtree_end(bvhkit::JointId::new(j)) > c
                            && j <= c
                    };
                    let e = (0..a.len())
                        .filter(|&j| !riding(j))
                        .map(|j| (position(&a[j]) - position(&b[j + 1])).length())
                        .fold(0.0, f64::max);
                    assert!(e <= 1e-9 * h, "{name} frame {f}: world motion moved by {e}");
                    assert_eq!(position(&b[0]).y, 0.0, "{name}: the root is on the ground");
                }
            }
            Err(e) => println!("{name}: extract refused: {e}"),
        }
    }
}

#[test]
fn remove_joint_keeps_the_world_motion_of_the_rest() {
    use bvhkit::edit::joints::remove_joints;
    for (name, bvh) in well_formed() {
        let s = bvh.skeleton();
        // Remove every joint that has a joint child and a parent, one at a time (at most 6 per file).
        let candidates: Vec<usize> = s
            .ids()
            .filter(|&id| {
                s.joint(id).parent().is_some()
                    && !s.joint(id).is_end_site()
                    && s.children(id).any(|c| !s.joint(c).is_end_site())
            })
            .map(|id| id.index())
            .collect();
        let step = candidates.len().div_ceil(6).max(1);
        let frames = sample(&bvh);
        let h = height(&bvh, &frames);
        for &r in candidates.iter().step_by(step) {
            let removed = s.joints()[r].name();
            let (out, reported) =
                remove_joints(&bvh, &[removed], PositionChannels::Replace).unwrap();
            let map: Vec<usize> = (0..s.len()).filter(|&j| j != r).collect();
            let mut worst: f64 = 0.0;
            for &f in &frames {
                let (a, b) = (
                    world(&bvh, f, PositionChannels::Replace),
                    world(&out, f, PositionChannels::Replace),
                );
                worst = worst.max(max_error(&a, &b, |j| map[j]));
            }
            // The reported error is the true one (on all frames; here a sample).
            assert!(
                worst <= reported + 1e-9 * h,
                "{name} without {removed}: {worst} > reported {reported}"
            );
            // Exact when the removed joint does not turn, or every child can hold
            // the turned translation (three position channels).
            let turns = s.joints()[r].rotation_axes().next().is_some();
            let held = s
                .children(bvhkit::JointId::new(r))
                .all(|c| s.joint(c).channels().iter().filter(|ch| ch.is_position()).count() == 3);
            if !turns || held {
                assert!(reported <= 1e-9 * h, "{name} without {removed}: error {reported}");
            }
        }
    }
}

#[test]
fn rest_pose_change_keeps_world_motion() {
    use bvhkit::edit::rest;
    for (name, bvh) in well_formed() {
        let n = bvh.motion().n_frames();
        if n == 0 {
            continue;
        }
        let frames = sample(&bvh);
        let h = height(&bvh, &frames);
        let (out, reported) = rest::from_frame(&bvh, n / 2, PositionChannels::Replace).unwrap();
        for &f in &frames {
            let (a, b) = (
                world(&bvh, f, PositionChannels::Replace),
                world(&out, f, PositionChannels::Replace),
            );
            let e = max_error(&a, &b, |j| j);
            assert!(e <= 1e-9 * h, "{name} frame {f}: moved by {e} (reported {reported})");
        }
        // The chosen frame is the rest pose: every local rotation is the identity.
        let f = out.motion().frame(n / 2);
        for (i, j) in out.skeleton().joints().iter().enumerate() {
            if j.rotation_axes().count() == 3 {
                assert!(
                    local_matrix(&out, i, f).abs_diff_eq(DMat3::IDENTITY, 1e-9),
                    "{name}: {} turns in the rest frame",
                    j.name()
                );
            }
        }
        // Another file's rest pose: this file's own mirrored skeleton, a real change of directions.
        let (back, e2) =
            rest::from_skeleton(&out, bvh.skeleton(), PositionChannels::Replace).unwrap();
        for &f in &frames {
            let (a, b) = (
                world(&bvh, f, PositionChannels::Replace),
                world(&back, f, PositionChannels::Replace),
            );
            let e = max_error(&a, &b, |j| j);
            assert!(e <= 1e-9 * h, "{name} frame {f}: from_skeleton moved by {e} (reported {e2})");
        }
    }
}

/// A small skeleton whose pairs list their rotations in different orders,
/// mirrored with explicit pairs: the matrix path, checked the same way.
#[test]
fn mirror_with_explicit_pairs_and_different_orders() {
    let bvh = Bvh::parse(
        "HIERARCHY
ROOT Pelvis { OFFSET 0 0 0 CHANNELS 6 Xposition Yposition Zposition Zrotation Xrotation Yrotation
  JOINT Port { OFFSET 1 0 0.2 CHANNELS 3 Zrotation Xrotation Yrotation
    JOINT PortFoot { OFFSET 0 -4 0 CHANNELS 1 Xrotation End Site { OFFSET 0 -1 1 } } }
  JOINT Starboard { OFFSET -1 0 0.2 CHANNELS 3 Xrotation Yrotation Zrotation
    JOINT StarboardFoot { OFFSET 0 -4 0 CHANNELS 1 Xrotation End Site { OFFSET 0 -1 1 } } } }
MOTION Frames: 3 Frame Time: 0.1
1 2 3 10 20 30 40 50 60 5 -70 80 170 7
2 2 3 15 25 35 45 55 175 6 -75 85 -175 8
3 2 3 20 30 40 50 60 -170 7 -80 90 -160 9
",
    )
    .unwrap();
    // No side names: nothing pairs by itself.
    assert!(Mirror::new(&bvh, &MirrorOptions::default()).unwrap().pairs().is_empty());
    let pairs = vec![
        ("Port".to_string(), "Starboard".to_string()),
        ("PortFoot".to_string(), "StarboardFoot".to_string()),
    ];
    let opts = MirrorOptions { pairs: Some(pairs), ..MirrorOptions::default() };
    let m = Mirror::new(&bvh, &opts).unwrap();
    assert_eq!(m.pairs().len(), 3, "two joints and their End Sites");
    assert!(!m.is_sign_flip());
    let out = m.apply(&bvh).unwrap();
    let twice = Mirror::new(&out, &opts).unwrap().apply(&out).unwrap();
    let partner: Vec<usize> = m.partners().map(|p| p.index()).collect();
    for f in 0..3 {
        let (a, b, c) = (
            world(&bvh, f, PositionChannels::Replace),
            world(&out, f, PositionChannels::Replace),
            world(&twice, f, PositionChannels::Replace),
        );
        for j in 0..a.len() {
            let expected = reflect(position(&a[partner[j]]), 0);
            assert!((position(&b[j]) - expected).length() < 1e-9, "frame {f} joint {j}");
            assert!(
                (position(&c[j]) - position(&a[j])).length() < 1e-9,
                "twice: frame {f} joint {j}"
            );
        }
    }
    // Continuity: the Euler angles of the matrix path do not jump by 360.
    let col = out.skeleton().joints()[1].first_channel();
    for f in 1..3 {
        for k in col..col + 3 {
            let d = out.motion().frame(f)[k] - out.motion().frame(f - 1)[k];
            assert!(d.abs() < 90.0, "frame {f} channel {k} jumps by {d}");
        }
    }
    // A pair name that is not a joint is an error.
    let bad = MirrorOptions {
        pairs: Some(vec![("Port".into(), "Nope".into())]),
        ..MirrorOptions::default()
    };
    assert!(Mirror::new(&bvh, &bad).unwrap_err().to_string().contains("Nope"));
}

#[test]
fn rename_and_end_sites() {
    use bvhkit::edit::joints::{
        add_end_sites, parse_rename_map, rename_map, rename_pattern, strip_end_sites,
    };
    let bvh = Bvh::parse(
        "HIERARCHY ROOT mixamorig:Hips { OFFSET 0 0 0 CHANNELS 3 Xposition Yposition Zposition
        JOINT mixamorig:Head { OFFSET 0 10 0 CHANNELS 1 Xrotation End Site { OFFSET 0 2 0 } } }
        MOTION Frames: 1 Frame Time: 0.1
        1 2 3 4",
    )
    .unwrap();
    let out = rename_pattern(&bvh, "mixamorig:", "").unwrap();
    assert_eq!(out.skeleton().display_names(), ["Hips", "Head", "Head_End"]);
    assert_eq!(out.motion(), bvh.motion());
    let map =
        parse_rename_map("# comment\nmixamorig:Hips\tpelvis\nmixamorig:Head = skull\n").unwrap();
    let out = rename_map(&bvh, &map).unwrap();
    assert_eq!(out.skeleton().display_names(), ["pelvis", "skull", "skull_End"]);
    // Two joints may not end up with one name; names must stay valid.
    assert!(rename_pattern(&bvh, "Head", "Hips").is_err());
    assert!(rename_pattern(&bvh, "Head", "a{b").is_err());
    assert!(parse_rename_map("no separator here").is_err());
    let bare = strip_end_sites(&bvh).unwrap();
    assert_eq!(bare.skeleton().len(), 2);
    assert_eq!(bare.motion(), bvh.motion());
    let back = add_end_sites(&bare).unwrap();
    assert_eq!(back.skeleton().joints()[2].offset(), DVec3::new(0.0, 10.0, 0.0));
}

/// The mirror's batched path (`Mirror::apply` and the streaming
/// `FrameMap::map`: the slow joints' sines in one batch, their rotations
/// reflected as quaternions, their angles from one `EulerBatch`) against the
/// plain one kept in `Mirror::apply_frame` (per joint, through rotation
/// matrices) on every frame of every well-formed corpus file: position and
/// sign-flipped channels bit for bit, every joint's rotation within 1e-9,
/// its angles within 1e-6 degrees (both take the solution closest to their
/// own previous frame).
#[test]
fn mirror_batched_path_equals_the_matrix_path_on_the_corpus() {
    use bvhkit::edit::{FrameMap, map_frames};
    use bvhkit::rotation::euler_to_mat3;
    let (mut files, mut slow_files) = (0, 0);
    for (name, bvh) in well_formed() {
        let m = Mirror::new(&bvh, &MirrorOptions::default()).unwrap();
        let fast = m.apply(&bvh).unwrap();
        let streamed = map_frames(&bvh, &mut m.clone()).unwrap();
        let bits = |b: &Bvh| b.motion().values().iter().map(|v| v.to_bits()).collect::<Vec<_>>();
        assert!(bits(&fast) == bits(&streamed), "{name}: apply and map differ");
        let plain = m.clone();
        assert_eq!(plain.output_skeleton(), fast.skeleton());
        let nc = bvh.motion().n_channels();
        let mut previous: Option<Vec<f64>> = None;
        let mut out = vec![0.0; nc];
        let skel = bvh.skeleton();
        for f in 0..bvh.motion().n_frames() {
            plain.apply_frame(bvh.motion().frame(f), previous.as_deref(), &mut out);
            let got = fast.motion().frame(f);
            for j in skel.joints() {
                let axes: Vec<_> = j.rotation_axes().collect();
                let range = j.first_channel()..j.first_channel() + j.channels().len();
                let rot: Vec<usize> = range
                    .clone()
                    .filter(|&c| j.channels()[c - range.start].is_rotation())
                    .collect();
                for c in range.clone() {
                    if !rot.contains(&c) || !m.is_sign_flip() {
                        continue;
                    }
                    assert_eq!(got[c].to_bits(), out[c].to_bits(), "{name} frame {f} channel {c}");
                }
                for c in range.filter(|c| !rot.contains(c)) {
                    assert_eq!(got[c].to_bits(), out[c].to_bits(), "{name} frame {f} channel {c}");
                }
                if rot.is_empty() {
                    continue;
                }
                let a: Vec<f64> = rot.iter().map(|&c| got[c]).collect();
                let b: Vec<f64> = rot.iter().map(|&c| out[c]).collect();
                let (ma, mb) = (euler_to_mat3(&axes, &a), euler_to_mat3(&axes, &b));
                let diff = (ma - mb).to_cols_array().iter().fold(0.0f64, |x, y| x.max(y.abs()));
                assert!(
                    diff < 1e-9,
                    "{name} frame {f} joint {}: rotations differ by {diff}",
                    j.name()
                );
                for (x, y) in a.iter().zip(&b) {
                    assert!(
                        (x - y).abs() < 1e-6,
                        "{name} frame {f} joint {}: {a:?} against {b:?}",
                        j.name()
                    );
                }
            }
            previous = Some(out.clone());
        }
        files += 1;
        slow_files += usize::from(!m.is_sign_flip());
    }
    println!(
        "mirror: batched path checked on {files} corpus files, {slow_files} with joints through rotations"
    );
    assert!(files == 0 || slow_files > 0, "no corpus file exercised the rotation path");
}

/// A Z-up figure facing -X, so its left/right axis is Y (the default up
/// axis of other tools): the left arm raised and the right one lowered in
/// every frame, so that the pairs lie further apart along Z than along X.
fn z_up_lateral_y() -> Bvh {
    let text = "HIERARCHY
ROOT Hips { OFFSET 0 0 90 CHANNELS 6 Xposition Yposition Zposition Zrotation Yrotation Xrotation
  JOINT LeftUpLeg { OFFSET 0 10 0 CHANNELS 3 Zrotation Yrotation Xrotation
    JOINT LeftLeg { OFFSET 0 0 -45 CHANNELS 3 Zrotation Yrotation Xrotation
      JOINT LeftFoot { OFFSET 0 0 -42 CHANNELS 3 Zrotation Yrotation Xrotation End Site { OFFSET -12 0 -3 } } } }
  JOINT RightUpLeg { OFFSET 0 -10 0 CHANNELS 3 Zrotation Yrotation Xrotation
    JOINT RightLeg { OFFSET 0 0 -45 CHANNELS 3 Zrotation Yrotation Xrotation
      JOINT RightFoot { OFFSET 0 0 -42 CHANNELS 3 Zrotation Yrotation Xrotation End Site { OFFSET -12 0 -3 } } } }
  JOINT Spine { OFFSET 0 0 20 CHANNELS 3 Zrotation Yrotation Xrotation
    JOINT Head { OFFSET 0 0 45 CHANNELS 3 Zrotation Yrotation Xrotation End Site { OFFSET 0 0 15 } }
    JOINT LeftArm { OFFSET 0 18 30 CHANNELS 3 Zrotation Yrotation Xrotation
      JOINT LeftHand { OFFSET 0 30 0 CHANNELS 3 Zrotation Yrotation Xrotation End Site { OFFSET 0 12 0 } } }
    JOINT RightArm { OFFSET 0 -18 30 CHANNELS 3 Zrotation Yrotation Xrotation
      JOINT RightHand { OFFSET 0 -30 0 CHANNELS 3 Zrotation Yrotation Xrotation End Site { OFFSET 0 -12 0 } } } } }
MOTION
Frames: 3
Frame Time: 0.1
";
    let mut text = text.to_string();
    for k in 0..3 {
        let k = k as f64;
        // Hips, legs (a step), spine, head, arms: left up, right down.
        text += &format!(
            "{} 0 90 {} 0 0  0 0 {}  0 0 {}  0 0 0  0 0 {}  0 0 0  0 0 0  0 0 0  0 0 0  0 0 80  0 0 {}  0 0 80  0 0 0\n",
            -5.0 * k,
            2.0 * k,
            -20.0 + 5.0 * k,
            10.0,
            15.0 - 5.0 * k,
            10.0 * k,
        );
    }
    Bvh::parse(text).unwrap()
}

/// Mirroring keeps the up axis and swaps sides: the mirror plane is
/// vertical (a reflection across any vertical plane is the mirror image,
/// turned), never across the up axis, on every corpus file with pairs and
/// on a Z-up figure whose lateral axis is Y (mirrored upside down when the
/// up axis was taken to be Y); every joint keeps its partner's height and
/// lands on its partner's reflection across that plane.
#[test]
fn mirror_keeps_the_up_axis_and_swaps_sides_on_the_corpus() {
    use bvhkit::edit::axes::detect_up;
    use bvhkit::rotation::Axis;
    let fixture = z_up_lateral_y();
    let old = MirrorOptions { up: Some(Axis::Y), ..MirrorOptions::default() };
    assert_eq!(Mirror::new(&fixture, &old).unwrap().world_axis(), Axis::Z, "the old plane");
    let mut all = well_formed();
    all.push(("z_up_lateral_y".to_string(), fixture));
    let mut checked = 0;
    for (name, bvh) in all {
        let m = Mirror::new(&bvh, &MirrorOptions::default()).unwrap();
        let Some(up) = detect_up(&bvh).axis else { continue };
        if m.pairs().is_empty() || bvh.motion().n_frames() == 0 {
            continue;
        }
        let u = up.axis().index();
        let a = m.world_axis().index();
        assert_ne!(a, u, "{name}: mirror plane across the up axis {up}");
        let mirrored = m.apply(&bvh).unwrap();
        assert_eq!(detect_up(&mirrored).axis, Some(up), "{name}: up axis kept");
        let frames = sample(&bvh);
        let h = height(&bvh, &frames);
        let partner: Vec<usize> = m.partners().map(|p| p.index()).collect();
        for &f in &frames {
            let (orig, mir) = (
                world(&bvh, f, PositionChannels::Replace),
                world(&mirrored, f, PositionChannels::Replace),
            );
            for j in 0..orig.len() {
                let (got, src) = (position(&mir[j]), position(&orig[partner[j]]));
                assert!((got[u] - src[u]).abs() <= 1e-9 * h, "{name} frame {f} joint {j}: height");
                assert!(
                    (got - reflect(src, a)).length() <= 1e-9 * h,
                    "{name} frame {f} joint {j}: not the partner's reflection"
                );
            }
        }
        checked += 1;
    }
    println!("mirror keeps the up axis on {checked} files");
    if crate::util::corpus_files().len() > 10 {
        assert!(checked >= 20, "only {checked} files checked");
    }
}

/// `--extract-root ''` wrote a joint with no name (`ROOT ` and a brace),
/// which no reader parses back: the new root's name is checked as
/// `rename` checks names.
#[test]
fn extract_refuses_names_a_file_cannot_hold() {
    use bvhkit::edit::root;
    let bvh = Bvh::parse(bvhkit_testdata::synth_text(3, 4, 5)).unwrap();
    for bad in ["", " Root", "Root ", "a{b", "a}b", "a\nb", "a\tb"] {
        let e = root::extract(&bvh, bvhkit::edit::axes::SignedAxis::PosY, bad).unwrap_err();
        assert!(e.to_string().contains("is not a valid joint name"), "{bad:?}: {e}");
    }
    let out = root::extract(&bvh, bvhkit::edit::axes::SignedAxis::PosY, "Root Motion").unwrap();
    assert_eq!(out.skeleton().joints()[0].name(), "Root Motion");
    // It reads back: the name survives the text.
    let back = Bvh::parse(out.to_string()).unwrap();
    assert_eq!(back.skeleton().joints()[0].name(), "Root Motion");
}
