//! `bvh edit` as a stream, in constant memory: the plan's transforms set
//! up as the core's [`Steps`] (frame ranges, `--every`, per-frame maps;
//! renaming and End Sites change only the skeleton, the frames are
//! copied), then the input run through them a batch at a time.
//!
//! A regular file is memory-mapped and scanned in place
//! (`io::Input::open_stream`, `ReadOptions::frame_reader_slice`); standard
//! input and pipes are read a chunk at a time. `io::read_batches` parses a
//! batch of frames (a mapped file's window, handed over without a copy by
//! `FrameReader::read_window`) while the steps run on the batch before,
//! both on rayon's pool (`rayon::join`, the loop itself on a worker, so the
//! parse, its halves and the maps share the cores by work stealing); every
//! map runs through `edit::ChunkedMap` on the pool; the batch is formatted
//! in pieces on the pool, and a writing thread appends them in order while
//! the next batch is mapped: into the output's own temporary file after
//! room left for the header (sized for the frame count the frame steps
//! leave of `Frames:`, [`Steps::expected`]), which is written into that
//! room at the end (when its size came out otherwise, header + frames are
//! copied file to file into a new temporary file,
//! `io::write_atomic_with_body`, `copy_file_range`); standard output, FIFOs
//! and devices get the header and then the frames from an anonymous
//! temporary file. The bytes are those of one frame at a time through one
//! map, whatever the thread count or batch size.
//!
//! Transforms that must see frames first do so through [`super::lookahead`]
//! (the up axis, the unit, the carrier and first frame of root motion, the
//! `--rest-pose` frame). A streamed edit's notes come in the whole clip's
//! order: the reader's warnings, then each transform's set-up notes and its
//! map's. [`edit_stream`] gives up with [`NEEDS_WHOLE_CLIP`], having written
//! nothing, when such a transform meets standard input or a pipe, a
//! mirror's plane comes from the first frame, a `--rest-pose` frame is past
//! the end, a root-motion frame fails or a guess made on a sample is not
//! confirmed (`Steps::failed`, `SampleCheck::holds`): the whole-clip path,
//! [`super::whole`], then gives the result, or the error with its frame.

use std::io::{Seek, SeekFrom, Write};
use std::path::Path;

use anyhow::{Context, Result, anyhow, bail};
use bvhkit::edit::FrameMap;
use bvhkit::edit::axes::{Axes, AxesMap};
use bvhkit::edit::joints::RemoveJoints;
use bvhkit::edit::plan::{GuessCheck, Stage, Steps};
use bvhkit::edit::rest::RestMap;
use bvhkit::edit::root::{CarrierSearch, Extract, InPlace, ToOrigin};
use bvhkit::edit::scale::ScaleMap;
use bvhkit::units::{FrameSizes, UnitGuess};
use bvhkit::{Bvh, Motion, PositionChannels, ReadOptions, Skeleton, WriteOptions};

use super::lookahead::{Lookahead, up_of};
use super::transform::stops_reading;
use super::{
    Args, NEEDS_WHOLE_CLIP, Transform, detected_up, frame_map, joint_list, mirror_of,
    other_skeleton, renamed, root_up, stage_note, units_between, units_factor,
};
use crate::io::{Dest, Input, Streamed, WriteBehind, located, located_warning};
use crate::sample::SampleCheck;

/// Values per piece of frames formatted by one task.
const FORMAT_VALUES: usize = 16 * 1024;

/// Runs the plan frame by frame in constant memory: the frames are written
/// to a temporary file as they come, and the output is the header (which
/// needs the frame count) followed by that file, written atomically.
///
/// A regular file is mapped (or read whole when small) and scanned in
/// place ([`Input::open_stream`]); standard input and pipes are read a
/// chunk at a time. Three stages overlap: a thread reads and parses
/// batches of frames ([`crate::io::read_batches`]); this thread runs the
/// plan on each batch, every map on rayon's pool through [`bvhkit::edit::ChunkedMap`]
/// (the output of one frame at a time, whatever the cutting), then formats
/// the batch's frames in pieces on the pool and writes them in order.
pub(super) fn edit_stream(
    args: &Args,
    plan: &[Transform],
    input: &Input,
    out: &Path,
) -> Result<Vec<String>> {
    let mut opts = ReadOptions::new();
    opts.lenient(!args.strict);
    let located = |e: bvhkit::Error| anyhow!(located(input, &e));
    match input.open_stream()? {
        Streamed::Bytes(bytes) => {
            let rdr = opts.frame_reader_slice(&bytes).map_err(located)?;
            stream_frames(
                args,
                plan,
                input,
                out,
                rdr,
                Some(Lookahead { opts: &opts, bytes: &bytes, input }),
            )
        }
        Streamed::Reader(r) => {
            let rdr = opts.frame_reader(r).map_err(located)?;
            stream_frames(args, plan, input, out, rdr, None)
        }
    }
}

/// The steps of `plan` set up for a clip of `skel` (its frames of `n_in`
/// values, `Frames:` declaring `declared`): frame ranges and `--every`
/// as they are, renaming and End Sites on the skeleton alone, every other
/// transform a map, looking at frames first through `again` where it must.
struct Built {
    steps: Steps,
    /// The output skeleton and frame time.
    skel: Skeleton,
    frame_time: f64,
    /// Each transform's notes, said after the reader's warnings in the order
    /// of the plan (the whole clip's order): those of its set-up, then its
    /// map's. `map_of[k]` is the transform of the `k`th map step.
    notes_of: Vec<Vec<String>>,
    map_of: Vec<usize>,
    /// What the real pass must confirm of frames read from their lines alone.
    checks: Vec<SampleCheck<Steps>>,
}

/// [`Built`] of `plan` on a clip of `skel` and `frame_time`.
fn build_steps(
    args: &Args,
    plan: &[Transform],
    input: &Input,
    mut skel: Skeleton,
    mut frame_time: f64,
    declared: Option<u64>,
    again: Option<Lookahead<'_>>,
) -> Result<Built> {
    let mode: PositionChannels = args.position_channels.into();
    let at = |e: bvhkit::Error| anyhow!("{}: {e}", input.display());
    let n_in = skel.n_channels();
    let mut notes_of: Vec<Vec<String>> = vec![Vec::new(); plan.len()];
    let mut steps = Steps::new();
    let mut map_of: Vec<usize> = Vec::with_capacity(plan.len());
    let mut checks: Vec<SampleCheck<Steps>> = Vec::new();
    for (i, t) in plan.iter().enumerate() {
        let notes = &mut notes_of[i];
        let stage = match t {
            Transform::Frames(r) => {
                steps.push_range(r.span());
                continue;
            }
            Transform::Every(n) => {
                let before = frame_time;
                frame_time *= *n as f64;
                if !frame_time.is_finite() {
                    bail!(
                        "{}: --every {n}: every {n} frames of a Frame Time of {} s is more \
                         seconds per frame than a number holds",
                        input.display(),
                        crate::text::num(before)
                    );
                }
                steps.push_every(*n);
                continue;
            }
            // Names and End Sites: only the skeleton changes; the
            // channels keep their order, so the frames are copied.
            Transform::Rename(spec) => {
                skel = renamed(spec, &skel, input)?;
                continue;
            }
            Transform::StripEndSites => {
                skel = bvhkit::edit::joints::strip_end_sites_skeleton(&skel).map_err(at)?;
                continue;
            }
            Transform::AddEndSites => {
                skel = bvhkit::edit::joints::add_end_sites_skeleton(&skel).map_err(at)?;
                continue;
            }
            Transform::Units(u) => {
                // The guess, the whole clip's (the median size of the frames
                // as they reach this step), is made on sampled frames when
                // they can be read from their own lines and the real pass
                // will meet every frame that reaches this step, to measure
                // them and confirm it.
                if args.source_units.is_none()
                    && !stops_reading(&plan[i + 1..])
                    && let Some(again) = again
                    && let Some(sampled) =
                        again.sampled_units(&steps, n_in, &skel, declared, mode)?
                    && let Some(f) = units_between(sampled, *u)
                {
                    let check = GuessCheck::new(&skel, mode, sampled);
                    Stage::Units(ScaleMap::new(&skel, f)?, Box::new(check))
                } else {
                    // Otherwise a first pass over every frame.
                    let guess = || -> Result<UnitGuess> {
                        let Some(again) = again else { return Err(NEEDS_WHOLE_CLIP.into()) };
                        let mut sizes = FrameSizes::new(&skel, mode);
                        // Each batch's frames measured eight at a time on SIMD
                        // lanes while the next batch is parsed
                        // (`crate::io::read_batches`).
                        let w = skel.n_channels();
                        again.batches(&steps, n_in, |count, values| {
                            sizes.push_many(count, &values[..count * w]);
                            false
                        })?;
                        Ok(sizes.guess())
                    };
                    let f = units_factor(args, guess, *u, input, notes)?;
                    Stage::Scale(ScaleMap::new(&skel, f)?)
                }
            }
            Transform::Mirror => {
                // The pairs and planes need only the skeleton when the rest
                // pose decides the plane.
                let rest = Bvh::new(
                    skel.clone(),
                    Motion::with_frames(frame_time, 0, skel.n_channels(), Vec::new())?,
                )?;
                let m = mirror_of(&rest, input, notes)?;
                if !m.rest_pose_decides() {
                    return Err(NEEDS_WHOLE_CLIP.into());
                }
                Stage::Mirror(Box::new(m))
            }
            Transform::RemoveJoints(list) => Stage::Remove(
                Box::new(RemoveJoints::new(&skel, &joint_list(list), mode).map_err(at)?),
                Box::new(skel.clone()),
            ),
            Transform::RestPose(spec) => {
                let map = match spec.parse::<usize>() {
                    Ok(frame) => {
                        let Some(again) = again else { return Err(NEEDS_WHOLE_CLIP.into()) };
                        // That frame as it reaches this step.
                        let mut k = 0;
                        let mut pose = None;
                        again.frames(&steps, n_in, skel.n_channels(), |f| {
                            if k == frame {
                                pose = Some(f.to_vec());
                            }
                            k += 1;
                            pose.is_some()
                        })?;
                        // Past the last frame: the whole clip says so.
                        let Some(pose) = pose else { return Err(NEEDS_WHOLE_CLIP.into()) };
                        RestMap::from_frame(&skel, &pose, mode)
                    }
                    Err(_) => RestMap::from_skeleton(&skel, other_skeleton(spec)?.skeleton(), mode)
                        .map_err(at)?,
                };
                Stage::Rest(Box::new(map), Box::new(skel.clone()))
            }
            Transform::Up(to) => {
                let from = match args.source_up {
                    Some(a) => a,
                    None => {
                        let later = &plan[i + 1..];
                        let up = up_of(again, &steps, n_in, &skel, declared, later, &mut checks)?;
                        detected_up(up, input, notes)?
                    }
                };
                Stage::Axes(AxesMap::new(&skel, Axes::with_up(from), Axes::with_up(*to)))
            }
            Transform::InPlaceRoot | Transform::RootToOrigin | Transform::ExtractRoot(_) => {
                let Some(again) = again else { return Err(NEEDS_WHOLE_CLIP.into()) };
                let up = match args.source_up {
                    Some(a) => a,
                    None => {
                        let later = &plan[i + 1..];
                        let up =
                            up_of(Some(again), &steps, n_in, &skel, declared, later, &mut checks)?;
                        root_up(up, input, notes)
                    }
                };
                // The carrier and the first frame as they reach this step:
                // read until they are decided.
                let mut search = CarrierSearch::new(&skel);
                again.frames(&steps, n_in, skel.n_channels(), |f| search.push(f))?;
                let carrier = search
                    .carrier()
                    .context("the skeleton has no joints")
                    .map_err(|e| anyhow!("{}: {e}", input.display()))?;
                let first = search.first_frame();
                match t {
                    Transform::InPlaceRoot => Stage::InPlace(Box::new(
                        InPlace::new(&skel, carrier, first, up).map_err(at)?,
                    )),
                    Transform::RootToOrigin => Stage::ToOrigin(Box::new(
                        ToOrigin::new(&skel, carrier, first, up).map_err(at)?,
                    )),
                    Transform::ExtractRoot(name) => Stage::Extract(Box::new(
                        Extract::new(&skel, carrier, first, up, name).map_err(at)?,
                    )),
                    _ => unreachable!("a root-motion transform"),
                }
            }
            _ => frame_map(args, t, &skel, mode)?,
        };
        skel = stage.output_skeleton().clone();
        steps.push_map(stage);
        map_of.push(i);
    }
    Ok(Built { steps, skel, frame_time, notes_of, map_of, checks })
}

/// [`edit_stream`] on a reader; `again` reads the input again from the
/// start for the transforms that look at frames first (`None`: they need
/// the whole clip).
fn stream_frames<R: bvhkit::FrameSource + Send>(
    args: &Args,
    plan: &[Transform],
    input: &Input,
    out: &Path,
    mut rdr: bvhkit::FrameReader<R>,
    again: Option<Lookahead<'_>>,
) -> Result<Vec<String>> {
    let located = |e: bvhkit::Error| anyhow!(located(input, &e));
    let n_in = rdr.skeleton().n_channels();
    let declared = rdr.frames_declared();
    let Built { mut steps, skel, frame_time, mut notes_of, map_of, mut checks } =
        build_steps(args, plan, input, rdr.skeleton().clone(), rdr.frame_time(), declared, again)?;
    let opts = WriteOptions::new();
    let n_width = skel.n_channels();
    // A regular file is written in place: the frames after room for the
    // header, sized for the frame count the frame steps should leave of
    // `Frames:`; the header fills that room at the end when its size came
    // out right, else the output is made again from the header and those
    // frames, file to file. Standard output, FIFOs and devices get the
    // header and then the frames from an anonymous temporary file (it has
    // no name, so a crash or `kill -9` leaves nothing behind, as the
    // output's own temporary file does).
    let mut room = Vec::new();
    let expected = steps.expected(declared);
    opts.write_header(&skel, expected, frame_time, &mut room)?;
    let (atomic, mut body) = match crate::io::destination(out)? {
        Dest::Replace(target) => {
            let atomic = crate::io::AtomicFile::create(&target)?;
            let mut body = atomic.write_behind()?;
            body.seek(SeekFrom::Start(room.len() as u64))?;
            (Some(atomic), body)
        }
        _ => {
            let dir = std::env::temp_dir();
            let file = tempfile::tempfile_in(&dir)
                .with_context(|| format!("creating a temporary file in {}", dir.display()))?;
            (None, WriteBehind::new(file))
        }
    };
    let mut n_out = 0usize;
    // Whether the reading went on to the end (no frame range stopped it).
    let mut ended = true;
    std::thread::scope(|scope| -> Result<()> {
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
        let read = crate::io::read_batches(&mut rdr, |frames, batch| {
            for c in &mut checks {
                c.batch(frames, batch);
            }
            let left = steps.run(frames, batch, n_in, &mut a);
            ended = left.more;
            let values = if left.in_batch { batch } else { &a[..] };
            let mut pieces = crate::io::take_free(&empty_rx);
            format_frames(&opts, values, left.count, n_width, &mut pieces)?;
            if full_tx.send(pieces).is_err() {
                bail!("the writing thread stopped");
            }
            n_out += left.count;
            Ok(left.more)
        });
        drop(full_tx);
        let written = writer.join().map_err(|_| anyhow!("the writing thread panicked"))?;
        // The writer's own error first (a full disk stops the mapping too).
        written.with_context(|| {
            format!("{}: writing {}", input.display(), bvhkit_write::shown(out))
        })?;
        let read = read?;
        read.map_err(located)
    })?;
    if steps.failed() {
        return Err(NEEDS_WHOLE_CLIP.into());
    }
    // Frames read from their lines alone that were not the reader's (or a
    // count other than the sample's): the whole clip decides.
    if !checks.iter().all(|c| c.holds(ended)) {
        return Err(NEEDS_WHOLE_CLIP.into());
    }
    for (m, &i) in steps.maps().zip(&map_of) {
        super::layout_refusal(args, m, input)?;
        notes_of[i].extend(stage_note(m, input));
    }
    let mut notes: Vec<String> =
        rdr.take_warnings().iter().map(|w| located_warning(input, w)).collect();
    notes.extend(notes_of.into_iter().flatten());
    let mut header = Vec::new();
    opts.write_header(&skel, n_out, frame_time, &mut header)?;
    let mut file = body.into_inner();
    // Where the frames start: after the room, or at the start of the
    // anonymous file.
    let frames_at = if atomic.is_some() { room.len() as u64 } else { 0 };
    let finished = match atomic {
        Some(atomic) if header.len() == room.len() => file
            .rewind()
            .and_then(|()| file.write_all(&header))
            .and_then(|()| {
                drop(file);
                atomic.commit()
            })
            .map_err(anyhow::Error::from),
        // No room, or not the header's size: header and frames are copied.
        _ => file
            .seek(SeekFrom::Start(frames_at))
            .map_err(anyhow::Error::from)
            .and_then(|_| crate::io::write_atomic_with_body(out, &header, &mut file)),
    };
    finished
        .with_context(|| format!("{}: writing {}", input.display(), bvhkit_write::shown(out)))?;
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
) -> Result<()> {
    use rayon::prelude::*;
    let per_piece = (FORMAT_VALUES / width.max(1)).max(1);
    let n_pieces = count.div_ceil(per_piece);
    pieces.resize_with(n_pieces, Vec::new);
    pieces.par_iter_mut().enumerate().try_for_each(|(p, line)| -> Result<()> {
        line.clear();
        for f in p * per_piece..((p + 1) * per_piece).min(count) {
            opts.write_frame(&values[f * width..(f + 1) * width], line)?;
        }
        Ok(())
    })
}
