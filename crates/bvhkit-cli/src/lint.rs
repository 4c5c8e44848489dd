//! `bvh lint`: the motion-quality metrics of files and what they find
//! (`bvhkit::quality`), as lines, JSON or an HTML report.

use std::fmt::Write as _;
use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{Result, bail};
use bvhkit::edit::axes::SignedAxis;
use bvhkit::quality::{self, GIMBAL_MAX_DEG, GROUND_MAX_M, Ground, Kind, Options, Report};
use bvhkit::units::Units;
use serde_json::{Value, json};

use crate::io::{Input, LoadError, Streamed, expand, load, located_warning, par_map};
use crate::sample::Sample;
use crate::text::escape;
use crate::{Inputs, PosMode};
use bvhkit::units::FrameSizes;

mod html;

/// The long help of `bvh lint` (`bvh lint --help`).
pub(crate) const LONG_ABOUT: &str = "\
Measure motion quality: foot skating, jitter, spikes, pops, Euler wraps, \
gimbal lock, stretching bones, joints far from the body, feet through the \
floor, floating, frozen joints, non-finite values.

Every metric works on world positions in metres (the unit guessed from the \
figure's size, or --units), along the detected up axis (or --up), at the \
file's frame rate. The feet are the ankle, foot and toe joints found by name \
and their End Sites (or --feet); the ground is the height of the feet while \
they are in contact (or --ground). docs/quality.md gives every formula and \
where it comes from; every threshold is an option below.

Each finding is printed as FILE:FRAMES: kind: message (frames counted from 0, \
FIRST-LAST for a span), then a summary line per file. Exit status: 0 when no \
file has a finding, 1 when some do, 2 when a file cannot be read or parsed.

--json prints one JSON object per file (units, up_axis, fps, feet, ground, \
metrics, findings); --html OUT.html writes a self-contained report with a \
timeline of the findings and the feet's heights per file.

Examples:
  bvh lint walk.bvh
  bvh lint mocap/ --json > quality.jsonl
  bvh lint take.bvh --html take.html --ground lowest
  bvh lint loop.bvh --loop --ignore frozen,gimbal";

#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    #[command(flatten)]
    inputs: Inputs,
    /// One JSON object per file on standard output instead of lines.
    #[arg(long)]
    json: bool,
    /// Also write a self-contained HTML report (all files in one page).
    #[arg(long, value_name = "OUT.html")]
    html: Option<PathBuf>,
    /// The files' length unit (m, cm, mm, in, cmu); default: guessed from the figure's size.
    #[arg(long, value_name = "UNIT", value_parser = crate::edit::parse_units)]
    units: Option<Units>,
    /// The up axis (x, y, z, -x, -y, -z); default: detected from the head above the hips above the feet.
    #[arg(long, value_name = "AXIS", value_parser = crate::concat::parse_axis, allow_hyphen_values = true)]
    up: Option<SignedAxis>,
    /// The feet, as joint names separated by commas (each joint one foot, measured with everything under it).
    #[arg(long, value_name = "JOINTS", value_delimiter = ',')]
    feet: Option<Vec<String>>,
    /// The ground: `contacts` (the feet in contact), `lowest` (the clip's lowest joint point, the floor of HumanML3D-style data) or a height in metres along the up axis.
    #[arg(long, value_name = "contacts|lowest|HEIGHT", default_value = "contacts", value_parser = parse_ground, allow_hyphen_values = true)]
    ground: Ground,
    /// Also measure the seam from the last frame to the first (a loop).
    #[arg(long = "loop")]
    seam: bool,
    /// Kinds not counted as findings (comma separated: nan, skate, spike, pop, euler_jump, gimbal, bone_stretch, far_joint, ground_penetration, floating, frozen, seam).
    #[arg(long, value_name = "KINDS", value_delimiter = ',', value_parser = parse_kind)]
    ignore: Vec<Kind>,
    /// Findings printed per file (0: all); the summary counts them all.
    #[arg(long, value_name = "N", default_value_t = 20)]
    max_findings: usize,
    /// How position channels combine with OFFSET.
    #[arg(long, value_name = "MODE", default_value = "replace")]
    position_channels: PosMode,
    /// Print only the summary line of each file.
    #[arg(short, long)]
    quiet: bool,
    /// Refuse inputs that need lenient reading (without it, such a file is
    /// read leniently and each repair is printed on standard error as
    /// FILE:LINE:COL: message).
    #[arg(long)]
    strict: bool,
    #[command(flatten)]
    thresholds: Thresholds,
}

/// Every threshold of the metrics (defaults: `bvhkit::quality::Options`).
#[derive(Debug, clap::Args)]
#[command(next_help_heading = "Thresholds")]
struct Thresholds {
    /// Contact: a foot below this height above the ground (m).
    #[arg(long, value_name = "M", default_value_t = Options::default().contact_height, value_parser = positive)]
    contact_height: f64,
    /// Contact: ... and slower than this horizontally (m/s).
    #[arg(long, value_name = "M/S", default_value_t = Options::default().contact_speed, value_parser = positive)]
    contact_speed: f64,
    /// skate_ratio: contact height (m), GMD's 0.05.
    #[arg(long, value_name = "M", default_value_t = Options::default().skate_height, value_parser = positive)]
    skate_height: f64,
    /// skate_ratio: skating speed (m/s), GMD's 0.5.
    #[arg(long, value_name = "M/S", default_value_t = Options::default().skate_speed, value_parser = positive)]
    skate_speed: f64,
    /// skate_ratio_kimodo: skating speed of the toes (m/s).
    #[arg(long, value_name = "M/S", default_value_t = Options::default().kimodo_speed, value_parser = positive)]
    kimodo_speed: f64,
    /// Skating spans shorter than this (s) are counted in skate_ratio but are no finding.
    #[arg(long, value_name = "S", default_value_t = Options::default().skate_seconds, value_parser = positive)]
    skate_seconds: f64,
    /// Spikes: acceleration above median + K x MAD of the joint's accelerations ...
    #[arg(long, value_name = "K", default_value_t = Options::default().spike_k, value_parser = positive)]
    spike_k: f64,
    /// ... and above this (m/s²).
    #[arg(long, value_name = "M/S2", default_value_t = Options::default().spike_min, value_parser = positive)]
    spike_min: f64,
    /// Pops: a one-frame step this many times the steps around it ...
    #[arg(long, value_name = "X", default_value_t = Options::default().pop_factor, value_parser = positive)]
    pop_factor: f64,
    /// ... and longer than this (m).
    #[arg(long, value_name = "M", default_value_t = Options::default().pop_min, value_parser = positive)]
    pop_min: f64,
    /// Euler jumps: a rotation channel changing more than this in one frame (degrees) while the joint turns less than half of it.
    #[arg(long, value_name = "DEG", default_value_t = Options::default().euler_jump_deg, value_parser = positive)]
    euler_jump: f64,
    /// Gimbal lock: the middle angle within this of ±90° (degrees, below 90).
    #[arg(long, value_name = "DEG", default_value_t = Options::default().gimbal_deg, value_parser = gimbal_window)]
    gimbal: f64,
    /// Bone stretch: a bone's length varying by more than this fraction.
    #[arg(long, value_name = "FRACTION", default_value_t = Options::default().stretch, value_parser = positive)]
    stretch: f64,
    /// Far joints: farther from the hips than this times the figure's size.
    #[arg(long, value_name = "X", default_value_t = Options::default().far_factor, value_parser = positive)]
    far: f64,
    /// Ground penetration: the feet this far below the ground (m).
    #[arg(long, value_name = "M", default_value_t = Options::default().penetration, value_parser = positive)]
    penetration: f64,
    /// Floating: no foot within this height of the ground (m) ...
    #[arg(long, value_name = "M", default_value_t = Options::default().float_height, value_parser = positive)]
    float_height: f64,
    /// ... for at least this long (s).
    #[arg(long, value_name = "S", default_value_t = Options::default().float_seconds, value_parser = positive)]
    float_seconds: f64,
    /// Frozen: a joint's channels held bit for bit this long (s) while they move elsewhere.
    #[arg(long, value_name = "S", default_value_t = Options::default().frozen_seconds, value_parser = positive)]
    frozen_seconds: f64,
    /// Loop seam: a jump this many times the clip's median step.
    #[arg(long, value_name = "X", default_value_t = Options::default().seam_factor, value_parser = positive)]
    seam_factor: f64,
}

fn parse_ground(s: &str) -> Result<Ground, String> {
    match s {
        "contacts" => Ok(Ground::Contacts),
        "lowest" => Ok(Ground::Lowest),
        _ => match s.parse::<f64>() {
            Ok(h) if h.abs() <= GROUND_MAX_M => Ok(Ground::Height(h)),
            _ => Err(format!(
                "'{s}' is not contacts, lowest or a height in metres (at most {GROUND_MAX_M:e} either side of 0)"
            )),
        },
    }
}

fn parse_kind(s: &str) -> Result<Kind, String> {
    Kind::ALL.into_iter().find(|k| k.name() == s).ok_or_else(|| {
        let names: Vec<_> = Kind::ALL.iter().map(|k| k.name()).collect();
        format!("'{s}' is not a kind of finding ({})", names.join(", "))
    })
}

fn gimbal_window(s: &str) -> Result<f64, String> {
    match positive(s)? {
        v if v < GIMBAL_MAX_DEG => Ok(v),
        _ => Err(format!(
            "'{s}' is not below {GIMBAL_MAX_DEG}: a middle angle is never farther than that from ±90°, so every frame would count"
        )),
    }
}

fn positive(s: &str) -> Result<f64, String> {
    match s.parse::<f64>() {
        Ok(v) if v.is_finite() && v > 0.0 => Ok(v),
        _ => Err(format!("'{s}' is not a finite number above 0")),
    }
}

impl Args {
    fn options(&self) -> Options {
        let t = &self.thresholds;
        Options {
            metres_per_unit: self.units.and_then(Units::metres_per_unit),
            up: self.up,
            position_channels: self.position_channels.into(),
            feet: self.feet.clone(),
            ground: self.ground,
            contact_height: t.contact_height,
            contact_speed: t.contact_speed,
            skate_height: t.skate_height,
            skate_speed: t.skate_speed,
            skate_window: 5,
            kimodo_speed: t.kimodo_speed,
            skate_seconds: t.skate_seconds,
            spike_k: t.spike_k,
            spike_min: t.spike_min,
            pop_factor: t.pop_factor,
            pop_min: t.pop_min,
            euler_jump_deg: t.euler_jump,
            gimbal_deg: t.gimbal,
            stretch: t.stretch,
            far_factor: t.far,
            penetration: t.penetration,
            float_height: t.float_height,
            float_seconds: t.float_seconds,
            frozen_seconds: t.frozen_seconds,
            seam: self.seam,
            seam_factor: t.seam_factor,
        }
    }
}

/// Frames as printed: `F` or `FIRST-LAST`.
fn frames_text(f: (usize, usize)) -> String {
    if f.0 == f.1 { f.0.to_string() } else { format!("{}-{}", f.0, f.1) }
}

/// A finite number for JSON, else null.
fn num(v: f64) -> Value {
    if v.is_finite() { json!(v) } else { Value::Null }
}

/// The JSON object of one file's report.
pub(crate) fn report_json(file: &str, r: &Report, ignore: &[Kind]) -> Value {
    let metrics: serde_json::Map<String, Value> = r
        .metrics
        .entries()
        .into_iter()
        .map(|(k, v)| (k.to_string(), v.map_or(Value::Null, num)))
        .collect();
    let findings: Vec<Value> = r
        .findings
        .iter()
        .filter(|f| !ignore.contains(&f.kind))
        .map(|f| {
            json!({
                "kind": f.kind.name(),
                "frames": [f.frames.0, f.frames.1],
                "joints": r.names(&f.joints),
                "value": num(f.value),
                "message": f.message,
            })
        })
        .collect();
    json!({
        "file": file,
        "units": r.units.symbol(),
        "metres_per_unit": num(r.metres_per_unit),
        "up_axis": r.up.name(),
        "up_detected": r.up_detected,
        "fps": num(r.fps),
        "frames": r.frames,
        "size": num(r.size),
        "feet": r.feet.iter().map(|f| json!({
            "name": f.name,
            "joints": r.names(&f.points),
            "skate_joint": r.joint_names[f.skate_point],
            "toe_joint": r.joint_names[f.toe_point],
        })).collect::<Vec<_>>(),
        "ground": num(r.ground),
        "metrics": metrics,
        "findings": findings,
        "notes": r.notes,
    })
}

/// The summary line of one file's report.
fn summary(file: &str, r: &Report, counted: &[&quality::Finding]) -> String {
    let mut s = format!(
        "{file}: {} frames at {:.4} fps, {:.2} m figure ({}), {} up, ground {:.3} m",
        r.frames,
        r.fps,
        r.size,
        r.units.symbol(),
        r.up.name(),
        r.ground
    );
    let m = &r.metrics;
    if let (Some(sr), Some(fs)) = (m.skate_ratio, m.foot_slide) {
        let _ = write!(s, "; skate_ratio {sr:.4}, foot_slide {fs:.4} m/s");
    }
    if let Some(j) = m.jitter {
        let _ = write!(s, ", jitter {j:.1} m/s³");
    }
    if counted.is_empty() {
        s.push_str("; no findings");
    } else {
        let mut kinds: Vec<(Kind, usize)> = Vec::new();
        for f in counted {
            match kinds.iter_mut().find(|(k, _)| *k == f.kind) {
                Some((_, c)) => *c += 1,
                None => kinds.push((f.kind, 1)),
            }
        }
        let list: Vec<String> = kinds.iter().map(|(k, c)| format!("{c} {k}")).collect();
        let _ = write!(s, "; {} finding(s): {}", counted.len(), list.join(", "));
    }
    s
}

enum Outcome {
    /// The report, and the reader's warnings (a file read leniently), each
    /// as `FILE:LINE:COL: message`.
    Report(Box<Report>, Vec<String>),
    Failed(String),
}

/// The lint of the parsed clip of `input` (`quality::lint`): the exact
/// path, for what [`streamed`] leaves to it.
fn whole(input: &Input, options: &Options, strict: bool) -> Outcome {
    match load(input, strict) {
        Ok((bvh, warnings)) => {
            if let Some(missing) = missing_foot(bvh.skeleton(), options) {
                return Outcome::Failed(format!(
                    "{}: --feet: no joint named {missing:?}",
                    input.display()
                ));
            }
            let warnings = warnings.iter().map(|w| located_warning(input, w)).collect();
            Outcome::Report(Box::new(quality::lint(&bvh, options)), warnings)
        }
        Err(e @ (LoadError::Parse(_) | LoadError::Io(_))) => Outcome::Failed(e.describe(input)),
    }
}

/// A name of `--feet` that `skel` has no joint of.
fn missing_foot<'a>(skel: &bvhkit::Skeleton, options: &'a Options) -> Option<&'a String> {
    options.feet.as_ref()?.iter().find(|f| skel.find(f).is_none())
}

/// The lint of a regular file read a batch of frames at a time
/// (`quality::LintStream`), without the parsed clip: the up axis, the
/// unit guess and the figure's size taken first on the frames the up-axis
/// detection samples, read from their own lines (`Sample`), and checked
/// by the pass (the sampled frames and their count through `SampleCheck`,
/// the unit and the size by the stream itself). `None` where the exact path ([`whole`]) must decide:
/// standard input, a reader's warning or error, an unconfirmed sample,
/// or what the stream does not measure itself (`LintStream::finish`).
fn streamed(input: &Input, options: &Options) -> Option<Outcome> {
    // Only a regular file (looked at without opening it: a FIFO opened and
    // closed here would lose its writer before the exact path reads it).
    if !input.is_regular_file() {
        return None;
    }
    let Ok(Streamed::Bytes(bytes)) = input.open_stream() else { return None };
    let mut opts = bvhkit::ReadOptions::new();
    opts.lenient(true);
    let mut rdr = opts.frame_reader_slice(&bytes).ok()?;
    if !rdr.warnings().is_empty() {
        return None;
    }
    let skel = rdr.skeleton().clone();
    if let Some(missing) = missing_foot(&skel, options) {
        return Some(Outcome::Failed(format!(
            "{}: --feet: no joint named {missing:?}",
            input.display()
        )));
    }
    let declared = rdr.frames_declared();
    let sample = Sample::of_clip(&opts, &bytes, skel.n_channels(), declared).ok()??;
    let detected = options.up.is_none().then(|| sample.up(&skel).axis).flatten();
    let mut sizes = FrameSizes::new(&skel, options.position_channels);
    sample.values().for_each(|v| sizes.push(v));
    let guess = sizes.guess();
    let mpu = options.metres_per_unit.unwrap_or_else(|| guess.metres_per_unit());
    let mut check = options.up.is_none().then(|| sample.check(()));
    let mut lint = quality::LintStream::new(
        &skel,
        rdr.frame_time(),
        options,
        detected,
        mpu,
        guess.size * mpu,
    )?;
    // Room for the frames declared, as many as the file's size can hold
    // (two bytes a value) and at most 16 bytes kept per joint-frame for
    // each byte of it.
    if let Some(declared) = declared {
        let (w, nj) = (skel.n_channels().max(1), skel.len().max(1));
        let fits = (bytes.len() / (2 * w)).min(bytes.len() / nj);
        lint.reserve(usize::try_from(declared).unwrap_or(usize::MAX).min(fits));
    }
    // The mapped pages behind the reader are dropped as it goes.
    let mut done = 0;
    let read = bvhkit::edit::run::read_batches_consumed(&mut rdr, |frames, batch, consumed| {
        if let Some(check) = &mut check {
            check.batch(frames, batch);
        }
        lint.push(frames, batch);
        if let crate::io::Bytes::Mapped(map) = &bytes {
            crate::io::release_pages(map, consumed, &mut done);
        }
        anyhow::Ok(true)
    });
    if !matches!(read, Ok(Ok(()))) || !rdr.warnings().is_empty() {
        return None;
    }
    if check.is_some_and(|c| !c.holds(true)) {
        return None;
    }
    lint.finish().map(|r| Outcome::Report(Box::new(r), Vec::new()))
}

pub(crate) fn run(args: Args) -> Result<ExitCode> {
    let inputs = expand(&args.inputs.files)?;
    if let Some(html) = &args.html {
        if html.as_os_str() == "-" && args.json {
            bail!("--html - and --json both write standard output; give --html a file");
        }
        crate::io::refuse_overwriting_input(html, &inputs)?;
        crate::io::refuse_unplaceable_output(html)?;
    }
    let options = args.options();
    let outcomes = par_map(&inputs, args.inputs.threads, |input| {
        if let Some(done) = streamed(input, &options) {
            return done;
        }
        whole(input, &options, args.strict)
    })?;
    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::new(stdout.lock());
    let (mut with_findings, mut failed) = (0usize, 0usize);
    let mut pages = Vec::new();
    for (input, o) in inputs.iter().zip(&outcomes) {
        let name = input.display();
        match o {
            Outcome::Failed(msg) => {
                failed += 1;
                out.flush()?;
                eprintln!("bvh: error: {}", escape(msg));
            }
            Outcome::Report(r, warnings) => {
                if !warnings.is_empty() {
                    out.flush()?;
                    warnings.iter().for_each(|w| eprintln!("{}", escape(w)));
                }
                let counted: Vec<&quality::Finding> =
                    r.findings.iter().filter(|f| !args.ignore.contains(&f.kind)).collect();
                with_findings += usize::from(!counted.is_empty());
                if args.json {
                    serde_json::to_writer(&mut out, &report_json(&name, r, &args.ignore))?;
                    writeln!(out)?;
                } else {
                    if !args.quiet {
                        let shown =
                            if args.max_findings == 0 { counted.len() } else { args.max_findings };
                        for f in counted.iter().take(shown) {
                            writeln!(
                                out,
                                "{}",
                                escape(&format!(
                                    "{name}:{}: {}: {}",
                                    frames_text(f.frames),
                                    f.kind,
                                    f.message
                                ))
                            )?;
                        }
                        if counted.len() > shown {
                            writeln!(
                                out,
                                "{}: ... {} more finding(s) (--max-findings 0 prints all)",
                                escape(&name),
                                counted.len() - shown
                            )?;
                        }
                        for note in &r.notes {
                            writeln!(out, "{}", escape(&format!("{name}: note: {note}")))?;
                        }
                    }
                    writeln!(out, "{}", escape(&summary(&name, r, &counted)))?;
                }
                if args.html.is_some() {
                    pages.push((name, &**r));
                }
            }
        }
    }
    out.flush()?;
    if let Some(path) = &args.html {
        let page = html::page(&pages, &args.ignore);
        crate::io::write_atomic(path, |w: &mut dyn Write| Ok(w.write_all(page.as_bytes())?))?;
    }
    // The reports (tens of thousands of findings in a long noisy clip,
    // each with a message and joints of its own) are not freed one by one
    // on this thread: the process ends here and returns their memory at
    // once.
    drop(pages);
    std::mem::forget(outcomes);
    Ok(ExitCode::from(if failed > 0 {
        2
    } else if with_findings > 0 {
        1
    } else {
        0
    }))
}
