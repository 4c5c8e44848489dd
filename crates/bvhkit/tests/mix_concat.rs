//! Concatenation and crossfades on every well-formed corpus file and on
//! small fixtures, against the references of `mix_util`.
use bvhkit::edit::{frames, root};
use bvhkit::glam::{DMat3, DVec3};
use bvhkit::mix::concat::{ConcatOptions, concat};
use bvhkit::mix::weights::Curve;
use bvhkit::mix::{Span, up_axis};
use bvhkit::{Bvh, PositionChannels};

use crate::fk::reference_world;
use crate::mix_util::{
    bits, corpus, figure, local_matrix, local_quat, mat_diff, position_channels, slerp_formula,
    smoothstep, three_channel_joints, walk,
};

fn halves(bvh: &Bvh) -> (Bvh, Bvh) {
    let n = bvh.motion().n_frames();
    (frames::range(bvh, 0..n / 2).unwrap(), frames::range(bvh, n / 2..n).unwrap())
}

/// Clips kept where they are, and the seam where they meet (no search for
/// the gait phase): the output's frames are the inputs' at known places.
fn keep() -> ConcatOptions {
    ConcatOptions { keep_position: true, search: Span::Frames(0), ..ConcatOptions::default() }
}

#[test]
fn concat_has_a_then_b_frames_bit_for_bit_on_the_corpus() {
    for (name, bvh) in corpus(4) {
        let (a, b) = halves(&bvh);
        let (na, nb) = (a.motion().n_frames(), b.motion().n_frames());
        // Kept where they are: A's frames then B's, every bit.
        let (out, _) = concat(&[("a", &a), ("b", &b)], &keep()).unwrap();
        assert_eq!(out.motion().n_frames(), na + nb, "{name}");
        bvhkit_testdata::assert_bit_identical(&out, &bvh, &name);
        // Aligned: A's frames bit for bit, then B moved: only the carrier's
        // channels differ from B's.
        let carrier = root::carrier(&a).unwrap();
        let cr = a.skeleton().joint(carrier).channel_range();
        match concat(&[("a", &a), ("b", &b)], &ConcatOptions::default()) {
            Ok((out, report)) => {
                assert_eq!(out.motion().n_frames(), na + nb, "{name}");
                assert_eq!(
                    bits(&out.motion().values()[..a.motion().values().len()]),
                    bits(a.motion().values()),
                    "{name}"
                );
                assert!(report.seams[0].aligned.is_some());
                for k in 0..nb {
                    let (o, e) = (out.motion().frame(na + k), b.motion().frame(k));
                    for c in 0..o.len() {
                        if !cr.contains(&c) {
                            assert_eq!(
                                o[c].to_bits(),
                                e[c].to_bits(),
                                "{name} frame {k} channel {c}"
                            );
                        }
                    }
                }
            }
            Err(e) => println!("{name}: not aligned: {e}"),
        }
    }
}

/// B is C's second part moved and turned on the ground by `root::to_origin`;
/// concatenated after C's first part, it must come back exactly where C
/// had it: the alignment puts B's first carrier position on A's last and
/// turns B's heading to A's.
#[test]
fn concat_alignment_puts_b_where_a_ends_facing_the_same_way_on_the_corpus() {
    let mut checked = 0;
    for (name, c) in corpus(4) {
        let n = c.motion().n_frames();
        let m = n / 2;
        let a = frames::range(&c, 0..m).unwrap();
        let b = frames::range(&c, m - 1..n).unwrap(); // starts on A's last frame
        let (up, _) = up_axis(&c, None);
        let Ok(moved) = root::to_origin(&b, up) else {
            println!("{name}: the carrier cannot be moved, alignment not checked");
            continue;
        };
        let (out, report) = match concat(&[("a", &a), ("b", &moved)], &ConcatOptions::default()) {
            Ok(x) => x,
            Err(e) => panic!("{name}: {e}"),
        };
        assert_eq!(report.seams[0].aligned.unwrap().0, m - 1);
        let h = bvhkit::edit::rest_height(c.skeleton());
        let carrier = root::carrier(&a).unwrap().index();
        // The carrier and everything below it: back where C had them.
        let end = c.skeleton().subtree_end(bvhkit::JointId::new(carrier));
        let above = c.skeleton().joint(bvhkit::JointId::new(carrier)).depth();
        if end - carrier + above < c.skeleton().len() {
            // Joints beside the carrier (trackers under a still root) are
            // not moved with it, so they do not follow the turn.
            println!("{name}: joints outside the carrier's subtree, alignment not checked");
            continue;
        }
        // B's first frame on the ground where A's last is, with the same
        // heading: here the same pose, so the carrier's world rotation is A's.
        let wb0 = reference_world(&out, m, PositionChannels::Replace);
        let wa = reference_world(&a, m - 1, PositionChannels::Replace);
        let mut d = wb0[carrier].w_axis.truncate() - wa[carrier].w_axis.truncate();
        d[up.axis().index()] = 0.0;
        assert!(d.length() < 1e-9 * h.max(1.0), "{name}: carrier off by {d}");
        let r = mat_diff(DMat3::from_mat4(wb0[carrier]), DMat3::from_mat4(wa[carrier]));
        assert!(r < 1e-9, "{name}: carrier rotation off by {r}");
        // Output frame m + k is B's frame k, which is C's frame m - 1 + k:
        // the carrier and everything below it are back where C had them.
        for k in [0, (n - m) / 2, n - m] {
            let wo = reference_world(&out, m + k, PositionChannels::Replace);
            let wc = reference_world(&c, m - 1 + k, PositionChannels::Replace);
            for j in carrier..end {
                let d = (wo[j].w_axis - wc[j].w_axis).truncate().length();
                assert!(d < 1e-8 * h.max(1.0), "{name}: joint {j} frame {k} off by {d}");
            }
        }
        checked += 1;
    }
    if bvhkit_testdata::corpus_dir().is_some() {
        // 26 of the 27 files of at least 4 frames (all but Godot's trackers).
        assert!(checked >= 26, "alignment checked on {checked} files only");
    }
}

#[test]
fn crossfade_frames_are_the_reference_slerp_at_the_smoothstep_weight_on_the_corpus() {
    for (name, bvh) in corpus(8) {
        let (a, b) = halves(&bvh);
        let (na, nb) = (a.motion().n_frames(), b.motion().n_frames());
        let nf = 6.min(na).min(nb);
        for curve in [Curve::Smoothstep, Curve::Linear] {
            let opts = ConcatOptions { crossfade: Span::Frames(nf), curve, ..keep() };
            let (out, _) = concat(&[("a", &a), ("b", &b)], &opts).unwrap();
            let om = out.motion();
            assert_eq!(om.n_frames(), na + nb - nf, "{name}");
            for k in 0..na - nf {
                assert_eq!(bits(om.frame(k)), bits(a.motion().frame(k)), "{name}");
            }
            for k in nf..nb {
                assert_eq!(bits(om.frame(na - nf + k)), bits(b.motion().frame(k)), "{name}");
            }
            for k in 0..nf {
                let x = (k + 1) as f64 / (nf + 1) as f64;
                let w = if curve == Curve::Smoothstep { smoothstep(x) } else { x };
                let (fa, fb, fo) =
                    (a.motion().frame(na - nf + k), b.motion().frame(k), om.frame(na - nf + k));
                for j in three_channel_joints(&bvh) {
                    let q = slerp_formula(local_quat(&bvh, j, fa), local_quat(&bvh, j, fb), w);
                    let d = mat_diff(DMat3::from_quat(q), local_matrix(&bvh, j, fo));
                    assert!(d < 1e-9, "{name}: joint {j} crossfade frame {k} off by {d}");
                }
                for c in position_channels(&bvh) {
                    let e = fa[c] + w * (fb[c] - fa[c]);
                    // Rounded to nine decimals (`snap_angle`: 5e-10).
                    assert!((fo[c] - e).abs() <= 5e-10 + 1e-12 * e.abs(), "{name}: channel {c}");
                }
            }
        }
    }
}

#[test]
fn different_channel_orders_are_converted_not_refused() {
    let rows = |f: &dyn Fn(usize) -> String| (0..5).map(f).collect::<Vec<_>>();
    let tail = "5 2 1 -4 10 3 30 2 -1 20 0 0 -30 -2 1 20 0 0";
    let a = figure(
        "6 Xposition Yposition Zposition Zrotation Xrotation Yrotation",
        0.1,
        &rows(&|k| format!("0 20 {k} 10 20 {} {tail}", 5 * k)),
    );
    // B lists its root channels in another order: rotations first, YXZ.
    let b = figure(
        "6 Yrotation Xrotation Zrotation Zposition Xposition Yposition",
        0.1,
        &rows(&|k| format!("{} 30 -15 {k} 1 20 {tail}", 40 + k)),
    );
    let (out, report) = concat(&[("a", &a), ("b", &b)], &keep()).unwrap();
    assert!(report.seams[0].prepared.converted);
    assert_eq!(out.skeleton(), a.skeleton());
    for k in 0..5 {
        let wo = reference_world(&out, 5 + k, PositionChannels::Replace);
        let wb = reference_world(&b, k, PositionChannels::Replace);
        for (x, y) in wo.iter().zip(&wb) {
            assert!(
                (x.w_axis - y.w_axis).length() < 1e-9
                    && mat_diff(DMat3::from_mat4(*x), DMat3::from_mat4(*y)) < 1e-12
            );
        }
    }
}

#[test]
fn a_clip_at_another_rate_is_resampled_and_the_report_says_so() {
    let a = walk(30, 20.0, 1.0, 0.0, 1.0 / 30.0);
    let b = walk(61, 40.0, 0.5, 0.0, 1.0 / 60.0);
    let (out, report) = concat(&[("a.bvh", &a), ("b.bvh", &b)], &ConcatOptions::default()).unwrap();
    let p = &report.seams[0].prepared;
    assert_eq!(p.resampled_from.map(|r| r.round()), Some(60.0));
    assert_eq!((p.frames_before, p.frames_after), (61, 31));
    assert_eq!(out.motion().n_frames(), 61);
    assert_eq!(out.motion().frame_time(), 1.0 / 30.0);
    let text = report.to_string();
    assert!(
        text.contains(
            "b.bvh: resampled from 60.000000 fps (61 frames) to the first clip's rate (31 frames)"
        ),
        "{text}"
    );
    // The walk goes on: B's first carrier position is A's last, on the ground.
    let f = out.motion().frame(30);
    assert!((f[2] - 29.0).abs() < 1e-9 && f[0].abs() < 1e-9 && f[1] == 20.5, "{f:?}");
}

#[test]
fn a_turning_walk_continues_along_its_heading() {
    // A walks along +Z; B starts facing +X elsewhere: B is turned to +Z
    // and put where A ends.
    let a = walk(20, 20.0, 1.0, 0.0, 0.1);
    let b = walk(40, 20.0, 1.0, 3.0, 0.1);
    let b = frames::range(&b, 30..40).unwrap(); // facing 90 degrees, somewhere else
    let (out, report) = concat(&[("a", &a), ("b", &b)], &ConcatOptions::default()).unwrap();
    let (_, g) = report.seams[0].aligned.unwrap();
    // The facing comes from the left/right pairs of a swaying figure: the
    // turn is -90 degrees within the sway.
    assert!((g.turn_deg + 90.0).abs() < 6.0, "{g:?}");
    // The first B frame: where A's last is (exactly), facing +Z (about).
    let f = out.motion().frame(20);
    assert!(f[5].abs() < 6.0 && (f[2] - 19.0).abs() < 1e-9 && f[0].abs() < 1e-9, "{f:?}");
    // And it walks on from there, forward along +Z at first.
    let g1 = out.motion().frame(21);
    assert!(g1[2] > f[2] + 0.9 && g1[0].abs() < 0.1, "{g1:?}");
}

/// The carrier's rotation channels go on from the output's angles at the
/// seam: CMU 01_01's walk out (frames 0..600) and back (1200..1800), the
/// second clip turned by about 180° to continue the first, flipped to
/// another Euler triple of the same rotation after the crossfade (the
/// hips' three channels stepped by 180.5°-183.2° between frames 599 and
/// 600, `bvh lint`'s `euler_jump`) and at a hard cut (187.4°, the hips
/// turning 13.9°).
#[test]
fn the_carrier_s_angles_do_not_flip_at_the_seam() {
    let Some(dir) = crate::util::corpus_dir() else { return };
    let walk = Bvh::from_path(dir.join("cmu_01_01_walk_cgspeed_mb_names.bvh")).unwrap();
    let (a, b) = (frames::range(&walk, 0..600).unwrap(), frames::range(&walk, 1200..1800).unwrap());
    let carrier = root::carrier(&a).unwrap();
    let joint = a.skeleton().joint(carrier);
    let rot: Vec<usize> = joint
        .channel_range()
        .zip(joint.channels())
        .filter(|(_, ch)| ch.is_rotation())
        .map(|(c, _)| c)
        .collect();
    assert_eq!(rot.len(), 3);
    for crossfade in [Span::Seconds(0.4), Span::Frames(0)] {
        let opts = ConcatOptions { crossfade, ..ConcatOptions::default() };
        let (out, report) = concat(&[("a", &a), ("b", &b)], &opts).unwrap();
        let (_, g) = report.seams[0].aligned.unwrap();
        assert!(g.turn_deg.abs() > 160.0, "{g:?}");
        let m = out.motion();
        let worst = (1..m.n_frames())
            .flat_map(|f| rot.iter().map(move |&c| (m.frame(f)[c] - m.frame(f - 1)[c]).abs()))
            .fold(0.0, f64::max);
        assert!(worst < 30.0, "{crossfade:?}: a rotation channel of the hips steps {worst}°");
    }
}

#[test]
fn one_frame_clips_concatenate_and_crossfade() {
    let a = frames::range(&walk(3, 20.0, 1.0, 0.0, 0.1), 0..1).unwrap();
    let b = frames::range(&walk(3, 20.0, 1.0, 0.0, 0.1), 2..3).unwrap();
    let (out, _) = concat(&[("a", &a), ("b", &b), ("c", &a)], &ConcatOptions::default()).unwrap();
    assert_eq!(out.motion().n_frames(), 3);
    let opts = ConcatOptions { crossfade: Span::Frames(1), ..keep() };
    let (out, _) = concat(&[("a", &a), ("b", &b)], &opts).unwrap();
    assert_eq!(out.motion().n_frames(), 1);
    assert_eq!(out.motion().frame(0)[2], 1.0); // half way from 0 to 2
}

#[test]
fn errors_name_the_problem() {
    let a = walk(10, 20.0, 1.0, 0.0, 0.1);
    let other = Bvh::parse(
        "HIERARCHY ROOT Hips { OFFSET 0 0 0 CHANNELS 3 Zrotation Xrotation Yrotation
         JOINT Spine { OFFSET 0 10 0 CHANNELS 3 Zrotation Xrotation Yrotation
         JOINT Neck { OFFSET 0 10 0 CHANNELS 3 Zrotation Xrotation Yrotation End Site { OFFSET 0 5 0 } } } }
         MOTION Frames: 1 Frame Time: 0.1 0 0 0 0 0 0 0 0 0",
    )
    .unwrap();
    let e = concat(&[("a.bvh", &a), ("b.bvh", &other)], &keep()).unwrap_err();
    assert_eq!(
        e.to_string(),
        "the skeletons differ at joint 2: joint \"Head\" under \"Spine\" in a.bvh, joint \"Neck\" under \"Spine\" in b.bvh"
    );
    let opts = ConcatOptions { crossfade: Span::Frames(11), ..keep() };
    let e = concat(&[("a.bvh", &a), ("b.bvh", &a)], &opts).unwrap_err();
    assert_eq!(e.to_string(), "the crossfade (11 frames) is longer than a.bvh (10 frames)");
    let opts = ConcatOptions { crossfade: Span::Seconds(1.2), ..keep() };
    assert!(concat(&[("a.bvh", &a), ("b.bvh", &a)], &opts).is_err());
    // A crossfade of seconds too long for a frame count is refused, not 0 frames.
    for (s, shown) in [(1e308, "1e308s = about 1e309 frames"), (1e20, "1e20s = 1.000e21 frames")] {
        let opts = ConcatOptions { crossfade: Span::Seconds(s), ..keep() };
        let e = concat(&[("a.bvh", &a), ("b.bvh", &a)], &opts).unwrap_err();
        assert_eq!(
            e.to_string(),
            format!("the crossfade ({shown}) is longer than a.bvh (10 frames)")
        );
    }
    // A clip with an extreme Frame Time is refused before it is resampled.
    let ft = a.motion().frame_time();
    let shown = |t: f64| if t == ft { format!("{ft}") } else { format!("{t:e}") };
    for (y_time, x_time) in [(1e300, ft), (ft, 1e-300)] {
        let (mut x, mut y) = (a.clone(), a.clone());
        x.motion_mut().set_frame_time(x_time).unwrap();
        y.motion_mut().set_frame_time(y_time).unwrap();
        let (slow, fast) = (shown(y_time), shown(x_time));
        let e = concat(&[("x.bvh", &x), ("y.bvh", &y)], &keep()).unwrap_err().to_string();
        let start = format!(
            "y.bvh (Frame Time {slow}) cannot be resampled to the rate of x.bvh (Frame Time {fast}): resampling"
        );
        assert!(e.starts_with(&start) && e.contains("at most 4294967295 frames"), "{e}");
    }
    let empty = frames::range(&a, 0..0).unwrap();
    let e = concat(&[("a.bvh", &a), ("e.bvh", &empty)], &keep()).unwrap_err();
    assert_eq!(e.to_string(), "e.bvh has no frames");
    assert!(concat(&[], &keep()).is_err());
    // A joint whose channels cannot take the other clip's motion.
    let fewer = figure(
        "3 Xposition Yposition Zposition",
        0.1,
        &["0 20 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0".into()],
    );
    let e = concat(&[("f.bvh", &fewer), ("a.bvh", &a)], &keep()).unwrap_err();
    assert!(
        e.to_string().starts_with("a.bvh: joint \"Hips\" cannot be converted from channels"),
        "{e}"
    );
    let _ = DVec3::ZERO;
}
