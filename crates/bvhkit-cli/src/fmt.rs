//! `bvh fmt`.
//!
//! # Implementation notes
//!
//! `fmt` plans every output before reading anything (folders kept under `-o
//! DIR`, collisions and outputs that are inputs refused: `io::check_targets`,
//! inputs and outputs compared by device and inode in one pass; `bvh edit`,
//! `positions`/`rotations` and the glTF export plan their per-input outputs the
//! same way, with `io::names_folder` deciding whether `-o` is a folder) and
//! refuses repairs that invent or discard values without `--repair`
//! (`fmt::repair_loss`, the rule in `docs/format.md`).

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{Context, Result, bail};
use bvhkit::{LineEnding, Precision, Warning, WarningKind, WriteOptions};

use crate::io::{Input, load, located_warning, par_map, write_atomic};
use crate::text::escape;

/// The long help of `bvh fmt` (`bvh fmt --help`).
pub(crate) const LONG_ABOUT: &str = "\
Rewrite files in canonical form, repairing what lenient reading recovers.

The canonical form has one tab per level, one frame per line and the shortest \
numbers that read back to the same bits, so a file is re-read exactly as it \
was. Repairs that lose nothing are made without asking: a wrong `Frames:` \
count (the frames present are kept), frames wrapped over several lines or \
all on one line, a missing MOTION keyword, misplaced or missing keywords and \
names in the hierarchy, a missing final newline. A repair that would write a \
number the file does not hold or drop one it does (motion lines with the \
wrong number of values filled with zeros or cut, an incomplete last frame \
dropped, a missing or zero Frame Time replaced by 1/30 s, a missing OFFSET \
replaced by 0 0 0) is refused with exit status 2 and a message saying how \
many values it would invent or discard and where, unless --repair is given. \
One input goes to standard output, or to -o FILE (.bvh); several inputs need -o \
DIR (folders are recreated under DIR; two inputs that would land on the \
same output are an error before anything is written) or --in-place. No \
output may be one of the inputs except with --in-place, which writes \
through a temporary file and a rename.

Example: bvh fmt mocap/ -o clean/ --repair";

#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// Files to rewrite; directories are walked for *.bvh; `-` reads standard input.
    #[arg(required = true, value_name = "FILE")]
    files: Vec<PathBuf>,
    /// Where to write: a file (one input file), a directory (several inputs or a directory,
    /// whose folders are recreated under it) or `-` for standard output.
    /// Without -o and --in-place, one input file is written to standard output.
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
    #[arg(long, conflicts_with = "repair")]
    strict: bool,
    /// Also make repairs that invent or discard values (zero-filled or cut motion lines,
    /// a dropped incomplete frame, an assumed Frame Time or OFFSET); without it they are refused.
    #[arg(long)]
    repair: bool,
    /// Write position channels every reader reads the same way: constant ones below a root
    /// folded into the OFFSET, the OFFSET zeroed under varying ones (docs/format.md).
    #[arg(long)]
    portable: bool,
    /// Number of files processed at once (default: all cores).
    #[arg(short = 'j', long, value_name = "N", value_parser = crate::io::parse_jobs)]
    threads: Option<usize>,
}

/// One input and where its rewrite goes.
struct Job {
    input: Input,
    target: PathBuf,
}

/// Inputs with the path each keeps under an output directory: the path
/// below the directory argument it was found in, else its file name.
fn inputs_with_relative_paths(args: &[PathBuf]) -> Result<(Vec<(Input, PathBuf)>, bool)> {
    let any_dir = args.iter().any(|a| a.as_os_str() != "-" && a.is_dir());
    Ok((crate::io::expand_rel(args)?, any_dir))
}

/// Decides every output before anything is read or written.
fn plan(args: &Args) -> Result<Vec<Job>> {
    let (inputs, any_dir) = inputs_with_relative_paths(&args.files)?;
    let single = inputs.len() == 1 && !any_dir;
    if let Some(o) = &args.output
        && !single
        && o.as_os_str() != "-"
        && o.exists()
        && !o.is_dir()
    {
        bail!("{}: several inputs need -o to name a directory, not a file", o.display());
    }
    let mut jobs = Vec::with_capacity(inputs.len());
    for (input, rel) in inputs {
        let target = match (&args.output, args.in_place, &input) {
            (_, true, Input::Stdin) => bail!("--in-place cannot rewrite standard input"),
            (_, true, Input::File(p)) => p.clone(),
            (Some(o), false, _) if o.as_os_str() == "-" => {
                if !single {
                    bail!("several inputs cannot all go to standard output; use -o DIR");
                }
                o.clone()
            }
            (Some(o), false, _) if single && !crate::io::names_folder(o) => {
                check_extension(o)?;
                o.clone()
            }
            (Some(_), false, Input::Stdin) => {
                bail!("standard input cannot be written under a directory; use -o FILE or -o -")
            }
            (Some(o), false, _) => o.join(&rel),
            (None, false, _) if single => PathBuf::from("-"),
            (None, false, _) if any_dir => {
                bail!("a directory needs -o OUTDIR (its folders are recreated there) or --in-place")
            }
            (None, false, _) => bail!("several inputs need -o OUTDIR or --in-place"),
        };
        jobs.push(Job { input, target });
    }
    if !args.in_place {
        crate::io::check_targets(jobs.iter().map(|j| (&j.input, j.target.as_path())))?;
    }
    Ok(jobs)
}

/// A file output of `bvh fmt` is BVH: `.bvh` (any case) or no extension.
fn check_extension(o: &Path) -> Result<()> {
    match o.extension() {
        Some(e) if !e.eq_ignore_ascii_case("bvh") => bail!(
            "`.{}` is not an output of `bvh fmt`, which writes BVH; accepted: .bvh, or a \
             directory (positions and rotations: `bvh positions`, `bvh rotations`)",
            escape(&e.to_string_lossy())
        ),
        _ => Ok(()),
    }
}

/// What a lenient repair would write that the file does not hold, or drop
/// that it does: `None` for repairs that lose nothing. `frames` is the
/// number of frames the repair produced.
///
/// By warning kind: `TruncatedFrame` discards values; `FrameTime` invents a
/// frame time; `RowLayout` invents or discards values when every line is
/// read as one frame of the wrong width (and loses nothing when values are
/// re-read as one stream); `Hierarchy` invents an OFFSET when one is
/// missing (its other repairs, names and keywords, lose no number);
/// `FrameCount`, `MotionHeader` and `Encoding` change no number.
pub(crate) fn repair_loss(w: &Warning, frames: usize) -> Option<String> {
    let line = w.position.map_or(String::new(), |p| format!(" (line {})", p.line));
    let nums = |s: &str| -> Vec<usize> {
        s.split(|c: char| !c.is_ascii_digit()).filter_map(|t| t.parse().ok()).collect()
    };
    match w.kind {
        WarningKind::TruncatedFrame => {
            let n = nums(&w.message);
            let count = n.first().map_or("the".to_string(), |v| v.to_string());
            Some(format!("discards {count} values of an incomplete last frame{line}"))
        }
        WarningKind::FrameTime => Some(format!("invents a Frame Time of 1/30 s{line}")),
        WarningKind::RowLayout if w.message.starts_with("every motion line holds ") => {
            let n = nums(&w.message);
            let (k, c) = (*n.first()?, *n.get(1)?);
            let from = w.position.map_or(String::new(), |p| format!(" from line {}", p.line));
            Some(if k < c {
                format!(
                    "invents {} values: sets the last {} of {c} channels to 0 on each of the \
                     {frames} motion lines{from}, which hold {k} values",
                    frames * (c - k),
                    c - k
                )
            } else {
                format!(
                    "discards {} values: the last {} of each of the {frames} motion lines{from}, \
                     which hold {k} values for {c} channels",
                    frames * (k - c),
                    k - c
                )
            })
        }
        WarningKind::Hierarchy if w.message.starts_with("joint has no OFFSET") => {
            Some(format!("invents OFFSET 0 0 0 for a joint{line}"))
        }
        _ => None,
    }
}

/// The refusal of every command that writes BVH (`fmt`, `edit`, `clean`,
/// `concat`, `blend`, `layer`, `loop`, `retarget`) of an input `name` whose reading `warnings`
/// (of `frames` frames) invent or discard values ([`repair_loss`]), unless
/// `repair`: the error names each loss and `--repair`.
pub(crate) fn refuse_losses(
    name: &str,
    warnings: &[Warning],
    frames: usize,
    repair: bool,
) -> Result<()> {
    if repair {
        return Ok(());
    }
    let lost: Vec<String> = warnings.iter().filter_map(|w| repair_loss(w, frames)).collect();
    if lost.is_empty() {
        return Ok(());
    }
    bail!("{name}: not written: the repair {}; --repair writes it anyway", lost.join("; it "))
}

pub(crate) fn run(args: Args) -> Result<ExitCode> {
    let jobs = plan(&args)?;
    let inputs: Vec<Input> = jobs.iter().map(|j| j.input.clone()).collect();
    // Inputs are unique here except under --in-place, where each is its own target.
    let key = |i: &Input| match i {
        Input::Stdin => None,
        Input::File(p) => Some(p.clone()),
    };
    let target: HashMap<Option<PathBuf>, &Path> =
        jobs.iter().map(|j| (key(&j.input), j.target.as_path())).collect();
    let mut opts = WriteOptions::new();
    if let Some(p) = args.precision {
        opts.precision(Precision::Fixed(p));
    }
    if args.crlf {
        opts.line_ending(LineEnding::CrLf);
    }
    let results = par_map(&inputs, args.threads, |input| -> Result<Vec<String>> {
        let (bvh, warnings) =
            load(input, args.strict).map_err(|e| anyhow::anyhow!(e.describe(input)))?;
        refuse_losses(&input.display(), &warnings, bvh.motion().n_frames(), args.repair)?;
        let out = target[&key(input)];
        let mut notes: Vec<String> = warnings.iter().map(|w| located_warning(input, w)).collect();
        let bvh = if args.portable {
            let mode = bvhkit::PositionChannels::Replace;
            crate::portable::apply(&bvh, mode, &input.display(), &mut notes)?
        } else {
            bvh
        };
        write_atomic(out, |w| opts.write(&bvh, w).map_err(anyhow::Error::from)).with_context(
            || format!("{}: writing {}", input.display(), bvhkit_write::shown(out)),
        )?;
        Ok(notes)
    })?;
    Ok(crate::io::report(results))
}

#[cfg(test)]
mod tests {
    use super::*;
    use bvhkit::Bvh;

    fn warnings(text: &str) -> (Bvh, Vec<Warning>) {
        bvhkit::ReadOptions::new().lenient(true).parse(text.as_bytes()).unwrap()
    }

    const HEAD: &str = "HIERARCHY\nROOT A\n{\n\tOFFSET 0 0 0\n\tCHANNELS 3 Zrotation Xrotation Yrotation\n\
                        \tEnd Site\n\t{\n\t\tOFFSET 0 1 0\n\t}\n}\nMOTION\n";

    fn loss_of(text: &str) -> Vec<String> {
        let (bvh, w) = warnings(text);
        w.iter().filter_map(|w| repair_loss(w, bvh.motion().n_frames())).collect()
    }

    #[test]
    fn lossless_repairs_are_not_losses() {
        // Wrong Frames: count, frames wrapped over lines, no final newline.
        assert!(loss_of(&format!("{HEAD}Frames: 5\nFrame Time: 0.1\n1 2 3\n4 5 6\n")).is_empty());
        assert!(loss_of(&format!("{HEAD}Frames: 2\nFrame Time: 0.1\n1 2\n3 4 5 6\n")).is_empty());
        assert!(loss_of(&format!("{HEAD}Frames: 1\nFrame Time: 0.1\n1 2 3")).is_empty());
        assert!(!warnings(&format!("{HEAD}Frames: 5\nFrame Time: 0.1\n1 2 3\n")).1.is_empty());
    }

    #[test]
    fn losing_repairs_say_how_many_values_and_where() {
        // Lines of 2 values for 3 channels, as many lines as Frames: zero-filled.
        let l = loss_of(&format!("{HEAD}Frames: 3\nFrame Time: 0.1\n1 2\n3 4\n5 6\n"));
        assert_eq!(
            l,
            ["invents 3 values: sets the last 1 of 3 channels to 0 on each of the 3 motion \
              lines from line 14, which hold 2 values"]
        );
        // Lines of 4 values for 3 channels: cut.
        let l = loss_of(&format!("{HEAD}Frames: 2\nFrame Time: 0.1\n1 2 3 4\n5 6 7 8\n"));
        assert_eq!(
            l,
            ["discards 2 values: the last 1 of each of the 2 motion lines from line 14, which \
              hold 4 values for 3 channels"]
        );
        // An incomplete last frame.
        let l = loss_of(&format!("{HEAD}Frames: 2\nFrame Time: 0.1\n1 2 3\n4 5\n"));
        assert_eq!(l, ["discards 2 values of an incomplete last frame (line 15)"]);
        // No frame time.
        let l = loss_of(&format!("{HEAD}Frames: 1\nFrame Time: 0\n1 2 3\n"));
        assert_eq!(l, ["invents a Frame Time of 1/30 s (line 13)"]);
        // No OFFSET.
        let l = loss_of(
            "HIERARCHY\nROOT A\n{\n\tCHANNELS 1 Zrotation\n}\nMOTION\nFrames: 1\nFrame Time: 0.1\n1\n",
        );
        assert_eq!(l, ["invents OFFSET 0 0 0 for a joint (line 2)"]);
    }
}
