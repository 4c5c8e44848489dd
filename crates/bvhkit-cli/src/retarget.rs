//! `bvh retarget`: motion of one skeleton onto another (`bvhkit::retarget`).

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{Context, Result, anyhow};
use bvhkit::WriteOptions;
use bvhkit::edit::FrameMap;
use bvhkit::edit::axes::SignedAxis;
use bvhkit::edit::portable::{Observer, Scope};
use bvhkit::retarget::map::JointMap;
use bvhkit::retarget::{Options, Reference, Retarget};

use crate::io::{Input, load, print_warnings, refuse_overwriting_input, write_atomic};

pub(crate) const LONG_ABOUT: &str = "\
Retarget motion from one skeleton onto another with different proportions,
joint names and rest poses. TARGET gives the skeleton (its motion is
ignored, except to detect its up axis and for --reference FRAME); the
output has TARGET's skeleton and SRC's frames and frame time.

Joints: mapped by canonical bone (hips, spine, chest, neck, head,
clavicles, upper and lower arms, hands, upper and lower legs, feet, toes),
found by name in the CMU, Mixamo (mixamorig:), Bandai Namco, Perception
Neuron, Rokoko, Xsens, Daz/Poser, Kinect and other families, then joints of
the same name; or by --map FILE, lines of `source = target` (# comments).
The mapping and the joints left unmapped are printed on standard error,
with a note for a limb without a counterpart and for a quadruped.

Rotations: both skeletons are brought to one reference pose (by default a
T-pose built from the rest pose by bone directions); each mapped joint's
world rotation change since the reference is carried over, and joints
without a source stay as in the reference. Joints below the root keep
TARGET's offsets (--joint-translations copies the source's).

Travel and ground: the hips follow the source's, scaled by the ratio of hip
heights (a top joint above the hips stays as TARGET's own motion keeps it),
and the figure is lifted or lowered, smoothly and only while a source foot
is in contact, so that its soles touch the ground where the source's do.

Feet (--no-lock-feet leaves them): wherever a source foot is in contact
(low and slow), the target's foot of that side stands with its sole on the
ground, pinned by two-bone IK of its leg, still wherever the leg reaches (a
source foot's slide is not copied; out of reach it slides by the least the
leg asks); a swing foot that would pass nearer the ground than the source's
(scaled) is lifted to its clearance. The legs then bend away from the
source's directions, and the output is held whole in memory. With
--no-lock-feet every mapped limb points exactly where the source's does and
the output is streamed.

Examples:
  bvh retarget walk.bvh --to character.bvh -o character_walk.bvh
  bvh retarget walk.bvh --to mixamo.bvh -o out.bvh --map cmu_to_mixamo.txt
  bvh retarget walk.bvh --to rig.bvh -o out.bvh --reference 0 --source-reference tpose

docs/editing.md (Retarget) gives the details.";

/// Arguments of `bvh retarget`.
#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// The motion to retarget (`-` reads standard input).
    #[arg(value_name = "SRC")]
    source: PathBuf,
    /// The file whose skeleton receives the motion.
    #[arg(long = "to", value_name = "TARGET")]
    target: PathBuf,
    /// Output file (`-` writes standard output); never one of the inputs.
    #[arg(short = 'o', long = "output", value_name = "OUT")]
    output: PathBuf,
    /// Joint map: one `source = target` line per pair (the complete map).
    #[arg(long, value_name = "FILE")]
    map: Option<PathBuf>,
    /// Reference pose: tpose (built from the rest pose), rest, or a frame number of the file.
    #[arg(long, value_name = "tpose|rest|FRAME", default_value = "tpose", value_parser = parse_reference)]
    reference: Reference,
    /// The source's reference pose, when it differs from --reference.
    #[arg(long, value_name = "tpose|rest|FRAME", value_parser = parse_reference)]
    source_reference: Option<Reference>,
    /// The source's up axis (x, y, z, -x, -y, -z); detected when not given.
    #[arg(long, value_name = "AXIS", value_parser = parse_axis)]
    source_up: Option<SignedAxis>,
    /// The target's up axis; detected when not given.
    #[arg(long, value_name = "AXIS", value_parser = parse_axis)]
    target_up: Option<SignedAxis>,
    /// How position channels combine with OFFSET.
    #[arg(long, value_enum, default_value = "replace")]
    position_channels: crate::PosMode,
    /// Copy the source's translations into mapped joints below the root
    /// that have position channels (by default they keep TARGET's offsets).
    #[arg(long)]
    joint_translations: bool,
    /// Pin the target's feet where the source's feet are in contact, by
    /// two-bone IK of the legs, and lift a swing foot that would pass
    /// nearer the ground than the source's (scaled) to its clearance (no
    /// skating where leg proportions differ; the legs no longer point
    /// exactly where the source's do). The default; --no-lock-feet turns
    /// it off.
    #[arg(long, overrides_with = "no_lock_feet")]
    lock_feet: bool,
    /// Leave the feet as the transfer puts them: every mapped limb points
    /// exactly where the source's does, and the output is streamed.
    #[arg(long, overrides_with = "lock_feet")]
    no_lock_feet: bool,
    /// Read the inputs strictly (any deviation from the format is an error).
    #[arg(long, conflicts_with = "repair")]
    strict: bool,
    /// Also write from a source or target whose reading invents or discards values
    /// (zero-filled or cut motion lines, a dropped incomplete frame, an assumed Frame Time or
    /// OFFSET), as `bvh fmt --repair`; without it they are refused.
    #[arg(long)]
    repair: bool,
    /// Write position channels every reader reads the same way: constant ones below a root
    /// folded into the OFFSET, the OFFSET zeroed under varying ones (docs/format.md).
    #[arg(long)]
    portable: bool,
}

fn parse_reference(s: &str) -> Result<Reference, String> {
    s.parse().map_err(|e: bvhkit::Error| e.message())
}

fn parse_axis(s: &str) -> Result<SignedAxis, String> {
    SignedAxis::from_name(s).ok_or_else(|| format!("'{s}' is not an axis (x, y, z, -x, -y, -z)"))
}

fn input(p: &Path) -> Input {
    if p.as_os_str() == "-" { Input::Stdin } else { Input::File(p.to_path_buf()) }
}

pub(crate) fn run(args: Args) -> Result<ExitCode> {
    let (src_in, tgt_in) = (input(&args.source), input(&args.target));
    if matches!((&src_in, &tgt_in), (Input::Stdin, Input::Stdin)) {
        return Err(anyhow!(
            "the source and --to TARGET are both standard input (`-`), which can be read once: \
             give one of them as a file"
        ));
    }
    refuse_overwriting_input(&args.output, &[src_in.clone(), tgt_in.clone()])?;
    crate::io::refuse_unplaceable_output(&args.output)?;
    if let Some(m) = &args.map {
        refuse_overwriting_input(&args.output, &[Input::File(m.clone())])?;
    }
    let (source, src_warnings) =
        load(&src_in, args.strict).map_err(|e| anyhow!(e.describe(&src_in)))?;
    let (target, tgt_warnings) =
        load(&tgt_in, args.strict).map_err(|e| anyhow!(e.describe(&tgt_in)))?;
    // Repairs that invent or discard values refused as every writing
    // command refuses them (`bvh fmt`), the source's first.
    for (input, bvh, warnings) in
        [(&src_in, &source, &src_warnings), (&tgt_in, &target, &tgt_warnings)]
    {
        let frames = bvh.motion().n_frames();
        crate::fmt::refuse_losses(&input.display(), warnings, frames, args.repair)?;
    }
    // What lenient reading recovered from, as every other command says it.
    print_warnings(&src_in, &src_warnings);
    print_warnings(&tgt_in, &tgt_warnings);
    let map = match &args.map {
        Some(path) => {
            let text = crate::io::read_option_text(path)
                .with_context(|| format!("reading the map {}", path.display()))?;
            Some(
                JointMap::parse(&text, source.skeleton(), target.skeleton())
                    .map_err(|e| anyhow!("{}: {}", path.display(), e.message()))?,
            )
        }
        None => None,
    };
    let options = Options {
        map,
        reference: args.reference,
        source_reference: args.source_reference,
        source_up: args.source_up,
        target_up: args.target_up,
        mode: args.position_channels.into(),
        joint_translations: args.joint_translations,
        lock_feet: args.lock_feet || !args.no_lock_feet,
    };
    let mut map = Retarget::new(&source, &target, &options)
        .map_err(|e| anyhow!("{} onto {}: {}", src_in.display(), tgt_in.display(), e.message()))?;
    for line in map.report().summary(&src_in.display(), &tgt_in.display()) {
        eprintln!("{}", crate::text::escape(&line));
    }
    // What the map leaves out (the core's `Report::notes`).
    for n in &map.report().notes {
        eprintln!("bvh: note: {}", crate::text::escape(n));
    }
    // The output is mapped and written a batch of frames at a time (the
    // frames of `retarget()`, bit for bit), held whole only while it is no
    // larger than the source and 64 MiB: a target of very many channels
    // costs time, not memory.
    // A first pass finds the constant position channels: those below the
    // root that only repeat the OFFSET are never written (three.js would
    // double the bones, pybvh refuses them), and `--portable` goes on as
    // the core's `edit::portable` says. The map is cloned so that the
    // second pass starts afresh.
    // With the feet locked (the default) the output is made whole (the
    // locking reads the whole clip) and its frames are written from memory;
    // the set-up above is used for it (not made again).
    let locked = if options.lock_feet {
        let (out, report) = map.clone().into_clip(&source, true).map_err(|e| {
            anyhow!("{} onto {}: {}", src_in.display(), tgt_in.display(), e.message())
        })?;
        let done = report.locked.unwrap_or_default();
        eprintln!("bvh: feet locked over {} contact span(s)", done.spans.len());
        for n in &done.notes {
            eprintln!("bvh: note: {}", crate::text::escape(n));
        }
        Some(out)
    } else {
        None
    };
    let (m, nc) = (source.motion(), map.output_skeleton().n_channels());
    let mut observer = Observer::new(map.output_skeleton(), options.mode);
    let mut probe = map.clone();
    let mut frame = vec![0.0; nc];
    // The first pass's frames are kept for the second when they take no
    // more memory than the source's own values, and at most
    // `KEPT_VALUES`: a longer output is mapped again (bit for bit the same
    // frames: the map starts afresh).
    let n = m.n_frames();
    let keep = locked.is_none() && n.saturating_mul(nc) <= m.values().len().min(KEPT_VALUES);
    let mut kept = Vec::with_capacity(if keep { n * nc } else { 0 });
    for (i, input) in m.frames().enumerate() {
        if let Some(out) = &locked {
            frame.copy_from_slice(out.motion().frame(i));
        } else if nc > 0 {
            probe.map(input, &mut frame);
        }
        observer.observe(&frame);
        if keep {
            kept.extend_from_slice(&frame);
        }
    }
    drop(probe);
    let held = locked.as_ref().map_or(&kept[..], |out| out.motion().values());
    let scope = if args.portable { Scope::Full } else { Scope::Repeats };
    let (mut layout, report) = observer.plan(scope)?;
    if args.portable {
        let mut notes = Vec::new();
        let name = args.output.display().to_string();
        crate::portable::note(map.output_skeleton(), &report, &name, &mut notes);
        for n in notes {
            eprintln!("bvh: note: {}", crate::text::escape(&n));
        }
    }
    let skeleton = layout.output_skeleton().clone();
    let mut written = vec![0.0; skeleton.n_channels()];
    let opts = WriteOptions::new();
    write_atomic(&args.output, |w| {
        let mut text = Vec::with_capacity(BATCH_BYTES + (1 << 16));
        opts.write_header(&skeleton, m.n_frames(), m.frame_time(), &mut text)?;
        for (i, input) in m.frames().enumerate() {
            if locked.is_some() || keep {
                frame.copy_from_slice(&held[i * nc..(i + 1) * nc]);
            } else if nc > 0 {
                map.map(input, &mut frame);
            }
            layout.map(&frame, &mut written);
            opts.write_frame(&written, &mut text)?;
            if text.len() >= BATCH_BYTES {
                w.write_all(&text)?;
                text.clear();
            }
        }
        w.write_all(&text)?;
        Ok(())
    })
    .with_context(|| format!("writing {}", args.output.display()))?;
    Ok(ExitCode::SUCCESS)
}

/// How much text is formatted before it is written.
const BATCH_BYTES: usize = 1 << 20;

/// The most output values the first pass keeps for the second (64 MiB).
const KEPT_VALUES: usize = 1 << 23;
