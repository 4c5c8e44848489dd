//! `bvh check`.

use std::io::{IsTerminal, Write};
use std::process::ExitCode;

use anyhow::Result;

use crate::Inputs;
use crate::io::{LoadError, expand, load, located_warning, par_map};
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

fn notes(input: &crate::io::Input, bvh: &bvhkit::Bvh) -> Vec<String> {
    let first = (bvh.motion().n_frames() > 0).then(|| bvh.motion().frame(0));
    bvhkit::position_channel_ambiguity(bvh.skeleton(), first)
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

pub(crate) fn run(args: Args) -> Result<ExitCode> {
    let inputs = expand(&args.inputs.files)?;
    let outcomes = par_map(&inputs, args.inputs.threads, |input| match load(input, args.strict) {
        Ok((bvh, warnings)) => {
            let notes = if args.verbose { notes(input, &bvh) } else { Vec::new() };
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
