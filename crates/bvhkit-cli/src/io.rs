//! Inputs, outputs, parallel work and progress shared by the commands.
//!
//! Reading: regular files of 1 MiB or more are memory-mapped (see the
//! `unsafe` invariant in ARCHITECTURE.md), smaller ones are read; pipes,
//! devices and standard input are read up to `--max-size` bytes and refused
//! beyond it. Writing (the crate `bvhkit-write`, which the Python package
//! and the desktop player share; thin wrappers here add `--break-links` and
//! anyhow errors): [`write_atomic`] / [`AtomicFile`] write a regular file
//! through an anonymous temporary file (Linux `O_TMPFILE`) that gets a name
//! only once it is complete, so the target is always the old file or the
//! whole new one, and nothing stays behind after a crash or `kill -9`;
//! devices, FIFOs and `/dev/stdout`-style names are written through, and a
//! symbolic link is followed to the file it names. A regular file with other
//! hard links is refused unless `--break-links` is given (see [`destination`]).
//!
//! # Implementation notes
//!
//! Inputs (`-`, files, directories walked for `*.bvh`; a broken link, a link
//! loop or an unreadable folder met on the way is a warning, counted so that
//! `main` exits 2; a folder without `*.bvh` files is a warning, and arguments
//! that give no input at all are the error `no input file`, in `expand` for
//! every command), whole-input reads (`Input::read`: regular files of 1 MiB or
//! more memory-mapped, smaller ones read, bounded by their size; standard
//! input, pipes and devices read up to `--max-size`, 4 GiB by default, and
//! refused beyond), `par_map` (rayon over files, indicatif progress bar on a
//! terminal, results in input order), `Input::open_stream` (what a streaming
//! command reads: a regular file mapped, or read whole under 1 MiB, for
//! `frame_reader_slice`; standard input, pipes, devices and files the system
//! will not map as a `Read`), `read_batches` (the next batch of frames parsed
//! while the caller's closure runs on the batch before, both on rayon's pool
//! through `rayon::join`, the loop on a worker; a batch is one window of a
//! mapped file taken without a copy, `read_window`, or enough windows of a
//! `Read` for half of about 2 MiB of values; two batches alive: constant
//! memory), outputs (thin functions over `bvhkit-write` that make the
//! output's missing folders first, `make_folders`, the one place of that rule, pass
//! `--break-links` and give anyhow errors (its `AtomicFile`, `Output`, `Staged`
//! and `WriteBehind` re-exported as they are), so the commands call `io::` as
//! before: `destination`, `open_output`, `AtomicFile`, whose writes, and those
//! of a `WriteBehind` handle of it, ask the kernel to start writing back every
//! 2 MiB written (`posix_fadvise(POSIX_FADV_DONTNEED)`, which starts the
//! writeback without waiting and drops nothing unwritten), so the sync before
//! the rename waits for the last few megabytes only, `write_atomic`,
//! `write_atomic_with_body` (a header, then a temporary file's bytes copied by
//! the kernel), `write_atomic_all` for files that belong together, see
//! `bvhkit-write`), `FILE:LINE:COL:` formatting.
//!
//! A streamed `bvh edit` (and `bvh lint`) drops the mapped pages behind it
//! (`io::input::release_pages`, `madvise(MADV_DONTNEED)` on the private
//! read-only map: a page read again comes back from the file, the same
//! bytes), so its memory stays constant however large the file.
//!
//! Why `unsafe`: `io::input::map_regular` memory-maps regular input files of 1 MiB or
//! more (`memmap2`, read-only, private, pre-faulted with `MAP_POPULATE`) for
//! the whole-file reads (`io::input::read_file`) and the streamed commands
//! (`Input::open_stream`: `positions`, `rotations`, `edit`). It is unsafe
//! because the bytes can change under the `&[u8]` if another process writes the
//! file meanwhile. What happens then: changed bytes are parsed as whatever they
//! are (the parser accepts any bytes and never panics); if the file is
//! truncated while mapped, touching a page past the new end raises SIGBUS and
//! the process dies, and since outputs are anonymous files committed only after
//! a complete run (`bvhkit-write`), the only effect is a missing output and an
//! exit by signal, never a damaged file. Reading instead costs a fresh 100 MB
//! buffer (page faults plus a copy): with the mapping, `bvh check` on a 100 MB
//! file went from 1.07x to 1.55x the one-core read + split + `fast-float2`
//! floor end to end on a loaded machine (1.96x on one thread; `docs/performance.md`). Small files (under 1 MiB,
//! where mapping saves nothing), files
//! the system refuses to map, and anything that is not a regular file are read
//! (the streamed commands read those a chunk at a time). How a mapping counts
//! against constant memory: its pages are the file's pages in the page cache,
//! shared and clean, which the kernel can drop and read again at any time; they
//! show in the resident size (`bvh positions` on a 105 MB file peaks at about
//! 116 MB resident, nearly all of it the mapping, against 14 MB when it read
//! the file), but the process allocates nothing in proportion to the input: its
//! own memory (batches, windows of values, output buffers) stays constant. A
//! streamed output written through (standard output, a FIFO) has its bytes out
//! as they come, so a SIGBUS there ends it early, as an error would.

mod input;

use std::fs::File;
use std::io::{IsTerminal, Read, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};

use anyhow::{Context, Result, bail};
use indicatif::{ProgressBar, ProgressStyle};
use rayon::prelude::*;

pub(crate) use input::{
    Bytes, Input, Streamed, expand, expand_rel, read_batches, read_option_text, release_pages,
    take_free, walk_folder,
};
// The desktop player reads whole files itself: only regular ones.
#[cfg(feature = "view")]
pub(crate) use input::require_regular;

/// The default `--max-size`: 4 GiB.
pub(crate) const DEFAULT_MAX_SIZE: u64 = 4 << 30;

/// Regular files at least this large are memory-mapped rather than read.
const MAP_AT_LEAST: u64 = 1 << 20;

static MAX_SIZE: AtomicU64 = AtomicU64::new(DEFAULT_MAX_SIZE);
static SKIPPED: AtomicUsize = AtomicUsize::new(0);
static BREAK_LINKS: AtomicBool = AtomicBool::new(false);

/// Sets the largest input read whole from a pipe, device or standard input.
pub(crate) fn set_max_size(bytes: u64) {
    MAX_SIZE.store(bytes, Ordering::Relaxed);
}

fn max_size() -> u64 {
    MAX_SIZE.load(Ordering::Relaxed)
}

/// Lets outputs replace a regular file that has other hard links
/// (`--break-links`): the named file gets the new contents, the other names
/// keep the old ones.
pub(crate) fn set_break_links(yes: bool) {
    BREAK_LINKS.store(yes, Ordering::Relaxed);
}

/// How many paths were skipped with a warning while walking directories.
pub(crate) fn skipped() -> usize {
    SKIPPED.load(Ordering::Relaxed)
}

/// Parses a size: bytes, or a number with a binary suffix `K`, `M`, `G`, `T`
/// (optionally followed by `iB` or `B`): `4G` is 4 GiB.
pub(crate) fn parse_size(s: &str) -> Result<u64, String> {
    let t = s.trim();
    let split = t.find(|c: char| !c.is_ascii_digit()).unwrap_or(t.len());
    let (num, unit) = t.split_at(split);
    let n: u64 = num.parse().map_err(|_| format!("'{s}' is not a size (e.g. 4G, 512M, 100000)"))?;
    let shift = match unit.to_ascii_lowercase().as_str() {
        "" | "b" => 0,
        "k" | "kb" | "kib" => 10,
        "m" | "mb" | "mib" => 20,
        "g" | "gb" | "gib" => 30,
        "t" | "tb" | "tib" => 40,
        _ => return Err(format!("'{s}' is not a size (e.g. 4G, 512M, 100000)")),
    };
    n.checked_mul(1 << shift).ok_or_else(|| format!("'{s}' is too large"))
}

/// A size in the largest binary unit that divides it (`4 GiB`, `1500 bytes`).
pub(crate) fn show_size(n: u64) -> String {
    for (shift, unit) in [(40, "TiB"), (30, "GiB"), (20, "MiB"), (10, "KiB")] {
        if n >= 1 << shift && n.is_multiple_of(1 << shift) {
            return format!("{} {unit}", n >> shift);
        }
    }
    format!("{n} bytes")
}

/// The progress bar of a run over `n` files: shown on a terminal when there
/// is more than one file, hidden otherwise.
pub(crate) fn files_bar(n: usize) -> ProgressBar {
    if n > 1 && std::io::stderr().is_terminal() {
        let b = ProgressBar::new(n as u64);
        b.set_style(
            ProgressStyle::with_template(
                "{bar:40} {pos}/{len} files {elapsed_precise} (eta {eta}) {wide_msg}",
            )
            .unwrap_or_else(|_| ProgressStyle::default_bar()),
        );
        b
    } else {
        ProgressBar::hidden()
    }
}

/// Runs `f` over `inputs` on `threads` threads (all cores by default), with a
/// progress bar on a terminal, and returns the results in input order.
pub(crate) fn par_map<T: Send>(
    inputs: &[Input],
    threads: Option<usize>,
    f: impl Fn(&Input) -> T + Sync + Send,
) -> Result<Vec<T>> {
    let bar = files_bar(inputs.len());
    let work = || {
        inputs
            .par_iter()
            .map(|i| {
                let r = f(i);
                bar.inc(1);
                r
            })
            .collect::<Vec<T>>()
    };
    let out = match threads {
        Some(n) => rayon::ThreadPoolBuilder::new().num_threads(n.max(1)).build()?.install(work),
        None => work(),
    };
    bar.finish_and_clear();
    Ok(out)
}

// Outputs: `bvhkit-write`, with the CLI's `--break-links` and anyhow errors.

pub(crate) use bvhkit_write::{
    AtomicFile, BlockWriter, Dest, Output, Staged, WriteBehind, drop_cached_pages,
};

/// What writes one output's bytes (see [`write_atomic_all`]).
pub(crate) type WriteFn<'a> = bvhkit_write::WriteFn<'a, anyhow::Error>;

/// How the CLI opens outputs: `--break-links` ([`set_break_links`]), and
/// the refusal of a hard-linked output names it.
fn output_options() -> bvhkit_write::Options<'static> {
    bvhkit_write::Options::new()
        .break_links(BREAK_LINKS.load(Ordering::Relaxed))
        .break_links_hint("pass --break-links")
}

/// Where an output path leads ([`bvhkit_write::Options::destination`]): a
/// regular file with other hard links is refused unless `--break-links`.
pub(crate) fn destination(path: &Path) -> Result<Dest> {
    Ok(output_options().destination(path)?)
}

/// Makes the missing folders of an output path, as `mkdir -p` would: the
/// one rule of every writing command (`docs/commands.md`), applied by each
/// output function here just before it writes (so a run that fails earlier
/// leaves no empty folder), and by the writers that open their file after
/// [`destination`] (which only looks, and makes nothing). `-` and paths
/// whose folder exists are left alone; a symbolic link is never followed
/// here (its target's folder must exist, [`destination`] resolves it).
pub(crate) fn make_folders(path: &Path) -> Result<()> {
    if path.as_os_str() == "-" {
        return Ok(());
    }
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty())
        && !dir.is_dir()
    {
        std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    }
    Ok(())
}

/// Opens `path` for writing ([`bvhkit_write::Options::open_output`]): `-`
/// is standard output, devices and FIFOs are written through, a regular
/// file is replaced atomically by [`Output::finish`].
pub(crate) fn open_output(path: &Path) -> Result<Output> {
    make_folders(path)?;
    Ok(output_options().open_output(path)?)
}

/// Writes to `path` without ever leaving a half-written file
/// ([`bvhkit_write::Options::write_atomic`]). `-` writes to standard output.
pub(crate) fn write_atomic(
    path: &Path,
    write: impl FnOnce(&mut dyn Write) -> Result<()>,
) -> Result<()> {
    make_folders(path)?;
    output_options().write_atomic(path, write)
}

/// The output `path` opened and written by `write`, its writeback started,
/// not yet synced ([`bvhkit_write::Options::write_unsynced`]).
pub(crate) fn write_unsynced(
    path: &Path,
    write: impl FnOnce(&mut dyn Write) -> Result<()>,
) -> Result<Output> {
    make_folders(path)?;
    output_options().write_unsynced(path, write)
}

/// [`write_atomic`] of `head` followed by the rest of `body`
/// ([`bvhkit_write::Options::write_atomic_with_body`]).
pub(crate) fn write_atomic_with_body(path: &Path, head: &[u8], body: &mut File) -> Result<()> {
    make_folders(path)?;
    Ok(output_options().write_atomic_with_body(path, head, body)?)
}

/// Writes outputs that belong together, renamed into place in the order
/// given only when all are complete
/// ([`bvhkit_write::Options::write_atomic_all`]).
pub(crate) fn write_atomic_all(outputs: &mut [(&Path, &mut WriteFn<'_>)]) -> Result<()> {
    for (path, _) in outputs.iter() {
        make_folders(path)?;
    }
    output_options().write_atomic_all(outputs)
}

/// Has another program that needs a path (ffmpeg) write `out`
/// ([`bvhkit_write::Options::write_by_program`]).
pub(crate) fn write_by_program(out: &Path, write: impl FnOnce(&Path) -> Result<()>) -> Result<()> {
    make_folders(out)?;
    output_options().write_by_program(out, write)
}

/// Formats a `bvhkit` error for a file as `FILE:LINE:COL: message`.
pub(crate) fn located(input: &Input, err: &bvhkit::Error) -> String {
    match err.position() {
        Some(p) => format!("{}:{}:{}: {}", input.display(), p.line, p.column, err.message()),
        None => format!("{}: {}", input.display(), err.message()),
    }
}

/// Formats a warning as `FILE:LINE:COL: message`.
pub(crate) fn located_warning(input: &Input, w: &bvhkit::Warning) -> String {
    match w.position {
        Some(p) => format!("{}:{}:{}: {}", input.display(), p.line, p.column, w.message),
        None => format!("{}: {}", input.display(), w.message),
    }
}

/// Prints each of `input`'s reading warnings on standard error as
/// [`located_warning`] gives it, escaped for a terminal.
pub(crate) fn print_warnings(input: &Input, warnings: &[bvhkit::Warning]) {
    for w in warnings {
        eprintln!("{}", crate::text::escape(&located_warning(input, w)));
    }
}

/// Reads and parses an input, leniently unless `strict`.
pub(crate) fn load(
    input: &Input,
    strict: bool,
) -> Result<(bvhkit::Bvh, Vec<bvhkit::Warning>), LoadError> {
    let bytes = input.read().map_err(LoadError::Io)?;
    bvhkit::ReadOptions::new().lenient(!strict).parse(&bytes).map_err(LoadError::Parse)
}

/// The memory one thread keeps between [`load_reusing`] calls: the bytes
/// of a small file read whole and the parse's values.
#[derive(Default)]
pub(crate) struct LoadBuffers {
    bytes: Vec<u8>,
    parse: bvhkit::ParseBuffers,
}

impl LoadBuffers {
    /// Takes back the value memory of a clip done with, for the next load.
    pub(crate) fn recycle(&mut self, bvh: bvhkit::Bvh) {
        self.parse.recycle(bvh);
    }
}

/// [`load`] into the memory `buffers` keeps (the same clip and warnings),
/// the motion values scanned on rayon's pool (large files) only when
/// `parallel`: a thread that loads many files one after another writes
/// each into pages it already has (`bvhkit::ParseBuffers`).
pub(crate) fn load_reusing(
    input: &Input,
    strict: bool,
    parallel: bool,
    buffers: &mut LoadBuffers,
) -> Result<(bvhkit::Bvh, Vec<bvhkit::Warning>), LoadError> {
    let bytes = input.read_reusing(&mut buffers.bytes).map_err(LoadError::Io)?;
    let parsed = bvhkit::ReadOptions::new()
        .lenient(!strict)
        .parallel(parallel)
        .parse_with(&bytes, &mut buffers.parse)
        .map_err(LoadError::Parse);
    if let Bytes::Owned(_) = bytes {
        buffers.bytes = bytes.into_buffer();
    }
    parsed
}

/// Why an input could not be loaded.
#[derive(Debug)]
pub(crate) enum LoadError {
    /// It could not be read.
    Io(anyhow::Error),
    /// It is not BVH, or not enough of it.
    Parse(bvhkit::Error),
}

impl LoadError {
    pub(crate) fn describe(&self, input: &Input) -> String {
        match self {
            LoadError::Io(e) => crate::text::error_chain(e),
            LoadError::Parse(e) => located(input, e),
        }
    }
}

/// Refuses a plan of `(input, output)` pairs in which two inputs would be
/// written to one output (one would be silently lost) or an output names
/// an input; nothing has been written when it fails. Inputs and outputs are
/// compared by device and inode in one pass (each path looked at once),
/// so a folder of many files costs no more than its length.
pub(crate) fn check_targets<'a>(
    pairs: impl IntoIterator<Item = (&'a Input, &'a Path)> + Clone,
) -> Result<()> {
    let mut seen: std::collections::HashMap<&Path, &Input> = std::collections::HashMap::new();
    for (input, target) in pairs.clone() {
        if let Some(first) = seen.insert(target, input) {
            anyhow::bail!(
                "{} and {} would both be written to {}; nothing was written",
                first.display(),
                input.display(),
                target.display()
            );
        }
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        let id = |p: &Path| std::fs::metadata(p).ok().map(|m| (m.dev(), m.ino()));
        let ids: std::collections::HashMap<(u64, u64), &Path> = pairs
            .clone()
            .into_iter()
            .filter_map(|(i, _)| match i {
                Input::File(p) => Some((id(p)?, p.as_path())),
                Input::Stdin => None,
            })
            .collect();
        for (_, target) in pairs {
            if target.as_os_str() != "-"
                && let Some(p) = id(target).and_then(|i| ids.get(&i))
            {
                return Err(overwrite_refusal(target, p));
            }
        }
    }
    #[cfg(not(unix))]
    {
        let inputs: Vec<Input> = pairs.clone().into_iter().map(|(i, _)| i.clone()).collect();
        for (_, target) in pairs {
            refuse_overwriting_input(target, &inputs)?;
        }
    }
    Ok(())
}

/// The error for an output that is the input `input`.
fn overwrite_refusal(output: &Path, input: &Path) -> anyhow::Error {
    anyhow::anyhow!(
        "{}: the output is the input {}; refusing to overwrite it (choose another -o; \
         `bvh fmt --in-place` rewrites BVH files in place)",
        output.display(),
        input.display()
    )
}

/// Whether `-o` names a folder: it ends in `/` (or `\` on Windows) or is an
/// existing folder.
pub(crate) fn names_folder(o: &Path) -> bool {
    let s = o.as_os_str().as_encoded_bytes();
    s.ends_with(b"/") || (cfg!(windows) && s.ends_with(b"\\")) || o.is_dir()
}

/// Where each input is written: `-o` itself for one file named directly
/// (unless `-o` is a directory or ends with `/`), else under the folder
/// `-o` at the path the input has below the folder argument it was found
/// in (its file name when named directly), as `bvh fmt` does (`bvh edit`
/// and `bvh clean` use it). Two inputs on one output, or an output that is
/// an input, are refused before anything is read.
pub(crate) fn targets(
    output: &Path,
    args: &[PathBuf],
    found: &[(Input, PathBuf)],
) -> Result<std::collections::HashMap<Input, PathBuf>> {
    let any_dir = args.iter().any(|a| a.as_os_str() != "-" && a.is_dir());
    let single = found.len() == 1 && !any_dir;
    let is_stdout = output.as_os_str() == "-";
    let as_dir = names_folder(output);
    if !single && is_stdout {
        bail!("several inputs cannot all go to standard output; use -o DIR");
    }
    if !single && output.exists() && !output.is_dir() {
        bail!("{}: several inputs need -o to name a directory, not a file", output.display());
    }
    let mut pairs = Vec::with_capacity(found.len());
    for (input, rel) in found {
        let out = match input {
            _ if single && (is_stdout || !as_dir) => output.to_path_buf(),
            Input::Stdin => {
                bail!("standard input cannot be written under a directory; use -o FILE or -o -")
            }
            Input::File(_) => output.join(rel),
        };
        pairs.push((input, out));
    }
    check_targets(pairs.iter().map(|(i, o)| (*i, o.as_path())))?;
    Ok(pairs.into_iter().map(|(i, o)| (i.clone(), o)).collect())
}

/// Refuses, before any work, an output file that cannot be made where it
/// is asked for: a folder (or a path ending in `/`), or a path under a file
/// (`a.bvh/out.bvh`); the write would say so only after the whole
/// computation. Missing folders pass: the write makes them
/// ([`make_folders`]). `-` passes.
pub(crate) fn refuse_unplaceable_output(output: &Path) -> Result<()> {
    if output.as_os_str() == "-" {
        return Ok(());
    }
    if names_folder(output) {
        bail!("{}: is a directory (-o names the output file)", output.display());
    }
    // The nearest part of the path that exists must be a folder.
    let mut dir = output.parent();
    while let Some(d) = dir.filter(|d| !d.as_os_str().is_empty()) {
        if let Ok(meta) = std::fs::metadata(d) {
            if !meta.is_dir() {
                bail!("{}: {} is not a folder", output.display(), d.display());
            }
            break;
        }
        dir = d.parent();
    }
    Ok(())
}

/// Refuses to write `output` when it is one of `inputs`: compared as files
/// (same device and inode on Unix, else the same canonical path), so
/// `./a.bvh`, `dir/../a.bvh`, symbolic links and hard links all count.
/// `-` (standard output) and outputs that do not exist yet never clash.
pub(crate) fn refuse_overwriting_input(output: &Path, inputs: &[Input]) -> Result<()> {
    refuse_overwriting_inputs(&[output], inputs).map(drop)
}

/// [`refuse_overwriting_input`] for several outputs at once (the first
/// output that is an input is named), each output and each input looked up
/// once (a folder export of 432 files made 1,728 `stat` calls for its two
/// outputs before any file was read, on one thread); returns the size of
/// every input in bytes (0 for standard input or a file that cannot be
/// looked up).
pub(crate) fn refuse_overwriting_inputs(outputs: &[&Path], inputs: &[Input]) -> Result<Vec<u64>> {
    let metas: Vec<Option<std::fs::Metadata>> = inputs
        .iter()
        .map(|i| match i {
            Input::File(p) => std::fs::metadata(p).ok(),
            Input::Stdin => None,
        })
        .collect();
    for &output in outputs {
        // An output that does not exist (or `-`) is none of the inputs.
        if output.as_os_str() == "-" {
            continue;
        }
        let Ok(out) = std::fs::metadata(output) else { continue };
        for (input, meta) in inputs.iter().zip(&metas) {
            let (Input::File(p), Some(meta)) = (input, meta) else { continue };
            #[cfg(unix)]
            let same = {
                use std::os::unix::fs::MetadataExt;
                meta.dev() == out.dev() && meta.ino() == out.ino()
            };
            #[cfg(not(unix))]
            let same = {
                let _ = (meta, &out);
                bvhkit_write::same_file(p, output)
            };
            if same {
                return Err(overwrite_refusal(output, p));
            }
        }
    }
    Ok(metas.iter().map(|m| m.as_ref().map_or(0, std::fs::Metadata::len)).collect())
}

/// Prints what a per-file job over several inputs returned, in input
/// order: each file's message lines, escaped, or its error; the exit code
/// is 2 when any file failed. A broken pipe (`bvh ... | head`) ends it
/// quietly with success.
pub(crate) fn report(results: Vec<Result<Vec<String>>>) -> std::process::ExitCode {
    let mut failed = false;
    for r in results {
        match r {
            Ok(lines) => {
                for l in lines {
                    eprintln!("{}", crate::text::escape(&l));
                }
            }
            Err(e) => {
                if crate::is_broken_pipe(&e) {
                    return std::process::ExitCode::SUCCESS;
                }
                failed = true;
                eprintln!("bvh: error: {}", crate::text::escape(&crate::text::error_chain(&e)));
            }
        }
    }
    if failed { std::process::ExitCode::from(2) } else { std::process::ExitCode::SUCCESS }
}

/// Most threads `-j` may ask for: far beyond any machine's cores, far below
/// what takes the system seconds to create (`-j 100000` ran 30 s before it
/// failed).
pub(crate) const MAX_JOBS: usize = 1024;

/// The value of `-j`: a whole number of threads from 1 to [`MAX_JOBS`].
pub(crate) fn parse_jobs(s: &str) -> Result<usize, String> {
    match s.parse::<usize>() {
        Ok(n) if (1..=MAX_JOBS).contains(&n) => Ok(n),
        Ok(n) => Err(format!("{n} threads: expected 1 to {MAX_JOBS}")),
        Err(_) => Err(format!("expected a whole number of threads, 1 to {MAX_JOBS}, found {s:?}")),
    }
}

#[cfg(test)]
mod tests {
    #[allow(clippy::wildcard_imports)]
    use super::input::*;
    use super::*;

    #[test]
    fn sizes_parse_and_show() {
        assert_eq!(parse_size("4G"), Ok(DEFAULT_MAX_SIZE));
        assert_eq!(parse_size("4GiB"), Ok(4 << 30));
        assert_eq!(parse_size("512m"), Ok(512 << 20));
        assert_eq!(parse_size("100000"), Ok(100_000));
        assert_eq!(parse_size("1k"), Ok(1024));
        assert!(parse_size("").is_err());
        assert!(parse_size("4X").is_err());
        assert!(parse_size("-1").is_err());
        assert!(parse_size("99999999999T").is_err(), "overflow");
        assert_eq!(show_size(4 << 30), "4 GiB");
        assert_eq!(show_size(16 << 20), "16 MiB");
        assert_eq!(show_size(1500), "1500 bytes");
    }

    #[test]
    fn reads_are_bounded() {
        // Text that can start a BVH file is read up to the limit (other
        // text stops at its first 128 KiB: `io::input`'s tests).
        let mut data = vec![b' '; 1000];
        data[..9].copy_from_slice(b"HIERARCHY");
        assert_eq!(
            read_limited(&data[..], "x", 1000).unwrap().len(),
            1000,
            "the limit itself is fine"
        );
        let e = read_limited(&data[..], "pipe", 999).unwrap_err().to_string();
        assert_eq!(
            e,
            "pipe: more than 999 bytes (the --max-size limit for input that is not a regular \
             file); pass --max-size SIZE to read more"
        );
        // An endless reader stops at the limit.
        let endless = b"HIERARCHY".as_slice().chain(std::io::repeat(b' '));
        let e = read_limited(endless, "spaces", 1 << 20).unwrap_err().to_string();
        assert!(e.starts_with("spaces: more than 1 MiB"), "{e}");
    }

    #[test]
    fn regular_files_are_mapped_or_read_whole() {
        let dir = tempfile::tempdir().unwrap();
        let big = dir.path().join("big.bvh");
        let text: Vec<u8> =
            (0..MAP_AT_LEAST as usize + 12345).map(|i| b'0' + (i % 10) as u8).collect();
        std::fs::write(&big, &text).unwrap();
        // The limit is for streams: a regular file is bounded by its size.
        let b = read_file(&big, 10).unwrap();
        assert!(matches!(b, Bytes::Mapped(_)));
        assert_eq!(&b[..], &text[..]);
        let small = dir.path().join("small.bvh");
        std::fs::write(&small, &text[..100]).unwrap();
        let b = read_file(&small, 10).unwrap();
        assert!(matches!(b, Bytes::Owned(_)));
        assert_eq!(&b[..], &text[..100]);
        std::fs::write(&small, b"").unwrap();
        assert!(read_file(&small, 10).unwrap().is_empty());
        assert!(read_file(dir.path(), 10).unwrap_err().to_string().ends_with("is a directory"));
        // The player reads whole files itself: only regular ones reach it.
        require_regular(&big).unwrap();
        #[cfg(unix)]
        assert!(
            require_regular(Path::new("/dev/zero"))
                .unwrap_err()
                .to_string()
                .contains("not a regular file")
        );
        // A /proc file claims size 0 but has content: it is read, within the
        // limit, or no further than its start when that cannot be BVH.
        #[cfg(target_os = "linux")]
        {
            let status = read_file(Path::new("/proc/self/status"), 1 << 20).unwrap();
            assert!(status.starts_with(b"Name:"));
            let status = read_file(Path::new("/proc/self/status"), 10).unwrap();
            assert!(status.starts_with(b"Name:") && status.len() > 10);
        }
    }
}
