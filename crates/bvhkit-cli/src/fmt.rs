//! `bvh fmt`.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{Context, Result, bail};
use bvhkit::{LineEnding, Precision, WriteOptions};

use crate::io::{Input, expand, load, located_warning, par_map, write_atomic};

#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// Files to rewrite; directories are walked for *.bvh; `-` reads standard input.
    #[arg(required = true, value_name = "FILE")]
    files: Vec<PathBuf>,
    /// Where to write: a file (one input), a directory (several inputs) or `-` for standard output.
    /// Without -o and --in-place, one input is written to standard output.
    #[arg(short, long, value_name = "OUT", conflicts_with = "in_place")]
    output: Option<PathBuf>,
    /// Rewrite each file in place (through a temporary file and a rename, so a failure never damages it).
    #[arg(long)]
    in_place: bool,
    /// Print numbers with exactly N decimals instead of the shortest exact form (loses precision).
    #[arg(long, value_name = "N")]
    precision: Option<u8>,
    /// Write CRLF line endings instead of LF.
    #[arg(long)]
    crlf: bool,
    /// Refuse files with any problem instead of repairing what lenient reading recovers.
    #[arg(long)]
    strict: bool,
    /// Number of files processed at once (default: all cores).
    #[arg(short = 'j', long, value_name = "N")]
    threads: Option<usize>,
}

pub(crate) fn run(args: Args) -> Result<ExitCode> {
    let inputs = expand(&args.files)?;
    let mut opts = WriteOptions::new();
    if let Some(p) = args.precision {
        opts.precision(Precision::Fixed(p));
    }
    if args.crlf {
        opts.line_ending(LineEnding::CrLf);
    }
    let target = |input: &Input| -> Result<PathBuf> {
        Ok(match (&args.output, args.in_place, input) {
            (_, true, Input::Stdin) => bail!("--in-place cannot rewrite standard input"),
            (_, true, Input::File(p)) => p.clone(),
            (Some(o), false, _) if inputs.len() == 1 => o.clone(),
            (Some(o), false, Input::File(p)) => {
                std::fs::create_dir_all(o).with_context(|| format!("creating {}", o.display()))?;
                o.join(p.file_name().unwrap_or(p.as_os_str()))
            }
            (Some(_), false, Input::Stdin) => {
                bail!("standard input among several inputs needs --output FILE")
            }
            (None, false, _) if inputs.len() == 1 => PathBuf::from("-"),
            (None, false, _) => bail!("several inputs need --output DIR or --in-place"),
        })
    };
    // Refuse to write two inputs to the same place.
    if let Some(o) = &args.output
        && inputs.len() > 1
        && o.as_os_str() == "-"
    {
        bail!("several inputs cannot all go to standard output");
    }
    let results = par_map(&inputs, args.threads, |input| -> Result<Vec<String>> {
        let (bvh, warnings) =
            load(input, args.strict).map_err(|e| anyhow::anyhow!(e.describe(input)))?;
        let out = target(input)?;
        write_atomic(&out, |w| opts.write(&bvh, w).map_err(anyhow::Error::from))
            .with_context(|| format!("{}: writing {}", input.display(), display(&out)))?;
        Ok(warnings.iter().map(|w| located_warning(input, w)).collect())
    })?;
    let mut failed = false;
    for r in results {
        match r {
            Ok(lines) => {
                for l in lines {
                    eprintln!("{l}");
                }
            }
            Err(e) => {
                if crate::is_broken_pipe(&e) {
                    return Ok(ExitCode::SUCCESS);
                }
                failed = true;
                eprintln!("bvh: error: {e:#}");
            }
        }
    }
    Ok(if failed { ExitCode::from(2) } else { ExitCode::SUCCESS })
}

fn display(p: &Path) -> String {
    if p.as_os_str() == "-" { "standard output".into() } else { p.display().to_string() }
}
