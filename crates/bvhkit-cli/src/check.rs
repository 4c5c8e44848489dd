//! `bvh check`.

use std::io::{IsTerminal, Write};
use std::process::ExitCode;

use anyhow::Result;

use crate::Inputs;
use crate::io::{Input, LoadError, Streamed, expand, located_warning, par_map};
use crate::text::escape;

/// The long help of `bvh check` (`bvh check --help`).
pub(crate) const LONG_ABOUT: &str = "\
Validate files; print every problem as FILE:LINE:COL: message.

Each file is read leniently (strictly with --strict) and every problem the \
reader recovered from is printed on standard output, one line each, in the \
form editors jump to. A file that cannot be parsed at all (an empty file, a \
picture renamed .bvh, `nan` among the motion values) is printed the same way. \
Exit status: 0 when every file is clean, 1 when some have warnings but all \
load, 2 when any file cannot be read or parsed. -v adds notes that are not \
problems (joints whose position channels read differently under \
--position-channels replace and add). On a terminal, or with --summary, a \
last line on standard error counts the files clean, with warnings and \
unreadable.

Example: bvh check mocap/ --summary";

#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    #[command(flatten)]
    inputs: Inputs,
    /// Strict reading: the first problem of each file is an error (default: lenient, every recoverable problem is listed).
    #[arg(long)]
    strict: bool,
    /// Print nothing; only the exit status tells.
    #[arg(short, long, conflicts_with = "verbose")]
    quiet: bool,
    /// Also print notes that are not problems (position channels that make
    /// --position-channels replace and add differ).
    #[arg(short, long)]
    verbose: bool,
    /// End with a line counting files clean, with warnings and unreadable
    /// (always printed when standard error is a terminal, unless -q).
    #[arg(long)]
    summary: bool,
}

/// What checking one file found.
enum Outcome {
    /// Loaded without a warning; notes for -v.
    Clean(Vec<String>),
    /// Loaded with warnings (the lines), and notes for -v.
    Warnings(Vec<String>, Vec<String>),
    /// Not BVH, or not enough of it: the located error.
    Unparsable(String),
    /// Could not be read at all.
    Unreadable(String),
}

fn notes(input: &Input, skeleton: &bvhkit::Skeleton, first: Option<&[f64]>) -> Vec<String> {
    bvhkit::position_channel_ambiguity(skeleton, first)
        .map(|(joint, repeats)| {
            format!(
                "{}: note: joint '{joint}' has position channels and a non-zero OFFSET, so \
                 --position-channels replace (the default) and add give different poses{}",
                input.display(),
                if repeats {
                    "; its first frame repeats the OFFSET, the sign of a file meant for replace"
                } else {
                    ""
                }
            )
        })
        .into_iter()
        .collect()
}

/// What a streamed read of one input found: its skeleton, its first frame
/// (for the notes), and the reader's warnings.
struct Checked {
    skeleton: bvhkit::Skeleton,
    first: Option<Vec<f64>>,
    warnings: Vec<bvhkit::Warning>,
}

/// Reads `input` through the streaming reader ([`crate::io::read_batches`]),
/// keeping no values but the first frame's: constant memory however large
/// the file, and standard input or a pipe is read as it comes (no
/// `--max-size` limit to reach: nothing is held). The warnings and errors
/// are those of the whole-file reader (`a_streamed_check_says_what_a_whole_parse_says`),
/// but for the one layout decision the streaming reader takes within the
/// first 16 MiB of motion (`docs/format.md`).
fn check_streamed(input: &Input, strict: bool) -> Result<Checked, LoadError> {
    let mut opts = bvhkit::ReadOptions::new();
    opts.lenient(!strict);
    fn drain<R: bvhkit::FrameSource + Send>(
        mut rdr: bvhkit::FrameReader<R>,
    ) -> Result<Checked, LoadError> {
        let width = rdr.skeleton().n_channels();
        let mut first = None;
        let read = crate::io::read_batches(&mut rdr, |n, values| {
            if first.is_none() && n > 0 {
                first = Some(values[..width].to_vec());
            }
            Ok(true)
        })
        .map_err(LoadError::Io)?;
        read.map_err(LoadError::Parse)?;
        let warnings = rdr.take_warnings();
        Ok(Checked { skeleton: rdr.skeleton().clone(), first, warnings })
    }
    match input.open_stream().map_err(LoadError::Io)? {
        Streamed::Bytes(bytes) => drain(opts.frame_reader_slice(&bytes).map_err(LoadError::Parse)?),
        Streamed::Reader(r) => drain(opts.frame_reader(r).map_err(LoadError::Parse)?),
    }
}

pub(crate) fn run(args: Args) -> Result<ExitCode> {
    let inputs = expand(&args.inputs.files)?;
    let outcomes =
        par_map(&inputs, args.inputs.threads, |input| match check_streamed(input, args.strict) {
            Ok(Checked { skeleton, first, warnings }) => {
                let notes = if args.verbose {
                    notes(input, &skeleton, first.as_deref())
                } else {
                    Vec::new()
                };
                if warnings.is_empty() {
                    Outcome::Clean(notes)
                } else {
                    Outcome::Warnings(
                        warnings.iter().map(|w| located_warning(input, w)).collect(),
                        notes,
                    )
                }
            }
            Err(e @ LoadError::Parse(_)) => Outcome::Unparsable(e.describe(input)),
            Err(e @ LoadError::Io(_)) => Outcome::Unreadable(e.describe(input)),
        })?;
    let (mut clean, mut warned, mut unreadable) = (0usize, 0usize, 0usize);
    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::new(stdout.lock());
    for o in &outcomes {
        let lines: &[String] = match o {
            Outcome::Clean(notes) => {
                clean += 1;
                notes
            }
            Outcome::Warnings(lines, notes) => {
                warned += 1;
                if !args.quiet {
                    for l in lines {
                        writeln!(out, "{}", escape(l))?;
                    }
                }
                notes
            }
            Outcome::Unparsable(line) => {
                unreadable += 1;
                std::slice::from_ref(line)
            }
            Outcome::Unreadable(msg) => {
                unreadable += 1;
                out.flush()?;
                if !args.quiet {
                    eprintln!("bvh: error: {}", escape(msg));
                }
                &[]
            }
        };
        if !args.quiet {
            for l in lines {
                writeln!(out, "{}", escape(l))?;
            }
        }
    }
    out.flush()?;
    if args.summary || (!args.quiet && std::io::stderr().is_terminal()) {
        eprintln!(
            "bvh: {} file{}: {clean} clean, {warned} with warnings, {unreadable} unreadable",
            outcomes.len(),
            if outcomes.len() == 1 { "" } else { "s" }
        );
    }
    let code = if unreadable > 0 {
        2
    } else if warned > 0 {
        1
    } else {
        0
    };
    Ok(ExitCode::from(code))
}

#[cfg(test)]
mod tests {
    use std::path::PathBuf;

    use super::*;
    use crate::io::load;

    /// What one way of reading says of an input: the located warnings and
    /// the first frame, or the located error.
    fn said(
        input: &Input,
        streamed: bool,
        strict: bool,
    ) -> Result<(Vec<String>, Option<Vec<u64>>), String> {
        let bits = |f: &[f64]| f.iter().map(|v| v.to_bits()).collect::<Vec<_>>();
        let (warnings, first) = if streamed {
            let c = check_streamed(input, strict).map_err(|e| e.describe(input))?;
            (c.warnings, c.first.as_deref().map(bits))
        } else {
            let (bvh, w) = load(input, strict).map_err(|e| e.describe(input))?;
            let first = (bvh.motion().n_frames() > 0).then(|| bits(bvh.motion().frame(0)));
            (w, first)
        };
        Ok((warnings.iter().map(|w| located_warning(input, w)).collect(), first))
    }

    /// The streamed check prints what the whole-file reader (which `check`
    /// used before it streamed) says, strictly and leniently, on every
    /// corpus file (its malformed ones included) and every quirk and hostile
    /// fixture.
    #[test]
    fn a_streamed_check_says_what_a_whole_parse_says() {
        let data = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../bvhkit/tests/data");
        let mut files: Vec<PathBuf> = ["quirks", "hostile"]
            .iter()
            .flat_map(|d| std::fs::read_dir(data.join(d)).unwrap())
            .map(|e| e.unwrap().path())
            .filter(|p| p.extension().is_some_and(|e| e == "bvh"))
            .collect();
        assert!(files.len() > 40, "{} fixtures", files.len());
        match bvhkit_testdata::corpus_or_skip("a_streamed_check_says_what_a_whole_parse_says") {
            Some(_) => files.extend(bvhkit_testdata::corpus_files()),
            None => return,
        }
        files.sort();
        let (mut warned, mut failed) = (0, 0);
        for f in &files {
            let input = Input::File(f.clone());
            for strict in [false, true] {
                let whole = said(&input, false, strict);
                assert_eq!(said(&input, true, strict), whole, "{} (strict: {strict})", f.display());
                match whole {
                    Ok((w, _)) => warned += usize::from(!w.is_empty()),
                    Err(_) => failed += 1,
                }
            }
        }
        // Both kinds of outcome were compared, many times each.
        assert!(warned > 20 && failed > 40, "{warned} with warnings, {failed} errors");
    }
}
