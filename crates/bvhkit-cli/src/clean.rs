//! `bvh clean`: spike repair, smoothing, drift, ground, foot locking (`bvhkit::clean`).

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{Context, Result, anyhow, bail};
use bvhkit::WriteOptions;
use bvhkit::clean::{self, Butterworth, OneEuro, Options, SavGol};

use crate::concat::load_all;
use crate::io::{Bytes, Input, Streamed, expand_rel, par_map, write_atomic};
use crate::text::escape;

pub(crate) const LONG_ABOUT: &str = "\
Clean captured motion: repair spikes, smooth rotations and positions, remove \
drift, ground the figure and lock the feet, the skeleton and the frame count \
unchanged.

The steps run in this order, each only when asked:
  --spikes        joint-frames far from their neighbours (above median + K x \
MAD of the joint's own deviations) replaced by SLERP from the frames around \
them
  --butterworth   zero-phase low-pass (scipy's butter + filtfilt)
  --savgol        Savitzky-Golay (scipy's savgol_filter)
  --one-euro      the causal one-euro filter
  --remove-drift  the root's horizontal travel removed at a constant rate
  --ground        the contact ground moved to height 0
  --lock-feet     feet in contact pinned, one point per contact span, by \
two-bone IK of the legs with smoothstep ramps, the hips lowered when a leg \
cannot reach; contacts as bvh lint finds them, or from --contacts FILE (a \
CSV of joint,start,end); --flatten-feet also turns each locked foot about \
the ankle to its planted roll and pitch (medians over its spans) where that \
moves its toe by less than 3 mm, blended over the span's ramps

Rotations are filtered as continuous quaternion tracks (never raw Euler \
channels) and written back in each joint's own order, closest to the \
input's angles; every channel a step does not touch is copied bit for bit. \
--joints is the mask of the smoothing steps; --strength blends each joint's \
filtered track with its original by a factor S from 0 to 1 (a rotation \
moves by S times what the filter changed, a position becomes \
p + S x (p' - p)).

A summary of each step (joints changed, largest change per joint, frames \
repaired) goes to stderr, or to stdout with --dry-run, which writes \
nothing. --spikes and --one-euro, alone or together, stream a regular file \
to its output without holding its frames (spikes read it four times), with \
the bytes and summary of the whole clip; the other steps, standard input \
and --portable clean the whole clip in memory. docs/cleaning.md gives the \
formulas.

Several inputs, or folders (walked for *.bvh), are cleaned in parallel \
into the folder -o names, each output written whole or not at all; a \
file that fails is reported and the others are still written (exit 2).

Examples:
  bvh clean walk.bvh -o walk_clean.bvh --spikes --butterworth 6 --lock-feet
  bvh clean takes/ -o clean/ --butterworth 6          # every take, the folders kept
  bvh clean a.bvh b.bvh -o out/ --savgol 9,2 --dry-run  # the summaries, nothing written
  bvh clean walk.bvh -o w.bvh --butterworth 6 --strength '*=0.6,Hips=1,LeftHand=0.3,LeftHand/*=0'";

#[derive(Debug, clap::Args)]
// The options that only shape some steps are refused without one of them
// (they were ignored without a word, and the output was the input).
#[command(group(clap::ArgGroup::new("smoothing").multiple(true)
    .args(["butterworth", "savgol", "one_euro"])))]
#[command(group(clap::ArgGroup::new("placing").multiple(true)
    .args(["remove_drift", "ground", "lock_feet"])))]
pub(crate) struct Args {
    /// The clips: files, folders (walked for *.bvh) or `-` (standard input).
    #[arg(value_name = "IN", required = true, num_args = 1..)]
    inputs: Vec<PathBuf>,
    /// Where to write: a file for one input (`-`: standard output), a folder
    /// for several or for a folder (ending in `/` or existing; the tree below
    /// the folder given is recreated); never an input.
    #[arg(short, long, value_name = "OUT", required_unless_present = "dry_run")]
    output: Option<PathBuf>,
    /// Zero-phase Butterworth low-pass: cut-off in Hz, order (default 4).
    #[arg(long, value_name = "CUTOFF_HZ[,ORDER]", value_parser = parse_butterworth)]
    butterworth: Option<Butterworth>,
    /// Savitzky-Golay smoothing: window (odd, frames), polynomial order.
    #[arg(long, value_name = "WINDOW,POLYORDER", value_parser = parse_savgol)]
    savgol: Option<SavGol>,
    /// One-euro filter: minimum cut-off (Hz), beta, speed cut-off (Hz, default 1).
    #[arg(long, value_name = "MIN_CUTOFF,BETA[,D_CUTOFF]", value_parser = parse_one_euro)]
    one_euro: Option<OneEuro>,
    /// Repair spikes above median + K x MAD (K default 40).
    #[arg(long, value_name = "K", num_args = 0..=1, require_equals = true,
          default_missing_value = "40", value_parser = parse_k)]
    spikes: Option<f64>,
    /// Remove the root's horizontal drift: the last frame where the first stands.
    #[arg(long)]
    remove_drift: bool,
    /// Put the ground the feet stand on at height 0: a constant root offset, or
    /// `--ground=smooth`, one that follows the ground over time.
    #[arg(long, value_name = "MODE", num_args = 0..=1, require_equals = true,
          default_missing_value = "constant", value_parser = ["constant", "smooth"])]
    ground: Option<String>,
    /// Pin feet in contact, one point per contact span, by two-bone IK of the legs.
    #[arg(long)]
    lock_feet: bool,
    /// With --lock-feet: in each locked span (blended over its ramps) roll the
    /// foot about its ankle-to-toe line (the toe stays) to its planted roll, and
    /// pitch it about the ankle to its planted pitch (medians over its spans)
    /// where that moves the toe by less than 3 mm; the leg's IK, the ankle, the
    /// heading and the toes' own rotations unchanged.
    #[arg(long)]
    flatten_feet: bool,
    /// Contact spans for --lock-feet from a CSV file, one `joint,start,end` a line
    /// (frames from 0, end included); default: the contacts bvh lint finds.
    #[arg(long, value_name = "FILE", requires = "lock_feet")]
    contacts: Option<PathBuf>,
    /// The foot joints, comma-separated (default: found by name), for --remove-drift, --ground
    /// and --lock-feet.
    #[arg(long, value_name = "LIST", value_delimiter = ',', requires = "placing")]
    feet: Option<Vec<String>>,
    /// The clip's up axis (x, y, z, -x, -y, -z), for --remove-drift, --ground and --lock-feet;
    /// default: detected, else Y.
    #[arg(long, value_name = "AXIS", value_parser = crate::concat::parse_axis, allow_hyphen_values = true,
          requires = "placing")]
    up: Option<bvhkit::edit::axes::SignedAxis>,
    /// The joints the smoothing (--butterworth, --savgol, --one-euro) applies to,
    /// comma-separated (default all).
    #[arg(long, value_name = "LIST", value_delimiter = ',', requires = "smoothing")]
    joints: Option<Vec<String>>,
    /// Smoothing strength per joint, 0 (unchanged) to 1 (the full filter, the default): JOINT=F
    /// (that joint), JOINT/*=F (every joint below it), *=F (every joint); later entries win.
    #[arg(long, value_name = "SEL=FACTOR,...", value_delimiter = ',', action = clap::ArgAction::Append,
          value_parser = parse_strength, requires = "smoothing")]
    strength: Vec<(String, f64)>,
    /// Report what would change; write nothing.
    #[arg(long)]
    dry_run: bool,
    /// Refuse an input that needs lenient reading.
    #[arg(long, conflicts_with = "repair")]
    strict: bool,
    /// Also write from inputs whose reading invents or discards values (zero-filled or cut
    /// motion lines, a dropped incomplete frame, an assumed Frame Time or OFFSET), as
    /// `bvh fmt --repair`; without it they are refused.
    #[arg(long)]
    repair: bool,
    /// Write position channels every reader reads the same way: constant ones below a root
    /// folded into the OFFSET, the OFFSET zeroed under varying ones (docs/format.md).
    #[arg(long)]
    portable: bool,
    /// Number of files cleaned at once (default: all cores).
    #[arg(short = 'j', long, value_name = "N", value_parser = crate::io::parse_jobs)]
    threads: Option<usize>,
}

fn numbers(s: &str, what: &str, min: usize, max: usize) -> Result<Vec<f64>, String> {
    let v: Vec<f64> = s
        .split(',')
        .map(|p| p.trim().parse::<f64>().map_err(|_| format!("'{p}' is not a number ({what})")))
        .collect::<Result<_, _>>()?;
    if v.len() < min || v.len() > max || v.iter().any(|x| !x.is_finite()) {
        return Err(format!("expected {what}"));
    }
    Ok(v)
}

fn whole(x: f64, what: &str) -> Result<usize, String> {
    if x >= 0.0 && x.fract() == 0.0 && x < 1e6 {
        Ok(x as usize)
    } else {
        Err(format!("{what} must be a whole number (got {x})"))
    }
}

fn parse_butterworth(s: &str) -> Result<Butterworth, String> {
    let v = numbers(s, "CUTOFF_HZ[,ORDER]", 1, 2)?;
    let order = match v.get(1) {
        Some(&o) => whole(o, "the order")?,
        None => 4,
    };
    Ok(Butterworth { cutoff_hz: v[0], order })
}

fn parse_savgol(s: &str) -> Result<SavGol, String> {
    let v = numbers(s, "WINDOW,POLYORDER", 2, 2)?;
    Ok(SavGol { window: whole(v[0], "the window")?, poly: whole(v[1], "the order")? })
}

pub(crate) fn parse_one_euro(s: &str) -> Result<OneEuro, String> {
    let v = numbers(s, "MIN_CUTOFF,BETA[,D_CUTOFF]", 2, 3)?;
    Ok(OneEuro { min_cutoff: v[0], beta: v[1], d_cutoff: v.get(2).copied().unwrap_or(1.0) })
}

/// One `--strength` entry: `SELECTOR=FACTOR`, the factor from 0 to 1 (the
/// selector is checked against the clip's joints by the library).
pub(crate) fn parse_strength(s: &str) -> Result<(String, f64), String> {
    let Some((sel, f)) = s.rsplit_once('=') else {
        return Err(format!("'{s}' is not JOINT=FACTOR (JOINT, JOINT/* or *; FACTOR 0 to 1)"));
    };
    let sel = sel.trim();
    if sel.is_empty() {
        return Err(format!("'{s}' names no joint (JOINT=FACTOR, JOINT/*=FACTOR or *=FACTOR)"));
    }
    match f.trim().parse::<f64>() {
        Ok(x) if (0.0..=1.0).contains(&x) => Ok((sel.to_string(), x)),
        _ => Err(format!("'{}' for {sel} is not a factor from 0 to 1", f.trim())),
    }
}

fn parse_k(s: &str) -> Result<f64, String> {
    match s.parse::<f64>() {
        Ok(k) if k > 0.0 && k.is_finite() => Ok(k),
        _ => Err(format!("'{s}' is not a positive number")),
    }
}

/// `input` cleaned into `target` by [`clean::stream::stream`], when `input`
/// is a regular file (read twice if the stream gives up): its notes and the
/// summary's lines; `None` when it must be cleaned whole (standard input,
/// a pipe, or the stream gave up having kept nothing).
fn stream_one(
    input: &Input,
    target: &std::path::Path,
    opts: &Options,
    (lenient, repair): (bool, bool),
) -> Result<Option<(Vec<String>, Vec<String>)>> {
    use bvhkit::edit::run::EditError;
    let rereadable = input.is_regular_file();
    if !rereadable {
        return Ok(None);
    }
    let mut read = bvhkit::ReadOptions::new();
    read.lenient(lenient);
    let mut sink = crate::edit::FileOutput::new(target, input, repair);
    let streamed = match input.open_stream()? {
        Streamed::Bytes(Bytes::Mapped(map)) => {
            // The pages read are dropped behind the stream, in each of its
            // reads.
            let mut done = 0;
            let mut release = |upto| crate::io::release_pages(&map, upto, &mut done);
            let mut open = || read.frame_reader_slice(&map);
            clean::stream::stream(&mut open, opts, &mut sink, Some(&mut release))
        }
        Streamed::Bytes(bytes) => {
            let mut open = || read.frame_reader_slice(&bytes);
            clean::stream::stream(&mut open, opts, &mut sink, None)
        }
        Streamed::Reader(_) => return Ok(None),
    };
    match streamed {
        Ok((report, warnings)) => {
            let notes = warnings.iter().map(|w| crate::io::located_warning(input, w)).collect();
            let summary = report.to_string().lines().map(str::to_string).collect();
            Ok(Some((notes, summary)))
        }
        Err(EditError::GaveUp) => Ok(None),
        Err(EditError::Read(e)) => Err(anyhow!(crate::io::located(input, &e))),
        Err(EditError::Output(e)) => Err(e),
        Err(e) => Err(anyhow!("{}: {e}", input.display())),
    }
}

pub(crate) fn run(args: Args) -> Result<ExitCode> {
    let found = expand_rel(&args.inputs)?;
    // Every output decided (and checked: no two inputs on one output, no
    // output that is an input) before anything is read; `--dry-run` checks
    // them and writes nothing.
    let targets = match &args.output {
        Some(o) => Some(crate::io::targets(o, &args.inputs, &found)?),
        None => None,
    };
    let several = found.len() > 1 || args.inputs.iter().any(|a| a.as_os_str() != "-" && a.is_dir());
    let inputs: Vec<Input> = found.into_iter().map(|(i, _)| i).collect();
    if args.flatten_feet && !args.lock_feet {
        bail!("--flatten-feet flattens the feet --lock-feet pins: give --lock-feet with it");
    }
    if several && args.contacts.is_some() {
        bail!("--contacts gives the spans of one clip's frames: give one input with it");
    }
    let contacts = match &args.contacts {
        Some(path) => {
            let text = crate::io::read_option_text(path)
                .map_err(|e| anyhow!("{}: {e}", path.display()))?;
            Some(clean::parse_contacts(&text).map_err(|e| anyhow!("{}: {e}", path.display()))?)
        }
        None => None,
    };
    let opts = Options {
        spikes: args.spikes,
        butterworth: args.butterworth,
        savgol: args.savgol,
        one_euro: args.one_euro,
        joints: args.joints.clone(),
        strength: args.strength.clone(),
        remove_drift: args.remove_drift,
        ground: args.ground.is_some(),
        ground_over_time: args.ground.as_deref() == Some("smooth"),
        lock_feet: args.lock_feet,
        flatten_feet: args.flatten_feet,
        contacts,
        quality: bvhkit::quality::Options {
            up: args.up,
            feet: args.feet.clone(),
            ..Default::default()
        },
    };
    if opts == Options::default() {
        eprintln!(
            "bvh: note: no cleaning step asked for (see bvh clean --help): the output is the input"
        );
    }
    // One file: its notes (reading warnings) and the summary's lines.
    let results = par_map(&inputs, args.threads, |input| -> Result<(Vec<String>, Vec<String>)> {
        // Spikes and one-euro, alone or together, stream a regular file
        // into its output in bounded memory; anything else, or a stream
        // that gives up, cleans the whole clip.
        if let (Some(targets), false, false, true) =
            (&targets, args.dry_run, args.portable, clean::stream::streams(&opts))
            && let Some(done) =
                stream_one(input, &targets[input], &opts, (!args.strict, args.repair))?
        {
            return Ok(done);
        }
        let mut notes = Vec::new();
        // `--dry-run` writes nothing: no repair to refuse.
        let repair = args.repair || args.dry_run;
        let mut out = load_all(std::slice::from_ref(input), args.strict, repair, &mut notes)?
            .pop()
            .context("internal: no clip loaded")?;
        // Cleaned in place: no copy of the clip.
        let report = clean::clean_in_place(&mut out, &opts)
            .map_err(|e| anyhow!("{}: {e}", input.display()))?;
        let summary: Vec<String> = report.to_string().lines().map(str::to_string).collect();
        if let (Some(targets), false) = (&targets, args.dry_run) {
            let t = &targets[input];
            let out = if args.portable {
                let mode = bvhkit::PositionChannels::Replace;
                crate::portable::apply(&out, mode, &input.display(), &mut notes)?
            } else {
                out
            };
            let w = WriteOptions::new();
            write_atomic(t, |o| w.write(&out, o).map_err(anyhow::Error::from))
                .with_context(|| format!("writing {}", t.display()))?;
        }
        Ok((notes, summary))
    })?;
    if args.dry_run {
        // The summaries on standard output (each line after its file's
        // name when there are several), notes and errors on stderr.
        let mut failed = false;
        let mut stdout = std::io::stdout().lock();
        for (input, r) in inputs.iter().zip(results) {
            match r {
                Ok((notes, summary)) => {
                    for n in notes {
                        eprintln!("bvh: note: {}", escape(&n));
                    }
                    for l in summary {
                        let line = if several { format!("{}: {l}", input.display()) } else { l };
                        if writeln!(stdout, "{}", escape(&line)).is_err() {
                            // A closed pipe (`| head`): nothing more to say.
                            return Ok(ExitCode::SUCCESS);
                        }
                    }
                }
                Err(e) => {
                    failed = true;
                    eprintln!("bvh: error: {}", escape(&crate::text::error_chain(&e)));
                }
            }
        }
        return Ok(if failed { ExitCode::from(2) } else { ExitCode::SUCCESS });
    }
    // Written: the notes and the summary on stderr, each summary line after
    // its file's name.
    Ok(crate::io::report(
        inputs
            .iter()
            .zip(results)
            .map(|(input, r)| {
                r.map(|(notes, summary)| {
                    let notes = notes.into_iter().map(|n| format!("bvh: note: {n}"));
                    // The summary's own "note: " lines are not noted twice
                    // ("bvh: note: a.bvh: note: no feet found").
                    let summary = summary.into_iter().map(|l| {
                        let l = l.strip_prefix("note: ").unwrap_or(&l);
                        format!("bvh: note: {}: {l}", input.display())
                    });
                    notes.chain(summary).collect()
                })
            })
            .collect(),
    ))
}
