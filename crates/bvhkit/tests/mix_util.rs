//! Independent references for the mix tests, written out plainly: local
//! rotations from Euler angles by 3x3 matrix products, SLERP from its
//! formula, smoothstep, and the corpus clips the tests cut in two.
use bvhkit::glam::{DMat3, DQuat};
use bvhkit::{Bvh, ReadOptions};

// The shared reference of a joint's local rotation (also used by the edit
// tests), re-exported for the mix tests.
use crate::util::{corpus_files, stem};
pub(crate) use crate::util::{local_matrix, local_quat};

/// Every well-formed corpus file with at least `min_frames` frames.
pub(crate) fn corpus(min_frames: usize) -> Vec<(String, Bvh)> {
    corpus_files()
        .iter()
        .filter(|p| !stem(p).starts_with("malformed_"))
        .map(|p| (stem(p), ReadOptions::new().lenient(true).read_path(p).unwrap().0))
        .filter(|(_, b)| b.motion().n_frames() >= min_frames)
        .collect()
}

/// SLERP from its formula: `q0 sin((1-t)θ)/sin θ + q1 sin(tθ)/sin θ`, `θ`
/// the angle between the two unit 4-vectors, `q1` negated first when
/// `q0 · q1 < 0` (shortest arc); linear for (nearly) equal quaternions.
pub(crate) fn slerp_formula(q0: DQuat, q1: DQuat, t: f64) -> DQuat {
    let mut d = q0.dot(q1);
    let q1 = if d < 0.0 {
        d = -d;
        -q1
    } else {
        q1
    };
    let theta = d.min(1.0).acos();
    if theta.sin() < 1e-9 {
        return (q0 * (1.0 - t) + q1 * t).normalize();
    }
    q0 * (((1.0 - t) * theta).sin() / theta.sin()) + q1 * ((t * theta).sin() / theta.sin())
}

/// `x² (3 - 2x)`.
pub(crate) fn smoothstep(x: f64) -> f64 {
    x * x * (3.0 - 2.0 * x)
}

/// The angle in radians between two rotations (accurate for small angles
/// too: `2 atan2(|a - b|, |a + b|)`, `b` on `a`'s side).
pub(crate) fn angle(a: DQuat, b: DQuat) -> f64 {
    let b = if a.dot(b) < 0.0 { -b } else { b };
    2.0 * 2.0 * (a - b).length().atan2((a + b).length())
}

/// Largest entry difference of two rotation matrices.
pub(crate) fn mat_diff(a: DMat3, b: DMat3) -> f64 {
    (0..3).map(|c| (a.col(c) - b.col(c)).abs().max_element()).fold(0.0, f64::max)
}

/// The joints with three rotation channels (the ones whose rotations any
/// mix writes exactly).
pub(crate) fn three_channel_joints(bvh: &Bvh) -> Vec<usize> {
    (0..bvh.skeleton().len())
        .filter(|&i| bvh.skeleton().joints()[i].rotation_axes().count() == 3)
        .collect()
}

/// The position channel indices of the skeleton.
pub(crate) fn position_channels(bvh: &Bvh) -> Vec<usize> {
    let mut v = Vec::new();
    for j in bvh.skeleton().joints() {
        for (k, c) in j.channels().iter().enumerate() {
            if c.is_position() {
                v.push(j.first_channel() + k);
            }
        }
    }
    v
}

/// Frame `k` bit for bit.
pub(crate) fn bits(v: &[f64]) -> Vec<u64> {
    v.iter().map(|x| x.to_bits()).collect()
}

/// A small clip text: root `Hips` with `root_channels`, a chain
/// `Spine`-`Head` and two legs, frames given as rows.
pub(crate) fn figure(root_channels: &str, frame_time: f64, rows: &[String]) -> Bvh {
    let text = format!(
        "HIERARCHY\nROOT Hips\n{{\nOFFSET 0 0 0\nCHANNELS {root_channels}\n\
         JOINT Spine\n{{\nOFFSET 0 10 0\nCHANNELS 3 Zrotation Xrotation Yrotation\n\
         JOINT Head\n{{\nOFFSET 0 10 0\nCHANNELS 3 Zrotation Xrotation Yrotation\nEnd Site\n{{\nOFFSET 0 5 0\n}}\n}}\n}}\n\
         JOINT LeftUpLeg\n{{\nOFFSET 5 0 0\nCHANNELS 3 Zrotation Xrotation Yrotation\nJOINT LeftFoot\n{{\nOFFSET 0 -20 0\nCHANNELS 3 Zrotation Xrotation Yrotation\nEnd Site\n{{\nOFFSET 0 0 3\n}}\n}}\n}}\n\
         JOINT RightUpLeg\n{{\nOFFSET -5 0 0\nCHANNELS 3 Zrotation Xrotation Yrotation\nJOINT RightFoot\n{{\nOFFSET 0 -20 0\nCHANNELS 3 Zrotation Xrotation Yrotation\nEnd Site\n{{\nOFFSET 0 0 3\n}}\n}}\n}}\n}}\n\
         MOTION\nFrames: {}\nFrame Time: {frame_time}\n{}\n",
        rows.len(),
        rows.join("\n")
    );
    Bvh::parse(text).unwrap()
}

/// A walk of `n` frames at `frame_time`: root travelling `speed` per frame
/// along its heading (turning `turn` degrees per frame about Y), joints
/// swinging with period `period` frames; root channels `Xposition
/// Yposition Zposition Zrotation Xrotation Yrotation`.
pub(crate) fn walk(n: usize, period: f64, speed: f64, turn: f64, frame_time: f64) -> Bvh {
    let rows: Vec<String> = (0..n)
        .map(|k| {
            let k = k as f64;
            let ph = std::f64::consts::TAU * k / period;
            let yaw = turn * k;
            // Position: integrate the heading exactly (a circle arc, or a line).
            let (x, z) = if turn == 0.0 {
                (0.0, speed * k)
            } else {
                let r = speed / turn.to_radians();
                (r * (1.0 - yaw.to_radians().cos()), r * yaw.to_radians().sin())
            };
            let s = ph.sin();
            format!(
                "{x} {} {z} {} {} {yaw} {} {} {} {} {} {} {} {} {} {} {} {} {} {} {} {} {} {}",
                20.0 + 0.5 * (2.0 * ph).cos(),
                2.0 * s,
                3.0 * ph.cos(),
                5.0 * s,
                2.0,
                1.0,
                -4.0 * s,
                10.0 * ph.cos(),
                3.0,
                30.0 * s,
                2.0,
                -1.0,
                20.0 * (ph + 1.0).sin().max(0.0),
                0.0,
                0.0,
                -30.0 * s,
                -2.0,
                1.0,
                20.0 * (ph + 4.0).sin().max(0.0),
                0.0,
                0.0,
            )
        })
        .collect();
    figure("6 Xposition Yposition Zposition Zrotation Xrotation Yrotation", frame_time, &rows)
}
