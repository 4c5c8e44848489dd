//! The distance between two clips: MPJPE, root-aligned MPJPE, PA-MPJPE
//! (a similarity Procrustes fit per frame) and the geodesic error of the
//! joints' rotations.
//!
//! No whole-clip positions are kept: each clip's unit guess comes first
//! from one size per frame, then runs of 512 frames of A are measured on
//! the pool, each computing the world positions of its frames and of the
//! B frames it reads into buffers its thread reuses (scaled to metres as
//! they are read). Every sum is taken in a fixed order, so the result does
//! not depend on the number of threads.

use glam::{DMat3, DQuat, DVec3};

use super::{hips_of, joint_names, world_positions};
use crate::FkLanes;
use crate::kinematics::{Kinematics, PositionChannels};
use crate::retarget::map::JointMap;
use crate::rotation::{euler_to_quat_sin_cos, sin_cos_deg_slice};
use crate::units::UnitGuess;
use crate::{Bvh, Error, Result};

/// Choices of [`diff`].
#[derive(Clone, Debug, Default, PartialEq)]
pub struct DiffOptions {
    /// Metres per file unit of both clips; `None` guesses each clip's unit.
    pub metres_per_unit: Option<f64>,
    /// How position channels are read.
    pub position_channels: PositionChannels,
    /// Joint pairs (index in A, index in B); `None` pairs joints by name,
    /// else by the retarget name families when no name is shared.
    pub pairs: Option<Vec<(usize, usize)>>,
    /// How many worst frames and joints to report (0: 10).
    pub worst: usize,
}

/// One joint pair's errors.
#[derive(Clone, Debug, PartialEq)]
pub struct JointDiff {
    /// The joint's name in A.
    pub a: String,
    /// The joint's name in B.
    pub b: String,
    /// Mean position error (m).
    pub mpjpe: f64,
    /// Mean geodesic rotation error of the joint's channels (degrees);
    /// `None` for joints without rotation channels in either clip.
    pub rotation_deg: Option<f64>,
}

/// What [`diff`] measured.
#[derive(Clone, Debug, PartialEq)]
pub struct Diff {
    /// Frames compared.
    pub frames: usize,
    /// Frames per second of the comparison (A's).
    pub fps: f64,
    /// Mean per-joint position error over frames and joint pairs (m).
    pub mpjpe: f64,
    /// The same with each clip's hips subtracted in every frame.
    pub mpjpe_root: f64,
    /// The same after B's joints are fitted onto A's in every frame by a
    /// rotation, a uniform scale and a translation (Procrustes).
    pub pa_mpjpe: f64,
    /// Mean geodesic angle between the paired joints' channel rotations
    /// (degrees); `None` when no pair has rotation channels on both sides.
    pub rotation_deg: Option<f64>,
    /// Per pair, in A's joint order.
    pub joints: Vec<JointDiff>,
    /// Per frame: the MPJPE of that frame (m).
    pub per_frame: Vec<f64>,
    /// The worst frames, (frame, MPJPE), worst first.
    pub worst_frames: Vec<(usize, f64)>,
    /// Indices into `joints`, worst MPJPE first.
    pub worst_joints: Vec<usize>,
    /// What was done to make the clips comparable (resampling, a shorter
    /// span, a map by name families).
    pub notes: Vec<String>,
}

/// The joint pairs by exact name (End Sites named as `bvh positions` names
/// them), or by [`JointMap::auto`] when no name is shared.
fn pairs_by_name(a: &Bvh, b: &Bvh, notes: &mut Vec<String>) -> Vec<(usize, usize)> {
    let (na, nb) = (joint_names(a), joint_names(b));
    let pairs: Vec<(usize, usize)> = na
        .iter()
        .enumerate()
        .filter_map(|(i, name)| nb.iter().position(|m| m == name).map(|k| (i, k)))
        .collect();
    if !pairs.is_empty() {
        return pairs;
    }
    let map = JointMap::auto(a.skeleton(), b.skeleton());
    notes.push("no joint name is shared: joints paired by the retarget name families".into());
    map.pairs().iter().map(|p| (p.source, p.target)).collect()
}

/// Compares clip `b` with clip `a` (the reference): see [`Diff`].
///
/// Positions are compared in metres. Where the frame rates differ, B's
/// positions are interpolated linearly at A's frame times (with a note);
/// where the lengths differ, the common span is compared (with a note).
///
/// # Errors
/// When no joint pairs, when a clip has no frames, or when the pairs name
/// joints outside the skeletons.
///
/// # Example
/// ```
/// use bvhkit::{Bvh, quality};
/// let a = Bvh::parse("HIERARCHY ROOT Hips { OFFSET 0 0 0 CHANNELS 3 Xposition Yposition Zposition
///     End Site { OFFSET 0 1 0 } } MOTION Frames: 2 Frame Time: 0.1
///     0 0 0
///     1 0 0")?;
/// let d = quality::diff(&a, &a, &quality::DiffOptions { metres_per_unit: Some(1.0), ..Default::default() })?;
/// assert_eq!((d.mpjpe, d.pa_mpjpe), (0.0, 0.0));
/// # Ok::<(), bvhkit::Error>(())
/// ```
pub fn diff(a: &Bvh, b: &Bvh, o: &DiffOptions) -> Result<Diff> {
    let mut notes = Vec::new();
    let pairs = match &o.pairs {
        Some(p) => p.clone(),
        None => pairs_by_name(a, b, &mut notes),
    };
    let (la, lb) = (a.skeleton().len(), b.skeleton().len());
    if pairs.is_empty() {
        return Err(Error::invalid(
            "no joints to compare: no name is shared and no name family matches (give a map)",
        ));
    }
    if let Some(&(i, k)) = pairs.iter().find(|&&(i, k)| i >= la || k >= lb) {
        return Err(Error::invalid(format!(
            "joint pair ({i}, {k}) is outside the skeletons ({la} and {lb} joints)"
        )));
    }
    let (ma, mb) = (a.motion(), b.motion());
    if ma.n_frames() == 0 || mb.n_frames() == 0 {
        return Err(Error::invalid("a clip has no frames to compare"));
    }
    // Metres per unit of each clip, both clips at once: the unit guess
    // takes every frame's size, so it comes first, from a pass that keeps
    // no positions; the positions are computed again run by run below.
    let (mpu_a, mpu_b) = super::join(
        || metres_per_unit(a, o.position_channels, o.metres_per_unit),
        || metres_per_unit(b, o.position_channels, o.metres_per_unit),
    );
    let fk_a = Kinematics::new(a.skeleton(), o.position_channels);
    let fk_b = Kinematics::new(b.skeleton(), o.position_channels);
    let (fa, fb) = (ma.fps(), mb.fps());
    let same_rate = (ma.frame_time() - mb.frame_time()).abs()
        <= 1e-9 * ma.frame_time().abs().max(mb.frame_time().abs());
    // B's frame (as a fractional index) at each of A's frames.
    let at: Vec<f64> = if same_rate {
        (0..ma.n_frames().min(mb.n_frames())).map(|f| f as f64).collect()
    } else {
        notes.push(format!("frame rates differ ({fa:.4} and {fb:.4} fps): B interpolated linearly at A's frame times"));
        (0..ma.n_frames())
            .map(|f| f as f64 * ma.frame_time() / mb.frame_time())
            .take_while(|&u| u <= (mb.n_frames() - 1) as f64 + 1e-9)
            .collect()
    };
    let frames = at.len();
    if ma.n_frames() != mb.n_frames() && (same_rate || frames < ma.n_frames()) {
        notes.push(format!(
            "lengths differ ({} and {} frames): the first {frames} frames of A compared",
            ma.n_frames(),
            mb.n_frames()
        ));
    }
    let (nja, njb) = (fk_a.len(), fk_b.len());
    let nfb = mb.n_frames();
    let (ra, rb) = {
        let ha = hips_of(a).index();
        let hb = hips_of(b).index();
        // The hips pair when it is paired, else the first pair.
        pairs
            .iter()
            .copied()
            .find(|&(i, _)| i == ha)
            .or_else(|| pairs.iter().copied().find(|&(_, k)| k == hb))
            .unwrap_or(pairs[0])
    };
    let np = pairs.len();
    // Each paired joint's rotation channels and their axes, on both sides.
    let rot_channels = |bvh: &Bvh, j: usize| -> (Vec<crate::rotation::Axis>, Vec<usize>) {
        let joint = &bvh.skeleton().joints()[j];
        joint
            .channels()
            .iter()
            .enumerate()
            .filter(|(_, c)| c.is_rotation())
            .map(|(k, c)| (c.axis(), joint.first_channel() + k))
            .unzip()
    };
    let rots: Vec<_> =
        pairs.iter().map(|&(i, k)| (rot_channels(a, i), rot_channels(b, k))).collect();
    let rotating: Vec<bool> =
        rots.iter().map(|((aa, _), (ab, _))| !aa.is_empty() && !ab.is_empty()).collect();

    let any_rotating = rotating.iter().any(|&r| r);
    /// Sums over a run of frames.
    struct Part {
        sum: f64,
        root: f64,
        pa: f64,
        joint: Vec<f64>,
        rot: Vec<f64>,
    }
    // Runs of frames measured on the pool, summed in order afterwards (the
    // same sums whatever the threads).
    const RUN: usize = 512;
    /// A thread's buffers: FK lanes and the run's positions of each clip.
    struct Scratch {
        lanes_a: FkLanes,
        lanes_b: FkLanes,
        a: Vec<DVec3>,
        b: Vec<DVec3>,
    }
    let scratch = || Scratch {
        lanes_a: fk_a.lanes_scratch(),
        lanes_b: fk_b.lanes_scratch(),
        a: Vec::new(),
        b: Vec::new(),
    };
    let mut per_frame = vec![0.0; frames];
    let measure = |(r, out): (usize, &mut [f64]), sc: &mut Scratch| -> Part {
        let mut part =
            Part { sum: 0.0, root: 0.0, pa: 0.0, joint: vec![0.0; np], rot: vec![0.0; np] };
        // This run's world positions of A and of the frames of B it reads
        // (frame-major, in file units: the scale to metres is applied as
        // they are read, the bits of scaling them in place).
        let (f0, f1) = (r * RUN, r * RUN + out.len());
        let b0 = (at[f0].floor() as usize).min(nfb - 1);
        let b1 = (at[f1 - 1].floor() as usize + 1).min(nfb - 1);
        sc.a.resize((f1 - f0) * nja, DVec3::ZERO);
        sc.b.resize((b1 + 1 - b0) * njb, DVec3::ZERO);
        positions(&fk_a, ma, f0..f1, &mut sc.lanes_a, &mut sc.a);
        positions(&fk_b, mb, b0..b1 + 1, &mut sc.lanes_b, &mut sc.b);
        let (wa, wb) = (&sc.a, &sc.b);
        let pos_a = |f: usize, i: usize| wa[(f - f0) * nja + i] * mpu_a;
        let pos_b = |u: f64, k: usize| -> DVec3 {
            let lo = (u.floor() as usize).min(nfb - 1);
            let frac = u - lo as f64;
            let p0 = wb[(lo - b0) * njb + k] * mpu_b;
            if frac <= 0.0 || lo + 1 >= nfb {
                p0
            } else {
                p0 + (wb[(lo + 1 - b0) * njb + k] * mpu_b - p0) * frac
            }
        };
        let mut xs = vec![DVec3::ZERO; np];
        let mut ys = vec![DVec3::ZERO; np];
        // Each frame's half angles, their sines and cosines (one SIMD pass
        // over the row: `euler_to_quat`'s bits), and a pair's gathered.
        let (mut ha, mut sa, mut ca) = (Vec::new(), Vec::new(), Vec::new());
        let (mut hb, mut sb, mut cb) = (Vec::new(), Vec::new(), Vec::new());
        let (mut ps, mut pc) = (Vec::new(), Vec::new());
        for (k, slot) in out.iter_mut().enumerate() {
            let f = r * RUN + k;
            let u = at[f];
            let root_a = pos_a(f, ra);
            let root_b = pos_b(u, rb);
            let mut frame_sum = 0.0;
            for (p, &(i, j)) in pairs.iter().enumerate() {
                let ya = pos_a(f, i);
                let xb = pos_b(u, j);
                let e = (ya - xb).length();
                frame_sum += e;
                part.joint[p] += e;
                part.root += ((ya - root_a) - (xb - root_b)).length();
                ys[p] = ya;
                xs[p] = xb;
            }
            *slot = frame_sum / np as f64;
            part.sum += frame_sum;
            if xs != ys {
                let fit = procrustes(&xs, &ys);
                part.pa +=
                    xs.iter().zip(&ys).map(|(x, y)| (fit.apply(*x) - *y).length()).sum::<f64>();
            }
            // B's rotations at its nearest frame.
            let fb = (u.round() as usize).min(mb.n_frames() - 1);
            if !any_rotating {
                continue;
            }
            half_sin_cos(ma.frame(f), &mut ha, &mut sa, &mut ca);
            half_sin_cos(mb.frame(fb), &mut hb, &mut sb, &mut cb);
            let mut quat = |axes: &[crate::rotation::Axis], ch: &[usize], s: &[f64], c: &[f64]| {
                ps.clear();
                ps.extend(ch.iter().map(|&k| s[k]));
                pc.clear();
                pc.extend(ch.iter().map(|&k| c[k]));
                euler_to_quat_sin_cos(axes, &ps, &pc)
            };
            for (p, ((axa, cha), (axb, chb))) in rots.iter().enumerate() {
                if !rotating[p] {
                    continue;
                }
                let (qa, qb) = (quat(axa, cha, &sa, &ca), quat(axb, chb, &sb, &cb));
                if qa != qb {
                    part.rot[p] += geodesic_deg(qa, qb);
                }
            }
        }
        part
    };
    #[cfg(feature = "parallel")]
    let parts: Vec<Part> = {
        use rayon::prelude::*;
        per_frame
            .par_chunks_mut(RUN)
            .enumerate()
            .map_init(scratch, |sc, x| measure(x, sc))
            .collect()
    };
    #[cfg(not(feature = "parallel"))]
    let parts: Vec<Part> = {
        let mut sc = scratch();
        per_frame.chunks_mut(RUN).enumerate().map(|x| measure(x, &mut sc)).collect()
    };
    let (mut sum, mut sum_root, mut sum_pa) = (0.0, 0.0, 0.0);
    let mut per_joint = vec![0.0; np];
    let mut per_rot = vec![0.0; np];
    for part in &parts {
        sum += part.sum;
        sum_root += part.root;
        sum_pa += part.pa;
        for p in 0..np {
            per_joint[p] += part.joint[p];
            per_rot[p] += part.rot[p];
        }
    }
    let total = (frames * np) as f64;
    let mut rot_sum = 0.0;
    let mut rot_count = 0usize;
    let mut joints = Vec::with_capacity(np);
    let (na, nb) = (joint_names(a), joint_names(b));
    for (p, &(i, k)) in pairs.iter().enumerate() {
        let rotation_deg = rotating[p].then(|| per_rot[p] / frames as f64);
        if let Some(r) = rotation_deg {
            rot_sum += r;
            rot_count += 1;
        }
        joints.push(JointDiff {
            a: na[i].clone(),
            b: nb[k].clone(),
            mpjpe: per_joint[p] / frames as f64,
            rotation_deg,
        });
    }
    let worst = if o.worst == 0 { 10 } else { o.worst };
    let mut order: Vec<usize> = (0..frames).collect();
    order.sort_by(|&x, &y| per_frame[y].total_cmp(&per_frame[x]).then(x.cmp(&y)));
    let worst_frames = order.iter().take(worst).map(|&f| (f, per_frame[f])).collect();
    let mut jorder: Vec<usize> = (0..np).collect();
    jorder.sort_by(|&x, &y| joints[y].mpjpe.total_cmp(&joints[x].mpjpe).then(x.cmp(&y)));
    jorder.truncate(worst);
    Ok(Diff {
        frames,
        fps: fa,
        mpjpe: sum / total,
        mpjpe_root: sum_root / total,
        pa_mpjpe: sum_pa / total,
        rotation_deg: (rot_count > 0).then(|| rot_sum / rot_count as f64),
        joints,
        per_frame,
        worst_frames,
        worst_joints: jorder,
        notes,
    })
}

/// Metres per file unit of `bvh`: `given`, else its unit guess (the guess
/// of [`world_positions`], one size per frame, no positions kept).
fn metres_per_unit(bvh: &Bvh, mode: PositionChannels, given: Option<f64>) -> f64 {
    if let Some(m) = given {
        return m;
    }
    let m = bvh.motion();
    let fk_empty = Kinematics::new(bvh.skeleton(), mode).is_empty();
    if m.n_frames() == 0 || m.n_channels() == 0 || fk_empty {
        return world_positions(bvh, mode, None, false).mpu;
    }
    UnitGuess::of_bvh(bvh, mode).metres_per_unit()
}

/// World positions (file units, frame-major) of `frames` of `motion` into
/// `out`, [`FK_RUN`] frames per call of [`Kinematics::positions_many`].
fn positions(
    fk: &Kinematics,
    motion: &crate::Motion,
    frames: std::ops::Range<usize>,
    lanes: &mut FkLanes,
    out: &mut [DVec3],
) {
    let (nj, width) = (fk.len(), motion.n_channels());
    if nj == 0 {
        return;
    }
    if width == 0 {
        fk.positions_many(&[], lanes, out);
        return;
    }
    let values = &motion.values()[frames.start * width..frames.end * width];
    for (rows, vals) in out.chunks_mut(FK_RUN * nj).zip(values.chunks(FK_RUN * width)) {
        fk.positions_many(vals, lanes, rows);
    }
}

/// Frames per call of [`Kinematics::positions_many`] in [`diff`].
const FK_RUN: usize = 64;

/// The sines and cosines of half of every value of `row` into `sin` and
/// `cos` (`half` their buffer), as [`crate::rotation::euler_to_quat`] takes
/// them channel by channel.
fn half_sin_cos(row: &[f64], half: &mut Vec<f64>, sin: &mut Vec<f64>, cos: &mut Vec<f64>) {
    half.clear();
    half.extend(row.iter().map(|v| 0.5 * v));
    sin.resize(row.len(), 0.0);
    cos.resize(row.len(), 0.0);
    sin_cos_deg_slice(half, sin, cos);
}

/// The geodesic angle between two rotations (degrees), 0 to 180.
pub(crate) fn geodesic_deg(a: DQuat, b: DQuat) -> f64 {
    let d = a.conjugate() * b;
    let v = DVec3::new(d.x, d.y, d.z).length();
    2.0 * v.atan2(d.w.abs()).to_degrees()
}

/// A similarity transform: `scale * rotation * x + translation`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Similarity {
    /// The rotation.
    pub rotation: DMat3,
    /// The uniform scale.
    pub scale: f64,
    /// The translation.
    pub translation: DVec3,
}

impl Similarity {
    /// The transform of `x`.
    pub fn apply(&self, x: DVec3) -> DVec3 {
        self.scale * (self.rotation * x) + self.translation
    }
}

/// The similarity transform (proper rotation, uniform scale, translation)
/// that brings the points `x` closest to `y` in the least-squares sense
/// (Umeyama 1991). The rotation comes from Horn's quaternion method (the
/// eigenvector of the largest eigenvalue of a symmetric 4×4 matrix, found
/// by Jacobi rotations); the scale is that eigenvalue over the spread of
/// `x`.
///
/// # Panics
/// When `x` and `y` differ in length.
pub fn procrustes(x: &[DVec3], y: &[DVec3]) -> Similarity {
    assert_eq!(x.len(), y.len(), "procrustes: point counts differ");
    let n = x.len().max(1) as f64;
    let mx = x.iter().copied().sum::<DVec3>() / n;
    let my = y.iter().copied().sum::<DVec3>() / n;
    let mut s = [[0.0f64; 3]; 3];
    let mut spread = 0.0;
    for (a, b) in x.iter().zip(y) {
        let (a, b) = (*a - mx, *b - my);
        spread += a.length_squared();
        let (a, b) = (a.to_array(), b.to_array());
        for (r, ar) in s.iter_mut().zip(a) {
            for (c, bc) in r.iter_mut().zip(b) {
                *c += ar * bc;
            }
        }
    }
    let [[sxx, sxy, sxz], [syx, syy, syz], [szx, szy, szz]] = s;
    let mut nm = [
        [sxx + syy + szz, syz - szy, szx - sxz, sxy - syx],
        [syz - szy, sxx - syy - szz, sxy + syx, szx + sxz],
        [szx - sxz, sxy + syx, -sxx + syy - szz, syz + szy],
        [sxy - syx, szx + sxz, syz + szy, -sxx - syy + szz],
    ];
    let (values, vectors) = jacobi4(&mut nm);
    let best = (0..4).max_by(|&i, &j| values[i].total_cmp(&values[j])).unwrap_or(0);
    let q =
        DQuat::from_xyzw(vectors[1][best], vectors[2][best], vectors[3][best], vectors[0][best])
            .normalize();
    let rotation = DMat3::from_quat(q);
    let scale = if spread > 0.0 { values[best] / spread } else { 0.0 };
    Similarity { rotation, scale, translation: my - scale * (rotation * mx) }
}

/// Eigenvalues and eigenvectors (columns) of a symmetric 4×4 matrix by
/// cyclic Jacobi rotations.
fn jacobi4(a: &mut [[f64; 4]; 4]) -> ([f64; 4], [[f64; 4]; 4]) {
    let mut v = [[0.0; 4]; 4];
    for (i, row) in v.iter_mut().enumerate() {
        row[i] = 1.0;
    }
    for _ in 0..64 {
        let off: f64 = (0..4)
            .flat_map(|i| (0..4).filter(move |&j| j != i).map(move |j| (i, j)))
            .map(|(i, j)| a[i][j] * a[i][j])
            .sum();
        let diag: f64 = (0..4).map(|i| a[i][i] * a[i][i]).sum();
        if off <= 1e-32 * diag.max(f64::MIN_POSITIVE) || off == 0.0 {
            break;
        }
        for p in 0..3 {
            for q in p + 1..4 {
                if a[p][q] == 0.0 {
                    continue;
                }
                let theta = (a[q][q] - a[p][p]) / (2.0 * a[p][q]);
                let t = theta.signum() / (theta.abs() + (theta * theta + 1.0).sqrt());
                let t = if theta == 0.0 { 1.0 } else { t };
                let c = 1.0 / (t * t + 1.0).sqrt();
                let s = t * c;
                for row in a.iter_mut() {
                    let (akp, akq) = (row[p], row[q]);
                    row[p] = c * akp - s * akq;
                    row[q] = s * akp + c * akq;
                }
                let (rp, rq) = (a[p], a[q]);
                for k in 0..4 {
                    a[p][k] = c * rp[k] - s * rq[k];
                    a[q][k] = s * rp[k] + c * rq[k];
                }
                for row in v.iter_mut() {
                    let (vkp, vkq) = (row[p], row[q]);
                    row[p] = c * vkp - s * vkq;
                    row[q] = s * vkp + c * vkq;
                }
            }
        }
    }
    ([a[0][0], a[1][1], a[2][2], a[3][3]], v)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn procrustes_recovers_a_similarity() {
        let x: Vec<DVec3> = (0..7)
            .map(|i| {
                let i = f64::from(i);
                DVec3::new(i.sin() * 3.0, (i * 0.7).cos(), i * 0.3 - 1.0)
            })
            .collect();
        let r =
            DMat3::from_quat(DQuat::from_axis_angle(DVec3::new(1.0, 2.0, -0.5).normalize(), 2.4));
        let t = DVec3::new(0.3, -5.0, 2.0);
        let y: Vec<DVec3> = x.iter().map(|p| 1.7 * (r * *p) + t).collect();
        let fit = procrustes(&x, &y);
        assert!((fit.scale - 1.7).abs() < 1e-12, "{}", fit.scale);
        assert!((fit.translation - t).length() < 1e-12);
        for (a, b) in x.iter().zip(&y) {
            assert!((fit.apply(*a) - *b).length() < 1e-12);
        }
        assert!((fit.rotation.determinant() - 1.0).abs() < 1e-12);
    }

    #[test]
    fn geodesic_of_a_known_turn() {
        let a = DQuat::from_rotation_y(0.3);
        let b = DQuat::from_rotation_y(0.3 + 1.0f64.to_radians() * 40.0);
        assert!((geodesic_deg(a, b) - 40.0).abs() < 1e-9);
        assert!((geodesic_deg(a, -a)).abs() < 1e-9);
    }
}
