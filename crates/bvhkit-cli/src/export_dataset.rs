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
//! every input into one dataset through `bvhkit-dataset`, a window of files
//! parsed on all cores (and, for NPZ, computed) while the previous window is
//! written in order (`rayon::join`; a Parquet table computes each file's
//! features as it writes it, `ParquetWriter::write_bvh`), broken files reported
//! and skipped, a summary, both outputs through `AtomicFile`, the table through
//! `io::WriteBehind`.

use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Instant;

use anyhow::{Context, Result, bail};
use bvhkit_dataset::{Clip, Contacts, NpzWriter, Options, ParquetWriter, skeleton_path};
use rayon::prelude::*;

use crate::io::{
    AtomicFile, Dest, Input, WriteBehind, destination, expand_rel, load, located_warning,
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
    /// Parquet/NPZ: element type of the numbers.
    #[arg(long, value_enum, default_value = "f64")]
    dtype: Dtype,
    /// Parquet: long (a row per clip × frame × joint) or wide (a row per clip × frame, list columns).
    #[arg(long, value_enum, default_value = "long")]
    layout: Layout,
    /// Parquet/NPZ: representation of the local rotations.
    #[arg(long, value_enum, default_value = "quat")]
    rotations: Rotations,
    /// Parquet/NPZ: positions relative to each joint's root (roots keep their world position).
    #[arg(long)]
    root_relative: bool,
    /// Parquet/NPZ: add velocities (central differences of world positions, units per second).
    #[arg(long)]
    velocities: bool,
    /// Parquet/NPZ: add a contact flag per joint and frame (see --contact-height, --contact-speed).
    #[arg(long)]
    contacts: bool,
    /// Contact: largest height above the ground, as a fraction of the skeleton's size.
    #[arg(long, value_name = "FRACTION", default_value_t = Contacts::default().height)]
    contact_height: f64,
    /// Contact: largest speed, as a fraction of the skeleton's size per second.
    #[arg(long, value_name = "FRACTION", default_value_t = Contacts::default().speed)]
    contact_speed: f64,
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
    for (flag, v) in [("--contact-height", d.contact_height), ("--contact-speed", d.contact_speed)]
    {
        if !(v.is_finite() && v >= 0.0) {
            bail!("{flag} {v}: the fraction must be a number of at least 0");
        }
    }
    Ok(Options {
        dtype: match d.dtype {
            Dtype::F64 => bvhkit_dataset::Dtype::F64,
            Dtype::F32 => bvhkit_dataset::Dtype::F32,
        },
        layout: match d.layout {
            Layout::Long => bvhkit_dataset::Layout::Long,
            Layout::Wide => bvhkit_dataset::Layout::Wide,
        },
        rotations: match d.rotations {
            Rotations::Quat => bvhkit_dataset::Rotations::Quat,
            Rotations::SixD => bvhkit_dataset::Rotations::SixD,
            Rotations::Matrix => bvhkit_dataset::Rotations::Matrix,
        },
        root_relative: d.root_relative,
        velocities: d.velocities,
        contacts: d
            .contacts
            .then_some(Contacts { height: d.contact_height, speed: d.contact_speed }),
        position_channels: position_channels.into(),
    })
}

/// Where the outputs go while they are written.
enum Sink {
    Parquet(Box<ParquetWriter<BufWriter<WriteBehind>>>),
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
    crate::io::refuse_overwriting_input(out, &all)?;
    // The skeleton table goes beside the table itself (at the end of any
    // symbolic links), under the rules of every output: a folder or a file
    // with other hard links there is refused before anything is written.
    let skeleton_target = skeleton_path(&target);
    let skeleton_target = if kind == Kind::Parquet {
        crate::io::refuse_overwriting_input(&skeleton_target, &all)?;
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
        std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    }
    let mut main = AtomicFile::create(&target)?;
    let file = main.write_behind()?;
    let w = BufWriter::with_capacity(1 << 20, file);
    let mut sink = match kind {
        Kind::Parquet => Sink::Parquet(Box::new(ParquetWriter::new(w, &options)?)),
        Kind::Npz => Sink::Npz(Box::new(NpzWriter::new(w, options.dtype))),
    };
    let pool = match c.threads {
        Some(n) => Some(rayon::ThreadPoolBuilder::new().num_threads(n.max(1)).build()?),
        None => None,
    };
    let threads =
        pool.as_ref().map_or_else(rayon::current_num_threads, |p| p.current_num_threads());
    let bar = crate::io::files_bar(inputs.len());
    let compute = |job: &(Input, PathBuf)| -> Result<Done, String> {
        let (input, rel) = job;
        let (bvh, warnings) = load(input, c.strict).map_err(|e| e.describe(input))?;
        let mut lines: Vec<String> = warnings.iter().map(|w| located_warning(input, w)).collect();
        let name = if *input == Input::Stdin { "-".to_string() } else { clip_name(rel) };
        let (bvh, note) = crate::clip::upright(bvh, c.up, &input.display())
            .map_err(|e| crate::text::error_chain(&e))?;
        lines.extend(note);
        let bytes = match input {
            Input::File(p) => std::fs::metadata(p).map_or(0, |m| m.len()),
            Input::Stdin => 0,
        };
        let item = match kind {
            Kind::Parquet => Item::Parsed(name, bvh),
            Kind::Npz => Item::Computed(Box::new(Clip::compute(&name, &bvh, &options))),
        };
        Ok(Done { item, lines, bytes })
    };
    // A window of files is computed on all cores while the previous one is
    // written (its columns are encoded in parallel too).
    let window = (threads * 2).max(2);
    let mut stats = Stats::default();
    let mut skipped: Vec<String> = Vec::new();
    let mut write = |results: Vec<Result<Done, String>>, sink: &mut Sink| -> Result<()> {
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
    let mut work = || -> Result<()> {
        let mut pending: Option<Vec<Result<Done, String>>> = None;
        for chunk in inputs.chunks(window) {
            let (written, next) = rayon::join(
                || pending.take().map_or(Ok(()), |p| write(p, &mut sink)),
                || chunk.par_iter().map(compute).collect::<Vec<_>>(),
            );
            written?;
            pending = Some(next);
        }
        if let Some(p) = pending {
            write(p, &mut sink)?;
        }
        Ok(())
    };
    // What a failed write says: the output.
    let writing = || format!("writing {}", out.display());
    match &pool {
        Some(p) => p.install(&mut work),
        None => work(),
    }
    .with_context(writing)?;
    bar.finish_and_clear();
    if stats.clips == 0 {
        bail!("no input could be exported; {} not written", out.display());
    }
    let mut written = vec![out.display().to_string()];
    let finished = match sink {
        Sink::Parquet(w) => (|| -> Result<()> {
            let (mut w, skeletons) = (*w).finish()?;
            w.flush()?;
            drop(w);
            // The table's last bytes reach the disk on another thread while
            // the skeleton table is written (`commit` syncs again: nothing
            // is left then).
            let table = main.file().try_clone()?;
            let synced = std::thread::scope(|s| -> Result<()> {
                let sync = s.spawn(move || table.sync_all());
                let mut sk = AtomicFile::create(&skeleton_target)?;
                let f = sk.file().try_clone()?;
                skeletons.write(BufWriter::new(f))?.flush()?;
                sync.join().map_err(|_| anyhow::anyhow!("the sync thread panicked"))??;
                // Both complete and synced under temporary names before
                // either is put in place, then two renames back to back, the
                // skeleton table (which the table names) first: nothing is
                // written or synced between them, and a failure before them
                // leaves both old files.
                let (sk, table) = (sk.stage()?, main.stage()?);
                sk.publish()?;
                table.publish()?;
                Ok(())
            });
            synced?;
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
    // Written, but with inputs left out: 1 (a folder walk's skipped path
    // makes it 2 in main, as for every command).
    Ok(if skipped.is_empty() { ExitCode::SUCCESS } else { ExitCode::from(1) })
}

#[derive(Default)]
struct Stats {
    clips: usize,
    frames: usize,
    rows: usize,
    bytes: u64,
}
