//! A frame as local rotations and translations, and back.
//!
//! # Implementation notes
//!
//! `PoseLayout`/`Pose`/`JointChannels`, a frame as local quaternions and
//! translations and back as continuous Euler angles in each joint's own order
//! (through `rotation`, allocation-free).

use glam::{DAffine3, DQuat, DVec3};

use crate::kinematics::{Kinematics, PositionChannels};
use crate::rotation::{
    Axis, RotationOrder, euler_to_quat, quat_to_euler, quat_to_euler_near, select, snap_angle,
};
use crate::skeleton::{Joint, Skeleton};

/// Where one joint's channels sit in a frame: its rotation channels (axes
/// in listed order and their indices in the frame) and position channels,
/// and its `OFFSET`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct JointChannels {
    /// Number of rotation channels (0 to 3).
    pub n_rot: u8,
    /// Axes of the rotation channels in listed order (first `n_rot` used).
    pub rot_axes: [Axis; 3],
    /// Frame index of each rotation channel (first `n_rot` used).
    pub rot_index: [usize; 3],
    /// Number of position channels (0 to 3).
    pub n_pos: u8,
    /// Axes of the position channels in listed order (first `n_pos` used).
    pub pos_axes: [Axis; 3],
    /// Frame index of each position channel (first `n_pos` used).
    pub pos_index: [usize; 3],
    /// The joint's `OFFSET`.
    pub offset: DVec3,
}

impl JointChannels {
    /// The channel layout of `joint`.
    pub fn of(joint: &Joint) -> JointChannels {
        let mut c = JointChannels {
            n_rot: 0,
            rot_axes: [Axis::X; 3],
            rot_index: [0; 3],
            n_pos: 0,
            pos_axes: [Axis::X; 3],
            pos_index: [0; 3],
            offset: joint.offset(),
        };
        for (k, ch) in joint.channels().iter().enumerate() {
            let idx = joint.first_channel() + k;
            if ch.is_rotation() {
                c.rot_axes[c.n_rot as usize] = ch.axis();
                c.rot_index[c.n_rot as usize] = idx;
                c.n_rot += 1;
            } else {
                c.pos_axes[c.n_pos as usize] = ch.axis();
                c.pos_index[c.n_pos as usize] = idx;
                c.n_pos += 1;
            }
        }
        c
    }

    /// The rotation axes in listed order.
    pub fn rotation_axes(&self) -> &[Axis] {
        &self.rot_axes[..self.n_rot as usize]
    }

    /// The rotation order, when the joint has three rotation channels.
    pub fn rotation_order(&self) -> Option<RotationOrder> {
        RotationOrder::from_axes(self.rotation_axes())
    }

    /// The rotation channel values of `frame` in listed order (unused
    /// entries 0).
    #[inline]
    pub fn angles(&self, frame: &[f64]) -> [f64; 3] {
        let mut a = [0.0; 3];
        for k in 0..self.n_rot as usize {
            a[k] = frame[self.rot_index[k]];
        }
        a
    }

    /// The joint's local rotation in `frame`: the product of its rotation
    /// channels in listed order ([`euler_to_quat`]).
    #[inline]
    pub fn rotation(&self, frame: &[f64]) -> DQuat {
        let n = self.n_rot as usize;
        euler_to_quat(&self.rot_axes[..n], &self.angles(frame)[..n])
    }

    /// The joint's local translation in `frame`: its `OFFSET` with the
    /// components named by position channels replaced by (or, with
    /// [`PositionChannels::Add`], added to) the channel values, as
    /// [`Kinematics`] reads them.
    #[inline]
    pub fn translation(&self, frame: &[f64], mode: PositionChannels) -> DVec3 {
        let mut t = self.offset;
        for k in 0..self.n_pos as usize {
            let v = frame[self.pos_index[k]];
            let a = self.pos_axes[k].index();
            match mode {
                PositionChannels::Replace => t[a] = v,
                PositionChannels::Add => t[a] += v,
            }
        }
        t
    }

    /// Writes `q` into the joint's rotation channels of `frame`, as Euler
    /// angles in the joint's own channel order, closest to the angles
    /// `near` (in listed order, e.g. the previous output frame's), or, with
    /// `None` (a first frame), the principal solution ([`quat_to_euler`]:
    /// first and third angles in `(-180, 180]`, middle in `[-90, 90]`).
    ///
    /// Three channels represent every rotation exactly
    /// ([`quat_to_euler_near`]). One channel keeps the twist of `q` about
    /// its axis (exact when `q` turns about that axis only); two channels
    /// keep the first two angles of the extraction in the order completed
    /// by the missing axis (exact when `q` is a product of those two
    /// rotations). Returns whether the rotation was represented exactly,
    /// i.e. whether the written channels give back `q` within 1e-9.
    #[inline]
    pub fn write_rotation(&self, q: DQuat, near: Option<[f64; 3]>, frame: &mut [f64]) -> bool {
        match self.n_rot {
            0 => q.w.abs() >= 1.0 - 1e-12,
            1 => {
                let a = self.rot_axes[0].index();
                let q = if q.w < 0.0 { -q } else { q };
                let angle = (2.0 * q.xyz()[a].atan2(q.w)).to_degrees();
                let angle = match near {
                    Some(n) => unwrap_deg(angle, n[0]),
                    None => angle,
                };
                frame[self.rot_index[0]] = angle;
                let back = euler_to_quat(&self.rot_axes[..1], &[angle]);
                back.dot(q).abs() >= 1.0 - 1e-9
            }
            2 => {
                let (a, b) = (self.rot_axes[0], self.rot_axes[1]);
                let c = Axis::ALL.into_iter().find(|&x| x != a && x != b).unwrap_or(Axis::X);
                let order = RotationOrder::from_axes(&[a, b, c]).unwrap_or(RotationOrder::XYZ);
                let e = match near {
                    Some(n) => quat_to_euler_near(q, order, [n[0], n[1], 0.0]),
                    None => quat_to_euler(q, order),
                };
                frame[self.rot_index[0]] = e[0];
                frame[self.rot_index[1]] = e[1];
                let back = euler_to_quat(&self.rot_axes[..2], &e[..2]);
                back.dot(q).abs() >= 1.0 - 1e-9
            }
            _ => {
                let order = self.rotation_order().unwrap_or(RotationOrder::XYZ);
                let e = match near {
                    Some(n) => quat_to_euler_near(q, order, n),
                    None => quat_to_euler(q, order),
                };
                for (k, v) in e.into_iter().enumerate() {
                    frame[self.rot_index[k]] = v;
                }
                true
            }
        }
    }

    /// Writes the local translation `t` into the joint's position channels
    /// of `frame` (the inverse of [`JointChannels::translation`] for the
    /// components the channels name). Returns the largest difference
    /// between `t` and the translation the written frame gives back (the
    /// components without a channel come from the `OFFSET`).
    #[inline]
    pub fn write_translation(&self, t: DVec3, mode: PositionChannels, frame: &mut [f64]) -> f64 {
        for k in 0..self.n_pos as usize {
            let a = self.pos_axes[k].index();
            frame[self.pos_index[k]] = match mode {
                PositionChannels::Replace => t[a],
                PositionChannels::Add => t[a] - self.offset[a],
            };
        }
        (self.translation(frame, mode) - t).abs().max_element()
    }

    /// Rounds the joint's rotation channels of `frame` to nine decimals
    /// ([`snap_angle`]): how the mixes write the angles they computed
    /// (after [`JointChannels::write_rotation`]).
    #[inline]
    pub(crate) fn snap_rotation(&self, frame: &mut [f64]) {
        for &c in &self.rot_index[..self.n_rot as usize] {
            frame[c] = snap_angle(frame[c]);
        }
    }
}

/// `a + w (b - a)` as the mixes and the resampler write it: rounded to nine
/// decimals ([`snap_angle`]: at most 5e-10 of the file's unit, half a nanometre in
/// metres, far below what any capture resolves), except where `a` and `b`
/// are the same bits: then `a + w·0` as ever (`a`, or 0 for -0), so a value
/// that does not change keeps its bits whatever its decimals.
#[inline(always)]
pub(crate) fn lerp_snapped(a: f64, b: f64, w: f64) -> f64 {
    let x = a + w * (b - a);
    select(a.to_bits() == b.to_bits(), x, snap_angle(x))
}

/// [`lerp_snapped`], the same bits, with a branch instead of a select: the
/// rounding and its division skipped where `a` and `b` are the same bits,
/// for loops where most values do not move (a blend's position channels:
/// Bandai Namco's 6-channel joints, 63 of 66 constant, 8% fewer
/// instructions for its blend).
#[inline(always)]
pub(crate) fn lerp_snapped_moved(a: f64, b: f64, w: f64) -> f64 {
    let x = a + w * (b - a);
    if a.to_bits() == b.to_bits() { x } else { snap_angle(x) }
}

/// `x` plus the multiple of 360 that brings it closest to `target`.
#[inline]
pub(crate) fn unwrap_deg(x: f64, target: f64) -> f64 {
    x + 360.0 * crate::rotation::round_half_away((target - x) / 360.0)
}

/// One frame as every joint's local rotation and translation, in file
/// order. Made by [`PoseLayout::pose`], filled by [`PoseLayout::read`] and
/// reused from frame to frame.
#[derive(Clone, Debug, PartialEq)]
pub struct Pose {
    /// Local rotation of each joint (identity for End Sites and joints
    /// without rotation channels).
    pub rotations: Vec<DQuat>,
    /// Local translation of each joint relative to its parent (`OFFSET`
    /// with position channels applied).
    pub translations: Vec<DVec3>,
}

/// A skeleton's channel layout, compiled to read frames into [`Pose`]s and
/// write them back.
///
/// # Example
/// ```
/// use bvhkit::{Bvh, PositionChannels};
/// use bvhkit::edit::PoseLayout;
/// use bvhkit::rotation::RotationOrder;
///
/// let bvh = Bvh::parse("HIERARCHY ROOT Hips { OFFSET 0 0 0
///     CHANNELS 6 Xposition Yposition Zposition Zrotation Xrotation Yrotation
///     End Site { OFFSET 0 10 0 } }
///     MOTION Frames: 1 Frame Time: 0.1
///     1 2 3 170 -20 35")?;
/// let layout = PoseLayout::new(bvh.skeleton(), PositionChannels::Replace);
/// let mut pose = layout.pose();
/// layout.read(bvh.motion().frame(0), &mut pose);
/// assert_eq!(pose.translations[0].to_array(), [1.0, 2.0, 3.0]);
/// // Writing the pose back gives the same angles (here within 1e-9).
/// let mut out = vec![0.0; 6];
/// layout.write(&pose, Some(bvh.motion().frame(0)), &mut out);
/// for (a, b) in out.iter().zip(bvh.motion().frame(0)) {
///     assert!((a - b).abs() < 1e-9);
/// }
/// # Ok::<(), bvhkit::Error>(())
/// ```
#[derive(Clone, Debug)]
pub struct PoseLayout {
    joints: Vec<JointChannels>,
    parents: Vec<Option<usize>>,
    n_channels: usize,
    mode: PositionChannels,
    fk: Kinematics,
}

impl PoseLayout {
    /// Compiles `skeleton`; position channels are read as `mode` says.
    pub fn new(skeleton: &Skeleton, mode: PositionChannels) -> PoseLayout {
        PoseLayout {
            joints: skeleton.joints().iter().map(JointChannels::of).collect(),
            parents: skeleton.joints().iter().map(|j| j.parent().map(|p| p.index())).collect(),
            n_channels: skeleton.n_channels(),
            mode,
            fk: Kinematics::new(skeleton, mode),
        }
    }

    /// Every joint's channel layout, in file order.
    pub fn joints(&self) -> &[JointChannels] {
        &self.joints
    }

    /// Every joint's parent index, in file order.
    pub fn parents(&self) -> &[Option<usize>] {
        &self.parents
    }

    /// Channels per frame.
    pub fn n_channels(&self) -> usize {
        self.n_channels
    }

    /// How position channels are read.
    pub fn mode(&self) -> PositionChannels {
        self.mode
    }

    /// The skeleton's [`Kinematics`] (same position-channel reading), for
    /// world transforms and positions of frames.
    pub fn kinematics(&self) -> &Kinematics {
        &self.fk
    }

    /// A pose of the right size, every joint at identity and zero.
    #[must_use]
    pub fn pose(&self) -> Pose {
        Pose {
            rotations: vec![DQuat::IDENTITY; self.joints.len()],
            translations: vec![DVec3::ZERO; self.joints.len()],
        }
    }

    /// Reads `frame` into `pose`: every joint's local rotation and
    /// translation. Allocates nothing.
    ///
    /// # Panics
    /// When `frame` does not hold one value per channel or `pose` was made
    /// for another skeleton.
    pub fn read(&self, frame: &[f64], pose: &mut Pose) {
        self.check(frame, pose);
        for (i, j) in self.joints.iter().enumerate() {
            pose.rotations[i] = j.rotation(frame);
            pose.translations[i] = j.translation(frame, self.mode);
        }
    }

    /// Writes `pose` into `frame`: rotations as Euler angles in each joint's
    /// own channel order, each closest to the angles of the same channels
    /// in `near` (the previous output frame, for continuity), or the
    /// principal solutions when `near` is `None` (a first frame), and
    /// translations into position channels. Channels are only
    /// overwritten, so a value the pose cannot change stays as `frame` had
    /// it. Returns whether every joint was represented exactly (see
    /// [`JointChannels::write_rotation`]; translation components without a
    /// channel are taken from the `OFFSET`). Allocates nothing.
    ///
    /// # Panics
    /// As for [`PoseLayout::read`], and when `near` has the wrong length.
    pub fn write(&self, pose: &Pose, near: Option<&[f64]>, frame: &mut [f64]) -> bool {
        self.check(frame, pose);
        if let Some(near) = near {
            assert_eq!(near.len(), self.n_channels, "near must hold one value per channel");
        }
        let mut exact = true;
        for (i, j) in self.joints.iter().enumerate() {
            if j.n_rot > 0 {
                exact &= j.write_rotation(pose.rotations[i], near.map(|n| j.angles(n)), frame);
            }
            if j.n_pos > 0 {
                exact &= j.write_translation(pose.translations[i], self.mode, frame) <= 1e-9;
            }
        }
        exact
    }

    /// World transforms of `frame` ([`Kinematics::world`]).
    ///
    /// # Panics
    /// As for [`Kinematics::world`].
    pub fn world(&self, frame: &[f64], out: &mut [DAffine3]) {
        self.fk.world(frame, out);
    }

    fn check(&self, frame: &[f64], pose: &Pose) {
        assert_eq!(frame.len(), self.n_channels, "frame must hold one value per channel");
        assert!(
            pose.rotations.len() == self.joints.len()
                && pose.translations.len() == self.joints.len(),
            "pose was made for another skeleton"
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Bvh;
    use crate::rotation::euler_to_mat3;

    #[test]
    fn read_write_round_trip_for_every_channel_count() {
        let text = "HIERARCHY ROOT R { OFFSET 1 2 3 CHANNELS 6 Xposition Yposition Zposition Yrotation Xrotation Zrotation\n\
            JOINT A { OFFSET 0 5 0 CHANNELS 1 Zrotation\n\
            JOINT B { OFFSET 0 5 0 CHANNELS 2 Xrotation Yrotation\n\
            JOINT C { OFFSET 0 5 0 CHANNELS 1 Yposition End Site { OFFSET 0 1 0 } } } } }\n\
            MOTION\nFrames: 1\nFrame Time: 0.1\n4 5 6 200 -30 -170 375 20 -40 7\n";
        let b = Bvh::parse(text).unwrap();
        let frame = b.motion().frame(0);
        for mode in [PositionChannels::Replace, PositionChannels::Add] {
            let layout = PoseLayout::new(b.skeleton(), mode);
            let mut pose = layout.pose();
            layout.read(frame, &mut pose);
            // The local rotation is the product of the channels in listed order.
            let m = euler_to_mat3(&[Axis::Y, Axis::X, Axis::Z], &[200.0, -30.0, -170.0]);
            assert!(glam::DMat3::from_quat(pose.rotations[0]).abs_diff_eq(m, 1e-14));
            let expected_t0 = match mode {
                PositionChannels::Replace => DVec3::new(4.0, 5.0, 6.0),
                PositionChannels::Add => DVec3::new(5.0, 7.0, 9.0),
            };
            assert_eq!(pose.translations[0], expected_t0);
            assert_eq!(
                pose.translations[3].y,
                if mode == PositionChannels::Add { 12.0 } else { 7.0 }
            );
            let mut out = vec![0.0; frame.len()];
            assert!(layout.write(&pose, Some(frame), &mut out));
            for (a, e) in out.iter().zip(frame) {
                assert!((a - e).abs() < 1e-9, "{out:?} vs {frame:?}");
            }
        }
    }

    #[test]
    fn a_rotation_one_channel_cannot_hold_is_reported() {
        let b = Bvh::parse("HIERARCHY ROOT R { OFFSET 0 0 0 CHANNELS 1 Zrotation } MOTION Frames: 1 Frame Time: 0.1 0").unwrap();
        let layout = PoseLayout::new(b.skeleton(), PositionChannels::Replace);
        let mut pose = layout.pose();
        pose.rotations[0] = euler_to_quat(&[Axis::X], &[30.0]);
        let mut out = [0.0];
        assert!(!layout.write(&pose, None, &mut out));
        pose.rotations[0] = euler_to_quat(&[Axis::Z], &[-190.0]);
        assert!(layout.write(&pose, Some(&[-180.0]), &mut out));
        assert!((out[0] + 190.0).abs() < 1e-9, "{out:?}");
    }
}
