//! One clip's features: world positions, local rotations, velocities and
//! contacts per frame and joint, computed with the core's forward
//! kinematics ([`Kinematics`]) and rotation conversion
//! ([`mat3_to_repr`]); nothing here re-derives a rotation rule.
//!
//! # Implementation notes
//!
//! `Options` and `Clip::compute`, one clip's world positions
//! (`Kinematics::positions_many`, eight frames on SIMD lanes,
//! `positions_with`'s bits), local rotations (`Kinematics::local`'s matrices,
//! built from the sines and cosines forward kinematics just computed for the
//! frames (`FkLanes::sin_cos`, one `rotation::sin_cos_deg_slice` batch) and
//! `apply_axis_rotation` per channel, bit for bit the same, through
//! `rotation::mat3_to_repr`, the conversion `bvh rotations` uses; quaternions,
//! the default, eight frames' joints at a time through
//! `rotation::mat3_to_quat_slice`, its bits on SIMD lanes), the per-frame part
//! (positions, rotations, pose sizes) being `Kernel`, which writes a range of
//! frames into caller-owned columns, velocities (central differences), contacts
//! (height and speed thresholds relative to the unit guess's size) and
//! root-relative positions, stored by component, frame-major (the long table's
//! row order), computed in chunks of frames on rayon's pool (the result does
//! not depend on the thread count).

use crate::{Error, Result};
use bvhkit::edit::JointChannels;
use bvhkit::glam::{DMat3, DVec3};
use bvhkit::rotation::{
    RotationOrder, RotationRepr, apply_axis_rotation, mat3_to_quat_slice, mat3_to_repr,
};
use bvhkit::units::{UnitGuess, pose_size, rest_pose};
use bvhkit::{Bvh, FkLanes, Kinematics, Motion, PositionChannels, Skeleton};
use rayon::prelude::*;

/// Element type of the exported numbers.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Dtype {
    /// 64-bit floats: the computed values exactly (the default).
    #[default]
    F64,
    /// 32-bit floats (half the size; what ML pipelines usually want).
    F32,
}

/// Table layout of the Parquet output.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Layout {
    /// One row per clip × frame × joint (the default).
    #[default]
    Long,
    /// One row per clip × frame, the joints' values in list columns.
    Wide,
}

/// Rotation representation of the exported local rotations.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Rotations {
    /// Unit quaternion `qx, qy, qz, qw`, `qw >= 0` (the default).
    #[default]
    Quat,
    /// The first two columns of the rotation matrix (Zhou et al. 2019):
    /// `c0x, c0y, c0z, c1x, c1y, c1z`.
    SixD,
    /// The 3x3 matrix, row-major, acting on column vectors: `m00 ... m22`.
    Matrix,
}

impl Rotations {
    /// The core's representation.
    #[must_use]
    pub fn repr(self) -> RotationRepr {
        match self {
            Rotations::Quat => RotationRepr::Quat,
            Rotations::SixD => RotationRepr::SixD,
            Rotations::Matrix => RotationRepr::Matrix,
        }
    }

    /// Column names of the long table: `qx qy qz qw`, `c0x ... c1z` or
    /// `m00 ... m22`.
    #[must_use]
    pub fn columns(self) -> &'static [&'static str] {
        match self {
            Rotations::Quat => &["qx", "qy", "qz", "qw"],
            _ => self.repr().components(),
        }
    }

    /// The option's name: `quat`, `6d` or `matrix`.
    #[must_use]
    pub fn name(self) -> &'static str {
        match self {
            Rotations::Quat => "quat",
            Rotations::SixD => "6d",
            Rotations::Matrix => "matrix",
        }
    }
}

/// Foot-contact thresholds, as fractions of the skeleton's size (the
/// clip's [`UnitGuess::size`]: the median over frames of the largest extent
/// of the pose, a standing person's height).
///
/// A joint is in contact in a frame when both hold:
/// - its height above the ground is at most `height × size`; the ground is
///   the median over frames of each frame's lowest joint height (so a jump
///   or a glitch frame does not move it), and height is the Y coordinate
///   (convert other up axes first: `bvh export --up`);
/// - its speed (the length of its velocity, [`Clip::velocities`]) is at
///   most `speed × size` per second.
///
/// The defaults, 0.05 and 0.3, are 8.5 cm and 0.51 m/s for a person of
/// 1.70 m. Every joint gets a flag; pick the feet (toes, End Sites) by name.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Contacts {
    /// Largest height above the ground, as a fraction of the skeleton's size.
    pub height: f64,
    /// Largest speed, as a fraction of the skeleton's size per second.
    pub speed: f64,
}

impl Default for Contacts {
    fn default() -> Contacts {
        Contacts { height: 0.05, speed: 0.3 }
    }
}

/// What to export, and how.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Options {
    /// Element type of the numbers.
    pub dtype: Dtype,
    /// Long or wide table (Parquet only).
    pub layout: Layout,
    /// Representation of the local rotations.
    pub rotations: Rotations,
    /// Positions relative to the root: every joint's world position minus its
    /// root's in the same frame; a root keeps its world position (the
    /// trajectory). Velocities and contacts are always of world positions.
    pub root_relative: bool,
    /// Add velocities: central differences of the world positions
    /// (`(p[f+1] - p[f-1]) / (2 × frame time)`, one-sided at the first and
    /// last frame, 0 for a single frame), in the file's length units per
    /// second.
    pub velocities: bool,
    /// Add a contact flag per joint and frame ([`Contacts`]).
    pub contacts: Option<Contacts>,
    /// How position channels combine with `OFFSET`.
    pub position_channels: PositionChannels,
}

/// One clip's skeleton and features, ready to be written.
///
/// Per-joint-per-frame values are stored by component, frame-major: the
/// value of joint `j` in frame `f` is at index `f × joints.len() + j` of each
/// component's vector (the long table's row order).
#[derive(Clone, Debug)]
pub struct Clip {
    /// The clip's name (the `clip` column).
    pub name: String,
    /// Joint names, End Sites included, as `bvh positions` names them.
    pub joints: Vec<String>,
    /// Each joint's parent index, -1 for roots.
    pub parents: Vec<i32>,
    /// Each joint's `OFFSET`.
    pub offsets: Vec<[f64; 3]>,
    /// Seconds per frame.
    pub frame_time: f64,
    /// Number of frames.
    pub n_frames: usize,
    /// The unit guess of the core ([`UnitGuess::of_pose_sizes`]: the median
    /// pose size over frames; the rest pose for a clip without frames).
    pub units: UnitGuess,
    /// World positions x, y, z (root-relative when asked).
    pub positions: [Vec<f64>; 3],
    /// Local rotations, one vector per component of [`Options::rotations`].
    pub rotations: Vec<Vec<f64>>,
    /// Velocities x, y, z when asked.
    pub velocities: Option<[Vec<f64>; 3]>,
    /// Contact flags when asked.
    pub contacts: Option<Vec<bool>>,
}

/// Frames per parallel work item.
const CHUNK_FRAMES: usize = 512;

/// The per-frame features of one skeleton: world positions and local
/// rotations, written a range of frames at a time into caller-owned
/// columns. [`Clip::compute`] runs it over a whole clip; the Parquet writer
/// runs it a row group at a time into buffers it reuses.
pub(crate) struct Kernel {
    fk: Kinematics,
    channels: Vec<JointChannels>,
    /// Each joint's root, when positions are to be root-relative.
    roots: Option<Vec<usize>>,
    repr: RotationRepr,
    width: usize,
}

impl Kernel {
    /// The kernel of `skeleton` under `options`; positions are made
    /// root-relative here only when `relative` (a clip with velocities
    /// needs its world positions first).
    pub(crate) fn new(skeleton: &Skeleton, options: &Options, relative: bool) -> Kernel {
        let fk = Kinematics::new(skeleton, options.position_channels);
        let channels = skeleton.joints().iter().map(JointChannels::of).collect();
        let roots = (relative && options.root_relative).then(|| roots(&parents(skeleton)));
        let repr = options.rotations.repr();
        Kernel { fk, channels, roots, repr, width: repr.width() }
    }

    /// Columns written: `px py pz` and the rotation's components.
    pub(crate) fn columns(&self) -> usize {
        3 + self.width
    }

    /// Frames `first..first + sizes.len()` of `motion`: each column's rows
    /// (frame-major, `sizes.len() × joints` values) into `out` (one slice
    /// per column, [`Kernel::columns`] of them), each frame's
    /// [`pose_size`] into `sizes`. Frames are split over rayon's current
    /// pool, or, with `parallel` false, computed in order on this thread;
    /// the values do not depend on how.
    pub(crate) fn run(
        &self,
        motion: &Motion,
        first: usize,
        out: &mut [&mut [f64]],
        sizes: &mut [f64],
        parallel: bool,
    ) {
        let nj = self.fk.len();
        let ncols = self.columns();
        assert_eq!(out.len(), ncols, "one slice per column");
        assert!(out.iter().all(|c| c.len() == sizes.len() * nj), "a value per frame and joint");
        if nj == 0 || sizes.is_empty() {
            return;
        }
        let per = CHUNK_FRAMES * nj;
        let mut tasks: Vec<(Vec<&mut [f64]>, &mut [f64])> =
            sizes.chunks_mut(CHUNK_FRAMES).map(|s| (Vec::with_capacity(ncols), s)).collect();
        for c in out.iter_mut() {
            for (t, s) in tasks.iter_mut().zip(c.chunks_mut(per)) {
                t.0.push(s);
            }
        }
        if !parallel {
            for (ci, (mut out, size)) in tasks.into_iter().enumerate() {
                self.frames(motion, first + ci * CHUNK_FRAMES, &mut out, size);
            }
            return;
        }
        tasks.into_par_iter().enumerate().for_each(|(ci, (mut out, size))| {
            self.frames(motion, first + ci * CHUNK_FRAMES, &mut out, size);
        });
    }

    /// [`Kernel::run`]'s work on one thread: world positions
    /// [`FkLanes::LANES`] frames at a time on SIMD lanes
    /// ([`Kinematics::positions_many`], the bits of `positions_with`), then
    /// each frame's local rotations from the sines and cosines it computed.
    fn frames(&self, motion: &Motion, first: usize, out: &mut [&mut [f64]], size: &mut [f64]) {
        const L: usize = FkLanes::LANES;
        let nj = self.fk.len();
        let nc = motion.n_channels();
        let width = self.width;
        let quat = self.repr == RotationRepr::Quat;
        let mut lanes = self.fk.lanes_scratch();
        let mut pos = vec![DVec3::ZERO; L * nj];
        let mut mats = vec![DMat3::IDENTITY; if quat { L * nj } else { 0 }];
        let mut value = [0.0; 9];
        let n = size.len();
        for g in (0..n).step_by(L) {
            let used = L.min(n - g);
            let frames = &motion.values()[(first + g) * nc..(first + g + used) * nc];
            self.fk.positions_many(frames, &mut lanes, &mut pos[..used * nj]);
            // The frames' sines and cosines, as forward kinematics computed
            // them (`sin_cos_deg_slice`: the same bits as `sin_cos_deg`).
            let (sin, cos) = lanes.sin_cos();
            for l in 0..used {
                let pos = &pos[l * nj..(l + 1) * nj];
                size[g + l] = pose_size(pos);
                let base = (g + l) * nj;
                for j in 0..nj {
                    let p = match &self.roots {
                        // Every joint minus its root, roots kept.
                        Some(r) if r[j] != j => pos[j] - pos[r[j]],
                        _ => pos[j],
                    };
                    out[0][base + j] = p.x;
                    out[1][base + j] = p.y;
                    out[2][base + j] = p.z;
                    // The local rotation as `Kinematics::local` builds
                    // it: the identity right-multiplied by each
                    // rotation channel in listed order.
                    let jc = &self.channels[j];
                    let mut m = DMat3::IDENTITY;
                    for r in 0..jc.n_rot as usize {
                        let ch = jc.rot_index[r] * L + l;
                        apply_axis_rotation(&mut m, jc.rot_axes[r], sin[ch], cos[ch]);
                    }
                    if quat {
                        mats[l * nj + j] = m;
                        continue;
                    }
                    mat3_to_repr(m, self.repr, RotationOrder::ZXY, None, None, &mut value);
                    for (c, v) in value[..width].iter().enumerate() {
                        out[3 + c][base + j] = *v;
                    }
                }
            }
            if quat {
                // The frames' quaternions in one pass on SIMD lanes
                // (`mat3_to_repr`'s bits).
                let [x, y, z, w] = &mut out[3..7] else { unreachable!("four components") };
                let row = g * nj..(g + used) * nj;
                mat3_to_quat_slice(
                    &mats[..used * nj],
                    [&mut x[row.clone()], &mut y[row.clone()], &mut z[row.clone()], &mut w[row]],
                );
            }
        }
    }
}

/// Each joint's parent index, -1 for roots.
pub(crate) fn parents(skeleton: &Skeleton) -> Vec<i32> {
    skeleton.joints().iter().map(|j| j.parent().map_or(-1, |p| p.index() as i32)).collect()
}

/// Each joint's root.
fn roots(parents: &[i32]) -> Vec<usize> {
    let mut root = vec![0usize; parents.len()];
    for j in 0..parents.len() {
        root[j] = if parents[j] < 0 { j } else { root[parents[j] as usize] };
    }
    root
}

/// The unit guess of a clip from its frames' pose sizes (the rest pose for
/// a clip without frames).
pub(crate) fn unit_guess(skeleton: &Skeleton, options: &Options, sizes: Vec<f64>) -> UnitGuess {
    if sizes.is_empty() {
        UnitGuess::of_positions(skeleton.len(), &rest_pose(skeleton, options.position_channels))
    } else {
        UnitGuess::of_pose_sizes(sizes)
    }
    .named(&bvhkit::units::Limbs::of(skeleton))
}

impl Clip {
    /// Computes the features of `bvh` (a whole parsed file) under `name`.
    ///
    /// Positions come from [`Kinematics::positions_with`], rotations from
    /// [`Kinematics::local`] through [`mat3_to_repr`] (as `bvh rotations`
    /// computes them); frames are split over rayon's current pool, and the
    /// result does not depend on the thread count.
    #[must_use]
    pub fn compute(name: &str, bvh: &Bvh, options: &Options) -> Clip {
        let skeleton = bvh.skeleton();
        let motion = bvh.motion();
        let kernel = Kernel::new(skeleton, options, false);
        let nj = skeleton.len();
        let nf = motion.n_frames();
        let rows = nf * nj;
        let mut cols: Vec<Vec<f64>> = (0..kernel.columns()).map(|_| vec![0.0; rows]).collect();
        let mut sizes = vec![0.0; nf];
        {
            let mut out: Vec<&mut [f64]> = cols.iter_mut().map(Vec::as_mut_slice).collect();
            kernel.run(motion, 0, &mut out, &mut sizes, true);
        }
        let units = unit_guess(skeleton, options, if nf == 0 { Vec::new() } else { sizes });
        let rotations = cols.split_off(3);
        let mut it = cols.into_iter();
        let positions = [it.next().unwrap(), it.next().unwrap(), it.next().unwrap()];
        let want_v = options.velocities || options.contacts.is_some();
        let velocities = want_v.then(|| velocities(&positions, nj, nf, motion.frame_time()));
        let contacts = match (options.contacts, &velocities) {
            (Some(c), Some(v)) => Some(contacts(&positions[1], v, nj, nf, units.size, c)),
            _ => None,
        };
        let joints = skeleton.display_names();
        let parents = parents(skeleton);
        let mut positions = positions;
        if options.root_relative {
            root_relative(&mut positions, &parents, nj);
        }
        Clip {
            name: name.to_string(),
            joints,
            parents,
            offsets: skeleton.joints().iter().map(|j| j.offset().to_array()).collect(),
            frame_time: motion.frame_time(),
            n_frames: nf,
            units,
            positions,
            rotations,
            velocities: if options.velocities { velocities } else { None },
            contacts,
        }
    }

    /// Rows of the long table: frames × joints.
    #[must_use]
    pub fn rows(&self) -> usize {
        self.n_frames * self.joints.len()
    }

    /// Refuses a value that is not finite in `dtype` (positions of extreme
    /// but finite inputs, their velocities, any of them past 3.4e38 as
    /// `f32`), naming the first one: a dataset never holds an infinity its
    /// readers would take for data.
    ///
    /// # Errors
    /// [`Error::NotFinite`] for the first such value.
    pub fn check_finite(&self, dtype: Dtype) -> Result<()> {
        let names = &self.joints;
        for (c, v) in ["px", "py", "pz"].iter().zip(&self.positions) {
            check_finite(&self.name, c, v, dtype, 0, names)?;
        }
        for v in &self.rotations {
            check_finite(&self.name, "rotations", v, dtype, 0, names)?;
        }
        if let Some(vel) = &self.velocities {
            for (c, v) in ["vx", "vy", "vz"].iter().zip(vel) {
                check_finite(&self.name, c, v, dtype, 0, names)?;
            }
        }
        Ok(())
    }
}

/// [`Clip::check_finite`] on one column of a value per joint (`names`)
/// per frame of clip `clip`, whose first value is frame `first_frame`'s.
pub(crate) fn check_finite(
    clip: &str,
    column: &str,
    values: &[f64],
    dtype: Dtype,
    first_frame: usize,
    names: &[String],
) -> Result<()> {
    let nj = names.len();
    let bad = |x: &f64| match dtype {
        Dtype::F64 => !x.is_finite(),
        Dtype::F32 => !(*x as f32).is_finite(),
    };
    match values.iter().position(bad) {
        None => Ok(()),
        Some(i) => Err(Error::NotFinite {
            clip: clip.to_string(),
            column: column.to_string(),
            frame: first_frame + i / nj.max(1),
            joint: names.get(i % nj.max(1)).cloned().unwrap_or_default(),
            value: values[i],
            dtype,
        }),
    }
}

/// Central differences over frames, one-sided at the ends, per second.
fn velocities(p: &[Vec<f64>; 3], nj: usize, nf: usize, dt: f64) -> [Vec<f64>; 3] {
    let one = |c: &Vec<f64>| -> Vec<f64> {
        let mut v = vec![0.0; c.len()];
        if nf < 2 {
            return v;
        }
        v.par_chunks_mut(nj).enumerate().for_each(|(f, out)| {
            let (a, b) = if f == 0 {
                (0, 1)
            } else if f == nf - 1 {
                (nf - 2, nf - 1)
            } else {
                (f - 1, f + 1)
            };
            let span = (b - a) as f64 * dt;
            for (j, o) in out.iter_mut().enumerate() {
                *o = (c[b * nj + j] - c[a * nj + j]) / span;
            }
        });
        v
    };
    [one(&p[0]), one(&p[1]), one(&p[2])]
}

/// The contact rule of [`Contacts`].
fn contacts(
    y: &[f64],
    v: &[Vec<f64>; 3],
    nj: usize,
    nf: usize,
    size: f64,
    c: Contacts,
) -> Vec<bool> {
    if nf == 0 || nj == 0 {
        return Vec::new();
    }
    let mut lows: Vec<f64> = y
        .chunks_exact(nj)
        .map(|f| f.iter().copied().filter(|h| h.is_finite()).fold(f64::INFINITY, f64::min))
        .filter(|h| h.is_finite())
        .collect();
    if lows.is_empty() || !(size.is_finite() && size > 0.0) {
        return vec![false; nf * nj];
    }
    let mid = (lows.len() - 1) / 2;
    let ground = *lows.select_nth_unstable_by(mid, f64::total_cmp).1;
    let (h, s) = (c.height * size, c.speed * size);
    (0..nf * nj)
        .into_par_iter()
        .map(|r| {
            let speed = (v[0][r] * v[0][r] + v[1][r] * v[1][r] + v[2][r] * v[2][r]).sqrt();
            y[r] - ground <= h && speed <= s
        })
        .collect()
}

/// Every joint minus its root, roots kept.
fn root_relative(p: &mut [Vec<f64>; 3], parents: &[i32], nj: usize) {
    let root = roots(parents);
    for c in p.iter_mut() {
        c.par_chunks_mut(nj.max(1)).for_each(|f| {
            for j in 0..nj {
                if root[j] != j {
                    f[j] -= f[root[j]];
                }
            }
        });
    }
}
