//! The batched rotation kernels (`rotation::batch`) against the scalar
//! functions on the corpus: every joint with three rotation channels of
//! every frame, extracted in its own order and in every other order,
//! continuous from frame to frame.

use bvhkit::ReadOptions;
use bvhkit::rotation::{
    EulerBatch, RotationOrder, euler_to_mat3, euler_to_quat, mat3_to_euler, mat3_to_euler_near,
    quat_to_euler_near, slerp_slice,
};

use crate::util::{corpus_files, stem};

/// Every corpus frame's joint rotations, as matrices and as quaternions,
/// through one [`EulerBatch`] per frame (reused), against
/// `mat3_to_euler_near` / `quat_to_euler_near` one at a time, with the
/// previous frame's output as the previous angles (the first frame: the
/// principal solution, `mat3_to_euler`). Within 1e-9 degrees.
#[test]
fn euler_batch_is_the_scalar_extraction_on_the_corpus() {
    let files = corpus_files();
    let mut batch = EulerBatch::new();
    let mut entries = 0usize;
    for path in files.iter().filter(|p| !stem(p).starts_with("malformed_")) {
        let (bvh, _) = ReadOptions::new().lenient(true).read_path(path).unwrap();
        let joints: Vec<_> = bvh
            .skeleton()
            .joints()
            .iter()
            .filter_map(|j| {
                let order = j.rotation_order()?;
                let idx: Vec<usize> = j
                    .channels()
                    .iter()
                    .enumerate()
                    .filter(|(_, c)| c.is_rotation())
                    .map(|(k, _)| j.first_channel() + k)
                    .collect();
                Some((order, [idx[0], idx[1], idx[2]]))
            })
            .collect();
        // Each joint in its own order and in the next one of ALL (a real
        // order change), carried frame to frame.
        let targets: Vec<RotationOrder> = joints
            .iter()
            .flat_map(|(o, _)| {
                let k = RotationOrder::ALL.iter().position(|x| x == o).unwrap();
                [*o, RotationOrder::ALL[(k + 1) % 6]]
            })
            .collect();
        let mut previous: Vec<Option<[f64; 3]>> = vec![None; targets.len()];
        let m = bvh.motion();
        for f in 0..m.n_frames().min(400) {
            let frame = m.frame(f);
            batch.clear();
            let mut want = Vec::with_capacity(targets.len());
            for (n, &(order, idx)) in joints.iter().enumerate() {
                let angles = [frame[idx[0]], frame[idx[1]], frame[idx[2]]];
                let rot = euler_to_mat3(&order.axes(), &angles);
                let q = euler_to_quat(&order.axes(), &angles);
                for t in 0..2 {
                    let target = targets[2 * n + t];
                    let near = previous[2 * n + t];
                    // Matrices for the own order, quaternions for the other.
                    if t == 0 {
                        batch.push_mat3(&rot, target, near);
                        want.push(match near {
                            Some(p) => mat3_to_euler_near(rot, target, p),
                            None => mat3_to_euler(rot, target),
                        });
                    } else {
                        batch.push_quat(q, target, near);
                        want.push(match near {
                            Some(p) => quat_to_euler_near(q, target, p),
                            None => bvhkit::rotation::quat_to_euler(q, target),
                        });
                    }
                }
            }
            batch.solve();
            for (e, w) in want.iter().enumerate() {
                let got = batch.angles(e);
                for k in 0..3 {
                    assert!(
                        (got[k] - w[k]).abs() <= 1e-9,
                        "{}: frame {f}, entry {e} ({}): {got:?} vs {w:?}",
                        stem(path),
                        targets[e]
                    );
                }
                // Carried from the scalar result, so both see the same
                // previous angles.
                previous[e] = Some(*w);
            }
            entries += want.len();
        }
    }
    if !files.is_empty() {
        assert!(entries > 100_000, "only {entries} rotations compared");
    }
}

/// `slerp_slice` on consecutive corpus rotations against the scalar
/// `edit::resample::slerp` (both shortest arc, same small-angle rule).
#[test]
fn slerp_slice_is_the_scalar_slerp_on_the_corpus() {
    for path in corpus_files().iter().filter(|p| !stem(p).starts_with("malformed_")).take(12) {
        let (bvh, _) = ReadOptions::new().lenient(true).read_path(path).unwrap();
        let m = bvh.motion();
        let mut a = Vec::new();
        let mut b = Vec::new();
        for j in bvh.skeleton().joints() {
            let Some(order) = j.rotation_order() else { continue };
            let idx: Vec<usize> = (0..j.channels().len())
                .filter(|&k| j.channels()[k].is_rotation())
                .map(|k| j.first_channel() + k)
                .collect();
            for f in 1..m.n_frames().min(200) {
                let get = |f: usize| {
                    let fr = m.frame(f);
                    euler_to_quat(&order.axes(), &[fr[idx[0]], fr[idx[1]], fr[idx[2]]])
                };
                a.push(get(f - 1));
                b.push(get(f));
            }
        }
        let mut out = vec![bvhkit::glam::DQuat::IDENTITY; a.len()];
        for t in [0.1, 0.5, 0.75] {
            slerp_slice(&a, &b, t, &mut out);
            for k in 0..a.len() {
                let want = bvhkit::edit::resample::slerp(a[k], b[k], t);
                assert!(
                    out[k].abs_diff_eq(want, 1e-14),
                    "{}: {:?} vs {want:?}",
                    stem(path),
                    out[k]
                );
            }
        }
    }
}
