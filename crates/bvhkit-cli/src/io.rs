//! Inputs, outputs, parallel work and progress shared by the commands.
//!
//! Reading: regular files of 1 MiB or more are memory-mapped (see the
//! `unsafe` invariant in ARCHITECTURE.md), smaller ones are read; pipes,
//! devices and standard input are read up to `--max-size` bytes and refused
//! beyond it. Writing: [`write_atomic`] / [`AtomicFile`] write a regular file
//! through an anonymous temporary file (Linux `O_TMPFILE`) that gets a name
//! only once it is complete, so the target is always the old file or the
//! whole new one, and nothing stays behind after a crash or `kill -9`;
//! devices, FIFOs and `/dev/stdout`-style names are written through, and a
//! symbolic link is followed to the file it names. A regular file with other
//! hard links is refused unless `--break-links` is given (see [`destination`]).

use std::fs::File;
use std::io::{IsTerminal, Read, Seek, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};

use anyhow::{Context, Result, bail};
use indicatif::{ProgressBar, ProgressStyle};
use rayon::prelude::*;

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

/// One input: a file or standard input.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub(crate) enum Input {
    Stdin,
    File(PathBuf),
}

/// The bytes of a whole input: mapped or read.
#[derive(Debug)]
pub(crate) enum Bytes {
    /// Read into memory.
    Owned(Vec<u8>),
    /// A read-only mapping of a regular file.
    Mapped(memmap2::Mmap),
}

impl std::ops::Deref for Bytes {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        match self {
            Bytes::Owned(v) => v,
            Bytes::Mapped(m) => m,
        }
    }
}

impl Input {
    /// How the input is named in messages.
    pub(crate) fn display(&self) -> String {
        match self {
            Input::Stdin => "<stdin>".to_string(),
            Input::File(p) => p.display().to_string(),
        }
    }

    /// The whole input: a regular file is mapped (1 MiB or more) or read, and
    /// bounded by its size; anything else (standard input, a pipe, a device)
    /// is read up to the `--max-size` limit and refused beyond it.
    pub(crate) fn read(&self) -> Result<Bytes> {
        match self {
            Input::Stdin => read_limited(std::io::stdin().lock(), "standard input", max_size())
                .map(Bytes::Owned),
            Input::File(p) => read_file(p, max_size()),
        }
    }

    /// The input for a streaming reader: a regular file's bytes in memory
    /// when that costs no more than constant memory (mapped from 1 MiB on,
    /// read whole below), which `ReadOptions::frame_reader_slice` scans in
    /// place; anything else (standard input, a pipe, a device, a file the
    /// system refuses to map) as a reader, read a chunk at a time.
    pub(crate) fn open_stream(&self) -> Result<Streamed> {
        let p = match self {
            Input::Stdin => return Ok(Streamed::Reader(Box::new(std::io::stdin()))),
            Input::File(p) => p,
        };
        let name = || p.display().to_string();
        let file = File::open(p).with_context(name)?;
        let meta = file.metadata().with_context(name)?;
        if meta.is_dir() {
            bail!("{}: is a directory", p.display());
        }
        let len = meta.len();
        if meta.is_file() && len > 0 {
            if len < MAP_AT_LEAST {
                let mut buf = Vec::with_capacity(len as usize);
                file.take(len).read_to_end(&mut buf).with_context(name)?;
                return Ok(Streamed::Bytes(Bytes::Owned(buf)));
            }
            if let Some(map) = map_regular(&file, len, false) {
                return Ok(Streamed::Bytes(Bytes::Mapped(map)));
            }
        }
        Ok(Streamed::Reader(Box::new(file)))
    }
}

/// An input ready for a streaming reader ([`Input::open_stream`]).
pub(crate) enum Streamed {
    /// A regular file in memory: mapped, or read whole when small.
    Bytes(Bytes),
    /// Anything else, read as it comes.
    Reader(Box<dyn Read + Send>),
}

/// Reads (or maps) the file at `p`; `limit` bounds what is read from a file
/// that is not regular (or that is but claims size 0, as `/proc` files do).
fn read_file(p: &Path, limit: u64) -> Result<Bytes> {
    let name = || p.display().to_string();
    let file = File::open(p).with_context(name)?;
    let meta = file.metadata().with_context(name)?;
    if meta.is_dir() {
        bail!("{}: is a directory", p.display());
    }
    if meta.is_file() && meta.len() > 0 {
        let len = meta.len();
        if len >= MAP_AT_LEAST
            && let Some(map) = map_regular(&file, len, true)
        {
            return Ok(Bytes::Mapped(map));
        }
        // Small or not mappable: read it, up to its size when opened (a file that grows
        // meanwhile is read as it was).
        let mut buf =
            Vec::with_capacity(usize::try_from(len).unwrap_or(0).min(MAP_AT_LEAST as usize));
        file.take(len).read_to_end(&mut buf).with_context(name)?;
        return Ok(Bytes::Owned(buf));
    }
    read_limited(file, &name(), limit).map(Bytes::Owned)
}

/// Maps the regular file `file` of `len` bytes read-only, pre-faulted when
/// `populate` (a whole-file parse, whose threads then find every page
/// mapped); else the pages are mapped as a streaming reader first touches
/// them, on the threads that scan them, while the work on earlier frames
/// goes on, instead of all before the first frame. `None` where the system
/// refuses (some network and FUSE file systems), and the caller reads
/// instead.
fn map_regular(file: &File, len: u64, populate: bool) -> Option<memmap2::Mmap> {
    let len = usize::try_from(len).ok()?;
    // SAFETY: the mapping is read-only and private to this process.
    // Another process may still change or truncate the file while it is
    // mapped: changed bytes are read as whatever they are (the parser
    // accepts any bytes), and a page past a truncated end raises SIGBUS,
    // which ends the process before it commits any output file (outputs
    // are committed only after a complete run; see ARCHITECTURE.md, "One
    // `unsafe` block in the CLI").
    #[allow(unsafe_code)]
    let map = unsafe {
        let mut o = memmap2::MmapOptions::new();
        o.len(len);
        if populate {
            o.populate();
        }
        o.map_copy_read_only(file)
    };
    let map = map.ok()?;
    if !populate {
        // Read in order: the kernel maps pages ahead of each fault.
        let _ = map.advise(memmap2::Advice::Sequential);
    }
    Some(map)
}

/// Refuses a path that is not a regular file (a device, a FIFO), for readers
/// that take paths and read them whole without a limit (the desktop player).
#[cfg_attr(not(feature = "view"), allow(dead_code))]
pub(crate) fn require_regular(p: &Path) -> Result<()> {
    let meta = std::fs::metadata(p).with_context(|| p.display().to_string())?;
    if !meta.is_file() {
        bail!("{}: not a regular file (bvh view reads whole files only)", p.display());
    }
    Ok(())
}

/// Reads all of `r`, refusing more than `limit` bytes with an error that
/// names `what` and the limit (an endless pipe or `/dev/zero` stops there).
pub(crate) fn read_limited(r: impl Read, what: &str, limit: u64) -> Result<Vec<u8>> {
    let mut buf = Vec::new();
    r.take(limit.saturating_add(1)).read_to_end(&mut buf).with_context(|| what.to_string())?;
    if buf.len() as u64 > limit {
        bail!(
            "{what}: more than {} (the --max-size limit for input that is not a regular file); \
             pass --max-size SIZE to read more",
            show_size(limit)
        );
    }
    Ok(buf)
}

/// Expands arguments: `-` is standard input, directories are walked for
/// `*.bvh` (any case), sorted; files are taken as given. A broken symbolic
/// link, a link loop or an unreadable folder met while walking is reported
/// (`bvh: warning: PATH: reason`) and skipped, and counted in [`skipped`].
pub(crate) fn expand(args: &[PathBuf]) -> Result<Vec<Input>> {
    Ok(expand_rel(args)?.into_iter().map(|(i, _)| i).collect())
}

/// [`expand`], with each input's path relative to the folder it was found
/// in (its file name when named directly; `-` for standard input), which is
/// where its output goes under an output folder.
pub(crate) fn expand_rel(args: &[PathBuf]) -> Result<Vec<(Input, PathBuf)>> {
    let mut out = Vec::new();
    for a in args {
        if a.as_os_str() == "-" {
            out.push((Input::Stdin, PathBuf::from("-")));
        } else if a.is_dir() {
            let mut found: Vec<PathBuf> = Vec::new();
            for entry in walkdir::WalkDir::new(a).follow_links(true) {
                let entry = match entry {
                    Ok(e) => e,
                    Err(e) => {
                        SKIPPED.fetch_add(1, Ordering::Relaxed);
                        let w = walk_problem(a, &e);
                        eprintln!("bvh: warning: {}", crate::text::escape(&w));
                        continue;
                    }
                };
                let p = entry.path();
                if entry.file_type().is_file()
                    && p.extension()
                        .is_some_and(|e| e.to_string_lossy().eq_ignore_ascii_case("bvh"))
                {
                    found.push(p.to_path_buf());
                }
            }
            found.sort();
            if found.is_empty() {
                let w = format!("no *.bvh file under {}", a.display());
                eprintln!("bvh: warning: {}", crate::text::escape(&w));
            }
            out.extend(found.into_iter().map(|p| {
                let rel = p.strip_prefix(a).map(Path::to_path_buf).unwrap_or_else(|_| p.clone());
                (Input::File(p), rel)
            }));
        } else {
            let rel = a.file_name().map_or_else(|| a.clone(), PathBuf::from);
            out.push((Input::File(a.clone()), rel));
        }
    }
    if out.iter().filter(|(i, _)| *i == Input::Stdin).count() > 1 {
        bail!("standard input (-) can be read only once");
    }
    Ok(out)
}

/// `PATH: reason` for a path that walking could not follow.
fn walk_problem(root: &Path, e: &walkdir::Error) -> String {
    let path = e.path().unwrap_or(root).display();
    if let Some(ancestor) = e.loop_ancestor() {
        return format!("{path}: symbolic link loop (back to {}); skipped", ancestor.display());
    }
    match e.io_error() {
        Some(io) if io.kind() == std::io::ErrorKind::NotFound => {
            let link = e.path().and_then(|p| std::fs::read_link(p).ok());
            match link {
                Some(t) => format!("{path}: broken symbolic link (to {}); skipped", t.display()),
                None => format!("{path}: no longer exists; skipped"),
            }
        }
        Some(io) if io.kind() == std::io::ErrorKind::PermissionDenied => {
            format!("{path}: permission denied; skipped")
        }
        Some(io) if io.raw_os_error() == Some(40) => {
            // ELOOP from the operating system: a link that resolves to itself.
            format!("{path}: symbolic link loop; skipped")
        }
        Some(io) => format!("{path}: {io}; skipped"),
        None => format!("{path}: {e}; skipped"),
    }
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

/// Where an output path leads.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Dest {
    /// This process's standard output (`-`, `/dev/stdout`, `/dev/fd/1`, `/proc/self/fd/1`).
    Stdout,
    /// Something that is written through, never replaced: a device, a FIFO,
    /// a socket, or a `/proc` name such as `/dev/fd/63` (what `>(cmd)` gives).
    Through(PathBuf),
    /// A regular file, existing or not, at the end of any symbolic links: it
    /// is replaced atomically.
    Replace(PathBuf),
}

/// Finds where `path` leads. Symbolic links are followed (so a link is never
/// replaced by a regular file: its target is), up to 40 of them. A regular
/// file with more than one hard link is refused unless `--break-links` was
/// given ([`set_break_links`]): replacing it by a rename would give this name
/// the new contents and silently leave the other names with the old ones,
/// and writing into it in place could leave it half-written.
pub(crate) fn destination(path: &Path) -> Result<Dest> {
    let s = path.as_os_str();
    if s == "-" || s == "/dev/stdout" || s == "/dev/fd/1" || s == "/proc/self/fd/1" {
        return Ok(Dest::Stdout);
    }
    let mut p = path.to_path_buf();
    for _ in 0..40 {
        // Resolve the folder part (it exists when the file can be written).
        if let (Some(parent), Some(name)) = (p.parent(), p.file_name())
            && !parent.as_os_str().is_empty()
            && let Ok(dir) = std::fs::canonicalize(parent)
        {
            p = dir.join(name);
        }
        if p.starts_with("/proc") {
            return Ok(Dest::Through(p));
        }
        match std::fs::symlink_metadata(&p) {
            Ok(m) if m.file_type().is_symlink() => {
                let t = std::fs::read_link(&p).with_context(|| format!("{}", p.display()))?;
                p = match p.parent() {
                    Some(d) if t.is_relative() => d.join(t),
                    _ => t,
                };
            }
            Ok(m) if m.is_dir() => bail!("{}: is a directory", path.display()),
            Ok(m) if !m.is_file() => return Ok(Dest::Through(p)),
            Ok(m) => {
                refuse_hard_link(path, &m)?;
                return Ok(Dest::Replace(p));
            }
            Err(_) => return Ok(Dest::Replace(p)),
        }
    }
    bail!("{}: too many levels of symbolic links", path.display())
}

/// Refuses to replace a regular file that has other hard links, naming the
/// link count, unless `--break-links` was given.
fn refuse_hard_link(path: &Path, meta: &std::fs::Metadata) -> Result<()> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        let links = meta.nlink();
        if links > 1 && !BREAK_LINKS.load(Ordering::Relaxed) {
            bail!(
                "{}: has {links} hard links; replacing it would leave the other {} with the old \
                 contents (write elsewhere, or pass --break-links to replace this name only)",
                path.display(),
                if links == 2 { "name".to_string() } else { format!("{} names", links - 1) }
            );
        }
    }
    #[cfg(not(unix))]
    let _ = (path, meta);
    Ok(())
}

/// A file being written that replaces its target only when complete.
///
/// On Linux it is an anonymous file (`O_TMPFILE`) in the target's folder:
/// it has no name while it is written, so a crash or `kill -9` leaves
/// nothing behind. [`AtomicFile::commit`] links it to a fresh temporary name
/// and renames that over the target (the one moment a name exists is
/// between those two calls). Where `O_TMPFILE` is refused (other systems,
/// some file systems), a named temporary file is used, removed on error.
pub(crate) struct AtomicFile {
    /// The file, written through [`Output`] with its writeback started as
    /// it goes.
    out: WriteBehind,
    target: PathBuf,
    /// The named temporary file of the fallback; `None` when anonymous.
    named: Option<tempfile::TempPath>,
}

/// Bytes written between two requests to start writing back
/// ([`WriteBehind`]).
const WRITE_BEHIND: u64 = 2 << 20;

/// Where a file's writeback has been asked for: the file's offset, the end
/// of what was written, and where the writeback not yet asked for starts.
#[derive(Default)]
struct Writeback {
    at: u64,
    end: u64,
    started: u64,
}

impl Writeback {
    /// Records `n` bytes written at the offset, and starts writing back
    /// once [`WRITE_BEHIND`] bytes wait.
    fn wrote(&mut self, file: &File, n: usize) {
        self.at += n as u64;
        self.end = self.end.max(self.at);
        if self.end - self.started >= WRITE_BEHIND {
            self.start(file);
        }
    }

    /// Starts writing back the bytes written since the last time (advice
    /// only: an error changes nothing written, so it is ignored).
    fn start(&mut self, file: &File) {
        #[cfg(target_os = "linux")]
        {
            let len = std::num::NonZeroU64::new(self.end - self.started);
            let advice = rustix::fs::Advice::DontNeed;
            let _ = rustix::fs::fadvise(file, self.started, len, advice);
        }
        #[cfg(not(target_os = "linux"))]
        let _ = file;
        self.started = self.end;
    }
}

/// An output file written through, asking the kernel to start writing back
/// every [`WRITE_BEHIND`] bytes as they are written (Linux:
/// `posix_fadvise(POSIX_FADV_DONTNEED)` on the range just written, which
/// starts its writeback without waiting and drops none of it before it is
/// on disk), so that the sync before the file is put in place
/// ([`AtomicFile::commit`]) waits for the last few megabytes instead of the
/// whole output. Elsewhere, a plain file. [`AtomicFile`] writes through
/// one; [`AtomicFile::write_behind`] makes another, for a writer that
/// needs the file itself (to seek, or on another thread).
pub(crate) struct WriteBehind {
    file: File,
    written: Writeback,
}

impl WriteBehind {
    /// Writes into `file` from its start.
    pub(crate) fn new(file: File) -> WriteBehind {
        WriteBehind { file, written: Writeback::default() }
    }

    /// The file.
    pub(crate) fn into_inner(self) -> File {
        self.file
    }

    /// Starts writing back whatever was written and not yet started.
    pub(crate) fn write_back_now(&mut self) {
        self.written.start(&self.file);
    }
}

impl std::io::Seek for WriteBehind {
    fn seek(&mut self, pos: std::io::SeekFrom) -> std::io::Result<u64> {
        // A writer that moves back (a header patched at the end) writes in
        // place: those bytes are written back with the rest by the sync.
        self.written.at = self.file.seek(pos)?;
        Ok(self.written.at)
    }
}

impl Write for WriteBehind {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let n = self.file.write(buf)?;
        self.written.wrote(&self.file, n);
        Ok(n)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.file.flush()
    }
}

impl AtomicFile {
    /// Starts replacing the regular file `target` (which may not exist yet).
    pub(crate) fn create(target: &Path) -> Result<AtomicFile> {
        Self::create_as(target, true)
    }

    /// [`AtomicFile::create`], choosing whether to try `O_TMPFILE` (tests use
    /// `false` to check the fallback).
    pub(crate) fn create_as(target: &Path, anonymous: bool) -> Result<AtomicFile> {
        let dir = folder_of(target);
        #[cfg(target_os = "linux")]
        if anonymous && let Some(file) = anonymous_in(dir) {
            let out = WriteBehind::new(file);
            return Ok(AtomicFile { out, target: target.to_path_buf(), named: None });
        }
        let _ = anonymous;
        let (file, path) = temp_in(dir)?.into_parts();
        Ok(AtomicFile {
            out: WriteBehind::new(file),
            target: target.to_path_buf(),
            named: Some(path),
        })
    }

    /// The file to write (and seek) into.
    pub(crate) fn file(&mut self) -> &mut File {
        &mut self.out.file
    }

    /// A path by which another program (ffmpeg) opens this very file: on
    /// Linux the anonymous file's `/proc/PID/fd/N` (not `/proc/self`, which
    /// would be the other program's), else its temporary name.
    pub(crate) fn path_for_programs(&self) -> PathBuf {
        #[cfg(target_os = "linux")]
        if self.named.is_none() {
            use std::os::fd::AsRawFd;
            return PathBuf::from(format!(
                "/proc/{}/fd/{}",
                std::process::id(),
                self.out.file.as_raw_fd()
            ));
        }
        match &self.named {
            Some(p) => p.to_path_buf(),
            None => unreachable!("only Linux makes anonymous files"),
        }
    }

    /// A [`WriteBehind`] writer of the file (a handle of its own, sharing
    /// the file's offset: write through one or the other, not both).
    pub(crate) fn write_behind(&self) -> Result<WriteBehind> {
        let file = self.out.file.try_clone().context("opening the output file again")?;
        Ok(WriteBehind::new(file))
    }

    /// Syncs the file, gives it the owner and mode of the file it replaces
    /// (best effort: changing the owner needs privileges), and puts it in
    /// place of the target in one rename.
    pub(crate) fn commit(self) -> Result<()> {
        self.stage()?.publish()
    }

    /// Everything [`AtomicFile::commit`] does but the rename: the file is
    /// synced and has a temporary name beside the target (removed if the
    /// [`Staged`] is dropped unpublished).
    fn stage(self) -> Result<Staged> {
        let AtomicFile { out, target, named } = self;
        let file = out.into_inner();
        let what = || format!("writing {}", target.display());
        file.sync_all().with_context(what)?;
        keep_owner_and_mode(&file, &target).with_context(what)?;
        let named = match named {
            Some(p) => p,
            None => link_anonymous(&file, folder_of(&target)).with_context(what)?,
        };
        Ok(Staged { named, target })
    }
}

/// A complete file under a temporary name beside its target, waiting for
/// its rename; dropped unpublished, the temporary name is removed.
pub(crate) struct Staged {
    named: tempfile::TempPath,
    target: PathBuf,
}

impl Staged {
    /// Renames the file over its target.
    pub(crate) fn publish(self) -> Result<()> {
        let Staged { named, target } = self;
        named
            .persist(&target)
            .map_err(|e| e.error)
            .with_context(|| format!("writing {}", target.display()))?;
        Ok(())
    }
}

/// Gives `file` the owner (best effort: it needs privileges) and mode of
/// the file at `target`, if there is one.
fn keep_owner_and_mode(file: &File, target: &Path) -> std::io::Result<()> {
    #[cfg(unix)]
    if let Ok(old) = std::fs::metadata(target) {
        use std::os::unix::fs::{MetadataExt, PermissionsExt};
        // The owner first: changing it clears set-user-ID bits.
        let _ = std::os::unix::fs::fchown(file, Some(old.uid()), Some(old.gid()));
        file.set_permissions(std::fs::Permissions::from_mode(old.mode() & 0o7777))?;
    }
    #[cfg(not(unix))]
    let _ = (file, target);
    Ok(())
}

/// Has another program that needs a path (ffmpeg) write `out`, as
/// [`open_output`] would: `write` gets the path of a fresh [`AtomicFile`]
/// (on Linux, the anonymous file's `/proc/PID/fd/N` name, which another
/// process of the same user opens as that very file; else its temporary
/// name) and writes it whole. A regular file (at the end of any links) is
/// then put in place, keeping its owner and mode; anything else gets a copy.
/// Nothing is left behind if either process is killed: the file has no name.
pub(crate) fn write_by_program(out: &Path, write: impl FnOnce(&Path) -> Result<()>) -> Result<()> {
    match destination(out)? {
        Dest::Replace(target) => {
            let file = AtomicFile::create(&target)?;
            write(&file.path_for_programs())?;
            file.commit()
        }
        _ => {
            // Written in the system's temporary folder, never committed.
            let mut file = AtomicFile::create(&std::env::temp_dir().join("bvh-output"))?;
            write(&file.path_for_programs())?;
            let mut o = open_output(out)?;
            let f = file.file();
            f.rewind()?;
            std::io::copy(f, &mut o).with_context(|| format!("writing {}", out.display()))?;
            o.finish()
        }
    }
}

fn folder_of(path: &Path) -> &Path {
    match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    }
}

/// An anonymous writable file in `dir`, if the system and file system allow.
#[cfg(target_os = "linux")]
fn anonymous_in(dir: &Path) -> Option<File> {
    use rustix::fs::{CWD, Mode, OFlags, openat};
    // Mode 0666 less the umask, as for `File::create`.
    let fd = openat(CWD, dir, OFlags::TMPFILE | OFlags::RDWR | OFlags::CLOEXEC, Mode::from(0o666))
        .ok()?;
    Some(File::from(fd))
}

/// Gives the anonymous `file` a fresh temporary name in `dir` (through
/// `/proc/self/fd/N`, else `AT_EMPTY_PATH`, which needs a capability); where
/// neither works, copies it into a named temporary file.
fn link_anonymous(file: &File, dir: &Path) -> Result<tempfile::TempPath> {
    #[cfg(target_os = "linux")]
    {
        use std::os::fd::AsRawFd;

        use rustix::fs::{AtFlags, CWD, linkat};
        let proc_path = format!("/proc/self/fd/{}", file.as_raw_fd());
        let linked = temp_builder().make_in(dir, |name| {
            linkat(CWD, proc_path.as_str(), CWD, name, AtFlags::SYMLINK_FOLLOW)
                .or_else(|_| linkat(file, "", CWD, name, AtFlags::EMPTY_PATH))
                .map_err(std::io::Error::from)
        });
        if let Ok(t) = linked {
            return Ok(t.into_temp_path());
        }
    }
    let mut tmp = temp_in(dir)?;
    let mut src = file.try_clone()?;
    std::io::Seek::seek(&mut src, std::io::SeekFrom::Start(0))?;
    std::io::copy(&mut src, tmp.as_file_mut())?;
    tmp.as_file().sync_all()?;
    #[cfg(unix)]
    tmp.as_file().set_permissions(file.metadata()?.permissions())?;
    Ok(tmp.into_temp_path())
}

/// An output being written: see [`open_output`].
pub(crate) enum Output {
    /// Standard output.
    Stdout(std::io::Stdout),
    /// A device, FIFO or `/proc` name, written through.
    Through(File),
    /// A regular file, replaced when complete.
    Atomic(AtomicFile),
}

/// Opens `path` for writing: `-` (and `/dev/stdout`) is standard output,
/// devices, FIFOs and `/proc` names are written through, and a regular file
/// (at the end of any symbolic links) is replaced atomically by
/// [`Output::finish`]; until then the old file is untouched.
pub(crate) fn open_output(path: &Path) -> Result<Output> {
    Ok(match destination(path)? {
        Dest::Stdout => Output::Stdout(std::io::stdout()),
        Dest::Through(p) => {
            let regular = std::fs::metadata(&p).is_ok_and(|m| m.is_file());
            let f = std::fs::OpenOptions::new()
                .write(true)
                .create(regular)
                .truncate(regular)
                .open(&p)
                .with_context(|| format!("opening {}", p.display()))?;
            Output::Through(f)
        }
        Dest::Replace(p) => Output::Atomic(AtomicFile::create(&p)?),
    })
}

impl Output {
    /// Whether the output can seek (a regular file being replaced).
    pub(crate) fn atomic_file(&mut self) -> Option<&mut AtomicFile> {
        match self {
            Output::Atomic(a) => Some(a),
            _ => None,
        }
    }

    /// Flushes and, for a regular file, syncs it and gives it its
    /// temporary name without putting it in place ([`Staged::publish`]
    /// does); anything else is finished.
    pub(crate) fn stage(self) -> Result<Option<Staged>> {
        match self {
            Output::Atomic(a) => Ok(Some(a.stage()?)),
            other => other.finish().map(|()| None),
        }
    }

    /// For a regular file being replaced, starts writing back what was
    /// written (the blocks are allocated now, in the file system's running
    /// transaction, so that a sync of another file commits them too).
    pub(crate) fn start_writeback(&mut self) {
        if let Output::Atomic(a) = self {
            a.out.write_back_now();
        }
    }

    /// Flushes and, for a regular file, puts it in place.
    pub(crate) fn finish(self) -> Result<()> {
        match self {
            Output::Stdout(mut s) => s.flush().map_err(Into::into),
            Output::Through(mut f) => f.flush().map_err(Into::into),
            Output::Atomic(a) => a.commit(),
        }
    }
}

impl Write for Output {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        match self {
            Output::Stdout(s) => s.write(buf),
            Output::Through(f) => f.write(buf),
            Output::Atomic(a) => a.out.write(buf),
        }
    }

    fn write_all(&mut self, buf: &[u8]) -> std::io::Result<()> {
        match self {
            Output::Stdout(s) => s.write_all(buf),
            Output::Through(f) => f.write_all(buf),
            Output::Atomic(a) => a.out.write_all(buf),
        }
    }

    fn flush(&mut self) -> std::io::Result<()> {
        match self {
            Output::Stdout(s) => s.flush(),
            Output::Through(f) => f.flush(),
            Output::Atomic(a) => a.out.flush(),
        }
    }
}

/// Writes to `path` without ever leaving a half-written file: see
/// [`open_output`]. `-` writes to standard output.
pub(crate) fn write_atomic(
    path: &Path,
    write: impl FnOnce(&mut dyn Write) -> Result<()>,
) -> Result<()> {
    write_staged(path, write)?.map_or(Ok(()), Staged::publish)
}

/// [`write_atomic`] up to the rename: a regular file comes back synced
/// under its temporary name ([`Staged`]), anything else finished.
fn write_staged(
    path: &Path,
    write: impl FnOnce(&mut dyn Write) -> Result<()>,
) -> Result<Option<Staged>> {
    write_unsynced(path, write)?.stage()
}

/// The output `path` opened and written by `write`, its writeback started
/// ([`Output::start_writeback`]), not yet synced: [`Output::stage`] or
/// [`Output::finish`] it. A caller that syncs another file first lets that
/// sync commit this one's blocks too.
pub(crate) fn write_unsynced(
    path: &Path,
    write: impl FnOnce(&mut dyn Write) -> Result<()>,
) -> Result<Output> {
    let mut out = open_output(path)?;
    {
        let mut w = std::io::BufWriter::with_capacity(1 << 16, &mut out);
        write(&mut w)?;
        w.flush()?;
    }
    out.start_writeback();
    Ok(out)
}

/// [`write_atomic`] of `head` followed by the rest of `body` (from its
/// position to its end): into a regular file, the kernel copies file to
/// file (`copy_file_range`), with no round trip of the body through this
/// process; other outputs get it through a buffer.
pub(crate) fn write_atomic_with_body(path: &Path, head: &[u8], body: &mut File) -> Result<()> {
    let mut out = open_output(path)?;
    match out.atomic_file() {
        Some(a) => {
            let f = a.file();
            f.write_all(head)?;
            std::io::copy(body, f)?;
        }
        None => {
            let mut w = std::io::BufWriter::with_capacity(1 << 20, &mut out);
            w.write_all(head)?;
            std::io::copy(body, &mut w)?;
            w.flush()?;
        }
    }
    out.finish()
}

/// What writes one output's bytes (see [`write_atomic_all`]).
pub(crate) type WriteFn<'a> = dyn FnMut(&mut dyn Write) -> Result<()> + 'a;

/// Writes outputs that belong together (a `.gltf` and the `.bin` it names)
/// so that a reader never sees one without its partner: every output is
/// written completely into its temporary file first, then all are synced
/// and named, then renamed into place in the order given (the file that is
/// referred to first). Any failure before the renames removes every
/// temporary file and leaves every target as it was; outputs written
/// through (devices, FIFOs) cannot be held back and get their bytes as they
/// are written.
pub(crate) fn write_atomic_all(outputs: &mut [(&Path, &mut WriteFn<'_>)]) -> Result<()> {
    let mut written = Vec::with_capacity(outputs.len());
    for (path, write) in outputs.iter_mut() {
        let mut out = open_output(path)?;
        {
            let mut w = std::io::BufWriter::with_capacity(1 << 16, &mut out);
            write(&mut w)?;
            w.flush()?;
        }
        written.push(out);
    }
    let mut staged = Vec::with_capacity(written.len());
    for out in written {
        staged.push(out.stage()?);
    }
    staged.into_iter().flatten().try_for_each(Staged::publish)
}

/// Names of this tool's temporary files: `.bvh-XXXXXX.tmp`.
fn temp_builder() -> tempfile::Builder<'static, 'static> {
    let mut b = tempfile::Builder::new();
    b.prefix(".bvh-").suffix(".tmp");
    b
}

/// A named temporary file in `dir` (so that renaming it over a target there
/// is atomic), readable by others like a file made by `File::create`.
pub(crate) fn temp_in(dir: &Path) -> Result<tempfile::NamedTempFile> {
    let mut b = temp_builder();
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        b.permissions(std::fs::Permissions::from_mode(0o644));
    }
    b.tempfile_in(dir).with_context(|| format!("creating a temporary file in {}", dir.display()))
}

/// Values per batch of frames (about 2 MiB).
pub(crate) const BATCH_VALUES: usize = 256 * 1024;

/// Reads the frames of `rdr` in batches of whole frames (about
/// [`BATCH_VALUES`] values each) and hands each batch to `each(frames,
/// values)`, in order, while the next batch is read and parsed: both run on
/// rayon's pool (`rayon::join`, the whole loop on a worker of the pool), so
/// the parse, its halves and the work on the frames share the cores by
/// work stealing, with no thread of their own to wake, in constant memory
/// (two batches exist at a time).
///
/// `each` returns whether it wants more frames; the reading stops when it
/// says no or fails. The outer error is `each`'s, the inner one the
/// reader's (a bad frame: the batches before it were handed out first).
pub(crate) fn read_batches<R: bvhkit::FrameSource + Send>(
    rdr: &mut bvhkit::FrameReader<R>,
    mut each: impl FnMut(usize, &[f64]) -> Result<bool> + Send,
) -> Result<Result<(), bvhkit::Error>> {
    let width = rdr.skeleton().n_channels();
    // Frames without channels still count: batches carry their number.
    let per_batch = (BATCH_VALUES / width.max(1)).max(2);
    // One batch into `batch`: its frame count, whether the frames ended,
    // and the reader's error (after the frames before it).
    let read = |rdr: &mut bvhkit::FrameReader<R>, batch: &mut Vec<f64>| {
        batch.clear();
        let mut n = 0;
        // A batch is the frames of one window of input (`read_window`: the
        // buffer they were parsed into, not a copy) when they make half a
        // batch or more, else of as many windows as that takes; at most
        // two batches' worth.
        while n < per_batch / 2 {
            match rdr.read_window(batch, 2 * per_batch - n) {
                Ok(0) => return (n, true, None),
                Ok(k) => n += k,
                Err(e) => return (n, true, Some(e)),
            }
        }
        (n, false, None)
    };
    rayon::scope(|_| {
        let (mut cur, mut next) = (Vec::new(), Vec::new());
        let (mut n, mut end, mut failed) = read(rdr, &mut cur);
        while n > 0 {
            let (after, wants) = if end {
                ((0, true, None), each(n, &cur))
            } else {
                rayon::join(|| read(rdr, &mut next), || each(n, &cur))
            };
            match wants {
                Ok(true) => {}
                // Frames past where the consumer stopped are not its
                // business, nor their errors (the reading may have run
                // ahead into one).
                Ok(false) => return Ok(Ok(())),
                Err(e) => return Err(e),
            }
            if failed.is_some() {
                break;
            }
            std::mem::swap(&mut cur, &mut next);
            (n, end, failed) = after;
        }
        Ok(failed.map_or(Ok(()), Err))
    })
}

/// A buffer sent back to be reused, or a new one.
pub(crate) fn take_free<T: Default>(free: &std::sync::Mutex<std::sync::mpsc::Receiver<T>>) -> T {
    free.lock().ok().and_then(|rx| rx.try_recv().ok()).unwrap_or_default()
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

/// Reads and parses an input, leniently unless `strict`.
pub(crate) fn load(
    input: &Input,
    strict: bool,
) -> Result<(bvhkit::Bvh, Vec<bvhkit::Warning>), LoadError> {
    let bytes = input.read().map_err(LoadError::Io)?;
    bvhkit::ReadOptions::new().lenient(!strict).parse(&bytes).map_err(LoadError::Parse)
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
            LoadError::Io(e) => format!("{e:#}"),
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

/// Refuses to write `output` when it is one of `inputs`: compared as files
/// (same device and inode on Unix, else the same canonical path), so
/// `./a.bvh`, `dir/../a.bvh`, symbolic links and hard links all count.
/// `-` (standard output) and outputs that do not exist yet never clash.
pub(crate) fn refuse_overwriting_input(output: &Path, inputs: &[Input]) -> Result<()> {
    if output.as_os_str() == "-" {
        return Ok(());
    }
    let Ok(out_meta) = std::fs::metadata(output) else { return Ok(()) };
    #[cfg(unix)]
    let same = |p: &Path| {
        use std::os::unix::fs::MetadataExt;
        std::fs::metadata(p).is_ok_and(|m| m.dev() == out_meta.dev() && m.ino() == out_meta.ino())
    };
    #[cfg(not(unix))]
    let same = |p: &Path| {
        let _ = &out_meta;
        matches!((std::fs::canonicalize(p), std::fs::canonicalize(output)), (Ok(a), Ok(b)) if a == b)
    };
    for input in inputs {
        if let Input::File(p) = input
            && same(p)
        {
            return Err(overwrite_refusal(output, p));
        }
    }
    Ok(())
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
                eprintln!("bvh: error: {}", crate::text::escape(&format!("{e:#}")));
            }
        }
    }
    if failed { std::process::ExitCode::from(2) } else { std::process::ExitCode::SUCCESS }
}

#[cfg(test)]
mod tests {
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
        let data = vec![b'7'; 1000];
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
        let e = read_limited(std::io::repeat(0), "zeros", 1 << 20).unwrap_err().to_string();
        assert!(e.starts_with("zeros: more than 1 MiB"), "{e}");
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
        // A /proc file claims size 0 but has content: it is read, within the limit.
        #[cfg(target_os = "linux")]
        {
            let status = read_file(Path::new("/proc/self/status"), 1 << 20).unwrap();
            assert!(status.starts_with(b"Name:"));
            assert!(read_file(Path::new("/proc/self/status"), 10).is_err());
        }
    }

    #[cfg(unix)]
    #[test]
    fn destinations() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path().canonicalize().unwrap();
        assert_eq!(destination(Path::new("-")).unwrap(), Dest::Stdout);
        assert_eq!(destination(Path::new("/dev/stdout")).unwrap(), Dest::Stdout);
        assert_eq!(destination(Path::new("/dev/null")).unwrap(), Dest::Through("/dev/null".into()));
        assert!(
            matches!(destination(Path::new("/dev/fd/2")).unwrap(), Dest::Through(p) if p.starts_with("/proc"))
        );
        let new = d.join("new.bvh");
        assert_eq!(destination(&new).unwrap(), Dest::Replace(new.clone()));
        std::fs::write(&new, "x").unwrap();
        assert_eq!(destination(&new).unwrap(), Dest::Replace(new.clone()));
        let link = d.join("link.bvh");
        std::os::unix::fs::symlink("new.bvh", &link).unwrap();
        assert_eq!(destination(&link).unwrap(), Dest::Replace(new.clone()));
        let to_null = d.join("null.bvh");
        std::os::unix::fs::symlink("/dev/null", &to_null).unwrap();
        assert_eq!(destination(&to_null).unwrap(), Dest::Through("/dev/null".into()));
        assert!(destination(&d).unwrap_err().to_string().ends_with("is a directory"));
        let selfish = d.join("self.bvh");
        std::os::unix::fs::symlink("self.bvh", &selfish).unwrap();
        assert!(destination(&selfish).unwrap_err().to_string().contains("too many levels"));
    }

    use bvhkit_testdata::file_names as names;

    #[test]
    fn atomic_files_replace_only_when_committed() {
        for anonymous in [true, false] {
            let dir = tempfile::tempdir().unwrap();
            let target = dir.path().join("out.bvh");
            std::fs::write(&target, "old").unwrap();
            #[cfg(unix)]
            {
                use std::os::unix::fs::PermissionsExt;
                std::fs::set_permissions(&target, std::fs::Permissions::from_mode(0o600)).unwrap();
            }
            // Abandoned: the old file stays, and nothing else.
            let mut a = AtomicFile::create_as(&target, anonymous).unwrap();
            a.file().write_all(b"half").unwrap();
            let during = names(dir.path());
            drop(a);
            assert_eq!(std::fs::read_to_string(&target).unwrap(), "old");
            assert_eq!(names(dir.path()), ["out.bvh"]);
            // On Linux the file being written has no name at all.
            #[cfg(target_os = "linux")]
            assert_eq!(during.len(), if anonymous { 1 } else { 2 }, "{during:?}");
            let _ = during;
            // Committed: the new content, the old mode, no temporary file.
            let mut a = AtomicFile::create_as(&target, anonymous).unwrap();
            a.file().write_all(b"new").unwrap();
            a.commit().unwrap();
            assert_eq!(std::fs::read_to_string(&target).unwrap(), "new");
            assert_eq!(names(dir.path()), ["out.bvh"]);
            #[cfg(unix)]
            {
                use std::os::unix::fs::PermissionsExt;
                let mode = std::fs::metadata(&target).unwrap().permissions().mode();
                assert_eq!(mode & 0o7777, 0o600);
            }
            // A new file.
            let fresh = dir.path().join("fresh.csv");
            write_atomic(&fresh, |w| Ok(w.write_all(b"a,b\n")?)).unwrap();
            assert_eq!(std::fs::read_to_string(&fresh).unwrap(), "a,b\n");
            // A failing writer leaves nothing.
            let failed = dir.path().join("failed.csv");
            assert!(
                write_atomic(&failed, |w| {
                    w.write_all(b"partial")?;
                    bail!("stop")
                })
                .is_err()
            );
            assert_eq!(names(dir.path()), ["fresh.csv", "out.bvh"]);
        }
    }

    #[test]
    fn pairs_are_published_together_or_not_at_all() {
        let dir = tempfile::tempdir().unwrap();
        let (bin, gltf) = (dir.path().join("a.bin"), dir.path().join("a.gltf"));
        std::fs::write(&bin, "old bin").unwrap();
        std::fs::write(&gltf, "old gltf").unwrap();
        let pair = |fail_bin: bool, fail_gltf: bool| {
            let mut b = |w: &mut dyn Write| {
                w.write_all(b"new bin")?;
                if fail_bin { bail!("injected bin failure") } else { Ok(()) }
            };
            let mut g = |w: &mut dyn Write| {
                w.write_all(b"new gltf")?;
                if fail_gltf { bail!("injected gltf failure") } else { Ok(()) }
            };
            write_atomic_all(&mut [(bin.as_path(), &mut b), (gltf.as_path(), &mut g)])
        };
        // A failure in either file, the second one after the first is complete:
        // the old pair stays as it was, and no temporary file is left.
        for (fail_bin, fail_gltf) in [(true, false), (false, true)] {
            let e = pair(fail_bin, fail_gltf).unwrap_err().to_string();
            assert!(e.starts_with("injected"), "{e}");
            assert_eq!(std::fs::read_to_string(&bin).unwrap(), "old bin");
            assert_eq!(std::fs::read_to_string(&gltf).unwrap(), "old gltf");
            assert_eq!(names(dir.path()), ["a.bin", "a.gltf"]);
        }
        pair(false, false).unwrap();
        assert_eq!(std::fs::read_to_string(&bin).unwrap(), "new bin");
        assert_eq!(std::fs::read_to_string(&gltf).unwrap(), "new gltf");
        assert_eq!(names(dir.path()), ["a.bin", "a.gltf"]);
        // The second target cannot be opened (its folder is missing): nothing appears.
        let lonely = dir.path().join("b.bin");
        let missing = dir.path().join("no/such/folder/b.gltf");
        let mut b = |w: &mut dyn Write| Ok(w.write_all(b"bin")?);
        let mut g = |w: &mut dyn Write| Ok(w.write_all(b"gltf")?);
        assert!(
            write_atomic_all(&mut [(lonely.as_path(), &mut b), (missing.as_path(), &mut g)])
                .is_err()
        );
        assert_eq!(names(dir.path()), ["a.bin", "a.gltf"]);
    }

    #[cfg(unix)]
    #[test]
    fn hard_linked_outputs_are_refused_unless_asked() {
        let dir = tempfile::tempdir().unwrap();
        let (a, b) = (dir.path().join("a.bvh"), dir.path().join("b.bvh"));
        std::fs::write(&a, "shared").unwrap();
        std::fs::hard_link(&a, &b).unwrap();
        let e = destination(&b).unwrap_err().to_string();
        assert_eq!(
            e,
            format!(
                "{}: has 2 hard links; replacing it would leave the other name with the old \
                 contents (write elsewhere, or pass --break-links to replace this name only)",
                b.display()
            )
        );
        // Through a symbolic link too: the file at its end is what counts.
        let link = dir.path().join("link.bvh");
        std::os::unix::fs::symlink("a.bvh", &link).unwrap();
        assert!(destination(&link).unwrap_err().to_string().contains("has 2 hard links"));
        assert!(write_atomic(&b, |w| Ok(w.write_all(b"new")?)).is_err());
        assert_eq!(std::fs::read_to_string(&a).unwrap(), "shared");
        std::fs::hard_link(&a, dir.path().join("c.bvh")).unwrap();
        assert!(destination(&a).unwrap_err().to_string().contains("the other 2 names"));
        // A new file, or a file with one link, is fine.
        assert!(destination(&dir.path().join("new.bvh")).is_ok());
        std::fs::write(dir.path().join("one.bvh"), "x").unwrap();
        assert!(destination(&dir.path().join("one.bvh")).is_ok());
    }
}
