//! Cleaning captured motion: spike repair, smoothing, drift, ground and
//! foot locking, on a whole clip in memory, the skeleton and the frame count
//! unchanged.
//!
//! [`clean`] applies the steps [`Options`] asks for in one fixed order:
//!
//! 1. glitch frames, then spikes ([`spikes`]): whole frames, then
//!    joint-frames, that leave the motion around them and come back,
//!    replaced by interpolation (SLERP for rotations);
//! 2. Butterworth, 3. Savitzky-Golay, 4. one-euro ([`filter`]): each joint's
//!    rotation as a continuous quaternion track (log map around the frame
//!    before) and its position channels;
//! 5. drift removal, 6. ground, constant or over time (`drift.rs`): the
//!    root's position channels;
//! 7. foot locking ([`footlock`]): the feet in contact pinned by two-bone IK
//!    of the legs, last so that nothing after it moves the feet again.
//!
//! Rotations go back to each joint's own Euler channels, in its own order:
//! smoothed tracks as the angles closest to the output's previous frame
//! (the input's at the first), so they have no ±180° jump even where the
//! input flips; repaired and locked frames closest to the input's angles at
//! the same frame. Joints outside
//! [`Options::joints`], joints a step leaves alone and every channel no step
//! touches stay bit for bit. `docs/cleaning.md` in the repository gives the
//! formulas and defaults.
//!
//! # Example
//! ```
//! use bvhkit::Bvh;
//! use bvhkit::clean::{self, Butterworth, Options};
//! let mut text = String::from("HIERARCHY
//! ROOT Hips { OFFSET 0 0 0 CHANNELS 6 Xposition Yposition Zposition Zrotation Xrotation Yrotation
//!   End Site { OFFSET 0 10 0 } }
//! MOTION
//! Frames: 60
//! Frame Time: 0.0333333
//! ");
//! for f in 0..60 {
//!     let wobble = if f % 2 == 0 { 1.0 } else { -1.0 };
//!     text += &format!("0 0 0 {} 0 0\n", f as f64 * 3.0 + wobble);
//! }
//! let bvh = Bvh::parse(&text)?;
//! let opts = Options { butterworth: Some(Butterworth { cutoff_hz: 3.0, order: 4 }), ..Options::default() };
//! let (out, report) = clean::clean(&bvh, &opts)?;
//! // The one-frame wobble is gone, the turn stays.
//! let z = out.motion().frame(30)[3];
//! assert!((z - 90.0).abs() < 0.2, "{z}");
//! assert_eq!(report.steps.len(), 1);
//! # Ok::<(), bvhkit::Error>(())
//! ```

mod drift;
pub mod filter;
pub mod footlock;
mod smooth;
pub mod spikes;
pub mod stream;

use std::fmt;

use glam::{DQuat, DVec3};

use crate::edit::JointChannels;
use crate::error::num;
use crate::rotation::quat_to_scaled_axis;
use crate::{Bvh, Error, Result, quality};

pub use self::filter::{Butterworth, OneEuro, SavGol};
pub use self::footlock::{ContactSpan, Locked, LockedSpan, lock_feet_in, parse_contacts};
pub use self::smooth::OneEuroFrames;

/// What [`clean`] does; `Options::default()` does nothing.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Options {
    /// Repair spikes: joint-frames whose deviation from their neighbours is
    /// above median + `k` × MAD of the joint's deviations (`Some(k)`).
    pub spikes: Option<f64>,
    /// Zero-phase Butterworth low-pass.
    pub butterworth: Option<Butterworth>,
    /// Savitzky-Golay smoothing.
    pub savgol: Option<SavGol>,
    /// One-euro filtering (causal).
    pub one_euro: Option<OneEuro>,
    /// The joints the smoothing filters apply to, by name; `None`: every
    /// joint.
    pub joints: Option<Vec<String>>,
    /// How strongly the smoothing filters apply per joint: `(selector,
    /// factor)` in order, a later entry overriding an earlier one; the
    /// selector is a joint's name (that joint), `NAME/*` (every joint
    /// below it) or `*` (every joint); the factor, in `[0, 1]`, blends
    /// the filtered track with the original (1, the default: the full
    /// filter; 0: the joint unchanged). See `smooth.rs`.
    pub strength: Vec<(String, f64)>,
    /// Remove the root's horizontal drift (end matched to start).
    pub remove_drift: bool,
    /// Put the contact ground at height 0 (a constant root offset).
    pub ground: bool,
    /// With `ground`: follow the ground over time (a smooth curve from the
    /// feet in contact, see `docs/cleaning.md`) instead of one constant.
    pub ground_over_time: bool,
    /// Pin the feet in contact by two-bone IK of the legs.
    pub lock_feet: bool,
    /// With `lock_feet`: in each locked span (with its ramps) the foot
    /// turned about the ankle to its planted roll and pitch (medians over
    /// its spans) where that keeps its toe in place (see `footlock.rs`);
    /// the ankles unchanged.
    pub flatten_feet: bool,
    /// The contact spans foot locking pins (`--contacts FILE`); `None`:
    /// those [`quality::lint`] finds (its default ground taken as
    /// [`quality::Ground::Pooled`]: `footlock`'s **Contacts**).
    pub contacts: Option<Vec<ContactSpan>>,
    /// How the feet, their contacts, the units and the up axis are found
    /// (drift, ground, foot locking): [`quality::lint`]'s options.
    pub quality: quality::Options,
}

/// The default `k` of `--spikes`.
pub const DEFAULT_SPIKE_K: f64 = spikes::DEFAULT_K;

/// How much a step changed one joint.
#[derive(Clone, Debug, PartialEq)]
pub struct JointChange {
    /// The joint (index into the skeleton, file order).
    pub joint: usize,
    /// Largest change of its local rotation over the frames (degrees).
    pub rotation_deg: f64,
    /// Largest change of one of its position channels (file units).
    pub position: f64,
}

/// What one step of [`clean`] did.
#[derive(Clone, Debug, PartialEq)]
pub struct Step {
    /// The step and its parameters, as the command names them
    /// (`butterworth 6 Hz, order 4`).
    pub name: String,
    /// Joint-frames repaired (spikes), as (joint, frame).
    pub repaired: Vec<(usize, usize)>,
    /// Contact spans locked (foot locking).
    pub spans: usize,
    /// Joints the step changed, with their largest changes, in file order.
    pub changes: Vec<JointChange>,
}

/// What [`clean`] did, step by step, in the order the steps ran.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Report {
    /// The steps.
    pub steps: Vec<Step>,
    /// Joint names, file order (for printing).
    pub joint_names: Vec<String>,
    /// Remarks (tracks skipped and why).
    pub notes: Vec<String>,
}

impl fmt::Display for Report {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for s in &self.steps {
            write!(f, "{}: {} joint(s) changed", s.name, s.changes.len())?;
            if s.name == "lock feet" {
                write!(f, ", {} contact span(s) locked", s.spans)?;
            }
            if s.name.starts_with("spikes") || s.name.starts_with("glitch frames") {
                let frames: std::collections::BTreeSet<usize> =
                    s.repaired.iter().map(|r| r.1).collect();
                write!(
                    f,
                    ", {} joint-frame(s) repaired in {} frame(s)",
                    s.repaired.len(),
                    frames.len()
                )?;
            }
            writeln!(f)?;
            let mut worst: Vec<&JointChange> = s.changes.iter().collect();
            worst.sort_by(|a, b| b.rotation_deg.total_cmp(&a.rotation_deg));
            for c in worst.iter().take(5) {
                let name = self.joint_names.get(c.joint).map_or("?", String::as_str);
                write!(f, "  {name}: up to {:.3}°", c.rotation_deg)?;
                if c.position > 0.0 {
                    write!(f, ", {:.4} units", c.position)?;
                }
                writeln!(f)?;
            }
            if worst.len() > 5 {
                writeln!(f, "  ... and {} more joint(s)", worst.len() - 5)?;
            }
        }
        for n in &self.notes {
            writeln!(f, "note: {n}")?;
        }
        Ok(())
    }
}

/// Cleans `bvh` as `options` say (see the module documentation); returns
/// the cleaned clip and what each step did. Fails, before changing
/// anything, on options that cannot apply (an unknown joint, a window
/// longer than the clip, a cut-off above the Nyquist frequency).
pub fn clean(bvh: &Bvh, options: &Options) -> Result<(Bvh, Report)> {
    let mut out = bvh.clone();
    let report = clean_in_place(&mut out, options)?;
    Ok((out, report))
}

/// [`clean`] on `bvh` itself, without a copy of the clip (what `bvh clean`
/// runs): the same values and report. On an error (options that cannot
/// apply) `bvh` is left as it was.
pub fn clean_in_place(bvh: &mut Bvh, options: &Options) -> Result<Report> {
    let skel = bvh.skeleton();
    let n = bvh.motion().n_frames();
    let fps = bvh.motion().fps();
    let mask = smooth::joint_mask(skel, options.joints.as_deref())?;
    let strength = smooth::strengths(skel, &mask, &options.strength)?;
    // Check every option before the first step runs.
    let butter_ba = match options.butterworth {
        Some(b) => {
            let wn = b.cutoff_hz / (fps / 2.0);
            if !(b.cutoff_hz > 0.0 && wn < 1.0) {
                return Err(Error::invalid(format!(
                    "Butterworth cut-off {} Hz must be above 0 and below the Nyquist frequency {} Hz",
                    num(b.cutoff_hz),
                    num(fps / 2.0)
                )));
            }
            let (bb, aa) = filter::butter(b.order, wn)?;
            if n <= filter::filtfilt_padlen(&bb, &aa) {
                return Err(Error::invalid(format!(
                    "a Butterworth filter of order {} needs more than {} frames (the clip has {n})",
                    b.order,
                    filter::filtfilt_padlen(&bb, &aa)
                )));
            }
            Some((bb, aa))
        }
        None => None,
    };
    if let Some(s) = options.savgol {
        filter::check_savgol(s, n)?;
    }
    if let Some(p) = options.one_euro {
        filter::check_one_euro(p)?;
    }
    if let Some(k) = options.spikes
        && !(k > 0.0 && k.is_finite())
    {
        return Err(Error::invalid(format!("spike k must be a positive number (got {})", num(k))));
    }
    if let Some(c) = &options.contacts {
        footlock::check_contacts(bvh, c)?;
    }
    // A misspelt foot would leave the feet found by name (or none) in its
    // place without a word, as `bvh lint --feet` refuses it.
    if let Some(missing) =
        options.quality.feet.iter().flatten().find(|f| skel.find(f.as_str()).is_none())
    {
        return Err(Error::invalid(format!("no joint named {missing:?} (--feet)")));
    }
    if let Some(c) = &options.contacts {
        footlock::check_contact_feet(bvh, c, &options.quality)?;
    }

    let mut report =
        Report { steps: Vec::new(), joint_names: skel.display_names(), notes: Vec::new() };
    let layouts: Vec<JointChannels> = skel.joints().iter().map(JointChannels::of).collect();
    let out = bvh;

    // Runs one step on `out` and records it: `run` changes the clip, adds
    // its notes and returns the joint-frames it repaired and the contact
    // spans it locked; the largest change per joint is measured against
    // the clip before it.
    let step = |name: String, out: &mut Bvh, report: &mut Report, run: &mut StepRun<'_>| {
        let before = out.motion().values().to_vec();
        let (repaired, spans) = run(out, &mut report.notes);
        let changes = changes(&layouts, &before, out.motion().values(), out.motion().n_channels());
        report.steps.push(Step { name, repaired, spans, changes });
    };
    let smooth = |name: String,
                  out: &mut Bvh,
                  report: &mut Report,
                  f: &(dyn Fn(&[f64]) -> Vec<f64> + Sync)| {
        // The step measures its own changes: no copy of the clip before it.
        let changes = smooth::smooth_tracks(out, &layouts, &strength, f, &mut report.notes);
        report.steps.push(Step { name, repaired: Vec::new(), spans: 0, changes });
    };

    if let Some(k) = options.spikes {
        step(format!("glitch frames (k = {})", num(k)), out, &mut report, &mut |out, _| {
            (spikes::repair_frames(out, &layouts, k).1, 0)
        });
        step(format!("spikes (k = {})", num(k)), out, &mut report, &mut |out, _| {
            (spikes::repair(out, &layouts, k), 0)
        });
    }
    if let (Some(b), Some((bb, aa))) = (options.butterworth, &butter_ba) {
        // The length was checked above: filtfilt cannot fail here.
        let f = |x: &[f64]| filter::filtfilt(bb, aa, x).unwrap_or_else(|_| x.to_vec());
        smooth(
            format!("butterworth {} Hz, order {}", num(b.cutoff_hz), b.order),
            out,
            &mut report,
            &f,
        );
    }
    if let Some(s) = options.savgol {
        let f = |x: &[f64]| filter::savgol(x, s).unwrap_or_else(|_| x.to_vec());
        smooth(format!("savgol window {}, order {}", s.window, s.poly), out, &mut report, &f);
    }
    if let Some(p) = options.one_euro {
        let f = |x: &[f64]| filter::one_euro(x, p, fps);
        smooth(one_euro_name(p), out, &mut report, &f);
    }
    if let (true, Some(root)) = (options.remove_drift || options.ground, layouts.first()) {
        let lint = quality::contacts(out, &options.quality);
        if options.remove_drift {
            step("remove drift".into(), out, &mut report, &mut |out, notes| {
                notes.extend(drift::remove_drift(out, root, lint.up));
                (Vec::new(), 0)
            });
        }
        if options.ground && options.ground_over_time {
            // Measured after drift removal, which moves the feet too.
            let lint = quality::contacts(out, &options.quality);
            let curve = drift::ground_curve(&lint, &options.quality);
            let height: Option<Vec<f64>> =
                curve.map(|c| c.iter().map(|g| g / lint.metres_per_unit).collect());
            step("ground over time".into(), out, &mut report, &mut |out, notes| {
                notes.extend(drift::ground_over_time(out, root, lint.up, height.as_deref()));
                (Vec::new(), 0)
            });
        } else if options.ground {
            let height = lint.ground / lint.metres_per_unit;
            step("ground".into(), out, &mut report, &mut |out, notes| {
                notes.extend(drift::ground(out, root, lint.up, height));
                (Vec::new(), 0)
            });
        }
    }
    if options.lock_feet {
        step("lock feet".into(), out, &mut report, &mut |out, notes| {
            let locked = footlock::lock(out, &layouts, options, 0..n, None, None);
            notes.extend(locked.notes);
            (Vec::new(), locked.spans.len())
        });
    }
    Ok(report)
}

/// The one-euro step's name in the summary (the whole clip's and the
/// stream's, [`stream`]).
fn one_euro_name(p: OneEuro) -> String {
    format!(
        "one-euro min cut-off {} Hz, beta {}, d cut-off {} Hz",
        num(p.min_cutoff),
        num(p.beta),
        num(p.d_cutoff)
    )
}

/// A step's work in [`clean`]: changes the clip, adds its notes, and
/// returns the joint-frames it repaired and the contact spans it locked.
type StepRun<'a> = dyn FnMut(&mut Bvh, &mut Vec<String>) -> (Vec<(usize, usize)>, usize) + 'a;

/// Every frame's local rotation of joint `c` (`values` frame-major,
/// `width` channels a frame).
/// The half angles' sines and cosines are taken for the whole track at once
/// (`sin_cos_deg_slice`, bit for bit `sin_cos_deg`), so each rotation has
/// the bits of `c.rotation(frame)`.
pub(crate) fn rotations(c: &JointChannels, values: &[f64], width: usize) -> Vec<DQuat> {
    let mut q = Vec::new();
    rotations_into(c, values, width, &mut RotationBuffers::default(), &mut q);
    q
}

/// The buffers of [`rotations_into`], kept from one track to the next.
#[derive(Default)]
pub(crate) struct RotationBuffers {
    half: Vec<f64>,
    sin: Vec<f64>,
    cos: Vec<f64>,
}

/// [`rotations`] into `q` (cleared first), through `b`'s buffers: the same
/// bits, no fresh memory once the buffers have held a track.
pub(crate) fn rotations_into(
    c: &JointChannels,
    values: &[f64],
    width: usize,
    b: &mut RotationBuffers,
    q: &mut Vec<DQuat>,
) {
    q.clear();
    let k = c.n_rot as usize;
    if k == 0 {
        q.resize(values.len().checked_div(width).unwrap_or(0), DQuat::IDENTITY);
        return;
    }
    b.half.clear();
    b.half.extend(
        values
            .chunks_exact(width)
            .flat_map(|fr| c.rot_index[..k].iter().map(move |&i| 0.5 * fr[i])),
    );
    let len = b.half.len();
    b.sin.clear();
    b.sin.resize(len, 0.0);
    b.cos.clear();
    b.cos.resize(len, 0.0);
    crate::rotation::sin_cos_deg_slice(&b.half, &mut b.sin, &mut b.cos);
    q.extend(
        b.sin
            .chunks_exact(k)
            .zip(b.cos.chunks_exact(k))
            .map(|(s, co)| crate::rotation::euler_to_quat_sin_cos(&c.rot_axes[..k], s, co)),
    );
}

/// The continuous rotation-vector track of `q` (radians): the log map of
/// each frame's step from the one before, summed, from 0 at frame 0; into
/// `v` (cleared first).
pub(crate) fn log_track_into(q: &[DQuat], v: &mut Vec<DVec3>) {
    v.clear();
    let mut acc = DVec3::ZERO;
    for (f, &qf) in q.iter().enumerate() {
        if f > 0 {
            acc += quat_to_scaled_axis(q[f - 1].inverse() * qf);
        }
        v.push(acc);
    }
}

/// The joints whose channels differ between `a` and `b`, with their
/// largest rotation change (degrees) and position-channel change; each
/// joint on its own (on rayon's pool with the `parallel` feature), its
/// rotations taken a track at a time ([`rotations`]) where any differ.
pub(crate) fn changes(
    layouts: &[JointChannels],
    a: &[f64],
    b: &[f64],
    width: usize,
) -> Vec<JointChange> {
    if width == 0 {
        return Vec::new();
    }
    // Which channels differ at all, in one pass over the rows (a joint
    // whose channels all keep their bits is skipped without reading its
    // columns again).
    let mut differ = vec![false; width];
    for (fa, fb) in a.chunks_exact(width).zip(b.chunks_exact(width)) {
        for ((d, x), y) in differ.iter_mut().zip(fa).zip(fb) {
            *d |= x.to_bits() != y.to_bits();
        }
    }
    let one = |(j, c): (usize, &JointChannels)| -> Option<JointChange> {
        let touched = c.rot_index[..c.n_rot as usize]
            .iter()
            .chain(&c.pos_index[..c.n_pos as usize])
            .any(|&i| differ[i]);
        if !touched {
            return None;
        }
        let (mut rot, mut pos) = (0.0f64, 0.0f64);
        let ri = &c.rot_index[..c.n_rot as usize];
        let differs =
            |fa: &[f64], fb: &[f64]| ri.iter().any(|&i| fa[i].to_bits() != fb[i].to_bits());
        let rows = || a.chunks_exact(width).zip(b.chunks_exact(width));
        let mut any = rows().any(|(fa, fb)| differs(fa, fb));
        if any {
            let (qa, qb) = (rotations(c, a, width), rotations(c, b, width));
            for (f, (fa, fb)) in rows().enumerate() {
                if differs(fa, fb) {
                    let d = qa[f].angle_between(qb[f]).to_degrees();
                    rot = rot.max(if d.is_nan() { f64::INFINITY } else { d });
                }
            }
        }
        for (fa, fb) in rows() {
            for &i in &c.pos_index[..c.n_pos as usize] {
                if fa[i].to_bits() != fb[i].to_bits() {
                    any = true;
                    pos = pos.max((fa[i] - fb[i]).abs());
                }
            }
        }
        any.then_some(JointChange { joint: j, rotation_deg: rot, position: pos })
    };
    #[cfg(feature = "parallel")]
    {
        use rayon::prelude::*;
        layouts.par_iter().enumerate().filter_map(one).collect()
    }
    #[cfg(not(feature = "parallel"))]
    {
        layouts.iter().enumerate().filter_map(one).collect()
    }
}
