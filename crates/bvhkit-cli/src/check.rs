//! `bvh check`.

use std::io::Write;
use std::process::ExitCode;

use anyhow::Result;

use crate::Inputs;
use crate::io::{LoadError, expand, load, located_warning, par_map};

#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    #[command(flatten)]
    inputs: Inputs,
    /// Strict reading: the first problem of each file is an error (default: lenient, every recoverable problem is listed).
    #[arg(long)]
    strict: bool,
    /// Print nothing; only the exit status tells.
    #[arg(short, long)]
    quiet: bool,
}

/// What checking one file found.
enum Outcome {
    Clean(Vec<String>),
    Problems(Vec<String>),
    Unreadable(String),
}

pub(crate) fn run(args: Args) -> Result<ExitCode> {
    let inputs = expand(&args.inputs.files)?;
    let outcomes = par_map(&inputs, args.inputs.threads, |input| match load(input, args.strict) {
        Ok((bvh, warnings)) => {
            let mut notes = Vec::new();
            let first = (bvh.motion().n_frames() > 0).then(|| bvh.motion().frame(0));
            if let Some((joint, repeats)) =
                bvhkit::position_channel_ambiguity(bvh.skeleton(), first)
            {
                notes.push(format!(
                    "{}: note: joint '{joint}' has position channels and a non-zero OFFSET, so \
                     --position-channels replace (the default) and add give different poses{}",
                    input.display(),
                    if repeats {
                        "; its first frame repeats the OFFSET, the sign of a file meant for replace"
                    } else {
                        ""
                    }
                ));
            }
            if warnings.is_empty() {
                Outcome::Clean(notes)
            } else {
                let mut lines: Vec<String> =
                    warnings.iter().map(|w| located_warning(input, w)).collect();
                lines.extend(notes);
                Outcome::Problems(lines)
            }
        }
        Err(e @ LoadError::Parse(_)) => Outcome::Problems(vec![format!("{}", e.describe(input))]),
        Err(e @ LoadError::Io(_)) => Outcome::Unreadable(e.describe(input)),
    })?;
    let mut code = 0u8;
    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::new(stdout.lock());
    for o in &outcomes {
        match o {
            Outcome::Clean(notes) => {
                if !args.quiet {
                    for n in notes {
                        writeln!(out, "{n}")?;
                    }
                }
            }
            Outcome::Problems(lines) => {
                code = code.max(1);
                if !args.quiet {
                    for l in lines {
                        writeln!(out, "{l}")?;
                    }
                }
            }
            Outcome::Unreadable(msg) => {
                code = 2;
                out.flush()?;
                eprintln!("bvh: error: {msg}");
            }
        }
    }
    out.flush()?;
    Ok(ExitCode::from(code))
}
