//! Blend and masked blend on every well-formed corpus file, against the
//! references of `mix_util`.
use bvhkit::edit::frames;
use bvhkit::glam::{DMat3, DQuat};
use bvhkit::mix::blend::{BlendOptions, blend};
use bvhkit::mix::weights::{Curve, Weight};
use bvhkit::{Bvh, JointId};

use crate::mix_util::{
    bits, corpus, local_matrix, local_quat, mat_diff, position_channels, slerp_formula,
    three_channel_joints, walk,
};

/// Two clips of one skeleton: the first half, and the second half reversed
/// (so the poses differ), one frame shorter.
fn two(bvh: &Bvh) -> (Bvh, Bvh) {
    let n = bvh.motion().n_frames();
    let a = frames::range(bvh, 0..n / 2).unwrap();
    let b = frames::reverse(&frames::range(bvh, n / 2 + 1..n).unwrap()).unwrap();
    (a, b)
}

fn opts(w: f64, joints: Option<&str>) -> BlendOptions {
    BlendOptions { weight: Weight::Constant(w), joints: joints.map(str::to_string) }
}

/// How far joint `j`'s rotation in frame `fo` is from the SLERP of `qa` and
/// `qb` at `w` along the shortest arc, or, where the two are more than 120
/// degrees apart (the blend keeps the arc closer to its previous frame
/// there), along whichever arc is nearer.
fn arc_diff(qa: DQuat, qb: DQuat, w: f64, bvh: &Bvh, j: usize, fo: &[f64]) -> f64 {
    let got = local_matrix(bvh, j, fo);
    let short = mat_diff(DMat3::from_quat(slerp_formula(qa, qb, w)), got);
    if qa.dot(qb).abs() >= 0.5 {
        return short;
    }
    // The other arc: from qa to the far sign of qb, without the flip.
    let qb = if qa.dot(qb) < 0.0 { qb } else { -qb };
    let theta = qa.dot(qb).clamp(-1.0, 1.0).acos();
    let long = (qa * (((1.0 - w) * theta).sin() / theta.sin())
        + qb * ((w * theta).sin() / theta.sin()))
    .normalize();
    short.min(mat_diff(DMat3::from_quat(long), got))
}
#[test]
fn blend_at_weight_0_and_1_is_the_inputs_bit_for_bit_on_the_corpus() {
    for (name, bvh) in corpus(5) {
        let (a, b) = two(&bvh);
        let (na, nb) = (a.motion().n_frames(), b.motion().n_frames());
        let (out, report) = blend(&a, &b, &opts(0.0, None)).unwrap();
        bvhkit_testdata::assert_bit_identical(&out, &a, &name);
        assert_eq!(report.held, (na > nb).then_some((1, na - nb)));
        let (out, _) = blend(&a, &b, &opts(1.0, None)).unwrap();
        assert_eq!(out.motion().n_frames(), na, "{name}");
        for k in 0..na {
            let e = b.motion().frame(k.min(nb - 1)); // B holds its last frame
            assert_eq!(bits(out.motion().frame(k)), bits(e), "{name} frame {k}");
        }
    }
}

/// The SLERP of a rotation with itself is that rotation: a clip blended
/// with itself (whole, and masked to the root's first child's subtree,
/// which takes the joint-by-joint path) gives every joint with three
/// rotation channels its own angles bit for bit, although the lanes'
/// polynomials give them only within about 1e-11 degrees; or, where the
/// clip's own angles jump (a turn of 360 degrees, or the other Euler
/// solution) and the continuity choice keeps the previous output frame's
/// writing, the same rotation written with angles at least a degree away,
/// never a rounding residue: the rewritten angles are rounded to nine
/// decimals (`snap_angle`), so they are the clip's own decimals moved by
/// half and whole turns (CMU 01_01's `154.4073` written `-25.5927`, not
/// `-25.592700000002765`): no more decimals than the clip's angles of
/// that joint and frame. Every other channel is equal
/// (`a + w (b - a)`; a position's -0 may come out 0).
#[test]
fn a_clip_blended_with_itself_is_the_clip_on_the_corpus() {
    let (mut masked, mut exact, mut rewritten) = (0, 0usize, 0usize);
    for (name, bvh) in corpus(5) {
        for w in [0.25, 0.5, 0.9] {
            let (out, _) = blend(&bvh, &bvh, &opts(w, None)).unwrap();
            let (e, r) = same_motion(&out, &bvh, &format!("{name} at {w}"));
            (exact, rewritten) = (exact + e, rewritten + r);
            if name.starts_with("cmu_01_01") && w == 0.5 {
                // `154.4073` rewritten: `-25.5927` exactly, never beside it.
                let v = out.motion().values();
                assert!(v.contains(&-25.5927), "{name}: -25.5927 not written");
                let near = v.iter().filter(|&&x| (x + 25.5927).abs() < 1e-6);
                assert!(
                    near.clone().all(|&x| x == -25.5927),
                    "{name}: {:?}",
                    near.collect::<Vec<_>>()
                );
            }
        }
        let s = bvh.skeleton();
        if let Some(first) = (1..s.len()).find(|&i| !s.joints()[i].is_end_site()) {
            let joint = s.joints()[first].name().to_string();
            let (out, _) = blend(&bvh, &bvh, &opts(0.5, Some(&joint))).unwrap();
            same_motion(&out, &bvh, &format!("{name} masked {joint}"));
            masked += 1;
        }
    }
    assert!(masked >= 20, "{masked} masked blends");
    // The rewritten joint-frames are where the clips' own angles jump or
    // run past ±180 degrees: 1.8% of them (31,713 of 1.73 million).
    assert!(exact > 1_000_000 && rewritten * 20 < exact, "{exact} exact, {rewritten} rewritten");
}

/// Checks `out` against `clip` as [`a_clip_blended_with_itself_is_the_clip_on_the_corpus`]
/// says; returns the three-channel joint-frames equal bit for bit, and
/// those written with other angles.
fn same_motion(out: &Bvh, clip: &Bvh, what: &str) -> (usize, usize) {
    let (o, c) = (out.motion(), clip.motion());
    assert_eq!(o.n_frames(), c.n_frames(), "{what}");
    let joints = three_channel_joints(clip);
    let mut rotation = vec![false; clip.skeleton().n_channels()];
    for &j in &joints {
        let first = clip.skeleton().joints()[j].first_channel();
        for (k, ch) in clip.skeleton().joints()[j].channels().iter().enumerate() {
            rotation[first + k] = !ch.is_position();
        }
    }
    let (mut exact, mut rewritten) = (0, 0);
    for k in 0..c.n_frames() {
        let (fo, fc) = (o.frame(k), c.frame(k));
        for (i, (x, y)) in fo.iter().zip(fc).enumerate() {
            assert!(rotation[i] || x == y, "{what} frame {k} channel {i}: {x} vs {y}");
        }
        for &j in &joints {
            let jt = &clip.skeleton().joints()[j];
            let chans: Vec<usize> = (0..jt.channels().len())
                .map(|n| jt.first_channel() + n)
                .filter(|&i| rotation[i])
                .collect();
            if chans.iter().all(|&i| fo[i].to_bits() == fc[i].to_bits()) {
                exact += 1;
                continue;
            }
            let far = chans.iter().map(|&i| (fo[i] - fc[i]).abs()).fold(0.0, f64::max);
            let d = mat_diff(local_matrix(clip, j, fo), local_matrix(clip, j, fc));
            // As many decimals as the clip's angles (nine at most).
            let places = chans.iter().map(|&i| decimals(fc[i])).max().unwrap_or(0).min(9);
            assert!(
                far >= 1.0 && d < 1e-9 && chans.iter().all(|&i| decimals(fo[i]) <= places),
                "{what} frame {k} joint {j}: {:?} vs {:?}",
                chans.iter().map(|&i| fo[i]).collect::<Vec<_>>(),
                chans.iter().map(|&i| fc[i]).collect::<Vec<_>>()
            );
            rewritten += 1;
        }
    }
    (exact, rewritten)
}

/// Digits after the point of `x`'s shortest text (what the writer prints).
fn decimals(x: f64) -> usize {
    let s = format!("{x}");
    s.find('.').map_or(0, |p| s.len() - p - 1)
}

#[test]
fn blend_is_the_reference_slerp_and_lerp_at_every_weight_on_the_corpus() {
    for (name, bvh) in corpus(5) {
        let (a, b) = two(&bvh);
        let nb = b.motion().n_frames();
        let weight = Weight::Ramp { from: 0.1, to: 0.9, curve: Curve::Smoothstep };
        let (out, _) =
            blend(&a, &b, &BlendOptions { weight: weight.clone(), joints: None }).unwrap();
        let n = out.motion().n_frames();
        for k in [0, n / 3, n - 1] {
            let x = if n > 1 { k as f64 / (n - 1) as f64 } else { 0.0 };
            let w = 0.1 + 0.8 * x * x * (3.0 - 2.0 * x);
            let (fa, fb, fo) =
                (a.motion().frame(k), b.motion().frame(k.min(nb - 1)), out.motion().frame(k));
            for j in three_channel_joints(&bvh) {
                let d = arc_diff(local_quat(&bvh, j, fa), local_quat(&bvh, j, fb), w, &bvh, j, fo);
                assert!(d < 1e-9, "{name}: joint {j} frame {k} off by {d}");
            }
            for c in position_channels(&bvh) {
                let e = fa[c] + w * (fb[c] - fa[c]);
                // Rounded to nine decimals (`snap_angle`: 5e-10).
                assert!((fo[c] - e).abs() <= 5e-10 + 1e-12 * e.abs(), "{name}: channel {c}");
            }
        }
    }
}

#[test]
fn masked_blend_changes_only_the_subtree_on_the_corpus() {
    let mut checked = 0;
    for (name, bvh) in corpus(5) {
        let s = bvh.skeleton();
        // The child of the root with the largest subtree that is not
        // everything (the spine, usually), by name.
        let Some(sub) = (1..s.len())
            .filter(|&i| {
                !s.joints()[i].is_end_site() && s.subtree_end(JointId::new(i)) - i < s.len() - 1
            })
            .max_by_key(|&i| (s.subtree_end(JointId::new(i)) - i, std::cmp::Reverse(i)))
        else {
            continue;
        };
        let range = sub..s.subtree_end(JointId::new(sub));
        let (a, b) = two(&bvh);
        let sub_name = s.joints()[sub].name().to_string();
        let (out, _) = blend(&a, &b, &opts(0.5, Some(&sub_name))).unwrap();
        let nb = b.motion().n_frames();
        for k in 0..out.motion().n_frames() {
            let (fa, fb, fo) =
                (a.motion().frame(k), b.motion().frame(k.min(nb - 1)), out.motion().frame(k));
            for (i, j) in s.joints().iter().enumerate() {
                let ch = j.channel_range();
                if !range.contains(&i) {
                    assert_eq!(
                        bits(&fo[ch.clone()]),
                        bits(&fa[ch]),
                        "{name}: {} changed",
                        j.name()
                    );
                } else if j.rotation_axes().count() == 3 {
                    let (qa, qb) = (local_quat(&bvh, i, fa), local_quat(&bvh, i, fb));
                    let d = arc_diff(qa, qb, 0.5, &bvh, i, fo);
                    assert!(d < 1e-9, "{name}: {} frame {k} off by {d}", j.name());
                }
            }
        }
        checked += 1;
    }
    if bvhkit_testdata::corpus_dir().is_some() {
        assert!(checked >= 20, "masked blend checked on {checked} files");
    }
}

#[test]
fn shorter_clips_hold_their_last_frame_and_errors_are_precise() {
    let a = walk(10, 20.0, 1.0, 0.0, 0.1);
    let b = walk(4, 20.0, 1.0, 0.0, 0.1);
    let (out, report) = blend(&b, &a, &opts(0.0, None)).unwrap();
    assert_eq!(out.motion().n_frames(), 10);
    assert_eq!(report.held, Some((0, 6)));
    assert_eq!(out.motion().frame(9), b.motion().frame(3));
    assert_eq!(
        report.to_string(),
        "the first clip is shorter and holds its last frame for 6 frames"
    );
    let e = blend(&a, &b, &opts(0.5, Some("Tail"))).unwrap_err();
    assert!(
        e.to_string().starts_with("no joint named \"Tail\" (joints: Hips, Spine, Head,"),
        "{e}"
    );
    let e = blend(&a, &b, &opts(1.5, None)).unwrap_err();
    assert_eq!(e.to_string(), "a weight must be in [0, 1], found 1.5");
    // A keyed weight: B only in the middle of the clip.
    let w: Weight = "0:0,0.5:1,1:0".parse().unwrap();
    let (out, _) = blend(&a, &b, &BlendOptions { weight: w, joints: None }).unwrap();
    assert_eq!(bits(out.motion().frame(0)), bits(a.motion().frame(0)));
    assert_eq!(bits(out.motion().frame(9)), bits(a.motion().frame(9)));
}
