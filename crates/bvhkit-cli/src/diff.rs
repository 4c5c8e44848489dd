//! `bvh diff`: how far one clip is from another (`bvhkit::quality::diff`).

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{Context, Result, bail};
use bvhkit::quality::{self, DiffOptions};
use bvhkit::retarget::map::JointMap;
use bvhkit::units::Units;

use crate::PosMode;
use crate::io::{Bytes, Input, Streamed, load, print_warnings, release_pages};
use crate::text::escape;

/// The long help of `bvh diff` (`bvh diff --help`).
pub(crate) const LONG_ABOUT: &str = "\
Compare two clips joint by joint: MPJPE, root-aligned MPJPE, PA-MPJPE and \
rotation error.

A is the reference, B the clip compared with it. Both are measured in metres \
(each clip's unit guessed from its size, or --units for both). Joints are \
paired by name (End Sites as `bvh positions` names them), by the retarget \
name families when no name is shared, or by --map (a retarget map file: \
`A_JOINT = B_JOINT` per line; `auto` for the name families).

MPJPE: the mean distance between paired joints over frames and pairs. \
Root-aligned: each clip's hips subtracted in every frame first. PA-MPJPE: B's \
joints fitted onto A's by a rotation, a uniform scale and a translation in \
every frame (Procrustes) first. Rotation: the mean geodesic angle between \
the paired joints' channel rotations (meaningful when both share a rest \
pose). Where the frame rates differ, B is interpolated at A's frame times; \
where the lengths differ, the common span is compared; both with a note.

Examples:
  bvh diff take.bvh cleaned.bvh
  bvh diff gt.bvh pred.bvh --json
  bvh diff cmu.bvh retargeted.bvh --map auto --worst 5";

#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// The reference clip.
    a: PathBuf,
    /// The clip compared with it.
    b: PathBuf,
    /// Joint pairs: a map file (`A_JOINT = B_JOINT` per line) or `auto` (the retarget name families).
    #[arg(long, value_name = "FILE|auto")]
    map: Option<String>,
    /// Both files' length unit (m, cm, mm, in, cmu); default: each guessed from its figure's size.
    #[arg(long, value_name = "UNIT", value_parser = crate::edit::parse_units)]
    units: Option<Units>,
    /// How many worst frames and joints to list.
    #[arg(long, value_name = "N", default_value_t = 5, value_parser = clap::value_parser!(u64).range(1..=100_000))]
    worst: u64,
    /// One JSON object on standard output (with every joint and the per-frame errors).
    #[arg(long)]
    json: bool,
    /// How position channels combine with OFFSET.
    #[arg(long, value_name = "MODE", default_value = "replace")]
    position_channels: PosMode,
    /// Refuse inputs that need lenient reading (without it, such a file is
    /// read leniently and each repair is printed on standard error as
    /// FILE:LINE:COL: message).
    #[arg(long)]
    strict: bool,
}

/// The joint pairs of `--map` between skeletons `a` and `b`; `None` without it.
fn pairs_of(
    map: Option<&str>,
    a: &bvhkit::Skeleton,
    b: &bvhkit::Skeleton,
) -> Result<Option<Vec<(usize, usize)>>> {
    Ok(match map {
        None => None,
        Some("auto") => {
            Some(JointMap::auto(a, b).pairs().iter().map(|p| (p.source, p.target)).collect())
        }
        Some(file) => {
            let text = crate::io::read_option_text(std::path::Path::new(file))
                .with_context(|| format!("--map {file}"))?;
            let map = JointMap::parse(&text, a, b)
                .map_err(|e| anyhow::anyhow!("--map {file}: {}", e.message()))?;
            Some(map.pairs().iter().map(|p| (p.source, p.target)).collect())
        }
    })
}

/// The diff of the whole clips, each parsed first: every case
/// [`streamed`] leaves, and every error, in its order (A's reading, B's,
/// the map, the clips).
fn whole(args: &Args, ia: &Input, ib: &Input, mut options: DiffOptions) -> Result<quality::Diff> {
    let (a, warnings) = load(ia, args.strict).map_err(|e| anyhow::anyhow!(e.describe(ia)))?;
    print_warnings(ia, &warnings);
    let (b, warnings) = load(ib, args.strict).map_err(|e| anyhow::anyhow!(e.describe(ib)))?;
    print_warnings(ib, &warnings);
    options.pairs = pairs_of(args.map.as_deref(), a.skeleton(), b.skeleton())?;
    quality::diff(&a, &b, &options)
        .map_err(|e| anyhow::anyhow!("{} and {}: {}", ia.display(), ib.display(), e.message()))
}

/// The diff of two regular files read in lockstep, a batch of frames of
/// each at a time from their maps (or their bytes, when small) ([`quality::diff_stream`]), their pages
/// released behind the readers; run again with the units the first pass
/// found when a unit guessed from the first frames was not the clip's.
/// `None` for standard input and pipes, anything
/// the stream leaves to the whole clips ([`quality::Streamed::Whole`]:
/// other frame rates, no channels or frames, failing pairs) and every
/// error: [`whole`] then decides, with its own messages.
fn streamed(args: &Args, ia: &Input, ib: &Input, options: &DiffOptions) -> Option<quality::Diff> {
    // Only regular files: a pipe (`<(cmd)`) or a device opened here and
    // dropped would lose what the whole path must read.
    if !ia.is_regular_file() || !ib.is_regular_file() {
        return None;
    }
    let mut units = None;
    // The first pass, and a second one when the first names the units.
    for _ in 0..2 {
        let (Ok(Streamed::Bytes(ma)), Ok(Streamed::Bytes(mb))) =
            (ia.open_stream(), ib.open_stream())
        else {
            return None;
        };
        // Each reader scans its windows on one thread: the two read at
        // once beside the runs that measure, so a window scanned in two
        // halves (then joined by a copy) would only add that copy.
        let mut read = bvhkit::ReadOptions::new();
        read.lenient(true).parallel(false);
        let ra = read.frame_reader_slice(&ma).ok()?;
        let rb = read.frame_reader_slice(&mb).ok()?;
        let mut options = options.clone();
        options.pairs = pairs_of(args.map.as_deref(), ra.skeleton(), rb.skeleton()).ok()?;
        let (mut done_a, mut done_b) = (0, 0);
        let release = |a, b| {
            if let Bytes::Mapped(m) = &ma {
                release_pages(m, a, &mut done_a);
            }
            if let Bytes::Mapped(m) = &mb {
                release_pages(m, b, &mut done_b);
            }
        };
        let got = quality::diff_stream(ra, rb, &options, units, release);
        // The maps unmapped on a thread of their own, beside the output (a
        // thread that cannot start drops them here; one still unmapping
        // when the process ends is ended with it).
        let _unmapping = std::thread::Builder::new().spawn(move || drop((ma, mb)));
        match got.ok()? {
            quality::Streamed::Done(d) => return Some(*d),
            quality::Streamed::Units(a, b) if units.is_none() => units = Some((a, b)),
            _ => return None,
        }
    }
    None
}

/// `bvh diff --json`'s object, its keys in the order `serde_json::Value`
/// writes them (sorted), written as it is serialized (no `Value` of every
/// frame first); a number that is not finite is `null`, as `serde_json`
/// writes it.
#[derive(serde::Serialize)]
struct JsonDiff<'d> {
    a: String,
    b: String,
    fps: f64,
    frames: usize,
    joints: Vec<JsonJoint<'d>>,
    mpjpe: f64,
    mpjpe_root: f64,
    notes: &'d [String],
    pa_mpjpe: f64,
    pairs: usize,
    per_frame: &'d [f64],
    rotation_deg: Option<f64>,
    worst_frames: &'d [(usize, f64)],
    worst_joints: Vec<&'d str>,
}

/// A joint pair of [`JsonDiff`].
#[derive(serde::Serialize)]
struct JsonJoint<'d> {
    a: &'d str,
    b: &'d str,
    mpjpe: f64,
    rotation_deg: Option<f64>,
}

impl<'d> JsonDiff<'d> {
    fn of(d: &'d quality::Diff, ia: &Input, ib: &Input) -> JsonDiff<'d> {
        JsonDiff {
            a: ia.display(),
            b: ib.display(),
            fps: d.fps,
            frames: d.frames,
            joints: d
                .joints
                .iter()
                .map(|j| JsonJoint {
                    a: &j.a,
                    b: &j.b,
                    mpjpe: j.mpjpe,
                    rotation_deg: j.rotation_deg,
                })
                .collect(),
            mpjpe: d.mpjpe,
            mpjpe_root: d.mpjpe_root,
            notes: &d.notes,
            pa_mpjpe: d.pa_mpjpe,
            pairs: d.joints.len(),
            per_frame: &d.per_frame,
            rotation_deg: d.rotation_deg,
            worst_frames: &d.worst_frames,
            worst_joints: d.worst_joints.iter().map(|&j| d.joints[j].a.as_str()).collect(),
        }
    }
}

fn input(p: &std::path::Path) -> Input {
    if p.as_os_str() == "-" { Input::Stdin } else { Input::File(p.to_path_buf()) }
}

pub(crate) fn run(args: Args) -> Result<ExitCode> {
    if args.a.as_os_str() == "-" && args.b.as_os_str() == "-" {
        bail!("A and B cannot both be standard input");
    }
    let (ia, ib) = (input(&args.a), input(&args.b));
    let options = DiffOptions {
        metres_per_unit: args.units.and_then(Units::metres_per_unit),
        position_channels: args.position_channels.into(),
        pairs: None,
        worst: args.worst as usize,
    };
    let d = match streamed(&args, &ia, &ib, &options) {
        Some(d) => d,
        None => whole(&args, &ia, &ib, options)?,
    };
    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::new(stdout.lock());
    if args.json {
        serde_json::to_writer(&mut out, &JsonDiff::of(&d, &ia, &ib))?;
        writeln!(out)?;
    } else {
        let text = format!(
            "{} vs {}: {} frames at {:.4} fps, {} joint pairs\n\
             MPJPE {:.6} m, root-aligned {:.6} m, PA-MPJPE {:.6} m, rotation {}\n\
             worst frames: {}\n\
             worst joints: {}\n",
            ia.display(),
            ib.display(),
            d.frames,
            d.fps,
            d.joints.len(),
            d.mpjpe,
            d.mpjpe_root,
            d.pa_mpjpe,
            d.rotation_deg
                .map_or("n/a (no rotation channels paired)".into(), |r| format!("{r:.4}°")),
            d.worst_frames
                .iter()
                .map(|(f, e)| format!("{f} ({e:.4} m)"))
                .collect::<Vec<_>>()
                .join(", "),
            d.worst_joints
                .iter()
                .map(|&j| {
                    let jd = &d.joints[j];
                    let name =
                        if jd.a == jd.b { jd.a.clone() } else { format!("{} = {}", jd.a, jd.b) };
                    match jd.rotation_deg {
                        Some(r) => format!("{name} ({:.4} m, {r:.2}°)", jd.mpjpe),
                        None => format!("{name} ({:.4} m)", jd.mpjpe),
                    }
                })
                .collect::<Vec<_>>()
                .join(", "),
        );
        for line in text.lines() {
            writeln!(out, "{}", escape(line))?;
        }
        for n in &d.notes {
            writeln!(out, "note: {}", escape(n))?;
        }
    }
    out.flush()?;
    Ok(ExitCode::SUCCESS)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// The object `bvh diff --json` wrote through `serde_json::Value`
    /// before `JsonDiff`.
    fn by_value(d: &quality::Diff, ia: &Input, ib: &Input) -> String {
        let num = |v: f64| if v.is_finite() { json!(v) } else { serde_json::Value::Null };
        json!({
            "a": ia.display(),
            "b": ib.display(),
            "frames": d.frames,
            "fps": num(d.fps),
            "pairs": d.joints.len(),
            "mpjpe": num(d.mpjpe),
            "mpjpe_root": num(d.mpjpe_root),
            "pa_mpjpe": num(d.pa_mpjpe),
            "rotation_deg": d.rotation_deg.map_or(serde_json::Value::Null, num),
            "joints": d.joints.iter().map(|j| json!({
                "a": j.a, "b": j.b, "mpjpe": num(j.mpjpe),
                "rotation_deg": j.rotation_deg.map_or(serde_json::Value::Null, num),
            })).collect::<Vec<_>>(),
            "worst_frames": d.worst_frames.iter().map(|(f, e)| json!([f, num(*e)])).collect::<Vec<_>>(),
            "worst_joints": d.worst_joints.iter().map(|&j| d.joints[j].a.clone()).collect::<Vec<_>>(),
            "per_frame": d.per_frame.iter().map(|&e| num(e)).collect::<Vec<_>>(),
            "notes": d.notes,
        })
        .to_string()
    }

    #[test]
    fn the_json_is_the_values_bytes() {
        let joint = |a: &str, b: &str, mpjpe: f64, rotation_deg: Option<f64>| quality::JointDiff {
            a: a.into(),
            b: b.into(),
            mpjpe,
            rotation_deg,
        };
        let d = quality::Diff {
            frames: 4,
            fps: 120.004_800_192,
            mpjpe: 0.1,
            mpjpe_root: f64::NAN,
            pa_mpjpe: -0.0,
            rotation_deg: Some(f64::INFINITY),
            joints: vec![
                joint("Hips", "Hips", 1e-300, Some(12.5)),
                joint("Left\"Arm\\", "é\u{1}", f64::NEG_INFINITY, None),
            ],
            per_frame: vec![0.25, f64::NAN, 3e21, -0.0],
            worst_frames: vec![(2, 3e21), (1, f64::NAN)],
            worst_joints: vec![1, 0],
            notes: vec!["lengths differ".into(), "tab\there".into()],
        };
        let (ia, ib) = (Input::File("a b.bvh".into()), Input::Stdin);
        let got = serde_json::to_string(&JsonDiff::of(&d, &ia, &ib)).expect("serialises");
        assert_eq!(got, by_value(&d, &ia, &ib));
        let none = quality::Diff { rotation_deg: None, notes: vec![], ..d };
        let got = serde_json::to_string(&JsonDiff::of(&none, &ia, &ib)).expect("serialises");
        assert_eq!(got, by_value(&none, &ia, &ib));
    }
}
