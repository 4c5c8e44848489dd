//! An edit as a stream, in constant memory: the steps set up as
//! [`Steps`] (frame ranges, every Nth frame, per-frame maps; renaming and
//! End Sites change only the skeleton, the frames are copied), then the
//! input run through them a batch at a time.
//!
//! Three stages overlap: [`read_batches`](super::read_batches) parses a batch of frames (a
//! window of bytes in memory handed over without a copy by
//! `FrameReader::read_window`) while the steps run on the batch before,
//! both on rayon's pool; every map runs through [`crate::edit::ChunkedMap`]
//! on the pool; the batch is formatted in pieces on the pool, and a
//! writing thread appends them in order to the output's body while the
//! next batch is mapped. The bytes are those of one frame at a time
//! through one map, whatever the thread count or batch size.
//!
//! Steps that must see frames first do so through
//! [`super::lookahead::Lookahead`] (the up axis, the unit, the carrier and
//! first frame of root motion, the rest-pose frame, and `--portable`'s
//! constant channels, observed on every frame). The run gives up with
//! [`EditError::GaveUp`], having finished nothing, when such a step meets
//! a reader read once, a mirror's plane comes from the first frame, a
//! rest-pose frame is past the end, a root-motion frame fails or a guess
//! made on a sample is not confirmed (`Steps::failed`,
//! [`SampleCheck::holds`]).

use std::io::Write;

use crate::bvh::Bvh;
use crate::edit::FrameMap;
use crate::edit::axes::{Axes, AxesMap};
use crate::edit::joints::{self, RemoveJoints};
use crate::edit::plan::{GuessCheck, Stage, Steps};
use crate::edit::rest::RestMap;
use crate::edit::root::{CarrierSearch, Extract, InPlace, ToOrigin};
use crate::edit::scale::ScaleMap;
use crate::motion::Motion;
use crate::parse::{FrameReader, FrameSource};
use crate::skeleton::Skeleton;
use crate::units::{FrameSizes, UnitGuess};
use crate::write::WriteOptions;

use super::lookahead::{Lookahead, read_batches_consumed};
use super::sample::SampleCheck;
use super::{
    Edit, EditError, Note, Output, RestSource, Step, detected_up, frame_map, layout_refusal,
    mirror_of, renamed, root_up, stage_note, stops_reading, units_between, units_factor,
};

/// Values per piece of frames formatted by one task.
const FORMAT_VALUES: usize = 16 * 1024;

/// The steps of an edit set up for a clip: frame ranges and every Nth
/// frame as they are, renaming and End Sites on the skeleton alone, every
/// other step a map, looking at frames first through `again` where it
/// must.
struct Built {
    steps: Steps,
    /// The output skeleton and frame time.
    skel: Skeleton,
    frame_time: f64,
    /// Each step's notes, said after the reader's warnings in the order of
    /// the edit (the whole clip's order): those of its set-up, then its
    /// map's. `map_of[k]` is the step of the `k`th map.
    notes_of: Vec<Vec<Note>>,
    map_of: Vec<usize>,
    /// What the real pass must confirm of frames read from their lines alone.
    checks: Vec<SampleCheck<Steps>>,
}

/// The up axis a step detects from the frames as they leave `steps`
/// (`later` are the steps after it, whose frame ranges may stop the
/// reading early): gives up without bytes to read again or when the
/// sample cannot decide.
fn up_of<E>(
    again: Option<Lookahead<'_>>,
    steps: &Steps,
    n_in: usize,
    skel: &Skeleton,
    declared: Option<u64>,
    later: &[Step],
    checks: &mut Vec<SampleCheck<Steps>>,
) -> Result<crate::edit::axes::UpAxis, EditError<E>> {
    let Some(again) = again else { return Err(EditError::GaveUp) };
    let up = again
        .up(steps, n_in, skel, declared, stops_reading(later), checks)
        .map_err(EditError::Read)?;
    up.ok_or(EditError::GaveUp)
}

/// [`Built`] of `edit` on a clip of `skel` and `frame_time` (its frames of
/// `n_in` values, `Frames:` declaring `declared`).
fn build<E>(
    edit: &Edit,
    mut skel: Skeleton,
    mut frame_time: f64,
    declared: Option<u64>,
    again: Option<Lookahead<'_>>,
) -> Result<Built, EditError<E>> {
    let settings = &edit.settings;
    let plan = &edit.steps;
    let mode = settings.position_channels;
    let at = |e: crate::Error| EditError::Input(e.to_string());
    let n_in = skel.n_channels();
    let mut notes_of: Vec<Vec<Note>> = vec![Vec::new(); plan.len()];
    let mut steps = Steps::new();
    let mut map_of: Vec<usize> = Vec::with_capacity(plan.len());
    let mut checks: Vec<SampleCheck<Steps>> = Vec::new();
    for (i, t) in plan.iter().enumerate() {
        let notes = &mut notes_of[i];
        let stage = match t {
            Step::Frames(r) => {
                steps.push_range(*r);
                continue;
            }
            Step::Every(n) => {
                let before = frame_time;
                frame_time *= *n as f64;
                if !frame_time.is_finite() {
                    return Err(EditError::Input(format!(
                        "--every {n}: every {n} frames of a Frame Time of {} s is more seconds \
                         per frame than a number holds",
                        crate::error::num(before)
                    )));
                }
                steps.push_every(*n);
                continue;
            }
            // Names and End Sites: only the skeleton changes; the
            // channels keep their order, so the frames are copied.
            Step::Rename(how) => {
                skel = renamed(how, &skel)?;
                continue;
            }
            Step::StripEndSites => {
                skel = joints::strip_end_sites_skeleton(&skel).map_err(at)?;
                continue;
            }
            Step::AddEndSites => {
                skel = joints::add_end_sites_skeleton(&skel).map_err(at)?;
                continue;
            }
            Step::Units(u) => {
                // The guess, the whole clip's (the median size of the frames
                // as they reach this step), is made on sampled frames when
                // they can be read from their own lines and the real pass
                // will meet every frame that reaches this step, to measure
                // them and confirm it.
                if settings.source_units.is_none()
                    && !stops_reading(&plan[i + 1..])
                    && let Some(again) = again
                    && let Some(sampled) = again
                        .sampled_units(&steps, n_in, &skel, declared, mode)
                        .map_err(EditError::Read)?
                    && let Some(f) = units_between(sampled, *u)
                {
                    let check = GuessCheck::new(&skel, mode, sampled);
                    Stage::Units(ScaleMap::new(&skel, f)?, Box::new(check))
                } else {
                    // Otherwise a first pass over every frame.
                    let guess = || -> Result<UnitGuess, EditError<E>> {
                        let Some(again) = again else { return Err(EditError::GaveUp) };
                        let mut sizes = FrameSizes::new(&skel, mode);
                        // Each batch's frames measured eight at a time on SIMD
                        // lanes while the next batch is parsed.
                        let w = skel.n_channels();
                        again
                            .batches(&steps, n_in, |count, values| {
                                sizes.push_many(count, &values[..count * w]);
                                false
                            })
                            .map_err(EditError::Read)?;
                        Ok(sizes.guess())
                    };
                    let f = units_factor(settings, guess, *u, notes)?;
                    Stage::Scale(ScaleMap::new(&skel, f)?)
                }
            }
            Step::Mirror => {
                // The pairs and planes need only the skeleton when the rest
                // pose decides the plane.
                let rest = Bvh::new(
                    skel.clone(),
                    Motion::with_frames(frame_time, 0, skel.n_channels(), Vec::new())?,
                )?;
                let m = mirror_of(&rest, notes)?;
                if !m.rest_pose_decides() {
                    return Err(EditError::GaveUp);
                }
                Stage::Mirror(Box::new(m))
            }
            Step::RemoveJoints(list) => {
                let names: Vec<&str> = list.iter().map(String::as_str).collect();
                Stage::Remove(
                    Box::new(RemoveJoints::new(&skel, &names, mode).map_err(at)?),
                    Box::new(skel.clone()),
                )
            }
            Step::RestPose(source) => {
                let map = match source {
                    RestSource::Frame(frame) => {
                        let Some(again) = again else { return Err(EditError::GaveUp) };
                        // That frame as it reaches this step.
                        let mut k = 0;
                        let mut pose = None;
                        again
                            .frames(&steps, n_in, skel.n_channels(), |f| {
                                if k == *frame {
                                    pose = Some(f.to_vec());
                                }
                                k += 1;
                                pose.is_some()
                            })
                            .map_err(EditError::Read)?;
                        // Past the last frame: the whole clip says so.
                        let Some(pose) = pose else { return Err(EditError::GaveUp) };
                        RestMap::from_frame(&skel, &pose, mode)
                    }
                    RestSource::Skeleton(other) => {
                        RestMap::from_skeleton(&skel, other, mode).map_err(at)?
                    }
                };
                Stage::Rest(Box::new(map), Box::new(skel.clone()))
            }
            Step::Up(to) => {
                let from = match settings.source_up {
                    Some(a) => a,
                    None => {
                        let later = &plan[i + 1..];
                        let up = up_of(again, &steps, n_in, &skel, declared, later, &mut checks)?;
                        detected_up(up, notes)?
                    }
                };
                Stage::Axes(AxesMap::new(&skel, Axes::with_up(from), Axes::with_up(*to)))
            }
            Step::InPlaceRoot | Step::RootToOrigin | Step::ExtractRoot(_) => {
                let Some(again) = again else { return Err(EditError::GaveUp) };
                let up = match settings.source_up {
                    Some(a) => a,
                    None => {
                        let later = &plan[i + 1..];
                        let up =
                            up_of(Some(again), &steps, n_in, &skel, declared, later, &mut checks)?;
                        root_up(up, notes)
                    }
                };
                // The carrier and the first frame as they reach this step:
                // read until they are decided.
                let mut search = CarrierSearch::new(&skel);
                again
                    .frames(&steps, n_in, skel.n_channels(), |f| search.push(f))
                    .map_err(EditError::Read)?;
                let carrier = search
                    .carrier()
                    .ok_or_else(|| EditError::Input("the skeleton has no joints".to_string()))?;
                let first = search.first_frame();
                match t {
                    Step::InPlaceRoot => Stage::InPlace(Box::new(
                        InPlace::new(&skel, carrier, first, up).map_err(at)?,
                    )),
                    Step::RootToOrigin => Stage::ToOrigin(Box::new(
                        ToOrigin::new(&skel, carrier, first, up).map_err(at)?,
                    )),
                    Step::ExtractRoot(name) => Stage::Extract(Box::new(
                        Extract::new(&skel, carrier, first, up, name).map_err(at)?,
                    )),
                    _ => unreachable!("a root-motion step"),
                }
            }
            _ => frame_map(settings, t, &skel)?,
        };
        skel = stage.output_skeleton().clone();
        steps.push_map(stage);
        map_of.push(i);
    }
    if settings.portable {
        // After every step: the frames they leave observed first; its note
        // said last, as the whole clip says it.
        let Some(again) = again else { return Err(EditError::GaveUp) };
        let (map, report) = again
            .portable(&steps, n_in, &skel, mode)
            .map_err(EditError::Read)?
            .map_err(|e| EditError::Input(format!("--portable: {e}")))?;
        notes_of.push(report.describe(&skel).map(Note::Said).into_iter().collect());
        map_of.push(plan.len());
        let stage = Stage::Portable(Box::new(map));
        skel = stage.output_skeleton().clone();
        steps.push_map(stage);
    }
    Ok(Built { steps, skel, frame_time, notes_of, map_of, checks })
}

/// Runs `edit` frame by frame over `rdr` into `out`; `again` reads the
/// input again from the start for the steps that look at frames first
/// (`None`: they give up). `release`, when given, is called after each
/// batch of the real pass with the offset of the input before which the
/// pass will never read again, increasing (the search for sampled lines
/// before it calls it too, through `again`: see
/// `Edit::stream_bytes_releasing`).
pub(super) fn run<R: FrameSource + Send, O: Output>(
    edit: &Edit,
    mut rdr: FrameReader<R>,
    again: Option<Lookahead<'_>>,
    out: &mut O,
    release: Option<&(dyn Fn(usize) + Sync)>,
) -> Result<Vec<Note>, EditError<O::Error>> {
    let n_in = rdr.skeleton().n_channels();
    let declared = rdr.frames_declared();
    let rereadable = again.is_some();
    let built = build(edit, rdr.skeleton().clone(), rdr.frame_time(), declared, again);
    let Built { mut steps, skel, frame_time, mut notes_of, map_of, mut checks } = match built {
        // A step set up on frames a range before it leaves none of may
        // fail where the whole clip stops at that range's own error
        // first: with bytes to read again, the whole clip decides.
        Err(EditError::Input(_))
            if rereadable && edit.steps.iter().any(|s| matches!(s, Step::Frames(_))) =>
        {
            return Err(EditError::GaveUp);
        }
        r => r?,
    };
    let opts = WriteOptions::new();
    let n_width = skel.n_channels();
    // The header the frame count the frame steps should leave would have:
    // an output written in place leaves room for it.
    let mut room = Vec::new();
    let expected = steps.expected(declared);
    opts.write_header(&skel, expected, frame_time, &mut room)?;
    let mut body = out.begin(&room).map_err(EditError::Output)?;
    let mut n_out = 0usize;
    // Whether the reading went on to the end (no frame range stopped it).
    let mut ended = true;
    std::thread::scope(|scope| -> Result<(), EditError<O::Error>> {
        // A thread of its own writes each batch's formatted pieces while
        // this one maps and formats the next (the buffers come back to be
        // reused).
        let (full_tx, full_rx) = std::sync::mpsc::sync_channel::<Vec<Vec<u8>>>(1);
        let (empty_tx, empty_rx) = std::sync::mpsc::channel::<Vec<Vec<u8>>>();
        // Shared with the pool's workers, where the batches are mapped.
        let empty_rx = std::sync::Mutex::new(empty_rx);
        let file = &mut body;
        let writer = scope.spawn(move || -> std::io::Result<()> {
            for pieces in full_rx {
                for p in &pieces {
                    file.write_all(p)?;
                }
                let _ = empty_tx.send(pieces);
            }
            Ok(())
        });
        let mut a: Vec<f64> = Vec::new();
        let read = read_batches_consumed(&mut rdr, |frames, batch, consumed| {
            for c in &mut checks {
                c.batch(frames, batch);
            }
            let left = steps.run(frames, batch, n_in, &mut a);
            ended = left.more;
            let values = if left.in_batch { batch } else { &a[..] };
            let mut pieces: Vec<Vec<u8>> =
                empty_rx.lock().ok().and_then(|rx| rx.try_recv().ok()).unwrap_or_default();
            format_frames(&opts, values, left.count, n_width, &mut pieces)?;
            if full_tx.send(pieces).is_err() {
                return Err(EditError::Other("the writing thread stopped".to_string()));
            }
            n_out += left.count;
            // The batch's values are parsed: its bytes are never read again.
            if let Some(release) = release {
                release(consumed);
            }
            Ok::<bool, EditError<O::Error>>(left.more)
        });
        drop(full_tx);
        let written = writer
            .join()
            .map_err(|_| EditError::Other("the writing thread panicked".to_string()))?;
        // The writer's own error first (a full disk stops the mapping too).
        written.map_err(EditError::Write)?;
        read?.map_err(EditError::Read)
    })?;
    if steps.failed() {
        return Err(EditError::GaveUp);
    }
    // Frames read from their lines alone that were not the reader's (or a
    // count other than the sample's): the whole clip decides.
    if !checks.iter().all(|c| c.holds(ended)) {
        return Err(EditError::GaveUp);
    }
    // Each frame range against the frames that reached it (its step's
    // notes come first: no map is set up by a frame step).
    let range_steps = edit.steps.iter().enumerate().filter(|(_, s)| matches!(s, Step::Frames(_)));
    for ((span, n, last), (i, _)) in steps.ranges_reached(ended).into_iter().zip(range_steps) {
        if last && let Some(note) = span.check(n).map_err(EditError::Input)? {
            notes_of[i].push(Note::Said(note));
        }
    }
    for (m, &i) in steps.maps().zip(&map_of) {
        layout_refusal(&edit.settings, m)?;
        notes_of[i].extend(stage_note(m).map(Note::Said));
    }
    let frames_read = usize::try_from(rdr.frames_read()).unwrap_or(usize::MAX);
    out.accept(rdr.warnings(), frames_read).map_err(EditError::Output)?;
    let mut notes: Vec<Note> = rdr.take_warnings().into_iter().map(Note::Warning).collect();
    notes.extend(notes_of.into_iter().flatten());
    let mut header = Vec::new();
    opts.write_header(&skel, n_out, frame_time, &mut header)?;
    out.finish(body, &room, &header).map_err(EditError::Output)?;
    Ok(notes)
}

/// Formats `count` frames of `width` values into `pieces`, on rayon's pool
/// in pieces of whole frames, to be written in order.
fn format_frames(
    opts: &WriteOptions,
    values: &[f64],
    count: usize,
    width: usize,
    pieces: &mut Vec<Vec<u8>>,
) -> crate::Result<()> {
    let per_piece = (FORMAT_VALUES / width.max(1)).max(1);
    let n_pieces = count.div_ceil(per_piece);
    pieces.resize_with(n_pieces, Vec::new);
    let piece = |p: usize, line: &mut Vec<u8>| -> crate::Result<()> {
        line.clear();
        for f in p * per_piece..((p + 1) * per_piece).min(count) {
            opts.write_frame(&values[f * width..(f + 1) * width], line)?;
        }
        Ok(())
    };
    #[cfg(feature = "parallel")]
    {
        use rayon::prelude::*;
        pieces.par_iter_mut().enumerate().try_for_each(|(p, line)| piece(p, line))
    }
    #[cfg(not(feature = "parallel"))]
    {
        pieces.iter_mut().enumerate().try_for_each(|(p, line)| piece(p, line))
    }
}
