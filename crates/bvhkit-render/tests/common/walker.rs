//! A synthetic walking stick figure (26 joints, centimetres, Y up, facing
//! and walking towards +Z), shared by the tests and the benchmark.

use bvhkit_render::Clip;
use bvhkit_render::glam::{DQuat, DVec3};

/// `(name, parent, offset)` of each joint, in pre-order.
const JOINTS: [(&str, Option<usize>, [f64; 3]); 26] = [
    ("Hips", None, [0.0, 0.0, 0.0]),
    ("Spine", Some(0), [0.0, 10.0, 0.0]),
    ("Spine1", Some(1), [0.0, 20.0, 0.0]),
    ("Neck", Some(2), [0.0, 22.0, 0.0]),
    ("Head", Some(3), [0.0, 9.0, 1.0]),
    ("Head_End", Some(4), [0.0, 18.0, 0.0]),
    ("LeftShoulder", Some(2), [4.0, 18.0, 0.0]),
    ("LeftArm", Some(6), [14.0, 0.0, 0.0]),
    ("LeftForeArm", Some(7), [0.0, -28.0, 0.0]),
    ("LeftHand", Some(8), [0.0, -25.0, 0.0]),
    ("LeftHand_End", Some(9), [0.0, -10.0, 0.0]),
    ("RightShoulder", Some(2), [-4.0, 18.0, 0.0]),
    ("RightArm", Some(11), [-14.0, 0.0, 0.0]),
    ("RightForeArm", Some(12), [0.0, -28.0, 0.0]),
    ("RightHand", Some(13), [0.0, -25.0, 0.0]),
    ("RightHand_End", Some(14), [0.0, -10.0, 0.0]),
    ("LeftUpLeg", Some(0), [9.0, -3.0, 0.0]),
    ("LeftLeg", Some(16), [0.0, -42.0, 0.0]),
    ("LeftFoot", Some(17), [0.0, -42.0, 0.0]),
    ("LeftToe", Some(18), [0.0, -7.0, 13.0]),
    ("LeftToe_End", Some(19), [0.0, 0.0, 6.0]),
    ("RightUpLeg", Some(0), [-9.0, -3.0, 0.0]),
    ("RightLeg", Some(21), [0.0, -42.0, 0.0]),
    ("RightFoot", Some(22), [0.0, -42.0, 0.0]),
    ("RightToe", Some(23), [0.0, -7.0, 13.0]),
    ("RightToe_End", Some(24), [0.0, 0.0, 6.0]),
];

/// Local rotation of joint `j` at walk phase `p` (radians), as an X
/// rotation in degrees (negative swings forward).
fn swing(j: usize, p: f64) -> f64 {
    let s = p.sin();
    match j {
        7 => 25.0 * s,                               // LeftArm, opposite the left leg
        8 => -15.0 - 10.0 * (s + 1.0) * 0.5,         // LeftForeArm
        12 => -25.0 * s,                             // RightArm
        13 => -15.0 - 10.0 * (1.0 - s) * 0.5,        // RightForeArm
        16 => -28.0 * s,                             // LeftUpLeg
        17 => 35.0 * (p - 0.6).sin().max(0.0) + 5.0, // LeftLeg (knee)
        21 => 28.0 * s,                              // RightUpLeg
        22 => 35.0 * (p + std::f64::consts::PI - 0.6).sin().max(0.0) + 5.0,
        1 => 3.0,
        3 => -6.0,
        _ => 0.0,
    }
}

/// A clip of `n_frames` frames at 30 fps of a figure walking along +Z at
/// about 1.2 m/s, starting at `x` on the X axis.
pub(crate) fn walker(name: &str, n_frames: usize, x: f64) -> Clip {
    let n = JOINTS.len();
    let mut positions = Vec::with_capacity(n_frames * n);
    let mut rot = vec![DQuat::IDENTITY; n];
    for f in 0..n_frames {
        let t = f as f64 / 30.0;
        let p = t * std::f64::consts::TAU; // one stride per second
        let root = DVec3::new(x + 3.0 * (p * 0.5).sin(), 95.0 + 2.0 * (2.0 * p).cos(), 120.0 * t);
        let sway = DQuat::from_rotation_y((6.0 * p.sin()).to_radians());
        for (j, (_, parent, off)) in JOINTS.iter().enumerate() {
            let local = DQuat::from_rotation_x(swing(j, p).to_radians());
            let (pos, r) = match parent {
                None => (root, sway * local),
                Some(q) => {
                    let (pp, pr) = (positions[f * n + q], rot[*q]);
                    (pp + pr * DVec3::from_array(*off), pr * local)
                }
            };
            rot[j] = r;
            positions.push(pos);
        }
    }
    Clip {
        name: name.to_owned(),
        joint_names: JOINTS.iter().map(|j| j.0.to_owned()).collect(),
        parents: JOINTS.iter().map(|j| j.1).collect(),
        is_end_site: JOINTS.iter().map(|j| j.0.ends_with("_End")).collect(),
        frame_time: 1.0 / 30.0,
        n_frames,
        positions,
    }
}
