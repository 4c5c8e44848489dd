//! The stream of `bvh positions` and `bvh rotations`: the input read a
//! batch of frames at a time, each batch computed in pieces on the pool by
//! a [`FrameWork`] and handed to the [`super::sink`] in order; `--up auto`
//! decided first on sampled lines, confirmed by the pass.

#[allow(clippy::wildcard_imports)]
use super::sink::*;
#[allow(clippy::wildcard_imports)]
use super::*;

/// Streams `input` frame by frame into `out` (standard output when `None`),
/// computing each frame in range with the [`FrameWork`] that `make_work`
/// builds for the skeleton and the selected joints; returns the warnings to
/// print.
pub(super) fn stream<W: FrameWork>(
    c: &Common,
    input: &Input,
    out: Option<&Path>,
    command: &str,
    settings: Vec<(&'static str, serde_json::Value)>,
    make_layout: impl Fn(&Skeleton, &[usize], Vec<String>, f64) -> Layout,
    make_work: impl Fn(&Skeleton, &[usize]) -> W,
) -> Result<Vec<String>> {
    let inputs = std::slice::from_ref(input);
    if let Some(out) = out {
        crate::io::refuse_overwriting_input(out, inputs)?;
    }
    let format = pick_format(c, out, command)?;
    if let Some(out) = out
        && format == Format::Npy
    {
        crate::io::refuse_overwriting_input(&sidecar_path(out), inputs)?;
    }
    let mut opts = ReadOptions::new();
    opts.lenient(!c.strict);
    let located = |e: bvhkit::Error| anyhow::anyhow!(crate::io::located(input, &e));
    // A regular file is scanned in place (mapped, or read whole when
    // small); standard input and pipes are read a chunk at a time.
    let mut source = input.open_stream()?;
    // `--up auto` detects the up axis on frames spread over the clip. Into
    // a regular file, from a mapped one, they are read from their lines
    // alone and the export checks them as it reads every frame
    // ([`sampled_up`]); where it cannot confirm them ([`UNCONFIRMED`]), its
    // output is not put in place and the exact path below runs.
    if c.up == crate::clip::Up::Auto
        && let Streamed::Bytes(bytes) = &source
        && let Some(out) = out
        && let Some((run, rdr)) = sampled_up(c, &opts, bytes, input, out, format)?
    {
        // UNCONFIRMED, or failed: the exact path decides (and gives its
        // own error, in its own order: a bad frame before an unknown
        // `--joints` name).
        if let Ok(lines) = run.frames(rdr, settings.clone(), &make_layout, &make_work) {
            return Ok(lines);
        }
    }
    // Otherwise in a first pass that keeps only those frames
    // ([`detect_up_of`]); standard input and pipes, which cannot be read
    // twice, are read into memory first.
    let mut notes = Vec::new();
    let from = if c.up == crate::clip::Up::Auto {
        let bytes = match source {
            Streamed::Bytes(bytes) => bytes,
            Streamed::Reader(_) => input.read()?,
        };
        let found = detect_up_of(&opts, &bytes).map_err(located)?;
        source = Streamed::Bytes(bytes);
        let (from, note) = crate::clip::detected_source_up(found, &input.display());
        notes.extend(note);
        from
    } else {
        crate::clip::source_up_given(c.up)
    };
    let run = Run { c, input, out, format, from, notes, check: None };
    match source {
        Streamed::Bytes(bytes) => {
            let rdr = opts.frame_reader_slice(&bytes).map_err(located)?;
            run.frames(rdr, settings, make_layout, make_work)
        }
        Streamed::Reader(r) => {
            let rdr = opts.frame_reader(BufReader::with_capacity(1 << 16, r)).map_err(located)?;
            run.frames(rdr, settings, make_layout, make_work)
        }
    }
}

/// The export of `--up auto` from the mapped file `bytes` into the file
/// `out`, and the reader of its frames: the up axis detected on the frames
/// [`bvhkit::edit::axes::sampled_frames`] names, read from their own lines
/// ([`Sample::of_clip`]), with the [`SampleCheck`] its pass must confirm
/// before the output is put in place ([`UNCONFIRMED`] otherwise). `None`
/// where the exact path must decide at once: an output that cannot be
/// taken back (standard output, a FIFO, a device), a frame range that stops
/// the reading before the frames `Frames:` declares (their count would be
/// unknown), or lines that are visibly not the frames.
pub(super) fn sampled_up<'a, 'b>(
    c: &'a Common,
    opts: &ReadOptions,
    bytes: &'b [u8],
    input: &'a Input,
    out: &'a Path,
    format: Format,
) -> Result<Option<(Run<'a>, bvhkit::FrameReader<bvhkit::SliceSource<'b>>)>> {
    // Refused destinations (a folder, a file with other links) are the
    // exact path's errors.
    if !crate::io::destination(out).is_ok_and(|d| matches!(d, Dest::Replace(_))) {
        return Ok(None);
    }
    let located = |e: bvhkit::Error| anyhow::anyhow!(crate::io::located(input, &e));
    let rdr = opts.frame_reader_slice(bytes).map_err(located)?;
    let declared = rdr.frames_declared();
    // The real pass stops once the range is past (`Run::frames`).
    if c.frames.is_some_and(|r| r.past(crate::clip::frame_count(declared))) {
        return Ok(None);
    }
    let skeleton = rdr.skeleton();
    let Some(sample) =
        Sample::of_clip(opts, bytes, skeleton.n_channels(), declared).map_err(located)?
    else {
        return Ok(None);
    };
    let (from, note) = crate::clip::detected_source_up(sample.up(skeleton), &input.display());
    let notes = note.into_iter().collect();
    let check = Some(sample.check(()));
    Ok(Some((Run { c, input, out: Some(out), format, from, notes, check }, rdr)))
}

/// Why an export of `--up auto` on sampled frames ([`sampled_up`]) was not
/// put in place: the frames its pass read were not those the sample read
/// from their lines, or not as many as `Frames:` declares, or the pass did
/// not reach the end; the exact path decides.
pub(super) const UNCONFIRMED: GaveUp =
    GaveUp("the frames sampled for the up axis were not the file's");

/// [`bvhkit::edit::axes::detect_up`] of the text `bytes`, in one pass that
/// keeps only the sampled frames; the whole clip is parsed only when the
/// file holds another frame count than `Frames:` says.
pub(super) fn detect_up_of(opts: &ReadOptions, bytes: &[u8]) -> Result<UpAxis, bvhkit::Error> {
    let mut rdr = opts.frame_reader_slice(bytes)?;
    let skeleton = rdr.skeleton().clone();
    let expected = crate::clip::frame_count(rdr.frames_declared());
    let mut frame = vec![0.0; skeleton.n_channels()];
    let found = crate::clip::detect_up_in_one_pass(&skeleton, expected, |each| {
        while rdr.read_frame(&mut frame)? {
            if each(&frame) {
                break;
            }
        }
        Ok::<(), bvhkit::Error>(())
    })?;
    match found {
        Some(found) => Ok(found),
        None => Ok(bvhkit::edit::axes::detect_up(&opts.parse(bytes)?.0)),
    }
}

/// What [`stream()`] has decided before reading frames.
pub(super) struct Run<'a> {
    c: &'a Common,
    input: &'a Input,
    out: Option<&'a Path>,
    format: Format,
    from: Option<bvhkit::edit::axes::SignedAxis>,
    notes: Vec<String>,
    /// What the pass must confirm of the frames `from` was detected on
    /// before the output is put in place ([`sampled_up`]).
    check: Option<SampleCheck<()>>,
}

/// The computation of one frame's values for `bvh positions` and `bvh
/// rotations`, built once the skeleton and the selected joints are known.
/// Frames whose values do not depend on the frames before them
/// ([`FrameWork::in_order`] false) are computed in pieces of a batch on
/// rayon's pool, each piece with a [`FrameWork::State`] of its own, into
/// disjoint parts of one buffer that is then written in order: the output
/// is the same whatever the thread count and the cut.
pub(super) trait FrameWork: Sync {
    /// Buffers (and, for in-order work, what a frame leaves for the next).
    type State: Send;
    /// Whether a frame's values depend on the frames computed before it
    /// (then every frame is computed on the calling thread, in order, with
    /// one state kept from batch to batch).
    fn in_order(&self) -> bool;
    /// A fresh state.
    fn state(&self) -> Self::State;
    /// The values of `frame` (one per channel of the skeleton) for the
    /// selected joints, into `out` (joints × components); returns the
    /// frame's [`bvhkit::units::pose_size`] when it computed every joint's
    /// world position on the way, so that the NPY sidecar's unit guess does
    /// not run forward kinematics again for that frame.
    fn frame(&self, state: &mut Self::State, frame: &[f64], out: &mut [f64]) -> Option<f64>;
    /// [`FrameWork::frame`] for `n` frames one after the other, their
    /// values one after the other into `out`; returns whether it wrote each
    /// frame's size into `sizes` (when `sizes` is not empty).
    fn frames(
        &self,
        state: &mut Self::State,
        frames: &[f64],
        n: usize,
        out: &mut [f64],
        sizes: &mut [f64],
    ) -> bool {
        let (w_in, w_out) = (frames.len() / n.max(1), out.len() / n.max(1));
        let mut sized = true;
        for k in 0..n {
            let size = self.frame(
                state,
                &frames[k * w_in..(k + 1) * w_in],
                &mut out[k * w_out..(k + 1) * w_out],
            );
            match (size, sizes.get_mut(k)) {
                (Some(v), Some(s)) => *s = v,
                _ => sized = false,
            }
        }
        sized
    }
}

/// A piece of a batch: its frames, its parts of the value and size
/// buffers, and the state it computes with.
pub(super) type Piece<'a, S> =
    (std::ops::Range<usize>, &'a mut [f64], &'a mut [f64], &'a mut PieceState<S>);

/// What a piece of a batch computes with: the work's state and, for the
/// unit guess of frames the work does not size, forward kinematics buffers.
pub(super) struct PieceState<S> {
    work: S,
    fk: Option<(bvhkit::FkScratch, Vec<DVec3>)>,
}

/// Frames per piece of a batch, at least: a piece of the synthetic file's
/// 65 joints is then about half a millisecond of work or more, so a batch
/// (about 1,300 frames of that file) wakes at most ten threads. With
/// 32-frame pieces, 16 cores took longer than 4 on `bvh positions` of the
/// 100 MB file (pieces of a tenth of a millisecond, each thread woken for
/// two or three of them); not measured here on more than two cores.
pub(super) const MIN_PIECE_FRAMES: usize = 128;

impl Run<'_> {
    /// Reads, computes and writes every frame of `rdr` ([`stream()`]).
    fn frames<S: bvhkit::FrameSource + Send, W: FrameWork>(
        self,
        mut rdr: bvhkit::FrameReader<S>,
        settings: Vec<(&'static str, serde_json::Value)>,
        make_layout: impl FnOnce(&Skeleton, &[usize], Vec<String>, f64) -> Layout,
        make_work: impl FnOnce(&Skeleton, &[usize]) -> W,
    ) -> Result<Vec<String>> {
        let Run { c, input, out, format, from, mut notes, mut check } = self;
        // What a failed write says: the input and the output.
        let writing = || {
            let to = out.map_or_else(|| "standard output".to_string(), |o| o.display().to_string());
            format!("{}: writing {to}", input.display())
        };
        // The frames as read, converted to Y up per frame when asked (a
        // FrameMap streams; it keeps Euler angles continuous, so it maps
        // every frame in order on this thread).
        let mut to_y_up = from.map(|a| crate::clip::to_y_up(rdr.skeleton(), a));
        let skeleton = match &to_y_up {
            Some(map) => map.output_skeleton().clone(),
            None => rdr.skeleton().clone(),
        };
        let (sel, names) = select(&skeleton, &c.joints)?;
        let range = c.frames.unwrap_or("..".parse()?);
        let first = range.first();
        let layout = make_layout(&skeleton, &sel, names, rdr.frame_time());
        let width = sel.len() * layout.components.len();
        let mut meta = Meta::new(&skeleton, &sel, input, first);
        meta.settings = settings;
        // The up axis the output was converted from (null: the file's own axes).
        meta.settings.push(("up_converted_from", from.map(|a| a.name()).into()));
        let sink = open_sink(c, out, format, layout, meta)?;
        let work = make_work(&skeleton, &sel);
        // The NPY sidecar's unit guess: bvhkit::units' one guess, from the
        // size of every frame read (one number per frame is kept).
        let guess_units = format == Format::Npy;
        let fk = Kinematics::new(&skeleton, c.position_channels.into());
        let new_state = || PieceState {
            work: work.state(),
            fk: guess_units.then(|| (fk.scratch(), vec![DVec3::ZERO; skeleton.len()])),
        };
        let mut states: Vec<PieceState<W::State>> = Vec::new();
        let mut sizes = Vec::new();
        let (n_raw, n_out) = (rdr.skeleton().n_channels(), skeleton.n_channels());
        let mut mapped = Vec::new();
        let mut batch_sizes = Vec::new();
        let mut f = 0usize;
        // Whether the reading went on to the end (no frame range stopped it).
        let mut ended = true;
        // The next batch of frames is parsed while the batch before is
        // computed, in pieces, both on rayon's pool (`read_batches`), and a
        // thread of its own writes the batch before that: batches of values
        // in order, their buffers sent back to be filled again.
        let (full_tx, full_rx) = std::sync::mpsc::sync_channel::<(usize, usize, Vec<f64>)>(2);
        let (free_tx, free_rx) = std::sync::mpsc::channel::<Vec<f64>>();
        // Shared with the pool's workers, where the batches are computed.
        let free_rx = std::sync::Mutex::new(free_rx);
        let (read, mut sink) = std::thread::scope(|scope| -> Result<_> {
            let writer = scope.spawn(move || -> Result<Box<dyn Sink>> {
                let mut sink = sink;
                for (first, n, values) in full_rx {
                    sink.frames(first, n, &values)?;
                    let _ = free_tx.send(values);
                }
                Ok(sink)
            });
            let read = crate::io::read_batches(&mut rdr, |frames, batch| {
                if let Some(check) = check.as_mut() {
                    check.batch(frames, batch);
                }
                // The frames of this batch before the end of the range.
                let n = (0..frames).take_while(|&k| !range.past(f + k)).count();
                let frames_in: &[f64] = match to_y_up.as_mut() {
                    Some(map) => {
                        mapped.resize(n * n_out, 0.0);
                        for k in 0..n {
                            map.map(
                                &batch[k * n_raw..(k + 1) * n_raw],
                                &mut mapped[k * n_out..(k + 1) * n_out],
                            );
                        }
                        &mapped
                    }
                    None => &batch[..n * n_raw],
                };
                // The frames in range: batch frames lo..n (none of them is past it).
                let (lo, hi) = (first.saturating_sub(f).min(n), n);
                // A buffer back from the writer (or a new one) holds the
                // values; every value in use is overwritten. The sizes'
                // buffer only grows.
                let n_values = (hi - lo) * width;
                let n_sizes = if guess_units { n } else { 0 };
                let mut values = crate::io::take_free(&free_rx);
                values.resize(n_values, 0.0);
                if batch_sizes.len() < n_sizes {
                    batch_sizes.resize(n_sizes, 0.0);
                }
                let pieces = if work.in_order() {
                    1
                } else {
                    (rayon::current_num_threads() * 4).min(n.div_ceil(MIN_PIECE_FRAMES)).max(1)
                };
                while states.len() < pieces {
                    states.push(new_state());
                }
                // Cut frames 0..n into pieces with their parts of the buffers.
                let per = n.div_ceil(pieces).max(1);
                let mut parts = Vec::with_capacity(pieces);
                let (mut vals, mut szs): (&mut [f64], &mut [f64]) =
                    (&mut values[..], &mut batch_sizes[..n_sizes]);
                for (p, state) in states.iter_mut().enumerate().take(pieces) {
                    let (a, b) = ((p * per).min(n), ((p + 1) * per).min(n));
                    let in_range = b.clamp(lo, hi) - a.clamp(lo, hi);
                    let (v, rest) = std::mem::take(&mut vals).split_at_mut(in_range * width);
                    vals = rest;
                    let (s, rest) =
                        std::mem::take(&mut szs).split_at_mut(if guess_units { b - a } else { 0 });
                    szs = rest;
                    parts.push((a..b, v, s, state));
                }
                let compute = |(frames, vals, szs, state): &mut Piece<'_, W::State>| {
                    // The piece's frames in range, then the sizes still missing.
                    let (a, b) = (frames.start, frames.end);
                    let (ra, rb) = (a.clamp(lo, hi), b.clamp(lo, hi));
                    let sized = rb > ra
                        && work.frames(
                            &mut state.work,
                            &frames_in[ra * n_out..rb * n_out],
                            rb - ra,
                            vals,
                            if guess_units { &mut szs[ra - a..rb - a] } else { &mut [] },
                        );
                    if guess_units {
                        for k in a..b {
                            if sized && (ra..rb).contains(&k) {
                                continue;
                            }
                            let (scratch, pose) = state.fk.as_mut().expect("made for NPY");
                            fk.positions_with(
                                &frames_in[k * n_out..(k + 1) * n_out],
                                scratch,
                                pose,
                            );
                            szs[k - a] = bvhkit::units::pose_size(pose);
                        }
                    }
                };
                if pieces == 1 {
                    parts.iter_mut().for_each(compute);
                } else {
                    use rayon::prelude::*;
                    parts.par_iter_mut().for_each(compute);
                }
                if hi > lo && full_tx.send((f + lo, hi - lo, values)).is_err() {
                    bail!("the writing thread stopped");
                }
                sizes.extend_from_slice(&batch_sizes[..n_sizes]);
                f += n;
                ended = !range.past(f);
                Ok(ended)
            });
            drop(full_tx);
            let sink = writer.join().map_err(|_| anyhow::anyhow!("the writing thread panicked"))?;
            // The writer's own error first (a full disk stops the reading too).
            let sink = sink.with_context(writing)?;
            Ok((read?, sink))
        })?;
        // Sampled frames the pass did not confirm, or a reading that did not
        // reach the end (a bad frame, a frame range): the output, dropped,
        // is not put in place.
        if check.is_some_and(|ch| read.is_err() || !ch.holds(ended)) {
            return Err(UNCONFIRMED.into());
        }
        read.map_err(|e| anyhow::anyhow!(crate::io::located(input, &e)))?;
        // A range that selects no frame is an error (the output, dropped,
        // is not put in place), one partly past the end a note, as `bvh
        // edit --frames` says them (`FrameSpan::check`): a range that ended
        // the reading early is inside the clip, so `f` is the clip's length
        // whenever the range reaches past it.
        if let Some(r) = c.frames {
            match r.span().check(f) {
                Err(e) => bail!("{}: {e}", input.display()),
                Ok(Some(note)) => notes.push(format!("bvh: note: {}: {note}", input.display())),
                Ok(None) => {}
            }
        }
        if guess_units {
            sink.units(
                if sizes.is_empty() {
                    let rest = bvhkit::units::rest_pose(&skeleton, c.position_channels.into());
                    UnitGuess::of_positions(skeleton.len(), &rest)
                } else {
                    UnitGuess::of_pose_sizes(sizes)
                }
                .named(&bvhkit::units::Limbs::of(&skeleton)),
            );
        }
        sink.finish().with_context(writing)?;
        let lines: Vec<String> = rdr
            .warnings()
            .iter()
            .map(|w| crate::text::escape(&located_warning(input, w)).into_owned())
            .chain(notes.iter().map(|n| crate::text::escape(n).into_owned()))
            .collect();
        Ok(lines)
    }
}
