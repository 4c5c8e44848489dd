//! Output files that are never half-written: the one way bvhkit's writers
//! (the `bvh` command, the Python package's `Bvh.write`, the desktop
//! player's screenshots) put bytes in a file.
//!
//! [`Options::write_atomic`] / [`AtomicFile`] write a regular file through
//! an anonymous temporary file (Linux `O_TMPFILE`) in the target's folder
//! that gets a name only once it is complete and synced, so the target is
//! always the old file or the whole new one, and nothing stays behind after
//! a crash or `kill -9`; the new file keeps the owner (best effort) and mode
//! of the file it replaces, and a new file gets the mode `File::create`
//! would give it (0666 less the umask). Devices, FIFOs and `/dev/stdout`-style
//! names are written through, and a symbolic link is followed to the file it
//! names. A regular file with other hard links is refused unless
//! [`Options::break_links`] (see [`Options::destination`]).
//!
//! Errors are [`std::io::Error`]s of the OS error's kind whose message says
//! what failed, the path and the OS error (`writing out.bvh: No space left
//! on device (os error 28)`); [`os_error_code`] finds the OS error number,
//! also for this crate's own refusals.
//!
//! # Implementation notes
//!
//! The one implementation of output files, shared by every writer: the CLI
//! (`io.rs` wraps it), Python `Bvh.write` and the desktop player's screenshot
//! and sidecar. Depends on std, tempfile and rustix (Linux: `O_TMPFILE`,
//! `linkat`, `posix_fadvise`); no `unsafe`, no bvhkit. `Options` (whether a
//! hard-linked target may be replaced, `break_links`, and how the refusal says
//! to allow it, `break_links_hint`: `pass --break-links`, `pass
//! break_links=True`) with `destination` (`Dest`: standard output, written
//! through, or replaced), `open_output` (`Output`), `write_atomic`,
//! `write_unsynced`, `write_atomic_with_body`, `write_atomic_all`,
//! `write_by_program`; `AtomicFile` (anonymous file, `commit` = sync, owner and
//! mode, link, rename), `Staged` (synced and named, not yet renamed),
//! `WriteBehind` (writeback started every 2 MiB written), `BlockWriter`
//! (`blocks.rs`), `drop_cached_pages` (the cached pages of a file about to
//! be replaced dropped early, so that its release at the rename is short).
//! Errors are
//! `std::io::Error`s of the OS error's kind whose message says what failed and
//! the path; `os_error_code` finds the OS error number (also the
//! `EISDIR`/`ELOOP`/`EMLINK` that stand for its refusals), which the Python
//! package gives `OSError`. Its unit tests cover the new file's mode under the
//! umask, mode and owner kept, links followed, FIFOs and devices written
//! through, nothing left after an error, and the order of `write_atomic_all`'s
//! renames.
//!
//! Every output of the workspace (the `bvh` command's, Python `Bvh.write`, the
//! desktop player's screenshot and sidecar) goes through `bvhkit-write`, the
//! one implementation of the rule that writers never damage what they
//! write to nor leave anything half-written. A regular file (at the end of any
//! chain of symbolic links, so a link is never replaced: its target is) is
//! written into an anonymous `O_TMPFILE` file in the target's folder, synced,
//! given the replaced file's owner (best effort: it needs privileges) and mode,
//! linked to a fresh `.bvh-*.tmp` name through `/proc/self/fd/N` and renamed
//! over the target: the target is always the old file or the whole new one, and
//! a crash or `kill -9` before the link leaves nothing (the name exists only
//! between `linkat` and `rename`). Where `O_TMPFILE` is refused (other systems,
//! some file systems), a named temporary file is used and removed on error. A
//! regular file with other hard links is refused with its link count unless
//! asked (`--break-links`, Python's `break_links=True`; `Options::destination`,
//! which every output goes through): a rename would silently leave the other
//! names with the old contents, and writing in place would give up atomicity.
//! Files that belong together (a `.gltf` and its `.bin`) are written completely
//! into their temporary files, then named and renamed in order
//! (`Options::write_atomic_all`), so a failure before the renames leaves every
//! target as it was. Devices, FIFOs, sockets and `/proc` names (`/dev/fd/N`,
//! what `-o >(cmd)` passes) are written through, never replaced; `-` and
//! `/dev/stdout` are standard output. Inputs are only ever opened for reading.
//! `AtomicFile` is the way to replace a file, MP4 included: ffmpeg needs a
//! path, and `Options::write_by_program` gives it the anonymous file's
//! `/proc/PID/fd/N` name, through which it opens that very file (`-f mp4`,
//! since the name says nothing), so a `kill -9` of either process during
//! encoding leaves nothing; a FIFO or device gets a copy of an anonymous file
//! made in the temporary folder. The one exception is `bvh record`, whose point
//! is to keep what was captured if it is interrupted: it writes each completed
//! frame straight into its output and patches the padded `Frames:` count at the
//! end (after a crash the count reads 0 and `bvh fmt` repairs it); it still
//! refuses to write over its configuration, skeleton or input.
#![deny(unsafe_code)]

#[cfg(unix)]
mod blocks;
#[cfg(unix)]
pub use blocks::{BLOCK, BlockWriter, Shared};

use std::fs::File;
use std::io::{self, Seek, Write};
use std::path::{Path, PathBuf};

/// What failed when the OS refused it: `writing PATH: OS message (os
/// error N)`, the OS error kept whole for [`os_error_code`]. The message
/// says it all, so the error has no `source()`: a caller that prints the
/// chain (anyhow's `{:#}`) shows the OS message once.
#[derive(Debug)]
struct Failed {
    what: String,
    source: io::Error,
}

impl std::fmt::Display for Failed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.what, self.source)
    }
}

impl std::error::Error for Failed {}

/// `source` as an error of its kind that says `what` failed.
fn failed(what: impl FnOnce() -> String) -> impl FnOnce(io::Error) -> io::Error {
    move |source| io::Error::new(source.kind(), Failed { what: what(), source })
}

/// What this crate refuses to do on its own account, with the OS error
/// number that stands for it (where the system has one).
#[derive(Debug)]
struct Refused {
    message: String,
    errno: Option<i32>,
}

impl std::fmt::Display for Refused {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for Refused {}

/// A refusal: `message`, of the kind of the OS error `errno`.
fn refused(errno: Option<i32>, message: String) -> io::Error {
    let kind = errno.map_or(io::ErrorKind::Other, |e| io::Error::from_raw_os_error(e).kind());
    io::Error::new(kind, Refused { message, errno })
}

/// The OS error numbers of the refusals (`EISDIR`, `ELOOP`, `EMLINK`).
#[cfg(target_os = "linux")]
mod errno {
    use rustix::io::Errno;
    pub(crate) fn is_dir() -> Option<i32> {
        Some(Errno::ISDIR.raw_os_error())
    }
    pub(crate) fn link_loop() -> Option<i32> {
        Some(Errno::LOOP.raw_os_error())
    }
    pub(crate) fn hard_links() -> Option<i32> {
        Some(Errno::MLINK.raw_os_error())
    }
    /// The number of an OS error of `kind`, for an error that lost its
    /// number (tempfile's errors keep the kind only).
    pub(crate) fn of_kind(kind: std::io::ErrorKind) -> Option<i32> {
        use std::io::ErrorKind as K;
        let e = match kind {
            K::NotFound => Errno::NOENT,
            K::PermissionDenied => Errno::ACCESS,
            K::AlreadyExists => Errno::EXIST,
            K::IsADirectory => Errno::ISDIR,
            K::NotADirectory => Errno::NOTDIR,
            K::ReadOnlyFilesystem => Errno::ROFS,
            K::StorageFull => Errno::NOSPC,
            _ => return None,
        };
        Some(e.raw_os_error())
    }
}

#[cfg(not(target_os = "linux"))]
mod errno {
    pub(crate) fn is_dir() -> Option<i32> {
        None
    }
    pub(crate) fn link_loop() -> Option<i32> {
        None
    }
    pub(crate) fn hard_links() -> Option<i32> {
        None
    }
    pub(crate) fn of_kind(_: std::io::ErrorKind) -> Option<i32> {
        None
    }
}

/// How messages name an output: `-` is "standard output", any other path
/// its own display.
///
/// ```
/// use std::path::Path;
/// assert_eq!(bvhkit_write::shown(Path::new("-")), "standard output");
/// assert_eq!(bvhkit_write::shown(Path::new("out/a.bvh")), "out/a.bvh");
/// ```
pub fn shown(path: &Path) -> String {
    if path.as_os_str() == "-" { "standard output".into() } else { path.display().to_string() }
}

/// Whether `a` and `b` name one existing file: the same device and inode
/// on Unix (so `./a.bvh`, `dir/../a.bvh`, symbolic links and hard links
/// all count), else the same canonical path. A path that does not exist
/// names no file. The commands refuse to write an output that is one of
/// their inputs with it.
pub fn same_file(a: &Path, b: &Path) -> bool {
    let (Ok(x), Ok(y)) = (std::fs::metadata(a), std::fs::metadata(b)) else { return false };
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        x.dev() == y.dev() && x.ino() == y.ino()
    }
    #[cfg(not(unix))]
    {
        let _ = (x, y);
        matches!((std::fs::canonicalize(a), std::fs::canonicalize(b)), (Ok(p), Ok(q)) if p == q)
    }
}

/// The OS error number behind `e`: its own, that of the OS error under one
/// of this crate's errors, the one that stands for one of its refusals
/// (`EISDIR` for a folder, `ELOOP` for a link loop, `EMLINK` for a file
/// with other hard links), or for an error that lost its number (the
/// temporary file's), the number of its kind where there is one (Linux).
/// Python's `OSError` takes it.
pub fn os_error_code(e: &io::Error) -> Option<i32> {
    let own = e.raw_os_error().or_else(|| {
        let inner = e.get_ref()?;
        if let Some(f) = inner.downcast_ref::<Failed>() {
            return os_error_code(&f.source);
        }
        inner.downcast_ref::<Refused>()?.errno
    });
    own.or_else(|| errno::of_kind(e.kind()))
}

/// Where an output path leads.
#[derive(Debug, PartialEq, Eq)]
pub enum Dest {
    /// This process's standard output (`-`, `/dev/stdout`, `/dev/fd/1`, `/proc/self/fd/1`).
    Stdout,
    /// Something that is written through, never replaced: a device, a FIFO,
    /// a socket, or a `/proc` name such as `/dev/fd/63` (what `>(cmd)` gives).
    Through(PathBuf),
    /// A regular file, existing or not, at the end of any symbolic links: it
    /// is replaced atomically.
    Replace(PathBuf),
}

/// How outputs are opened: whether a regular file with other hard links
/// may be replaced, and how the refusal tells the user to allow it.
#[derive(Clone, Copy, Debug, Default)]
pub struct Options<'a> {
    break_links: bool,
    hint: Option<&'a str>,
}

impl<'a> Options<'a> {
    /// Hard-linked targets refused, with no hint but to write elsewhere.
    pub fn new() -> Options<'a> {
        Options::default()
    }

    /// Lets outputs replace a regular file that has other hard links: the
    /// named file gets the new contents, the other names keep the old ones.
    #[must_use]
    pub fn break_links(mut self, yes: bool) -> Options<'a> {
        self.break_links = yes;
        self
    }

    /// How the user allows it (`"pass --break-links"`), said in the refusal
    /// of a hard-linked target: `(write elsewhere, or HINT to replace this
    /// name only)`.
    #[must_use]
    pub fn break_links_hint(mut self, hint: &'a str) -> Options<'a> {
        self.hint = Some(hint);
        self
    }

    /// Finds where `path` leads. Symbolic links are followed (so a link is
    /// never replaced by a regular file: its target is), up to 40 of them.
    /// A regular file with more than one hard link is refused unless
    /// [`Options::break_links`]: replacing it by a rename would give this
    /// name the new contents and silently leave the other names with the
    /// old ones, and writing into it in place could leave it half-written.
    ///
    /// # Errors
    /// A folder, a link loop, a hard-linked file, a link that cannot be read.
    pub fn destination(&self, path: &Path) -> io::Result<Dest> {
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
                    let t = std::fs::read_link(&p).map_err(failed(|| p.display().to_string()))?;
                    p = match p.parent() {
                        Some(d) if t.is_relative() => d.join(t),
                        _ => t,
                    };
                }
                Ok(m) if m.is_dir() => {
                    let what = format!("{}: is a directory", path.display());
                    return Err(refused(errno::is_dir(), what));
                }
                Ok(m) if !m.is_file() => return Ok(Dest::Through(p)),
                Ok(m) => {
                    self.refuse_hard_link(path, &m)?;
                    return Ok(Dest::Replace(p));
                }
                Err(_) => return Ok(Dest::Replace(p)),
            }
        }
        let what = format!("{}: too many levels of symbolic links", path.display());
        Err(refused(errno::link_loop(), what))
    }

    /// Refuses to replace a regular file that has other hard links, naming
    /// the link count, unless [`Options::break_links`].
    fn refuse_hard_link(&self, path: &Path, meta: &std::fs::Metadata) -> io::Result<()> {
        #[cfg(unix)]
        {
            use std::os::unix::fs::MetadataExt;
            let links = meta.nlink();
            if links > 1 && !self.break_links {
                let others =
                    if links == 2 { "name".to_string() } else { format!("{} names", links - 1) };
                let how = match self.hint {
                    Some(h) => format!("write elsewhere, or {h} to replace this name only"),
                    None => "write elsewhere".to_string(),
                };
                let what = format!(
                    "{}: has {links} hard links; replacing it would leave the other {others} \
                     with the old contents ({how})",
                    path.display(),
                );
                return Err(refused(errno::hard_links(), what));
            }
        }
        #[cfg(not(unix))]
        let _ = (path, meta, self.break_links, self.hint);
        Ok(())
    }

    /// Opens `path` for writing: `-` (and `/dev/stdout`) is standard
    /// output, devices, FIFOs and `/proc` names are written through, and a
    /// regular file (at the end of any symbolic links) is replaced
    /// atomically by [`Output::finish`]; until then the old file is
    /// untouched.
    ///
    /// # Errors
    /// Those of [`Options::destination`], or when the file or its temporary
    /// file cannot be opened.
    pub fn open_output(&self, path: &Path) -> io::Result<Output> {
        Ok(match self.destination(path)? {
            Dest::Stdout => Output::Stdout(io::stdout()),
            Dest::Through(p) => {
                let regular = std::fs::metadata(&p).is_ok_and(|m| m.is_file());
                let f = std::fs::OpenOptions::new()
                    .write(true)
                    .create(regular)
                    .truncate(regular)
                    .open(&p)
                    .map_err(failed(|| format!("opening {}", p.display())))?;
                Output::Through(f)
            }
            Dest::Replace(p) => Output::Atomic(AtomicFile::create(&p)?),
        })
    }

    /// Writes to `path` without ever leaving a half-written file: see
    /// [`Options::open_output`]. `-` writes to standard output.
    ///
    /// # Errors
    /// `write`'s, or the I/O errors of opening, writing and putting the
    /// file in place.
    pub fn write_atomic<E: From<io::Error>>(
        &self,
        path: &Path,
        write: impl FnOnce(&mut dyn Write) -> Result<(), E>,
    ) -> Result<(), E> {
        let staged = self.write_unsynced(path, write)?.stage()?;
        Ok(staged.map_or(Ok(()), Staged::publish)?)
    }

    /// The output `path` opened and written by `write`, its writeback
    /// started ([`Output::start_writeback`]), not yet synced:
    /// [`Output::stage`] or [`Output::finish`] it. A caller that syncs
    /// another file first lets that sync commit this one's blocks too.
    ///
    /// # Errors
    /// As [`Options::write_atomic`].
    pub fn write_unsynced<E: From<io::Error>>(
        &self,
        path: &Path,
        write: impl FnOnce(&mut dyn Write) -> Result<(), E>,
    ) -> Result<Output, E> {
        let mut out = self.open_output(path)?;
        out.write_through(path, write)?;
        out.start_writeback();
        Ok(out)
    }

    /// [`Options::write_atomic`] of `head` followed by the rest of `body`
    /// (from its position to its end): into a regular file, the kernel
    /// copies file to file (`copy_file_range`), with no round trip of the
    /// body through this process; other outputs get it through a buffer.
    ///
    /// # Errors
    /// The I/O errors of opening, reading, writing and putting in place.
    pub fn write_atomic_with_body(
        &self,
        path: &Path,
        head: &[u8],
        body: &mut File,
    ) -> io::Result<()> {
        let mut out = self.open_output(path)?;
        let what = || format!("writing {}", shown(path));
        match out.atomic_file() {
            Some(a) => {
                let f = a.file();
                f.write_all(head).map_err(failed(what))?;
                io::copy(body, f).map_err(failed(what))?;
            }
            None => {
                let mut w = io::BufWriter::with_capacity(1 << 20, &mut out);
                w.write_all(head).and_then(|()| io::copy(body, &mut w)).map_err(failed(what))?;
                w.flush().map_err(failed(what))?;
            }
        }
        out.finish()
    }

    /// Writes outputs that belong together (a `.gltf` and the `.bin` it
    /// names) so that a reader never sees one without its partner: every
    /// output is written completely into its temporary file first, then all
    /// are synced and named, then renamed into place in the order given
    /// (the file that is referred to first). Any failure before the renames
    /// removes every temporary file and leaves every target as it was;
    /// outputs written through (devices, FIFOs) cannot be held back and get
    /// their bytes as they are written.
    ///
    /// # Errors
    /// The first output's error, `write`'s or I/O.
    pub fn write_atomic_all<E: From<io::Error>>(
        &self,
        outputs: &mut [(&Path, &mut WriteFn<'_, E>)],
    ) -> Result<(), E> {
        let mut written = Vec::with_capacity(outputs.len());
        for (path, write) in outputs.iter_mut() {
            let mut out = self.open_output(path)?;
            out.write_through(path, |w| write(w))?;
            written.push(out);
        }
        let mut staged = Vec::with_capacity(written.len());
        for out in written {
            staged.push(out.stage()?);
        }
        Ok(staged.into_iter().flatten().try_for_each(Staged::publish)?)
    }

    /// Has another program that needs a path (ffmpeg) write `out`, as
    /// [`Options::open_output`] would: `write` gets the path of a fresh
    /// [`AtomicFile`] (on Linux, the anonymous file's `/proc/PID/fd/N`
    /// name, which another process of the same user opens as that very
    /// file; else its temporary name) and writes it whole. A regular file
    /// (at the end of any links) is then put in place, keeping its owner
    /// and mode; anything else gets a copy. Nothing is left behind if
    /// either process is killed: the file has no name.
    ///
    /// # Errors
    /// `write`'s, or the I/O errors of the files.
    pub fn write_by_program<E: From<io::Error>>(
        &self,
        out: &Path,
        write: impl FnOnce(&Path) -> Result<(), E>,
    ) -> Result<(), E> {
        match self.destination(out)? {
            Dest::Replace(target) => {
                let file = AtomicFile::create(&target)?;
                write(&file.path_for_programs())?;
                Ok(file.commit()?)
            }
            _ => {
                // Written in the system's temporary folder, never committed.
                let mut file = AtomicFile::create(&std::env::temp_dir().join("bvh-output"))?;
                write(&file.path_for_programs())?;
                let mut o = self.open_output(out)?;
                let f = file.file();
                f.rewind()?;
                io::copy(f, &mut o).map_err(failed(|| format!("writing {}", out.display())))?;
                Ok(o.finish()?)
            }
        }
    }
}

/// What writes one output's bytes (see [`Options::write_atomic_all`]).
pub type WriteFn<'a, E> = dyn FnMut(&mut dyn Write) -> Result<(), E> + 'a;

/// A file being written that replaces its target only when complete.
///
/// On Linux it is an anonymous file (`O_TMPFILE`) in the target's folder:
/// it has no name while it is written, so a crash or `kill -9` leaves
/// nothing behind. [`AtomicFile::commit`] links it to a fresh temporary name
/// and renames that over the target (the one moment a name exists is
/// between those two calls). Where `O_TMPFILE` is refused (other systems,
/// some file systems), a named temporary file is used, removed on error.
pub struct AtomicFile {
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
        start_writeback(file, self.started, self.end - self.started);
        self.started = self.end;
    }
}

/// Asks the kernel to start writing back `len` bytes of `file` at `at`
/// (Linux: `posix_fadvise(POSIX_FADV_DONTNEED)`, which starts the writeback
/// without waiting and drops none of it before it is on disk; advice only:
/// an error changes nothing written, so it is ignored). Elsewhere nothing.
fn start_writeback(file: &File, at: u64, len: u64) {
    #[cfg(target_os = "linux")]
    if let Some(len) = std::num::NonZeroU64::new(len) {
        let _ = rustix::fs::fadvise(file, at, Some(len), rustix::fs::Advice::DontNeed);
    }
    #[cfg(not(target_os = "linux"))]
    let _ = (file, at, len);
}

/// An output file written through, asking the kernel to start writing back
/// every 2 MiB written (Linux:
/// `posix_fadvise(POSIX_FADV_DONTNEED)` on the range just written, which
/// starts its writeback without waiting and drops none of it before it is
/// on disk), so that the sync before the file is put in place
/// ([`AtomicFile::commit`]) waits for the last few megabytes instead of the
/// whole output. Elsewhere, a plain file. [`AtomicFile`] writes through
/// one; [`AtomicFile::write_behind`] makes another, for a writer that
/// needs the file itself (to seek, or on another thread).
pub struct WriteBehind {
    file: File,
    written: Writeback,
}

impl WriteBehind {
    /// Writes into `file` from its start.
    pub fn new(file: File) -> WriteBehind {
        WriteBehind { file, written: Writeback::default() }
    }

    /// The file.
    pub fn into_inner(self) -> File {
        self.file
    }

    /// Starts writing back whatever was written and not yet started.
    pub fn write_back_now(&mut self) {
        self.written.start(&self.file);
    }
}

impl Seek for WriteBehind {
    fn seek(&mut self, pos: io::SeekFrom) -> io::Result<u64> {
        // A writer that moves back (a header patched at the end) writes in
        // place: those bytes are written back with the rest by the sync.
        self.written.at = self.file.seek(pos)?;
        Ok(self.written.at)
    }
}

impl Write for WriteBehind {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let n = self.file.write(buf)?;
        self.written.wrote(&self.file, n);
        Ok(n)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.file.flush()
    }
}

impl AtomicFile {
    /// Starts replacing the regular file `target` (which may not exist yet).
    ///
    /// # Errors
    /// When no temporary file can be made in the target's folder.
    pub fn create(target: &Path) -> io::Result<AtomicFile> {
        Self::create_as(target, true)
    }

    /// [`AtomicFile::create`], choosing whether to try `O_TMPFILE` (tests use
    /// `false` to check the fallback).
    fn create_as(target: &Path, anonymous: bool) -> io::Result<AtomicFile> {
        let dir = folder_of(target);
        #[cfg(target_os = "linux")]
        if anonymous
            && let Some(file) = anonymous_in(dir)
                .map_err(failed(|| format!("creating a temporary file in {}", dir.display())))?
        {
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
    pub fn file(&mut self) -> &mut File {
        &mut self.out.file
    }

    /// A path by which another program (ffmpeg) opens this very file: on
    /// Linux the anonymous file's `/proc/PID/fd/N` (not `/proc/self`, which
    /// would be the other program's), else its temporary name.
    pub fn path_for_programs(&self) -> PathBuf {
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
    ///
    /// # Errors
    /// When the file cannot be opened again (no file descriptor left).
    pub fn write_behind(&self) -> io::Result<WriteBehind> {
        let file = self.out.file.try_clone().map_err(failed(|| {
            format!("opening the output file {} again", self.target.display())
        }))?;
        Ok(WriteBehind::new(file))
    }

    /// A [`BlockWriter`] of the file from its start, with `threads` writer
    /// threads (a handle of its own: write through it alone, and `flush`
    /// it before [`AtomicFile::commit`]).
    ///
    /// # Errors
    /// When the file cannot be opened again or a thread cannot start.
    #[cfg(unix)]
    pub fn block_writer(&self, threads: usize) -> io::Result<BlockWriter> {
        let file = self.out.file.try_clone().map_err(failed(|| {
            format!("opening the output file {} again", self.target.display())
        }))?;
        BlockWriter::new(file, threads)
    }

    /// Syncs the file, gives it the owner and mode of the file it replaces
    /// (best effort: changing the owner needs privileges), and puts it in
    /// place of the target in one rename.
    ///
    /// # Errors
    /// When the sync, the mode, the link or the rename fails; the target is
    /// then as it was.
    pub fn commit(self) -> io::Result<()> {
        self.stage()?.publish()
    }

    /// [`AtomicFile::commit`], then the file handed back open for reading
    /// and writing at its end: for a file that goes on growing once it has
    /// a name (a recording's take, which keeps the old file in place until
    /// its first frame is written and then every frame as it is written).
    ///
    /// # Errors
    /// Those of [`AtomicFile::commit`], or when the named file cannot be
    /// opened again; the target is then as it was.
    pub fn commit_open(self) -> io::Result<File> {
        let staged = self.stage()?;
        // The named file itself, opened by its temporary name before the
        // rename (where the anonymous file could only be copied, the copy
        // is what gets the name, so the handle must be the name's).
        let what = || format!("writing {}", staged.target.display());
        let mut file = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .open(&staged.named)
            .map_err(failed(what))?;
        file.seek(io::SeekFrom::End(0)).map_err(failed(what))?;
        staged.publish()?;
        Ok(file)
    }

    /// Everything [`AtomicFile::commit`] does but the rename: the file is
    /// synced and has a temporary name beside the target (removed if the
    /// [`Staged`] is dropped unpublished). Outputs that belong together are
    /// all staged first, then published back to back.
    ///
    /// # Errors
    /// When the sync, the mode or the link fails; the target is then as it
    /// was.
    pub fn stage(self) -> io::Result<Staged> {
        let AtomicFile { out, target, named } = self;
        let file = out.into_inner();
        let what = || format!("writing {}", target.display());
        file.sync_all().map_err(failed(what))?;
        keep_owner_and_mode(&file, &target).map_err(failed(what))?;
        let named = match named {
            Some(p) => p,
            None => link_anonymous(&file, folder_of(&target)).map_err(failed(what))?,
        };
        Ok(Staged { named, target })
    }
}

/// A complete file under a temporary name beside its target, waiting for
/// its rename; dropped unpublished, the temporary name is removed.
pub struct Staged {
    named: tempfile::TempPath,
    target: PathBuf,
}

impl Staged {
    /// Renames the file over its target.
    ///
    /// # Errors
    /// When the rename fails (the temporary name is removed).
    pub fn publish(self) -> io::Result<()> {
        let Staged { named, target } = self;
        named
            .persist(&target)
            .map_err(|e| failed(|| format!("writing {}", target.display()))(e.error))
    }

    /// [`Staged::publish`], handing back the file it replaced, still open
    /// (`None` when there was none, or it could not be opened): the
    /// release of a replaced file's pages, which the rename would do for
    /// a file no one holds open (about 0.1 s for 500 MB), then happens
    /// when the caller drops the handle, on a thread of its choice. The
    /// rename itself is then quick: outputs published back to back are
    /// only microseconds apart.
    ///
    /// # Errors
    /// As [`Staged::publish`].
    pub fn publish_keeping_old(self) -> io::Result<Option<File>> {
        // Opened for nothing but holding it (`O_PATH` needs no permission
        // to read it); a regular file only (never a FIFO, which an open
        // would block on: the target is a regular file or missing).
        let old = std::fs::symlink_metadata(&self.target)
            .is_ok_and(|m| m.file_type().is_file())
            .then(|| open_to_hold(&self.target))
            .flatten();
        self.publish()?;
        Ok(old)
    }
}

/// Asks the kernel to drop the cached pages of the regular file at `path`
/// (Linux: `posix_fadvise(POSIX_FADV_DONTNEED)` over the whole file), for a
/// file that an output is about to replace: done early, on a thread that
/// runs beside the work, it leaves the rename, or the last close of the
/// replaced file, with few pages to free (about 0.1 s for 500 MB), a
/// serial step at the very end otherwise. The file's contents stay whole:
/// a clean page is read again from the disk when asked for, a dirty one is
/// written back first and kept. On tmpfs, whose pages are the data, the
/// kernel ignores the advice. Advice only: nothing is reported (a missing
/// file, a FIFO, a file that cannot be read are left alone). Elsewhere
/// nothing.
pub fn drop_cached_pages(path: &Path) {
    #[cfg(target_os = "linux")]
    {
        use rustix::fs::{CWD, FileType, Mode, OFlags, fstat, openat};
        // Never blocks (a FIFO opened non-blocking), follows no link (the
        // caller gives the file at the end of the chain).
        let flags = OFlags::RDONLY | OFlags::NONBLOCK | OFlags::NOFOLLOW | OFlags::CLOEXEC;
        let Ok(fd) = openat(CWD, path, flags, Mode::empty()) else { return };
        if fstat(&fd).is_ok_and(|st| FileType::from_raw_mode(st.st_mode).is_file()) {
            let _ = rustix::fs::fadvise(&fd, 0, None, rustix::fs::Advice::DontNeed);
        }
    }
    #[cfg(not(target_os = "linux"))]
    let _ = path;
}

/// A handle that keeps the file at `path` alive (not its contents
/// readable): `O_PATH` on Linux, a plain read-only open elsewhere.
fn open_to_hold(path: &Path) -> Option<File> {
    #[cfg(target_os = "linux")]
    {
        use rustix::fs::{CWD, Mode, OFlags, openat};
        openat(CWD, path, OFlags::PATH | OFlags::NOFOLLOW | OFlags::CLOEXEC, Mode::empty())
            .ok()
            .map(File::from)
    }
    #[cfg(not(target_os = "linux"))]
    {
        File::open(path).ok()
    }
}

/// Gives `file` the owner (best effort: it needs privileges) and mode of
/// the file at `target`, if there is one.
fn keep_owner_and_mode(file: &File, target: &Path) -> io::Result<()> {
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

fn folder_of(path: &Path) -> &Path {
    match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    }
}

/// An anonymous writable file in `dir`; `None` where the system or the
/// file system does not make them (`EOPNOTSUPP`, or `EISDIR` and `EINVAL`
/// from kernels without `O_TMPFILE`), for a named temporary file instead.
/// Any other failure (no such folder, not a folder, no permission, a full
/// or read-only disk) would fail a named file too, and is the error: the
/// system's own, without the random name a named file would have tried.
#[cfg(target_os = "linux")]
fn anonymous_in(dir: &Path) -> io::Result<Option<File>> {
    use rustix::fs::{CWD, Mode, OFlags, openat};
    use rustix::io::Errno;
    // Mode 0666 less the umask, as for `File::create`.
    match openat(CWD, dir, OFlags::TMPFILE | OFlags::RDWR | OFlags::CLOEXEC, Mode::from(0o666)) {
        Ok(fd) => Ok(Some(File::from(fd))),
        Err(Errno::OPNOTSUPP | Errno::ISDIR | Errno::INVAL) => Ok(None),
        Err(e) => Err(e.into()),
    }
}

/// Gives the anonymous `file` a fresh temporary name in `dir` (through
/// `/proc/self/fd/N`, else `AT_EMPTY_PATH`, which needs a capability); where
/// neither works, copies it into a named temporary file.
fn link_anonymous(file: &File, dir: &Path) -> io::Result<tempfile::TempPath> {
    #[cfg(target_os = "linux")]
    {
        use std::os::fd::AsRawFd;

        use rustix::fs::{AtFlags, CWD, linkat};
        let proc_path = format!("/proc/self/fd/{}", file.as_raw_fd());
        let linked = temp_builder().make_in(dir, |name| {
            linkat(CWD, proc_path.as_str(), CWD, name, AtFlags::SYMLINK_FOLLOW)
                .or_else(|_| linkat(file, "", CWD, name, AtFlags::EMPTY_PATH))
                .map_err(io::Error::from)
        });
        if let Ok(t) = linked {
            return Ok(t.into_temp_path());
        }
    }
    let mut tmp = temp_in(dir)?;
    let mut src = file.try_clone()?;
    src.seek(io::SeekFrom::Start(0))?;
    io::copy(&mut src, tmp.as_file_mut())?;
    tmp.as_file().sync_all()?;
    #[cfg(unix)]
    tmp.as_file().set_permissions(file.metadata()?.permissions())?;
    Ok(tmp.into_temp_path())
}

/// An output being written: see [`Options::open_output`].
pub enum Output {
    /// Standard output.
    Stdout(io::Stdout),
    /// A device, FIFO or `/proc` name, written through.
    Through(File),
    /// A regular file, replaced when complete.
    Atomic(AtomicFile),
}

impl Output {
    /// Whether the output can seek (a regular file being replaced).
    pub fn atomic_file(&mut self) -> Option<&mut AtomicFile> {
        match self {
            Output::Atomic(a) => Some(a),
            _ => None,
        }
    }

    /// Flushes and, for a regular file, syncs it and gives it its
    /// temporary name without putting it in place ([`Staged::publish`]
    /// does); anything else is finished.
    ///
    /// # Errors
    /// As [`Output::finish`].
    pub fn stage(self) -> io::Result<Option<Staged>> {
        match self {
            Output::Atomic(a) => Ok(Some(a.stage()?)),
            other => other.finish().map(|()| None),
        }
    }

    /// For a regular file being replaced, starts writing back what was
    /// written (the blocks are allocated now, in the file system's running
    /// transaction, so that a sync of another file commits them too).
    pub fn start_writeback(&mut self) {
        if let Output::Atomic(a) = self {
            a.out.write_back_now();
        }
    }

    /// Flushes and, for a regular file, puts it in place.
    ///
    /// # Errors
    /// When the flush, the sync or the rename fails.
    pub fn finish(self) -> io::Result<()> {
        match self {
            Output::Stdout(mut s) => s.flush(),
            Output::Through(mut f) => f.flush(),
            Output::Atomic(a) => a.commit(),
        }
    }

    /// Writes through a buffer with `write`, then flushes the buffer (an
    /// error of the flush names `path`).
    fn write_through<E: From<io::Error>>(
        &mut self,
        path: &Path,
        write: impl FnOnce(&mut dyn Write) -> Result<(), E>,
    ) -> Result<(), E> {
        let mut w = io::BufWriter::with_capacity(1 << 16, self);
        write(&mut w)?;
        w.flush().map_err(failed(|| format!("writing {}", shown(path))))?;
        Ok(())
    }
}

impl Write for Output {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match self {
            Output::Stdout(s) => s.write(buf),
            Output::Through(f) => f.write(buf),
            Output::Atomic(a) => a.out.write(buf),
        }
    }

    fn write_all(&mut self, buf: &[u8]) -> io::Result<()> {
        match self {
            Output::Stdout(s) => s.write_all(buf),
            Output::Through(f) => f.write_all(buf),
            Output::Atomic(a) => a.out.write_all(buf),
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        match self {
            Output::Stdout(s) => s.flush(),
            Output::Through(f) => f.flush(),
            Output::Atomic(a) => a.out.flush(),
        }
    }
}

/// Names of the temporary files: `.bvh-XXXXXX.tmp`.
fn temp_builder() -> tempfile::Builder<'static, 'static> {
    let mut b = tempfile::Builder::new();
    b.prefix(".bvh-").suffix(".tmp");
    b
}

/// A named temporary file in `dir` (so that renaming it over a target there
/// is atomic), with the mode of a file made by `File::create`: 0666 less
/// the umask (not tempfile's 0600).
///
/// # Errors
/// When the file cannot be made (the message names the folder).
fn temp_in(dir: &Path) -> io::Result<tempfile::NamedTempFile> {
    let mut b = temp_builder();
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        b.permissions(std::fs::Permissions::from_mode(0o666));
    }
    b.tempfile_in(dir).map_err(failed(|| format!("creating a temporary file in {}", dir.display())))
}

#[cfg(test)]
mod tests;
