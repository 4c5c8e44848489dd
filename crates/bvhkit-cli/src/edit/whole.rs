//! `bvh edit` on the whole clip: the input loaded, each transform applied
//! to the `Bvh` in turn (the core's whole-clip functions, or its per-frame
//! maps over every frame), the output written at once. The path of
//! `--reverse`, `--fps` and `--height`, of inputs that cannot be read twice
//! when a transform must look at frames first, and of every stream that
//! gave up ([`super::NEEDS_WHOLE_CLIP`]): its errors name their frame.

use std::path::Path;

use anyhow::{Context, Result, anyhow};
use bvhkit::edit::axes::{Axes, AxesMap, SignedAxis, detect_up};
use bvhkit::edit::scale::{ScaleMap, factor_to_height};
use bvhkit::edit::{frames, map_frames, map_frames_chunked, resample};
use bvhkit::units::UnitGuess;
use bvhkit::{Bvh, PositionChannels, WriteOptions};

use super::{
    Args, Transform, detected_up, frame_map, joint_list, lossy_note, mirror_of, other_skeleton,
    renamed, root_up, stage_note, units_factor,
};
use crate::io::{Input, load, located_warning, write_atomic};

/// Runs the plan on the whole clip.
pub(super) fn edit_whole(
    args: &Args,
    plan: &[Transform],
    input: &Input,
    out: &Path,
) -> Result<Vec<String>> {
    let (mut bvh, warnings) = load(input, args.strict).map_err(|e| anyhow!(e.describe(input)))?;
    let mut notes: Vec<String> = warnings.iter().map(|w| located_warning(input, w)).collect();
    let mode: PositionChannels = args.position_channels.into();
    for t in plan {
        if let Some(edited) = edit_b(args, t, &bvh, input, &mut notes)? {
            bvh = edited;
            continue;
        }
        bvh = match *t {
            Transform::Frames(r) => {
                let n = bvh.motion().n_frames();
                let start = (0..n).find(|&i| r.contains(i)).unwrap_or(n);
                let end = (start..n).find(|&i| !r.contains(i)).unwrap_or(n);
                frames::range(&bvh, start..end)?
            }
            Transform::Every(n) => frames::every(&bvh, n)?,
            Transform::Reverse => frames::reverse(&bvh)?,
            Transform::Fps(f) => resample::to_fps(&bvh, f).map_err(|e| {
                let f = crate::text::num(f);
                anyhow!("{}: --fps {f}: {}", input.display(), e.message())
            })?,
            Transform::Height(h) => {
                let f =
                    factor_to_height(&bvh, h).map_err(|e| anyhow!("{}: {}", input.display(), e))?;
                map_frames(&bvh, &mut ScaleMap::new(bvh.skeleton(), f)?)?
            }
            Transform::Units(u) => {
                let guess = || Ok(UnitGuess::of_bvh(&bvh, mode));
                let f = units_factor(args, guess, u, input, &mut notes)?;
                map_frames(&bvh, &mut ScaleMap::new(bvh.skeleton(), f)?)?
            }
            Transform::Up(to) => {
                let from = source_up(args, &bvh, input, &mut notes)?;
                map_frames(
                    &bvh,
                    &mut AxesMap::new(bvh.skeleton(), Axes::with_up(from), Axes::with_up(to)),
                )?
            }
            _ => {
                let map = frame_map(args, t, bvh.skeleton(), mode)?;
                let (edited, map) = map_frames_chunked(&bvh, map)?;
                super::layout_refusal(args, &map, input)?;
                notes.extend(stage_note(&map, input));
                edited
            }
        };
    }
    if args.portable {
        bvh = crate::portable::apply(&bvh, mode, &input.display(), &mut notes)?;
    }
    let opts = WriteOptions::new();
    write_atomic(out, |w| opts.write(&bvh, w).map_err(anyhow::Error::from))
        .with_context(|| format!("{}: writing {}", input.display(), bvhkit_write::shown(out)))?;
    Ok(notes)
}

/// The up axis for root motion: `--source-up`, else detected, else Y (said).
fn up_for_root(args: &Args, bvh: &Bvh, input: &Input, notes: &mut Vec<String>) -> SignedAxis {
    if let Some(a) = args.source_up {
        return a;
    }
    root_up(detect_up(bvh), input, notes)
}

/// The edit-b transforms (mirror, root motion, names and joints, rest
/// pose); `None` for the others.
fn edit_b(
    args: &Args,
    t: &Transform,
    bvh: &Bvh,
    input: &Input,
    notes: &mut Vec<String>,
) -> Result<Option<Bvh>> {
    use bvhkit::edit::{joints, rest, root};
    let mode: PositionChannels = args.position_channels.into();
    let at = |e: bvhkit::Error| anyhow!("{}: {e}", input.display());
    Ok(Some(match t {
        Transform::Mirror => mirror_of(bvh, input, notes)?.apply(bvh).map_err(at)?,
        Transform::InPlaceRoot => {
            let up = up_for_root(args, bvh, input, notes);
            root::in_place(bvh, up).map_err(at)?
        }
        Transform::RootToOrigin => {
            let up = up_for_root(args, bvh, input, notes);
            root::to_origin(bvh, up).map_err(at)?
        }
        Transform::ExtractRoot(name) => {
            let up = up_for_root(args, bvh, input, notes);
            root::extract(bvh, up, name).map_err(at)?
        }
        Transform::Rename(spec) => {
            Bvh::new(renamed(spec, bvh.skeleton(), input)?, bvh.motion().clone())?
        }
        Transform::RemoveJoints(list) => {
            let (out, error) = joints::remove_joints(bvh, &joint_list(list), mode).map_err(at)?;
            notes.extend(lossy_note("--remove-joints", error, bvh.skeleton(), input));
            out
        }
        Transform::StripEndSites => joints::strip_end_sites(bvh).map_err(at)?,
        Transform::AddEndSites => joints::add_end_sites(bvh).map_err(at)?,
        Transform::RestPose(spec) => {
            let (out, error) = if let Ok(frame) = spec.parse::<usize>() {
                rest::from_frame(bvh, frame, mode).map_err(at)?
            } else {
                rest::from_skeleton(bvh, other_skeleton(spec)?.skeleton(), mode).map_err(at)?
            };
            notes.extend(lossy_note("--rest-pose", error, bvh.skeleton(), input));
            out
        }
        _ => return Ok(None),
    }))
}

fn source_up(args: &Args, bvh: &Bvh, input: &Input, notes: &mut Vec<String>) -> Result<SignedAxis> {
    if let Some(a) = args.source_up {
        return Ok(a);
    }
    detected_up(detect_up(bvh), input, notes)
}
