//! `bvh clean` streamed from input to output in bounded memory, for the
//! steps that allow it: `--spikes` and `--one-euro` (with `--joints` and
//! `--strength`), alone or together, between a [`FrameReader`] and the
//! frame-at-a-time writer ([`WriteOptions::write_frame`]), into the
//! [`Output`] of a streamed edit (room for the header first, the real
//! header at the end). Before that header the output is shown the
//! reader's warnings ([`Output::accept`]: `bvh clean` refuses repairs that
//! invent or discard values without `--repair`).
//!
//! The output's bytes are those of [`clean`](super::clean) on the whole
//! clip, written by [`WriteOptions::write`], and the summary ([`Report`])
//! is the whole clip's:
//!
//! - one-euro alone reads the input once: the causal filter run a frame at
//!   a time ([`OneEuroFrames`], the whole clip's values bit for bit); each
//!   joint's largest rotation change is the angle of the filter's own
//!   correction at the frames whose angles changed, its position change
//!   the largest change of a position channel;
//! - spike repair (then one-euro, if asked) reads the input four times,
//!   keeping a few numbers per frame and one per joint-frame for the
//!   thresholds, never the clip: see `spikes` (this module's
//!   `stream/spikes.rs`) for the passes and the bound.
//!
//! Where the bytes would differ the stream gives up, having written
//! nothing the caller keeps ([`EditError::GaveUp`]), and the caller runs
//! the whole clip: a value that is not finite (the whole clip leaves that
//! joint's track alone, and its writer refuses the value), a skeleton
//! without channels, or options the whole clip's check refuses (it gives
//! the error).

use std::io::Write;

mod spikes;

use super::{JointChange, OneEuro, OneEuroFrames, Options, Report, Step};
use crate::edit::JointChannels;
use crate::edit::run::{EditError, Output};
use crate::error::Warning;
use crate::parse::{FrameReader, FrameSource};
use crate::write::WriteOptions;

/// Whether [`stream`] can run `options`: spike repair, one-euro or both,
/// and nothing else that changes motion.
pub fn streams(options: &Options) -> bool {
    let Options {
        spikes,
        butterworth,
        savgol,
        one_euro,
        joints: _,
        strength: _,
        remove_drift,
        ground,
        ground_over_time: _,
        lock_feet,
        flatten_feet: _,
        contacts: _,
        quality: _,
    } = options;
    (one_euro.is_some() || spikes.is_some())
        && butterworth.is_none()
        && savgol.is_none()
        && !remove_drift
        && !ground
        && !lock_feet
}

/// Text formatted before it goes to the output's body.
const FLUSH_AT: usize = 1 << 20;

/// A reader of the input from its start, each time it is called (the
/// input is read once for one-euro alone, four times with spikes).
pub type Open<'a, R> = dyn FnMut() -> crate::Result<FrameReader<R>> + 'a;

/// Cleans the frames the readers `open` gives read as `options` say into
/// `out`, a frame at a time (see the module documentation); returns the
/// summary and the reader's warnings. `release(n)` is told, after each
/// piece read, that the first `n` bytes of the input are read in this pass
/// (a mapped file's pages may be dropped; a new pass starts again from 0).
/// [`EditError::GaveUp`] when the whole clip must decide (the caller then
/// runs [`clean`](super::clean) on the loaded clip; what was begun in
/// `out` is to be dropped).
pub fn stream<R: FrameSource, O: Output>(
    open: &mut Open<'_, R>,
    options: &Options,
    out: &mut O,
    release: Option<&mut (dyn FnMut(usize) + Send)>,
) -> Result<(Report, Vec<Warning>), EditError<O::Error>> {
    if !streams(options) {
        return Err(EditError::GaveUp);
    }
    if let Some(k) = options.spikes {
        return spikes::stream(open, options, k, out, release);
    }
    let rdr = open().map_err(EditError::Read)?;
    one_euro(rdr, options, out, release)
}

/// One-euro alone, in one read.
fn one_euro<R: FrameSource, O: Output>(
    mut rdr: FrameReader<R>,
    options: &Options,
    out: &mut O,
    mut release: Option<&mut (dyn FnMut(usize) + Send)>,
) -> Result<(Report, Vec<Warning>), EditError<O::Error>> {
    let Some(p) = options.one_euro else {
        return Err(EditError::GaveUp);
    };
    let skel = rdr.skeleton().clone();
    let frame_time = rdr.frame_time();
    let fps = 1.0 / frame_time;
    let Ok(mut filter) =
        OneEuroFrames::new(&skel, p, fps, options.joints.as_deref(), &options.strength)
    else {
        return Err(EditError::GaveUp);
    };
    let layouts: Vec<JointChannels> = skel.joints().iter().map(JointChannels::of).collect();
    let write = WriteOptions::new();
    let mut room = Vec::new();
    let declared = rdr.frames_declared().map_or(0, |n| usize::try_from(n).unwrap_or(0));
    write.write_header(&skel, declared, frame_time, &mut room)?;
    let mut body = out.begin(&room).map_err(EditError::Output)?;

    let width = skel.n_channels();
    let mut input = vec![0.0; width];
    let mut frame = vec![0.0; width];
    let mut text: Vec<u8> = Vec::with_capacity(FLUSH_AT + FLUSH_AT / 4);
    // Per joint: the largest rotation change (degrees), position change,
    // and whether any channel changed.
    let mut most = vec![(0.0f64, 0.0f64, false); layouts.len()];
    let mut rot_most = vec![0.0f64; layouts.len()];
    let mut n = 0usize;
    while rdr.read_frame(&mut input).map_err(EditError::Read)? {
        if input.iter().any(|v| !v.is_finite()) {
            return Err(EditError::GaveUp);
        }
        frame.copy_from_slice(&input);
        filter.filter_measured(&mut frame, Some(&mut rot_most));
        measure(&layouts, &input, &frame, &mut most);
        write.write_frame(&frame, &mut text)?;
        n += 1;
        if text.len() >= FLUSH_AT {
            body.write_all(&text).map_err(EditError::Write)?;
            text.clear();
            if let Some(r) = release.as_deref_mut() {
                r(rdr.bytes_consumed());
            }
        }
    }
    body.write_all(&text).map_err(EditError::Write)?;
    body.flush().map_err(EditError::Write)?;
    let mut header = Vec::with_capacity(room.len());
    write.write_header(&skel, n, frame_time, &mut header)?;
    out.accept(rdr.warnings(), n).map_err(EditError::Output)?;
    out.finish(body, &room, &header).map_err(EditError::Output)?;

    let report = Report {
        steps: vec![one_euro_step(p, &most, &rot_most)],
        joint_names: skel.display_names(),
        notes: Vec::new(),
    };
    Ok((report, rdr.take_warnings()))
}

/// The one-euro step of a streamed clean's report, from what [`measure`]
/// kept per joint and the filter's largest rotation change per joint
/// (degrees).
fn one_euro_step(p: OneEuro, most: &[(f64, f64, bool)], rot_most: &[f64]) -> Step {
    let changes = most
        .iter()
        .enumerate()
        .filter(|(_, m)| m.2)
        .map(|(joint, &(_, position, _))| JointChange {
            joint,
            rotation_deg: rot_most[joint],
            position,
        })
        .collect();
    Step { name: super::one_euro_name(p), repaired: Vec::new(), spans: 0, changes }
}

/// Adds one frame's changes (`a` before, `b` after) to `most`: whether a
/// joint changed, and its largest position change.
fn measure(layouts: &[JointChannels], a: &[f64], b: &[f64], most: &mut [(f64, f64, bool)]) {
    for (c, m) in layouts.iter().zip(most.iter_mut()) {
        let ri = &c.rot_index[..c.n_rot as usize];
        if ri.iter().any(|&i| a[i].to_bits() != b[i].to_bits()) {
            m.2 = true;
        }
        for &i in &c.pos_index[..c.n_pos as usize] {
            if a[i].to_bits() != b[i].to_bits() {
                m.1 = m.1.max((a[i] - b[i]).abs());
                m.2 = true;
            }
        }
    }
}
