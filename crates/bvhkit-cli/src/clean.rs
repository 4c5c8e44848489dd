//! `bvh clean`: spike repair, smoothing, drift, ground, foot locking (`bvhkit::clean`).

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{Result, anyhow};
use bvhkit::clean::{self, Butterworth, OneEuro, Options, SavGol};

use crate::concat::{finish, inputs, load_all};
use crate::text::escape;

pub(crate) const LONG_ABOUT: &str = "\
Clean captured motion: repair spikes, smooth rotations and positions, remove \
drift, ground the figure and lock the feet, the skeleton and the frame count \
unchanged.

The steps run in this order, each only when asked: --spikes (joint-frames \
far from their neighbours, above median + K x MAD of the joint's own \
deviations, replaced by SLERP from the frames around them), --butterworth \
(zero-phase low-pass, scipy's butter + filtfilt), --savgol (Savitzky-Golay, \
scipy's savgol_filter), --one-euro (the causal one-euro filter), \
--remove-drift (the root's horizontal travel removed at a constant rate), \
--ground (the contact ground moved to height 0), --lock-feet (feet in \
contact pinned, one point per contact span, by two-bone IK of the legs \
with smoothstep ramps, the hips lowered when a leg cannot reach; contacts as \
bvh lint finds them, or from --contacts FILE, a CSV of joint,start,end). Rotations \
are filtered as continuous quaternion tracks (never raw Euler channels), \
written back in each joint's own order closest to the input's angles; \
every channel a step does not touch is copied bit for bit. A summary of \
each step (joints changed, largest change per joint, frames repaired) goes \
to stderr, or to stdout with --dry-run, which writes nothing. \
docs/cleaning.md gives the formulas.

Example: bvh clean walk.bvh -o walk_clean.bvh --spikes --butterworth 6 --lock-feet";

#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// The clip (`-`: standard input).
    #[arg(value_name = "IN")]
    input: PathBuf,
    /// Where to write (`-`: standard output); never the input.
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
    #[arg(long, value_name = "smooth", num_args = 0..=1, require_equals = true,
          default_missing_value = "constant", value_parser = ["constant", "smooth"])]
    ground: Option<String>,
    /// Pin feet in contact, one point per contact span, by two-bone IK of the legs.
    #[arg(long)]
    lock_feet: bool,
    /// Contact spans for --lock-feet from a CSV file, one `joint,start,end` a line
    /// (frames from 0, end included); default: the contacts bvh lint finds.
    #[arg(long, value_name = "FILE", requires = "lock_feet")]
    contacts: Option<PathBuf>,
    /// The foot joints, comma-separated (default: found by name).
    #[arg(long, value_name = "LIST", value_delimiter = ',')]
    feet: Option<Vec<String>>,
    /// The clip's up axis (x, y, z, -x, -y, -z); default: detected, else Y.
    #[arg(long, value_name = "AXIS", value_parser = crate::concat::parse_axis, allow_hyphen_values = true)]
    up: Option<bvhkit::edit::axes::SignedAxis>,
    /// The joints the smoothing applies to, comma-separated (default all).
    #[arg(long, value_name = "LIST", value_delimiter = ',')]
    joints: Option<Vec<String>>,
    /// Report what would change; write nothing.
    #[arg(long)]
    dry_run: bool,
    /// Refuse an input that needs lenient reading.
    #[arg(long)]
    strict: bool,
    /// Write position channels every reader reads the same way: constant ones below a root
    /// folded into the OFFSET, the OFFSET zeroed under varying ones (docs/format.md).
    #[arg(long)]
    portable: bool,
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

fn parse_one_euro(s: &str) -> Result<OneEuro, String> {
    let v = numbers(s, "MIN_CUTOFF,BETA[,D_CUTOFF]", 2, 3)?;
    Ok(OneEuro { min_cutoff: v[0], beta: v[1], d_cutoff: v.get(2).copied().unwrap_or(1.0) })
}

fn parse_k(s: &str) -> Result<f64, String> {
    match s.parse::<f64>() {
        Ok(k) if k > 0.0 && k.is_finite() => Ok(k),
        _ => Err(format!("'{s}' is not a positive number")),
    }
}

pub(crate) fn run(args: Args) -> Result<ExitCode> {
    let inputs = inputs(std::slice::from_ref(&args.input))?;
    if let Some(out) = &args.output {
        crate::io::refuse_overwriting_input(out, &inputs)?;
    }
    let mut notes = Vec::new();
    let clips = load_all(&inputs, args.strict, &mut notes)?;
    let contacts = match &args.contacts {
        Some(path) => {
            let text =
                std::fs::read_to_string(path).map_err(|e| anyhow!("{}: {e}", path.display()))?;
            Some(clean::parse_contacts(&text).map_err(|e| anyhow!("{}: {e}", path.display()))?)
        }
        None => None,
    };
    let opts = Options {
        spikes: args.spikes,
        butterworth: args.butterworth,
        savgol: args.savgol,
        one_euro: args.one_euro,
        joints: args.joints,
        remove_drift: args.remove_drift,
        ground: args.ground.is_some(),
        ground_over_time: args.ground.as_deref() == Some("smooth"),
        lock_feet: args.lock_feet,
        contacts,
        quality: bvhkit::quality::Options { up: args.up, feet: args.feet, ..Default::default() },
    };
    if opts == Options::default() {
        notes.push(
            "no cleaning step asked for (see bvh clean --help): the output is the input".into(),
        );
    }
    let (out, report) =
        clean::clean(&clips[0], &opts).map_err(|e| anyhow!("{}: {e}", inputs[0].display()))?;
    let summary = report.to_string();
    match &args.output {
        Some(path) if !args.dry_run => {
            notes.extend(summary.lines().map(|l| format!("{}: {l}", inputs[0].display())));
            finish(path, &inputs, &out, &notes, args.portable)
        }
        _ => {
            for n in &notes {
                eprintln!("bvh: note: {}", escape(n));
            }
            for l in summary.lines() {
                println!("{}", escape(l));
            }
            Ok(ExitCode::SUCCESS)
        }
    }
}
