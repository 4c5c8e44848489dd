//! `bvh export IN... -o OUT.parquet` / `-o OUT.npz`: many files into one
//! dataset through `bvhkit-dataset` (docs/datasets.md).
//!
//! Files are read and parsed a few at a time on all cores while the
//! previous few are written, in input order (a Parquet table's features
//! are computed as it is written, a row group at a time; an NPZ's with the
//! parse); a file that
//! cannot be read or parsed is reported and skipped, and the batch goes on.
//! Both outputs (the table and `OUT.skeleton.parquet`, or the NPZ) are
//! anonymous files put in place only when the whole batch is written.
//!
//! # Implementation notes
//!
//! `-o OUT.parquet`/`OUT.npz` is handed to `export_dataset.rs` (its other flags
//! are `DatasetArgs`, flattened into the export arguments; `--up` is shared):
//! every input into one dataset through `bvhkit-dataset`. Each file is a task
//! of its own on the command's pool, in input order (parsed, and a Parquet
//! clip of one row group computed and encoded, `Preparer::prepare`; an NPZ's
//! clip computed), at most `AHEAD_FILES` a thread and `AHEAD_BYTES` of input
//! ahead of a writer thread that takes them in order: a prepared clip it
//! hands itself to the table's blocks (`ParquetWriter::write_prepared`
//! into a `BlockWriter`, whose thread copies the blocks into the file; the
//! number pages are not copied into the blocks but written from the
//! clip's column buffers, `with_shared_pages`), so the pool's threads go
//! on with the next files; a long clip (computed a
//! row group at a time as it is written, `ParquetWriter::write_bvh`) or an
//! NPZ's clip it writes on the pool. Broken files are reported and skipped.
//! Each input is looked up once before the work starts, for the refusal of
//! both outputs and for its size (`io::refuse_overwriting_inputs`). At the
//! end the skeleton table is written (its columns encoded side by side on
//! the command's pool) and staged on a thread of its own while the table's
//! footer is written (`ParquetWriter::finish_beside`),
//! then both outputs, staged (`AtomicFile`), are renamed back to
//! back, the replaced files held open through the renames and released
//! afterwards on a thread of their own (`Staged::publish_keeping_old`);
//! their cached pages are dropped at the start, beside the work
//! (`drop_cached_pages`), so that the release frees no cached pages.
//!
//! What is left of that release is serial, and stays in the command's
//! time (issue #30, session 28). On tmpfs it is the kernel freeing the
//! old table's pages (`shmem_evict_inode`: 72 ms of one thread's CPU for
//! 500 MiB). On an ext4 without a journal mounted with `discard` (the CI
//! machine's root) it is the freed blocks' discards, waited for as the
//! blocks are freed (`ext4_free_blocks` -> `blkdev_issue_discard`; 73 to
//! 125 ms asleep, 0.5 ms of CPU, for 500 MiB whose pages were dropped).
//! Neither can start before the renames (the old pair must survive until
//! the new one is in place), nor be split over threads (holes punched in
//! the two halves by two threads took as long as one thread's whole
//! release, on ext4 and on tmpfs: both hold the inode's lock), and little
//! of the command is left to run beside it (its memory freed, on the main
//! thread). Only not waiting for it would take it off the command's time,
//! which would hide it, not remove it. The end's sync waits for the
//! disk's backlog: the writeback of every block is started as it is
//! written, but two cores can make the table faster than this machine's
//! disk writes it (a sync of 1 to 50 ms); starting the writeback of whole
//! 2 MiB windows only, so that no page is written again while under
//! writeback, moved those waits from `writepages` to `fdatawait` without
//! shortening the sync, and starting it on a thread of its own (so that
//! a block bitmap read behind the queued writes no longer stops the
//! copying) left more to wait for at the end (all threads asleep 49 to
//! 88 ms against 15 to 34 ms, five pairs at real-time priority).

use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Instant;

use anyhow::{Context, Result, bail};
use bvhkit_dataset::{
    Clip, Contacts, NpzWriter, Options, ParquetWriter, PreparedClip, skeleton_path,
};

use crate::io::{
    AtomicFile, BlockWriter, Dest, Input, LoadBuffers, WriteBehind, destination, drop_cached_pages,
    expand_rel, load_reusing, located_warning,
};

/// Whether `out` asks for a dataset (`.parquet` or `.npz`).
pub(crate) fn handles(out: &Path) -> bool {
    kind(out).is_some()
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    Parquet,
    Npz,
}

fn kind(out: &Path) -> Option<Kind> {
    match out.extension()?.to_str()?.to_ascii_lowercase().as_str() {
        "parquet" => Some(Kind::Parquet),
        "npz" => Some(Kind::Npz),
        _ => None,
    }
}

/// Element type (`--dtype`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum Dtype {
    /// 64-bit floats (exact).
    F64,
    /// 32-bit floats.
    F32,
}

/// Table layout (`--layout`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum Layout {
    /// One row per clip × frame × joint.
    Long,
    /// One row per clip × frame, joints in list columns.
    Wide,
}

/// Rotation representation (`--rotations`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum Rotations {
    /// Quaternion qx qy qz qw (qw >= 0).
    Quat,
    /// First two matrix columns c0x c0y c0z c1x c1y c1z.
    #[value(name = "6d")]
    SixD,
    /// 3x3 matrix, row-major m00 ... m22.
    Matrix,
}

/// The dataset flags of `bvh export` (used with `-o OUT.parquet` or `-o OUT.npz`).
#[derive(Debug, clap::Args)]
pub(crate) struct DatasetArgs {
    /// Parquet/NPZ: element type of the numbers (default f64).
    #[arg(long, value_enum)]
    dtype: Option<Dtype>,
    /// Parquet: long (a row per clip × frame × joint) or wide (a row per clip × frame, list columns); default long.
    #[arg(long, value_enum)]
    layout: Option<Layout>,
    /// Parquet/NPZ: representation of the local rotations (default quat).
    #[arg(long, value_enum)]
    rotations: Option<Rotations>,
    /// Parquet/NPZ: positions relative to each joint's root (roots keep their world position).
    #[arg(long)]
    root_relative: bool,
    /// Parquet/NPZ: add velocities (central differences of world positions, units per second).
    #[arg(long)]
    velocities: bool,
    /// Parquet/NPZ: add a contact flag per joint and frame (see --contact-height, --contact-speed).
    #[arg(long)]
    contacts: bool,
    /// Contact: largest height above the ground, as a fraction of the skeleton's size (default 0.05).
    #[arg(long, value_name = "FRACTION")]
    contact_height: Option<f64>,
    /// Contact: largest speed, as a fraction of the skeleton's size per second (default 0.3).
    #[arg(long, value_name = "FRACTION")]
    contact_speed: Option<f64>,
}

impl DatasetArgs {
    /// The dataset flags given on the command line, which the glTF and FBX
    /// outputs refuse rather than ignore.
    pub(crate) fn given(&self) -> Vec<&'static str> {
        [
            (self.dtype.is_some(), "--dtype"),
            (self.layout.is_some(), "--layout"),
            (self.rotations.is_some(), "--rotations"),
            (self.root_relative, "--root-relative"),
            (self.velocities, "--velocities"),
            (self.contacts, "--contacts"),
            (self.contact_height.is_some(), "--contact-height"),
            (self.contact_speed.is_some(), "--contact-speed"),
        ]
        .into_iter()
        .filter_map(|(given, flag)| given.then_some(flag))
        .collect()
    }
}

/// What one file turned into.
struct Done {
    item: Item,
    lines: Vec<String>,
    bytes: u64,
}

/// A file ready to be written: parsed (a Parquet table computes its
/// features as it writes, a row group at a time), or computed whole (NPZ).
enum Item {
    Parsed(String, bvhkit::Bvh),
    Computed(Box<Clip>),
    /// A Parquet clip of one row group, computed and encoded where it was
    /// parsed (or why it could not be: the write reports it in its turn).
    Prepared(Result<Box<PreparedClip>, bvhkit_dataset::Error>),
}

impl Item {
    /// Frames and joint rows.
    fn counts(&self) -> (usize, usize) {
        match self {
            Item::Parsed(_, bvh) => {
                let nf = bvh.motion().n_frames();
                (nf, nf * bvh.skeleton().len())
            }
            Item::Computed(clip) => (clip.n_frames, clip.rows()),
            Item::Prepared(Ok(clip)) => (clip.n_frames(), clip.rows()),
            Item::Prepared(Err(_)) => (0, 0),
        }
    }
}

/// The clip name of an input: its path relative to the folder it was found
/// in (or its file name), with `/` separators; `-` for standard input.
fn clip_name(rel: &Path) -> String {
    let parts: Vec<String> =
        rel.components().map(|c| c.as_os_str().to_string_lossy().into_owned()).collect();
    parts.join("/")
}

fn options(d: &DatasetArgs, position_channels: crate::PosMode) -> Result<Options> {
    let defaults = Contacts::default();
    let (height, speed) =
        (d.contact_height.unwrap_or(defaults.height), d.contact_speed.unwrap_or(defaults.speed));
    for (flag, v) in [("--contact-height", height), ("--contact-speed", speed)] {
        if !(v.is_finite() && v >= 0.0) {
            bail!("{flag} {v}: the fraction must be a number of at least 0");
        }
    }
    Ok(Options {
        dtype: match d.dtype.unwrap_or(Dtype::F64) {
            Dtype::F64 => bvhkit_dataset::Dtype::F64,
            Dtype::F32 => bvhkit_dataset::Dtype::F32,
        },
        layout: match d.layout.unwrap_or(Layout::Long) {
            Layout::Long => bvhkit_dataset::Layout::Long,
            Layout::Wide => bvhkit_dataset::Layout::Wide,
        },
        rotations: match d.rotations.unwrap_or(Rotations::Quat) {
            Rotations::Quat => bvhkit_dataset::Rotations::Quat,
            Rotations::SixD => bvhkit_dataset::Rotations::SixD,
            Rotations::Matrix => bvhkit_dataset::Rotations::Matrix,
        },
        root_relative: d.root_relative,
        velocities: d.velocities,
        contacts: d.contacts.then_some(Contacts { height, speed }),
        position_channels: position_channels.into(),
    })
}

/// Where the outputs go while they are written.
enum Sink {
    Parquet(Box<ParquetWriter<BlockWriter>>),
    Npz(Box<NpzWriter<BufWriter<WriteBehind>>>),
}

/// The shared flags of `bvh export` that a dataset uses.
pub(crate) struct Common<'a> {
    pub(crate) files: &'a [PathBuf],
    pub(crate) output: &'a Path,
    pub(crate) position_channels: crate::PosMode,
    pub(crate) strict: bool,
    pub(crate) threads: Option<usize>,
    /// `--up` (shared with glTF; default `auto`).
    pub(crate) up: crate::clip::Up,
}

pub(crate) fn run(c: &Common<'_>, d: &DatasetArgs) -> Result<ExitCode> {
    let start = Instant::now();
    let out = c.output;
    let Some(kind) = kind(out) else { bail!("{}: not a .parquet or .npz output", out.display()) };
    if kind == Kind::Npz && d.layout.is_some() {
        // NPZ has one layout (arrays per clip); the flag is refused, not ignored.
        bail!("--layout applies to .parquet outputs, not to {}", out.display());
    }
    let options = options(d, c.position_channels)?;
    let target = match destination(out)? {
        Dest::Replace(p) => p,
        _ => bail!(
            "{}: a dataset is written to a regular file (-o OUT.parquet or -o OUT.npz), \
             not to standard output or a device",
            out.display()
        ),
    };
    let inputs = expand_rel(c.files)?;
    let all: Vec<Input> = inputs.iter().map(|(i, _)| i.clone()).collect();
    // The skeleton table goes beside the table itself (at the end of any
    // symbolic links), under the rules of every output: a folder or a file
    // with other hard links there is refused before anything is written.
    let skeleton_target = skeleton_path(&target);
    // Neither output may be an input; each input is looked up once, for
    // that and for its size (what is read ahead of the writer).
    let sizes = match kind {
        Kind::Parquet => crate::io::refuse_overwriting_inputs(&[out, &skeleton_target], &all)?,
        Kind::Npz => crate::io::refuse_overwriting_inputs(&[out], &all)?,
    };
    let skeleton_target = if kind == Kind::Parquet {
        match destination(&skeleton_target)? {
            Dest::Replace(p) => p,
            _ => bail!(
                "{}: the skeleton table is written to a regular file beside {}, not to a device",
                skeleton_target.display(),
                target.display()
            ),
        }
    } else {
        skeleton_target
    };
    if let Some(dir) = target.parent()
        && !dir.as_os_str().is_empty()
        && !dir.exists()
    {
        // The folder of -o is made; but a symbolic link that leads to a
        // missing folder is refused, as every other output refuses it.
        if std::fs::symlink_metadata(out).is_ok_and(|m| m.file_type().is_symlink()) {
            bail!(
                "{}: a symbolic link to {}, whose folder {} does not exist",
                out.display(),
                target.display(),
                dir.display()
            );
        }
        crate::io::make_folders(&target)?;
    }
    // The pages of the files this run replaces are dropped from the cache
    // now, beside the work, so that the renames at the end leave little
    // to free (ext4: the 500 MB table the run before wrote; tmpfs ignores
    // it). Their contents stay whole until they are replaced.
    let dropping = {
        let mut olds = vec![target.clone()];
        if kind == Kind::Parquet {
            olds.push(skeleton_target.clone());
        }
        std::thread::Builder::new().name("bvh-drop-cache".into()).spawn(move || {
            for old in &olds {
                drop_cached_pages(old);
            }
        })?
    };
    // The command's pool: -j threads, or rayon's default (every core).
    let pool =
        rayon::ThreadPoolBuilder::new().num_threads(c.threads.map_or(0, |n| n.max(1))).build()?;
    let threads = pool.current_num_threads();
    // Runs `f` on the command's pool (from any thread).
    let on_pool = |f: &mut (dyn FnMut() -> Result<()> + Send)| pool.install(f);
    let main = AtomicFile::create(&target)?;
    let sink = match kind {
        // The table's bytes are copied into the file by a writer thread
        // (`BlockWriter`), off the thread that encodes the row groups.
        // The number pages of prepared clips are not copied into its
        // blocks: the writer thread writes them from the clips' column
        // buffers (`with_shared_pages`).
        Kind::Parquet => Sink::Parquet(Box::new(
            ParquetWriter::new(main.block_writer(WRITER_THREADS)?, &options)?
                .with_shared_pages(BlockWriter::write_shared),
        )),
        Kind::Npz => Sink::Npz(Box::new(NpzWriter::new(
            BufWriter::with_capacity(1 << 20, main.write_behind()?),
            options.dtype,
        ))),
    };
    // A clip of one row group (most files) is computed and encoded where
    // it is parsed, on the pool, so the thread that writes the file only
    // copies it; a longer one is computed a row group at a time as it is
    // written (`write_bvh`).
    let preparer = match &sink {
        Sink::Parquet(w) => Some(w.preparer()),
        Sink::Npz(_) => None,
    };
    let bar = crate::io::files_bar(inputs.len());
    // A file's own work (its parse, its features, its columns) is split
    // over the pool only when the file is a large share of the input: in
    // a folder of many files each thread takes a file of its own, whose
    // memory then stays on its core, and no thread is woken to take a
    // piece of another's.
    let total: u64 = sizes.iter().sum();
    let nested = |size: u64| size.saturating_mul(4 * threads as u64) > total;
    // (The two share their free column buffers.)
    let preparers = preparer.map(|p| [p.clone().parallel(false), p]);
    let compute = |job: &(Input, PathBuf), bytes: u64| -> Result<Done, String> {
        let (input, rel) = job;
        // This thread's buffers from its file before (taken, so that a
        // file worked on meanwhile by this thread, inside a parallel
        // step, takes others), put back when done.
        let mut buffers = REUSE.with(std::cell::Cell::take);
        let nested = nested(bytes);
        let (bvh, warnings) =
            load_reusing(input, c.strict, nested, &mut buffers).map_err(|e| e.describe(input))?;
        let mut lines: Vec<String> = warnings.iter().map(|w| located_warning(input, w)).collect();
        let name = if *input == Input::Stdin { "-".to_string() } else { clip_name(rel) };
        let (bvh, note) = crate::clip::upright(bvh, c.up, &input.display())
            .map_err(|e| crate::text::error_chain(&e))?;
        lines.extend(note);
        let item = match kind {
            Kind::Parquet => {
                match preparers.as_ref().and_then(|p| p[usize::from(nested)].prepare(&name, &bvh)) {
                    Some(prepared) => {
                        buffers.recycle(bvh);
                        Item::Prepared(prepared.map(Box::new))
                    }
                    None => Item::Parsed(name, bvh),
                }
            }
            Kind::Npz => {
                let clip = Clip::compute(&name, &bvh, &options);
                buffers.recycle(bvh);
                Item::Computed(Box::new(clip))
            }
        };
        REUSE.with(|r| r.set(buffers));
        Ok(Done { item, lines, bytes })
    };
    let mut stats = Stats::default();
    let mut skipped: Vec<String> = Vec::new();
    let write = |results: Vec<Result<Done, String>>,
                 sink: &mut Sink,
                 stats: &mut Stats,
                 skipped: &mut Vec<String>|
     -> Result<()> {
        for r in results {
            match r {
                Ok(done) => {
                    for l in &done.lines {
                        bar.suspend(|| eprintln!("{}", crate::text::escape(l)));
                    }
                    stats.clips += 1;
                    let (frames, rows) = done.item.counts();
                    stats.frames += frames;
                    stats.rows += rows;
                    stats.bytes += done.bytes;
                    match (&mut *sink, done.item) {
                        (Sink::Parquet(w), Item::Parsed(name, bvh)) => w.write_bvh(&name, &bvh)?,
                        (Sink::Parquet(w), Item::Computed(clip)) => w.write_clip(*clip)?,
                        (Sink::Parquet(w), Item::Prepared(clip)) => w.write_prepared(*clip?)?,
                        (Sink::Npz(_), Item::Prepared(_)) => {
                            unreachable!("only a Parquet table prepares clips")
                        }
                        (Sink::Npz(w), Item::Computed(clip)) => w.write_clip(&clip)?,
                        (Sink::Npz(w), Item::Parsed(name, bvh)) => {
                            w.write_clip(&Clip::compute(&name, &bvh, &options))?;
                        }
                    }
                }
                Err(e) => {
                    bar.suspend(|| {
                        eprintln!("bvh: error: {}; skipped", crate::text::escape(&e));
                    });
                    skipped.push(e);
                }
            }
            bar.inc(1);
        }
        Ok(())
    };
    // Every file is parsed (and a Parquet clip prepared) on the pool, a
    // task each, in input order, while a thread of its own writes them in
    // order as they are ready (the row groups of a long clip are computed
    // and encoded on the pool too). No barrier: a slow file holds back only
    // the writing of the files after it, and the tasks started ahead of the
    // writer are bounded (`AHEAD_FILES` a thread, `AHEAD_BYTES` of input).
    let ahead_files = threads.max(1) * AHEAD_FILES;
    let slots: Vec<std::sync::Mutex<Option<Result<Done, String>>>> =
        inputs.iter().map(|_| std::sync::Mutex::new(None)).collect();
    // How many files are written, and whether the writer stopped.
    let progress = std::sync::Mutex::new((0usize, false));
    // The writer waits on `is_ready` for the next file, the loop that
    // starts the files on `has_room` for a file written: each is woken when it can go
    // on, not by every change (a run of 432 files woke both at each).
    let (is_ready, has_room) = (std::sync::Condvar::new(), std::sync::Condvar::new());
    let written = std::thread::scope(|s| -> Result<Sink> {
        let writer = s.spawn(|| -> Result<Sink> {
            // Says the writer stopped however it ends (a panic included), so
            // that the reading side never waits for it in vain.
            let _stopped = Stopped(&progress, [&is_ready, &has_room]);
            let mut sink = sink;
            let mut next = 0;
            let result = (|| -> Result<()> {
                while next < inputs.len() {
                    // The files ready from `next` on, in order (waiting for
                    // the first).
                    let mut ready = Vec::new();
                    let mut p = lock(&progress);
                    loop {
                        while let Some(r) = slots
                            .get(next + ready.len())
                            .and_then(|slot| slot.lock().unwrap_or_else(|e| e.into_inner()).take())
                        {
                            ready.push(r);
                        }
                        if !ready.is_empty() {
                            break;
                        }
                        p = is_ready.wait(p).unwrap_or_else(|e| e.into_inner());
                    }
                    drop(p);
                    for r in ready {
                        // A prepared clip (or a file that failed) is only
                        // copied: here, on this thread, so that both
                        // cores go on parsing and encoding the files
                        // after it meanwhile. A clip computed as it is
                        // written (a long clip, an NPZ's) needs the pool.
                        if matches!(r, Ok(Done { item: Item::Prepared(_), .. }) | Err(_)) {
                            write(vec![r], &mut sink, &mut stats, &mut skipped)?;
                        } else {
                            let mut r = Some(vec![r]);
                            on_pool(&mut || {
                                let r = r.take().unwrap_or_default();
                                write(r, &mut sink, &mut stats, &mut skipped)
                            })?;
                        }
                        // Each file written makes room for one more ahead.
                        next += 1;
                        lock(&progress).0 = next;
                        has_room.notify_one();
                    }
                }
                Ok(())
            })();
            result.map(|()| sink)
        });
        pool.in_place_scope_fifo(|scope| {
            let mut in_flight: std::collections::VecDeque<(usize, u64)> = Default::default();
            let mut bytes = 0;
            for (i, job) in inputs.iter().enumerate() {
                // Wait for room: few enough files and bytes started ahead
                // of the writer (a file alone always has room).
                let mut p = lock(&progress);
                loop {
                    while in_flight.front().is_some_and(|&(k, _)| k < p.0) {
                        bytes -= in_flight.pop_front().map_or(0, |f| f.1);
                    }
                    let room = in_flight.is_empty()
                        || (in_flight.len() < ahead_files && bytes + sizes[i] <= AHEAD_BYTES);
                    if room || p.1 {
                        break;
                    }
                    p = has_room.wait(p).unwrap_or_else(|e| e.into_inner());
                }
                if p.1 {
                    // The writer stopped: its error is what the command says.
                    return;
                }
                drop(p);
                in_flight.push_back((i, sizes[i]));
                bytes += sizes[i];
                let (slots, progress, is_ready, compute) = (&slots, &progress, &is_ready, &compute);
                let size = sizes[i];
                scope.spawn_fifo(move |_| {
                    // A panic would leave the writer waiting: it is this
                    // file's error instead.
                    let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                        compute(job, size)
                    }))
                    .unwrap_or_else(|_| Err(format!("{}: reading it panicked", job.0.display())));
                    *slots[i].lock().unwrap_or_else(|e| e.into_inner()) = Some(r);
                    // Under the lock, so that the writer cannot miss it;
                    // only when the writer waits for this file (it counts
                    // the files written under the lock, and finds a file
                    // after the next one ready when it gets there).
                    if lock(progress).0 == i {
                        is_ready.notify_one();
                    }
                });
            }
        });
        writer.join().map_err(|_| anyhow::anyhow!("the writer thread panicked"))?
    });
    // Done long before (it only drops cached pages), and never left
    // running past the renames.
    let _ = dropping.join();
    // What a failed write says: the output.
    let writing = || format!("writing {}", out.display());
    let sink = written.with_context(writing)?;
    bar.finish_and_clear();
    if stats.clips == 0 {
        bail!("no input could be exported; {} not written", out.display());
    }
    let mut written = vec![out.display().to_string()];
    let finished = match sink {
        Sink::Parquet(w) => (|| -> Result<()> {
            // The skeleton table is written, synced and named on another
            // thread while this one writes the table's footer (the two
            // last steps; neither waits for the other).
            let (table, skeletons, sk) = (*w).finish_beside(
                |skeletons| -> Result<_> {
                    let mut sk = AtomicFile::create(&skeleton_target)?;
                    let f = sk.file().try_clone()?;
                    // Its columns encoded side by side on the command's
                    // pool, idle by now.
                    pool.install(|| skeletons.write(BufWriter::new(f)))?.flush()?;
                    Ok(sk.stage()?)
                },
                // Every block written (the writer thread ends with `w`),
                // then the table synced and named.
                |mut w| -> Result<_> {
                    w.flush()?;
                    drop(w);
                    Ok(main.stage()?)
                },
            )?;
            let (table, sk) = (table?, sk?);
            // Both complete and synced under temporary names before either
            // is put in place, then two renames back to back, the skeleton
            // table (which the table names) first: nothing is written or
            // synced between them, and a failure before them leaves both
            // old files. The replaced files are kept open through the
            // renames, so that neither rename frees the old file's pages
            // (0.07 s for a table of 500 MB on tmpfs): the renames are
            // microseconds apart.
            let old_skeleton = sk.publish_keeping_old()?;
            pause_between_renames();
            let old_table = table.publish_keeping_old()?;
            // The old files are released on a thread of their own, while
            // this one frees the command's memory and exits (the process
            // ends when both are done).
            std::thread::spawn(move || drop((old_table, old_skeleton)));
            drop(skeletons);
            // Where it is: beside the table's file, which -o may name
            // through a symbolic link.
            written.push(skeleton_target.display().to_string());
            Ok(())
        })(),
        Sink::Npz(w) => (|| -> Result<()> {
            (*w).finish()?.flush()?;
            Ok(main.commit()?)
        })(),
    };
    finished.with_context(writing)?;
    let secs = start.elapsed().as_secs_f64();
    let mb = stats.bytes as f64 / 1e6;
    eprintln!(
        "{}",
        crate::text::escape(&format!(
            "bvh: exported {} clip{} ({} frames, {} joint rows) from {mb:.1} MB of BVH in {secs:.2} s \
             ({:.0} MB/s) to {}; {} file{} skipped",
            stats.clips,
            if stats.clips == 1 { "" } else { "s" },
            stats.frames,
            stats.rows,
            mb / secs.max(1e-9),
            written.join(" and "),
            skipped.len(),
            if skipped.len() == 1 { "" } else { "s" },
        ))
    );
    for s in &skipped {
        eprintln!("bvh:   skipped {}", crate::text::escape(s));
    }
    // Written, but with inputs left out: 2, as for every command that
    // could not read an input (a folder walk's skipped path too, in main).
    Ok(if skipped.is_empty() { ExitCode::SUCCESS } else { ExitCode::from(2) })
}

/// Debug builds only: sleeps between the two renames of a Parquet pair
/// for the milliseconds `BVHKIT_TEST_PAUSE_BETWEEN_RENAMES_MS` says, so
/// that a test can kill the command there (`tests/cli/dataset_outputs.rs`).
fn pause_between_renames() {
    #[cfg(debug_assertions)]
    if let Some(ms) = std::env::var("BVHKIT_TEST_PAUSE_BETWEEN_RENAMES_MS")
        .ok()
        .and_then(|v| v.parse::<u64>().ok())
    {
        std::thread::sleep(std::time::Duration::from_millis(ms));
    }
}

#[derive(Default)]
struct Stats {
    clips: usize,
    frames: usize,
    rows: usize,
    bytes: u64,
}

/// Writer threads of a Parquet table: one. The kernel copies into one file
/// a write at a time (under the file's lock), so a second thread only
/// overlapped one block's copy with another's writeback, and on two idle
/// cores it spun on that lock instead (`rwsem_spin_on_owner`, 4.5% of the
/// samples of a two-core run).
const WRITER_THREADS: usize = 1;

/// Files parsed ahead of the writer, at most, per thread.
const AHEAD_FILES: usize = 4;

/// Bytes of input parsed ahead of the writer at most (a file larger than
/// that alone): what is in memory besides the clip being written.
const AHEAD_BYTES: u64 = 48 << 20;

thread_local! {
    /// The buffers of the file a pool thread loaded last (the bytes read,
    /// the parse's values), for its next file: in a folder of many files
    /// each file is read and parsed into memory the thread already has.
    static REUSE: std::cell::Cell<LoadBuffers> = std::cell::Cell::default();
}

/// `m` locked, whether or not a thread panicked holding it.
fn lock<T>(m: &std::sync::Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// Marks the writer stopped (the flag beside the count of files written)
/// when dropped, and wakes whoever waits for it.
struct Stopped<'a>(&'a std::sync::Mutex<(usize, bool)>, [&'a std::sync::Condvar; 2]);

impl Drop for Stopped<'_> {
    fn drop(&mut self) {
        lock(self.0).1 = true;
        for c in self.1 {
            c.notify_all();
        }
    }
}
