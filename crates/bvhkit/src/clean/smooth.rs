//! The smoothing steps of [`clean`](super::clean) on a whole clip, and the
//! one-euro step on frames as they arrive ([`OneEuroFrames`], what `bvh
//! record --one-euro` runs).
//!
//! **Which joints, how strongly.** [`Options::joints`](super::Options) is
//! the mask (joints outside it are copied bit for bit);
//! [`Options::strength`](super::Options) gives each joint a factor `s` in
//! `[0, 1]` (1 by default) that blends the filtered track with the
//! original: a rotation moves by `s` times what the filter changed, `q'_f =
//! q_f · exp(s · (v'_f − v_f))` (see [`filter`](super::filter) for `v`),
//! and a position channel becomes `p + s · (p' − p)`. `s = 1` is the full
//! filter (the filtered values themselves), `s = 0` leaves the joint bit
//! for bit, as if it were outside the mask. Entries are `(selector,
//! factor)`, applied in order, a later one overriding an earlier one for
//! the joints both select: a joint's name selects that joint alone,
//! `NAME/*` every joint below it (not itself) and `*` every joint.
//! `[("*", 0.6), ("Hips", 1.0), ("LeftHand", 0.3), ("LeftHand/*", 0.0)]`:
//! the root filtered fully, the body at 0.6, the left hand at 0.3, its
//! fingers not at all.
//!
//! **Work.** Each joint's tracks (its rotation's three components, its
//! position channels) are filtered on their own, so the joints run on
//! rayon's pool (the `parallel` feature); each writes columns of its own,
//! copied into the clip afterwards a piece of frames at a time. The result
//! does not depend on the thread count. The step's summary (each joint's
//! largest change) comes from its own correction, without a copy of the
//! clip before it: a rotation's change is the angle of `exp(s · (v' − v))`
//! at the frames whose channels changed.

use glam::{DQuat, DVec3};

use super::filter::{OneEuro, OneEuroState};
use super::{JointChange, RotationBuffers, log_track_into, rotations_into};
use crate::edit::JointChannels;
use crate::rotation::{quat_from_scaled_axis, quat_to_scaled_axis};
use crate::{Bvh, Error, Result, Skeleton};

/// Which joints the smoothing applies to: every joint, or those named.
pub(crate) fn joint_mask(skel: &Skeleton, names: Option<&[String]>) -> Result<Vec<bool>> {
    let Some(names) = names else { return Ok(vec![true; skel.len()]) };
    let mut mask = vec![false; skel.len()];
    for name in names {
        match skel.find(name) {
            Some(id) => mask[id.index()] = true,
            None => return Err(Error::invalid(format!("no joint named {name:?} (--joints)"))),
        }
    }
    Ok(mask)
}

/// Each joint's strength (see the module documentation): the entries'
/// factors over 1 by default, 0 outside `mask`. Fails on a selector that
/// names no joint and on a factor outside `[0, 1]`.
pub(crate) fn strengths(
    skel: &Skeleton,
    mask: &[bool],
    entries: &[(String, f64)],
) -> Result<Vec<f64>> {
    let mut s = vec![1.0; skel.len()];
    for (sel, factor) in entries {
        if !(0.0..=1.0).contains(factor) {
            return Err(Error::invalid(format!(
                "strength {factor} for {sel:?} is not between 0 and 1 (--strength)"
            )));
        }
        let range = if let Some(id) = skel.find(sel) {
            id.index()..id.index() + 1
        } else if sel == "*" {
            0..skel.len()
        } else if let Some(id) = sel.strip_suffix("/*").and_then(|p| skel.find(p)) {
            id.index() + 1..skel.subtree_end(id)
        } else {
            return Err(Error::invalid(format!(
                "no joint named {sel:?} (--strength takes NAME, NAME/* or *)"
            )));
        };
        s[range].fill(*factor);
    }
    for (x, &m) in s.iter_mut().zip(mask) {
        if !m {
            *x = 0.0;
        }
    }
    Ok(s)
}

/// What smoothing one joint gave: its channels' new columns (channel
/// index, one value per frame), notes, and its largest changes (rotation
/// in degrees, position channels in file units; `changed`: some channel's
/// bits differ from the input's).
struct Smoothed {
    columns: Vec<(usize, Vec<f64>)>,
    notes: Vec<String>,
    rot: f64,
    pos: f64,
    changed: bool,
}

/// Runs `filter` on each joint's rotation track (its three components, see
/// [`filter`](super::filter)) and on each of its position channels, blended
/// by the joint's `strength` (0: the joint is skipped), writing the results
/// back; tracks with non-finite values are left as they are (noted).
/// Returns the joints it changed with their largest changes, in file order
/// (what [`changes`](super::changes) measures of the clips before and
/// after, taken from the step's own correction: a rotation's change is the
/// angle of `exp(s · (v' − v))` at the frames whose channels changed).
pub(crate) fn smooth_tracks(
    bvh: &mut Bvh,
    layouts: &[JointChannels],
    strength: &[f64],
    filter: &(dyn Fn(&[f64]) -> Vec<f64> + Sync),
    notes: &mut Vec<String>,
) -> Vec<JointChange> {
    let names = bvh.skeleton().display_names();
    let width = bvh.motion().n_channels();
    let n = bvh.motion().n_frames();
    if n == 0 || width == 0 {
        return Vec::new();
    }
    let input = bvh.motion().values();
    let one = |sc: &mut Scratch, j: usize| -> Smoothed {
        let (c, s) = (&layouts[j], strength[j]);
        let mut out =
            Smoothed { columns: Vec::new(), notes: Vec::new(), rot: 0.0, pos: 0.0, changed: false };
        if s == 0.0 {
            return out;
        }
        if c.n_rot > 0 {
            // The joint's rotation channels gathered in one pass over the
            // rows (`k` a frame), then read contiguously.
            let k = c.n_rot as usize;
            sc.angles.clear();
            for row in input.chunks_exact(width) {
                sc.angles.extend(c.rot_index[..k].iter().map(|&i| row[i]));
            }
            if sc.angles.iter().all(|a| a.is_finite()) {
                let (cols, rot) = smooth_rotation(c, &sc.angles, s, filter, &mut sc.track);
                if let Some(rot) = rot {
                    out.changed = true;
                    out.rot = rot;
                }
                out.columns.extend(cols);
            } else {
                out.notes.push(format!("{}: rotation not smoothed (values not finite)", names[j]));
            }
        }
        for &i in &c.pos_index[..c.n_pos as usize] {
            let track: Vec<f64> = input.chunks_exact(width).map(|row| row[i]).collect();
            if !track.iter().all(|p| p.is_finite()) {
                out.notes.push(format!("{}: position not smoothed (values not finite)", names[j]));
                continue;
            }
            let y = filter(&track);
            let col = if s == 1.0 {
                y
            } else {
                track.iter().zip(y).map(|(&p, q)| p + s * (q - p)).collect()
            };
            for (&p, &q) in track.iter().zip(&col) {
                if p.to_bits() != q.to_bits() {
                    out.changed = true;
                    out.pos = out.pos.max((p - q).abs());
                }
            }
            out.columns.push((i, col));
        }
        out
    };
    let done: Vec<Smoothed> = crate::par::map_with_scratch(layouts.len(), Scratch::default, one);
    let columns: Vec<&(usize, Vec<f64>)> = done.iter().flat_map(|d| &d.columns).collect();
    notes.extend(done.iter().flat_map(|d| d.notes.iter().cloned()));
    let changes: Vec<JointChange> = done
        .iter()
        .enumerate()
        .filter(|(_, d)| d.changed)
        .map(|(joint, d)| JointChange { joint, rotation_deg: d.rot, position: d.pos })
        .collect();
    if columns.is_empty() {
        return changes;
    }
    // Copied in a piece of frames at a time (on the pool), each piece
    // (small enough to stay in cache) taking every column's values of its
    // frames, row by row.
    const PIECE: usize = 64;
    let values = bvh.motion_mut().values_mut();
    let copy = |(k, rows): (usize, &mut [f64])| {
        let f0 = k * PIECE;
        for (r, row) in rows.chunks_exact_mut(width).enumerate() {
            for (i, col) in &columns {
                row[*i] = col[f0 + r];
            }
        }
    };
    #[cfg(feature = "parallel")]
    {
        use rayon::prelude::*;
        values.par_chunks_mut(PIECE * width).enumerate().for_each(copy);
    }
    #[cfg(not(feature = "parallel"))]
    values.chunks_mut(PIECE * width).enumerate().for_each(copy);
    changes
}

/// Buffers of one worker of [`smooth_tracks`], kept from one joint to the
/// next (the same values as fresh ones; no fresh pages for each joint).
#[derive(Default)]
struct Scratch {
    /// The joint's rotation channels, `n_rot` a frame.
    angles: Vec<f64>,
    track: TrackBuffers,
}

/// The buffers of [`smooth_rotation`].
#[derive(Default)]
struct TrackBuffers {
    rot: RotationBuffers,
    q: Vec<DQuat>,
    v: Vec<DVec3>,
    comp: Vec<f64>,
}

/// One joint's rotation channels smoothed (channel index, column per
/// channel): its continuous track filtered, moved by `s` times what the
/// filter changed, written as the angles closest to the previous output
/// frame's (the input's at the first); frames the filter leaves alone keep
/// the input's angles bit for bit. `angles` holds the joint's rotation
/// channels alone, `c.n_rot` a frame. Also returns, when some angle's bits
/// changed, the largest rotation change (degrees) over those frames.
fn smooth_rotation(
    c: &JointChannels,
    angles: &[f64],
    s: f64,
    filter: &dyn Fn(&[f64]) -> Vec<f64>,
    b: &mut TrackBuffers,
) -> (Vec<(usize, Vec<f64>)>, Option<f64>) {
    let n_rot = c.n_rot as usize;
    // The joint's rotation channels alone, in a row of `n_rot`.
    let mut local = *c;
    local.rot_index = [0, 1, 2];
    rotations_into(&local, angles, n_rot, &mut b.rot, &mut b.q);
    log_track_into(&b.q, &mut b.v);
    let (q, v) = (&b.q, &b.v);
    let n = q.len();
    // Filtered in degrees, the channels' unit (the one-euro filter's speed
    // term depends on it).
    let mut comp = |k: usize| -> Vec<f64> {
        b.comp.clear();
        b.comp.extend(v.iter().map(|x| x[k].to_degrees()));
        filter(&b.comp)
    };
    let (x, y, z) = (comp(0), comp(1), comp(2));
    let mut cols: Vec<Vec<f64>> = vec![Vec::with_capacity(n); n_rot];
    let mut prev = [0.0; 3];
    let mut most: Option<f64> = None;
    for f in 0..n {
        let inp = local.angles(&angles[f * n_rot..(f + 1) * n_rot]);
        let d = (DVec3::new(x[f].to_radians(), y[f].to_radians(), z[f].to_radians()) - v[f]) * s;
        let angles = if d == DVec3::ZERO {
            inp
        } else {
            let mut row = inp;
            let near = if f == 0 { inp } else { prev };
            local.write_rotation(q[f] * quat_from_scaled_axis(d), Some(near), &mut row);
            if row[..n_rot].iter().zip(&inp).any(|(a, b)| a.to_bits() != b.to_bits()) {
                // The angle of exp(d), in [0°, 180°].
                let a = d.length() % std::f64::consts::TAU;
                let deg = a.min(std::f64::consts::TAU - a).to_degrees();
                most = Some(most.map_or(deg, |m| m.max(deg)));
            }
            row
        };
        for (col, a) in cols.iter_mut().zip(angles) {
            col.push(a);
        }
        prev = angles;
    }
    (c.rot_index[..n_rot].iter().copied().zip(cols).collect(), most)
}

/// One joint's one-euro state in [`OneEuroFrames`].
#[derive(Clone, Debug)]
struct Track {
    /// The rotation of the frame before; `None` before the first (or after
    /// a frame with non-finite angles, which restarts the track).
    prev_q: Option<DQuat>,
    /// The continuous rotation track `v` so far (radians).
    acc: DVec3,
    rot: [OneEuroState; 3],
    pos: [OneEuroState; 3],
}

/// The one-euro step of [`clean`](super::clean) run on one frame at a
/// time, as frames arrive (`bvh record --one-euro`): each frame gives the
/// same values as `clean` with only [`Options::one_euro`](super::Options)
/// (and the same joints and strengths) gives at that frame of the whole
/// clip, bit for bit. Where they differ: a joint whose values are not
/// finite at a frame passes through at that frame and its filter starts
/// again at the next (`clean` leaves such a joint's whole track alone).
///
/// ```
/// use bvhkit::Bvh;
/// use bvhkit::clean::{self, OneEuro, OneEuroFrames, Options};
/// let mut text = String::from("HIERARCHY
/// ROOT Hips { OFFSET 0 0 0 CHANNELS 6 Xposition Yposition Zposition Zrotation Xrotation Yrotation
///   End Site { OFFSET 0 10 0 } }
/// MOTION
/// Frames: 30
/// Frame Time: 0.0333333
/// ");
/// for f in 0..30 {
///     text += &format!("{} 0 0 {} 0 0\n", f % 3, f as f64 * 3.0 + (f % 2) as f64);
/// }
/// let bvh = Bvh::parse(&text)?;
/// let p = OneEuro { min_cutoff: 1.0, beta: 0.01, d_cutoff: 1.0 };
/// let whole = clean::clean(&bvh, &Options { one_euro: Some(p), ..Options::default() })?.0;
/// let mut live = OneEuroFrames::new(bvh.skeleton(), p, bvh.motion().fps(), None, &[])?;
/// for (f, frame) in bvh.motion().frames().enumerate() {
///     let mut frame = frame.to_vec();
///     live.filter(&mut frame);
///     assert_eq!(frame, whole.motion().frame(f));
/// }
/// # Ok::<(), bvhkit::Error>(())
/// ```
#[derive(Clone, Debug)]
pub struct OneEuroFrames {
    layouts: Vec<JointChannels>,
    strength: Vec<f64>,
    tracks: Vec<Track>,
    /// Channels a frame.
    width: usize,
    /// The previous output frame (empty before the first).
    prev_out: Vec<f64>,
}

impl OneEuroFrames {
    /// The filter for frames of `skeleton` at `fps` frames per second:
    /// `joints` the mask and `strength` the per-joint factors, as
    /// [`Options`](super::Options) takes them. Fails as [`clean`](super::clean)
    /// does on bad parameters, unknown joints or factors outside `[0, 1]`,
    /// and on a frame rate that is not a positive number.
    pub fn new(
        skeleton: &Skeleton,
        p: OneEuro,
        fps: f64,
        joints: Option<&[String]>,
        strength: &[(String, f64)],
    ) -> Result<OneEuroFrames> {
        super::filter::check_one_euro(p)?;
        if !(fps.is_finite() && fps > 0.0) {
            return Err(Error::invalid(format!(
                "one-euro needs a positive frame rate (got {fps})"
            )));
        }
        let mask = joint_mask(skeleton, joints)?;
        let strength = strengths(skeleton, &mask, strength)?;
        let layouts: Vec<JointChannels> = skeleton.joints().iter().map(JointChannels::of).collect();
        let fresh = OneEuroState::new(p, fps);
        let track = Track {
            prev_q: None,
            acc: DVec3::ZERO,
            rot: [fresh.clone(), fresh.clone(), fresh.clone()],
            pos: [fresh.clone(), fresh.clone(), fresh],
        };
        Ok(OneEuroFrames {
            tracks: vec![track; layouts.len()],
            width: skeleton.n_channels(),
            layouts,
            strength,
            prev_out: Vec::new(),
        })
    }

    /// Filters the next frame in place (`frame` holds every channel of the
    /// skeleton, in file order; a frame of another length is left as it is
    /// and not counted).
    pub fn filter(&mut self, frame: &mut [f64]) {
        self.filter_measured(frame, None);
    }

    /// [`OneEuroFrames::filter`], and, with `most` (one per joint), each
    /// joint's rotation change at this frame raised into `most` as the
    /// whole clip's step measures it: the angle of its correction, where
    /// the angles' bits changed (`clean::stream`'s summary).
    pub(crate) fn filter_measured(&mut self, frame: &mut [f64], mut most: Option<&mut [f64]>) {
        if frame.len() != self.width {
            return;
        }
        let first = self.prev_out.is_empty();
        for (j, ((c, t), &s)) in
            self.layouts.iter().zip(&mut self.tracks).zip(&self.strength).enumerate()
        {
            if s == 0.0 {
                continue;
            }
            if c.n_rot > 0 {
                let inp = c.angles(frame);
                if inp.iter().all(|a| a.is_finite()) {
                    let q = c.rotation(frame);
                    let restart = t.prev_q.is_none();
                    if let Some(prev) = t.prev_q {
                        t.acc += quat_to_scaled_axis(prev.inverse() * q);
                    } else {
                        t.acc = DVec3::ZERO;
                        t.rot.iter_mut().for_each(OneEuroState::reset);
                    }
                    t.prev_q = Some(q);
                    let x: [f64; 3] =
                        std::array::from_fn(|k| t.rot[k].filter(t.acc[k].to_degrees()));
                    let d = (DVec3::new(x[0].to_radians(), x[1].to_radians(), x[2].to_radians())
                        - t.acc)
                        * s;
                    if d != DVec3::ZERO {
                        let near = if first || restart { inp } else { c.angles(&self.prev_out) };
                        c.write_rotation(q * quat_from_scaled_axis(d), Some(near), frame);
                        if let Some(m) = most.as_deref_mut()
                            && c.angles(frame)
                                .iter()
                                .zip(&inp)
                                .any(|(a, b)| a.to_bits() != b.to_bits())
                        {
                            // As `smooth_rotation`: the angle of exp(d).
                            let a = d.length() % std::f64::consts::TAU;
                            m[j] = m[j].max(a.min(std::f64::consts::TAU - a).to_degrees());
                        }
                    }
                } else {
                    t.prev_q = None;
                }
            }
            for k in 0..c.n_pos as usize {
                let i = c.pos_index[k];
                let p = frame[i];
                if !p.is_finite() {
                    t.pos[k].reset();
                    continue;
                }
                let y = t.pos[k].filter(p);
                frame[i] = if s == 1.0 { y } else { p + s * (y - p) };
            }
        }
        self.prev_out.clear();
        self.prev_out.extend_from_slice(frame);
    }
}

#[cfg(test)]
mod tests {
    use super::super::{Butterworth, Options, changes, clean};
    use crate::Bvh;
    use crate::edit::JointChannels;

    /// The smoothing step's changes, taken from its own correction, are
    /// what measuring the clips before and after gives (`changes`): the
    /// same joints, rotation within 1e-5° (below), positions exactly.
    #[test]
    fn smoothing_reports_the_changes_measured_from_the_clips() {
        let mut text = String::from(
            "HIERARCHY\nROOT Hips { OFFSET 0 0 0 CHANNELS 6 Xposition Yposition Zposition Zrotation Xrotation Yrotation\n\
             JOINT Spine { OFFSET 0 10 0 CHANNELS 3 Zrotation Xrotation Yrotation\n\
             JOINT Head { OFFSET 0 10 0 CHANNELS 1 Xrotation End Site { OFFSET 0 5 0 } } }\n\
             JOINT Still { OFFSET 0 -10 0 CHANNELS 3 Zrotation Xrotation Yrotation End Site { OFFSET 0 -5 0 } } }\n\
             MOTION\nFrames: 90\nFrame Time: 0.0333333\n",
        );
        for f in 0..90 {
            let w = if f % 2 == 0 { 1.5 } else { -1.5 };
            let t = f as f64;
            text += &format!(
                "{} 0 {} {} {} {} {} {} {} {} 5 6 7\n",
                t * 0.3 + w,
                w * 0.1,
                t * 4.0 + w,
                10.0 + w,
                -20.0,
                30.0 * (t / 9.0).sin() + w,
                t * 2.5 - 170.0,
                w,
                40.0 + 2.0 * w,
            );
        }
        let bvh = Bvh::parse(&text).unwrap();
        let opts = Options {
            butterworth: Some(Butterworth { cutoff_hz: 3.0, order: 4 }),
            strength: vec![("Spine".into(), 0.5)],
            ..Options::default()
        };
        let (out, report) = clean(&bvh, &opts).unwrap();
        let layouts: Vec<JointChannels> =
            bvh.skeleton().joints().iter().map(JointChannels::of).collect();
        let width = bvh.motion().n_channels();
        let measured = changes(&layouts, bvh.motion().values(), out.motion().values(), width);
        let got = &report.steps[0].changes;
        let joints = |c: &[super::JointChange]| c.iter().map(|c| c.joint).collect::<Vec<_>>();
        assert_eq!(joints(got), joints(&measured));
        // Hips, Spine, Head (index 3 is Head's End Site); Still, constant,
        // may change in its last bits only.
        assert_eq!(joints(got)[..3], [0, 1, 2]);
        for (g, m) in got.iter().zip(&measured) {
            assert!(g.joint == 4 || g.rotation_deg > 0.1, "{g:?}");
            // `changes` takes the angle through acos of a dot product near
            // 1, good to about 1e-6° (the summary prints 0.001°).
            assert!((g.rotation_deg - m.rotation_deg).abs() < 1e-5, "{g:?} {m:?}");
            assert_eq!(g.position, m.position);
        }
    }
}
