//! Additive layers on every well-formed corpus file, against the
//! references of `mix_util`.
use bvhkit::edit::frames;
use bvhkit::glam::{DMat3, DQuat};
use bvhkit::mix::layer::{LayerOptions, layer};
use bvhkit::mix::weights::Weight;
use bvhkit::{Bvh, JointId};

use crate::mix_util::{
    bits, corpus, local_matrix, local_quat, mat_diff, position_channels, slerp_formula,
    three_channel_joints, walk,
};

/// A clip that holds frame `r` of `bvh` for `n` frames.
fn held_pose(bvh: &Bvh, r: usize, n: usize) -> Bvh {
    let mut text = String::new();
    let one = frames::range(bvh, r..r + 1).unwrap();
    let s = one.to_string();
    let (head, row) = s.trim_end().rsplit_once('\n').unwrap();
    let head = head.replace("Frames: 1", &format!("Frames: {n}"));
    text.push_str(&head);
    for _ in 0..n {
        text.push('\n');
        text.push_str(row);
    }
    Bvh::parse(text).unwrap()
}

#[test]
fn a_layer_that_holds_its_reference_pose_changes_nothing_on_the_corpus() {
    for (name, bvh) in corpus(3) {
        let n = bvh.motion().n_frames();
        let r = n / 2;
        let add = held_pose(&bvh, r, n / 3 + 1);
        for w in [1.0, 0.5] {
            let opts =
                LayerOptions { weight: Weight::Constant(w), joints: None, reference: r.min(n / 3) };
            let (out, _) = layer(&bvh, &add, &opts).unwrap();
            bvhkit_testdata::assert_bit_identical(&out, &bvh, &name);
        }
        // The clip as its own layer at weight 0 changes nothing either.
        let opts = LayerOptions { weight: Weight::Constant(0.0), joints: None, reference: r };
        let (out, _) = layer(&bvh, &bvh, &opts).unwrap();
        bvhkit_testdata::assert_bit_identical(&out, &bvh, &name);
    }
}

#[test]
fn a_layer_adds_the_delta_from_its_reference_on_the_corpus() {
    for (name, bvh) in corpus(4) {
        let n = bvh.motion().n_frames();
        let base = frames::range(&bvh, 0..n / 2).unwrap();
        let add = frames::range(&bvh, n / 2..n).unwrap();
        let r = 1.min(add.motion().n_frames() - 1);
        let w = 0.7;
        let opts = LayerOptions { weight: Weight::Constant(w), joints: None, reference: r };
        let (out, report) = layer(&base, &add, &opts).unwrap();
        let nb = base.motion().n_frames();
        assert_eq!(out.motion().n_frames(), nb);
        assert_eq!(report.held, nb.saturating_sub(add.motion().n_frames()));
        let fr = add.motion().frame(r);
        for k in [0, nb / 2, nb - 1] {
            let (fb, fa, fo) = (
                base.motion().frame(k),
                add.motion().frame(k.min(add.motion().n_frames() - 1)),
                out.motion().frame(k),
            );
            for j in three_channel_joints(&bvh) {
                let delta = local_quat(&bvh, j, fr).inverse() * local_quat(&bvh, j, fa);
                let q = local_quat(&bvh, j, fb) * slerp_formula(DQuat::IDENTITY, delta, w);
                let d = mat_diff(DMat3::from_quat(q), local_matrix(&bvh, j, fo));
                assert!(d < 1e-9, "{name}: joint {j} frame {k} off by {d}");
            }
            for c in position_channels(&bvh) {
                let e = fb[c] + w * (fa[c] - fr[c]);
                // Rounded to nine decimals (`snap_angle`: 5e-10).
                assert!((fo[c] - e).abs() <= 5e-10 + 1e-12 * e.abs(), "{name}: channel {c}");
            }
        }
    }
}

#[test]
fn a_layer_on_a_subtree_changes_only_the_subtree() {
    let base = walk(20, 20.0, 1.0, 0.0, 0.1);
    let add = walk(20, 7.0, 0.0, 2.0, 0.1);
    let opts =
        LayerOptions { weight: Weight::Constant(1.0), joints: Some("Spine".into()), reference: 0 };
    let (out, _) = layer(&base, &add, &opts).unwrap();
    let s = base.skeleton();
    let spine = s.find("Spine").unwrap();
    let range = spine.index()..s.subtree_end(spine);
    let mut changed = 0;
    for k in 0..20 {
        for (i, j) in s.joints().iter().enumerate() {
            let ch = j.channel_range();
            let same =
                bits(&out.motion().frame(k)[ch.clone()]) == bits(&base.motion().frame(k)[ch]);
            if !range.contains(&i) {
                assert!(same, "{} changed in frame {k}", j.name());
            } else if !same {
                changed += 1;
            }
        }
    }
    assert!(changed > 0);
    // A reference past the end is refused.
    let opts = LayerOptions { reference: 20, ..LayerOptions::default() };
    let e = layer(&base, &add, &opts).unwrap_err();
    assert_eq!(e.to_string(), "the reference frame 20 is past the end of the layer (20 frames)");
    let _ = JointId::new(0);
}
