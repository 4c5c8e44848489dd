//! Inputs, outputs, parallel work and progress shared by the commands.

use std::io::{IsTerminal, Read, Write};
use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};
use indicatif::{ProgressBar, ProgressStyle};
use rayon::prelude::*;

/// One input: a file or standard input.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Input {
    Stdin,
    File(PathBuf),
}

impl Input {
    /// How the input is named in messages.
    pub(crate) fn display(&self) -> String {
        match self {
            Input::Stdin => "<stdin>".to_string(),
            Input::File(p) => p.display().to_string(),
        }
    }

    /// The whole input.
    pub(crate) fn read(&self) -> Result<Vec<u8>> {
        match self {
            Input::Stdin => {
                let mut buf = Vec::new();
                std::io::stdin().lock().read_to_end(&mut buf).context("reading standard input")?;
                Ok(buf)
            }
            Input::File(p) => std::fs::read(p).with_context(|| format!("{}", p.display())),
        }
    }

    /// A buffered reader over the input, for streaming.
    pub(crate) fn open(&self) -> Result<Box<dyn Read + Send>> {
        Ok(match self {
            Input::Stdin => Box::new(std::io::stdin()),
            Input::File(p) => {
                Box::new(std::fs::File::open(p).with_context(|| format!("{}", p.display()))?)
            }
        })
    }
}

/// Expands arguments: `-` is standard input, directories are walked for
/// `*.bvh` (any case), sorted; files are taken as given.
pub(crate) fn expand(args: &[PathBuf]) -> Result<Vec<Input>> {
    let mut out = Vec::new();
    for a in args {
        if a.as_os_str() == "-" {
            out.push(Input::Stdin);
        } else if a.is_dir() {
            let mut found: Vec<PathBuf> = Vec::new();
            for entry in walkdir::WalkDir::new(a).follow_links(true) {
                let entry = entry.with_context(|| format!("walking {}", a.display()))?;
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
                eprintln!("bvh: warning: no *.bvh file under {}", a.display());
            }
            out.extend(found.into_iter().map(Input::File));
        } else {
            out.push(Input::File(a.clone()));
        }
    }
    if out.iter().filter(|i| **i == Input::Stdin).count() > 1 {
        bail!("standard input (-) can be read only once");
    }
    Ok(out)
}

/// Runs `f` over `inputs` on `threads` threads (all cores by default), with a
/// progress bar on a terminal, and returns the results in input order.
pub(crate) fn par_map<T: Send>(
    inputs: &[Input],
    threads: Option<usize>,
    f: impl Fn(&Input) -> T + Sync + Send,
) -> Result<Vec<T>> {
    let bar = if inputs.len() > 1 && std::io::stderr().is_terminal() {
        let b = ProgressBar::new(inputs.len() as u64);
        b.set_style(
            ProgressStyle::with_template(
                "{bar:40} {pos}/{len} files {elapsed_precise} (eta {eta}) {wide_msg}",
            )
            .unwrap_or_else(|_| ProgressStyle::default_bar()),
        );
        b
    } else {
        ProgressBar::hidden()
    };
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

/// Writes `bytes` to `path` without ever leaving a half-written file: a
/// temporary file in the same folder is written, synced and renamed over.
/// `-` writes to standard output.
pub(crate) fn write_atomic(
    path: &Path,
    write: impl FnOnce(&mut dyn Write) -> Result<()>,
) -> Result<()> {
    if path.as_os_str() == "-" {
        let stdout = std::io::stdout();
        let mut lock = std::io::BufWriter::new(stdout.lock());
        write(&mut lock)?;
        lock.flush()?;
        return Ok(());
    }
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    let mut tmp = temp_in(dir)?;
    {
        let mut w = std::io::BufWriter::new(tmp.as_file_mut());
        write(&mut w)?;
        w.flush()?;
    }
    tmp.as_file().sync_all()?;
    // Keep the permissions of a file we replace.
    if let Ok(meta) = std::fs::metadata(path) {
        let _ = std::fs::set_permissions(tmp.path(), meta.permissions());
    }
    tmp.persist(path)
        .map_err(|e| e.error)
        .with_context(|| format!("writing {}", path.display()))?;
    Ok(())
}

/// A temporary file in `dir` (so that renaming it over the target is atomic),
/// readable by others like a file made by `File::create`.
pub(crate) fn temp_in(dir: &Path) -> Result<tempfile::NamedTempFile> {
    temp_with_suffix(dir, ".tmp")
}

/// [`temp_in`] with a chosen suffix (ffmpeg picks its format from it).
pub(crate) fn temp_with_suffix(dir: &Path, suffix: &str) -> Result<tempfile::NamedTempFile> {
    let mut b = tempfile::Builder::new();
    b.prefix(".bvh-").suffix(suffix);
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        b.permissions(std::fs::Permissions::from_mode(0o644));
    }
    b.tempfile_in(dir).with_context(|| format!("creating a temporary file in {}", dir.display()))
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
            bail!(
                "{}: the output is the input {}; refusing to overwrite it (choose another -o; \
                 `bvh fmt --in-place` rewrites BVH files in place)",
                output.display(),
                p.display()
            );
        }
    }
    Ok(())
}
