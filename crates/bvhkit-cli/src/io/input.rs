//! Inputs: `-`, files and folders walked for `*.bvh` ([`expand`],
//! [`expand_rel`]), whole-input reads (memory-mapped at 1 MiB or more,
//! [`map_regular`]; bounded by `--max-size` from pipes and devices), the
//! streamed form of an input ([`Input::open_stream`]) and its frames read a
//! batch at a time while the one before is worked on ([`read_batches`]).

#[allow(clippy::wildcard_imports)]
use super::*;

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

impl Bytes {
    /// The buffer of bytes read into memory, for the next read
    /// ([`Input::read_reusing`]); an empty one for a mapping (unmapped
    /// here).
    pub(crate) fn into_buffer(self) -> Vec<u8> {
        match self {
            Bytes::Owned(v) => v,
            Bytes::Mapped(_) => Vec::new(),
        }
    }
}

impl Input {
    /// Whether the input is a regular file, which can be read twice, looked
    /// at without opening it (a FIFO opened and closed here would lose its
    /// writer before the read that follows; standard input never is one).
    pub(crate) fn is_regular_file(&self) -> bool {
        match self {
            Input::File(p) => std::fs::metadata(p).is_ok_and(|m| m.is_file()),
            Input::Stdin => false,
        }
    }

    /// How the input is named in messages.
    pub(crate) fn display(&self) -> String {
        match self {
            Input::Stdin => "<stdin>".to_string(),
            Input::File(p) => p.display().to_string(),
        }
    }

    /// The whole input: a regular file is mapped (1 MiB or more) or read, and
    /// bounded by its size; anything else (standard input, a pipe, a device)
    /// is read up to the `--max-size` limit and refused beyond it, or only
    /// its first 128 KiB when they cannot start a BVH text
    /// ([`read_limited`]; [`Input::read_any`] reads input of other formats).
    pub(crate) fn read(&self) -> Result<Bytes> {
        match self {
            Input::Stdin => read_limited(std::io::stdin().lock(), "standard input", max_size())
                .map(Bytes::Owned),
            Input::File(p) => read_file(p, max_size()),
        }
    }

    /// [`Input::read`] of an input that need not be BVH (an FBX file):
    /// standard input, a pipe or a device is read whole up to the
    /// `--max-size` limit, never stopped after its first 128 KiB because
    /// they cannot start a BVH text.
    pub(crate) fn read_any(&self) -> Result<Bytes> {
        match self {
            Input::Stdin => {
                read_bounded(std::io::stdin().lock(), "standard input", max_size(), Stop::Never)
                    .map(Bytes::Owned)
            }
            Input::File(p) => read_file_as(p, max_size(), &mut Vec::new(), false, Stop::Never),
        }
    }

    /// [`Input::read`], a small regular file read into the buffer `reuse`
    /// holds (taken; cleared first, replaced when it is too small): a
    /// thread that reads many files one after another then writes each
    /// into memory already faulted in. Give the buffer back with
    /// [`Bytes::into_buffer`]; a mapped file or standard input leaves
    /// `reuse` as it was.
    pub(crate) fn read_reusing(&self, reuse: &mut Vec<u8>) -> Result<Bytes> {
        match self {
            Input::Stdin => self.read(),
            Input::File(p) => read_file_as(p, max_size(), reuse, true, Stop::NotBvh),
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
pub(super) fn read_file(p: &Path, limit: u64) -> Result<Bytes> {
    read_file_as(p, limit, &mut Vec::new(), false, Stop::NotBvh)
}

/// [`read_file`], a small regular file read into the buffer `reuse` holds
/// (taken); a file that is not regular is read as `stop` says.
fn read_file_as(
    p: &Path,
    limit: u64,
    reuse: &mut Vec<u8>,
    reusing: bool,
    stop: Stop,
) -> Result<Bytes> {
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
        let want = usize::try_from(len).unwrap_or(0).min(MAP_AT_LEAST as usize);
        let mut buf = std::mem::take(reuse);
        buf.clear();
        if buf.capacity() < want {
            // Not grown in place (that would copy the old bytes); a buffer
            // that serves again is made as large as any file read here
            // (only the pages written are ever faulted in), so that it is
            // made once.
            drop(std::mem::take(&mut buf));
            buf = Vec::with_capacity(if reusing { MAP_AT_LEAST as usize } else { want });
        }
        file.take(len).read_to_end(&mut buf).with_context(name)?;
        return Ok(Bytes::Owned(buf));
    }
    read_bounded(file, &name(), limit, stop).map(Bytes::Owned)
}

/// Maps the regular file `file` of `len` bytes read-only, pre-faulted when
/// `populate` (a whole-file parse, whose threads then find every page
/// mapped); else the pages are mapped as a streaming reader first touches
/// them, on the threads that scan them, while the work on earlier frames
/// goes on, instead of all before the first frame. `None` where the system
/// refuses (some network and FUSE file systems), and the caller reads
/// instead.
pub(super) fn map_regular(file: &File, len: u64, populate: bool) -> Option<memmap2::Mmap> {
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

/// Drops the pages of `map` before byte `upto` (rounded down to a page)
/// from this process's memory, beyond those of an earlier call (`*done`,
/// moved on; an `upto` below it starts another read of the map, from its
/// start): a stream over a mapped file that will not read them again
/// then holds a constant number of pages, however large the file
/// (`Edit::stream_bytes_releasing`). Best effort: an error leaves the
/// pages mapped.
#[cfg(unix)]
pub(crate) fn release_pages(map: &memmap2::Mmap, upto: usize, done: &mut usize) {
    const PAGE: usize = 4096;
    // Whole pages only, and rounded down to the largest page size in use
    // on the usual systems (16 KiB on Apple silicon, 4 KiB elsewhere):
    // the page holding `upto` is still being read.
    let end = upto.min(map.len()) / (4 * PAGE) * (4 * PAGE);
    if end < *done {
        // Another read from the start (the real pass after the search for
        // sampled lines): its pages are mapped again from the first.
        *done = 0;
    }
    if end <= *done {
        return;
    }
    // SAFETY: `map` is a private read-only map of a file
    // (`map_regular`: `map_copy_read_only`), whose pages this process never
    // writes. MADV_DONTNEED on such pages only unmaps them: a later read
    // maps the file's page again, with the same bytes (madvise(2): private
    // file mappings are repopulated from the underlying file), so no byte
    // the `&[u8]` over the map shows changes (as with any map, unless
    // another process changes the file: see `map_regular`). The caller
    // releases only what its current read will not read again (a page the
    // real pass reads after the search for sampled lines released it is
    // mapped again, from the page cache), and maps the file anew before
    // reading it whole after a stream gave up.
    #[allow(unsafe_code)]
    let _ = unsafe {
        map.unchecked_advise_range(memmap2::UncheckedAdvice::DontNeed, *done, end - *done)
    };
    *done = end;
}

/// Elsewhere the pages stay mapped.
#[cfg(not(unix))]
pub(crate) fn release_pages(_map: &memmap2::Mmap, _upto: usize, _done: &mut usize) {}

/// The most bytes of a text file an option names ([`read_option_text`]).
pub(crate) const OPTION_TEXT_MAX: u64 = 64 << 20;

/// The text of a small file an option names (a joint map, a contacts
/// table), read whole as `std::fs::read_to_string` does, with its errors,
/// but never more than [`OPTION_TEXT_MAX`] bytes: `/dev/zero` or an endless
/// pipe is refused there instead of filling the memory.
pub(crate) fn read_option_text(p: &Path) -> std::io::Result<String> {
    let mut buf = Vec::new();
    File::open(p)?.take(OPTION_TEXT_MAX + 1).read_to_end(&mut buf)?;
    if buf.len() as u64 > OPTION_TEXT_MAX {
        return Err(std::io::Error::new(
            std::io::ErrorKind::FileTooLarge,
            format!("more than {} (the most read of such a file)", show_size(OPTION_TEXT_MAX)),
        ));
    }
    String::from_utf8(buf).map_err(|_| {
        std::io::Error::new(std::io::ErrorKind::InvalidData, "stream did not contain valid UTF-8")
    })
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
/// names `what` and the limit (an endless pipe or `/dev/zero` stops there);
/// an input whose first 128 KiB cannot start a BVH text is read no further
/// (the parser finds its error in them).
pub(crate) fn read_limited(r: impl Read, what: &str, limit: u64) -> Result<Vec<u8>> {
    read_bounded(r, what, limit, Stop::NotBvh)
}

/// Where a read of a stream that is not a regular file may stop early.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Stop {
    /// After the first 128 KiB when they cannot start a BVH text (a BVH
    /// reader's input: the parser's error is found in them).
    NotBvh,
    /// Never: the input is read whole (an FBX file), up to the limit.
    Never,
}

/// [`read_limited`], stopping early as `stop` says.
fn read_bounded(r: impl Read, what: &str, limit: u64, stop: Stop) -> Result<Vec<u8>> {
    let mut buf = Vec::new();
    let mut r = r.take(limit.saturating_add(1));
    // The first 128 KiB decide whether the input can be BVH at all: when it
    // cannot (`/dev/zero`, a picture), the rest is not read, and the parser
    // finds the same error at the same place in what was (a token is at
    // most 64 KiB).
    (&mut r).take(PREFIX).read_to_end(&mut buf).with_context(|| what.to_string())?;
    if stop == Stop::NotBvh && !can_start_bvh(&buf) {
        return Ok(buf);
    }
    r.read_to_end(&mut buf).with_context(|| what.to_string())?;
    if buf.len() as u64 > limit {
        bail!(
            "{what}: more than {} (the --max-size limit for input that is not a regular file); \
             pass --max-size SIZE to read more",
            show_size(limit)
        );
    }
    Ok(buf)
}

/// How much of a stream [`read_limited`] reads before it decides whether
/// the input can be BVH at all.
const PREFIX: u64 = 128 * 1024;

/// Whether `prefix`, the start of an input, can start a BVH text: after an
/// optional UTF-8 byte-order mark and ASCII white space, the first byte can
/// begin `HIERARCHY` or `ROOT` (which lenient reading takes), or is another
/// byte the parser might take as a separator. An input of only white space
/// so far can still be anything.
fn can_start_bvh(prefix: &[u8]) -> bool {
    let text = prefix.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(prefix);
    match text.iter().find(|b| !b.is_ascii_whitespace()) {
        None => true,
        Some(b) => matches!(b, b'H' | b'h' | b'R' | b'r' | 0x0B) || b.is_ascii_whitespace(),
    }
}

/// Expands arguments: `-` is standard input, directories are walked for
/// `*.bvh` (any case), sorted; files are taken as given. A broken symbolic
/// link, a link loop or an unreadable folder met while walking is reported
/// (`bvh: warning: PATH: reason`) and skipped, and counted in [`skipped`].
/// A folder without any is a warning (`no *.bvh file under DIR`), and
/// arguments that give no input at all are the error `no input file` (exit
/// 2), the one rule of every command that takes files or folders; no
/// arguments (`bvh view` alone) are no inputs.
pub(crate) fn expand(args: &[PathBuf]) -> Result<Vec<Input>> {
    Ok(expand_rel(args)?.into_iter().map(|(i, _)| i).collect())
}

/// [`expand`], with each input's path relative to the folder it was found
/// in (its file name when named directly; `-` for standard input), which is
/// where its output goes under an output folder.
pub(crate) fn expand_rel(args: &[PathBuf]) -> Result<Vec<(Input, PathBuf)>> {
    let out = walk(args)?;
    if out.is_empty() && !args.is_empty() {
        // The walk has said which folder had none.
        bail!("no input file");
    }
    Ok(out)
}

/// The files under one folder, as [`expand`] finds them, none an error only
/// for the caller to decide (`bvh concat` counts its clips over all its
/// arguments).
pub(crate) fn walk_folder(dir: &Path) -> Result<Vec<PathBuf>> {
    Ok(walk(std::slice::from_ref(&dir.to_path_buf()))?
        .into_iter()
        .filter_map(|(i, _)| match i {
            Input::File(p) => Some(p),
            Input::Stdin => None,
        })
        .collect())
}

/// [`expand_rel`] without the refusal of no inputs.
fn walk(args: &[PathBuf]) -> Result<Vec<(Input, PathBuf)>> {
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
pub(super) fn walk_problem(root: &Path, e: &walkdir::Error) -> String {
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

/// Reads the frames of `rdr` in batches of whole frames (about
/// `bvhkit::edit::run::BATCH_VALUES` values each; the core's
/// [`bvhkit::edit::run::read_batches`]) and hands each batch to `each(frames,
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
    each: impl FnMut(usize, &[f64]) -> Result<bool> + Send,
) -> Result<Result<(), bvhkit::Error>> {
    bvhkit::edit::run::read_batches(rdr, each)
}

/// A buffer sent back to be reused, or a new one.
pub(crate) fn take_free<T: Default>(free: &std::sync::Mutex<std::sync::mpsc::Receiver<T>>) -> T {
    free.lock().ok().and_then(|rx| rx.try_recv().ok()).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_inputs_that_cannot_be_bvh_are_cut_short() {
        for yes in [
            &b""[..],
            b"  \r\n",
            b"HIERARCHY",
            b"hierarchy",
            b"\xEF\xBB\xBF\nROOT a",
            b"\t\x0bHIER",
        ] {
            assert!(can_start_bvh(yes), "{yes:?}");
        }
        for no in [&b"\0\0\0"[..], b"\x89PNG\r\n", b"  MOTION", b"\xEF\xBB\xBF{", b"1 2 3"] {
            assert!(!can_start_bvh(no), "{no:?}");
        }
        // A stream that cannot be BVH is read no further than the prefix;
        // one that can is read whole, up to the limit.
        let zeros = std::io::repeat(0).take(10 << 20);
        assert_eq!(read_limited(zeros, "z", 1 << 30).unwrap().len() as u64, PREFIX);
        let text = [b"HIERARCHY\n".as_slice(), &vec![b' '; 300_000]].concat();
        assert_eq!(read_limited(text.as_slice(), "t", 1 << 30).unwrap(), text);
        let e = read_limited(text.as_slice(), "t", 200_000).unwrap_err().to_string();
        assert!(e.contains("the --max-size limit"), "{e}");
    }
}
