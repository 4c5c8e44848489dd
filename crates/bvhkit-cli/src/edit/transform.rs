//! The transforms of a `bvh edit` command line, in the order given: the
//! values from clap, the order from the raw arguments (clap's
//! `ArgMatches::indices_of` reports a repeated flag without a value only
//! once). What each needs (the whole clip, or a look at frames first) is
//! the core's [`bvhkit::edit::run::Step`]'s to say.

use anyhow::{Context, Result, anyhow};
use bvhkit::edit::axes::SignedAxis;
use bvhkit::rotation::RotationOrder;
use bvhkit::units::Units;
use clap::ArgMatches;

use crate::range::FrameRange;

/// The transform flags, in the order `--help` lists them.
const TRANSFORMS: [&str; 19] = [
    "frames",
    "every",
    "reverse",
    "fps",
    "order",
    "layout",
    "up",
    "scale",
    "units",
    "height",
    "mirror",
    "in-place-root",
    "root-to-origin",
    "extract-root",
    "rename",
    "remove-joints",
    "strip-end-sites",
    "add-end-sites",
    "rest-pose",
];

/// One transform, as given on the command line.
#[derive(Clone, Debug, PartialEq)]
pub(super) enum Transform {
    Frames(FrameRange),
    Every(usize),
    Reverse,
    Fps(f64),
    Order(RotationOrder),
    Layout(RotationOrder),
    Up(SignedAxis),
    Scale(f64),
    Units(Units),
    Height(f64),
    Mirror,
    InPlaceRoot,
    RootToOrigin,
    ExtractRoot(String),
    Rename(String),
    RemoveJoints(String),
    StripEndSites,
    AddEndSites,
    RestPose(String),
}

/// Options of `bvh edit` that take a value (so the token after them is not a flag).
const WITH_VALUE: [&str; 20] = [
    "output",
    "rename",
    "remove-joints",
    "rest-pose",
    "frames",
    "every",
    "fps",
    "order",
    "layout",
    "layout-positions",
    "up",
    "source-up",
    "scale",
    "units",
    "source-units",
    "height",
    "position-channels",
    "threads",
    "o",
    "j",
];

/// The transform flags of a raw `bvh edit` command line, in order. Clap
/// checks the command line; this only recovers the order of repeated
/// flags without values (`--reverse --fps 30 --reverse`), which
/// `ArgMatches::indices_of` reports only once.
fn raw_order(raw: &[std::ffi::OsString]) -> Vec<&'static str> {
    let mut out = Vec::new();
    let args: Vec<String> = raw.iter().map(|a| a.to_string_lossy().into_owned()).collect();
    let Some(start) = args.iter().position(|a| a == "edit") else { return out };
    let mut i = start + 1;
    while i < args.len() {
        let a = &args[i];
        i += 1;
        if a == "--" {
            break;
        }
        let Some(name) =
            a.strip_prefix("--").or_else(|| a.strip_prefix('-').filter(|n| n.len() == 1))
        else {
            continue;
        };
        let (name, inline) = match name.split_once('=') {
            Some((n, _)) => (n, true),
            None => (name, false),
        };
        if let Some(t) = TRANSFORMS.iter().find(|t| **t == name) {
            out.push(*t);
        }
        if !inline && WITH_VALUE.contains(&name) {
            i += 1;
        }
        // `--extract-root` takes its name only when one follows.
        if !inline && name == "extract-root" && args.get(i).is_some_and(|n| !n.starts_with('-')) {
            i += 1;
        }
    }
    out
}

/// The transforms of an `edit` command line, in the order given: the
/// values from clap, the order from the raw arguments.
pub(super) fn transforms(m: &ArgMatches, raw: &[std::ffi::OsString]) -> Result<Vec<Transform>> {
    fn values<T: Clone + Send + Sync + 'static>(m: &ArgMatches, id: &str) -> std::vec::IntoIter<T> {
        let v: Vec<T> = if m.value_source(id) == Some(clap::parser::ValueSource::CommandLine) {
            m.get_many::<T>(id).into_iter().flatten().cloned().collect()
        } else {
            Vec::new()
        };
        v.into_iter()
    }
    let mut frames = values::<FrameRange>(m, "frames");
    let mut every = values::<u64>(m, "every");
    let mut fps = values::<f64>(m, "fps");
    let mut order = values::<RotationOrder>(m, "order");
    let mut layout = values::<RotationOrder>(m, "layout");
    let mut up = values::<SignedAxis>(m, "up");
    let mut scale = values::<f64>(m, "scale");
    let mut units = values::<Units>(m, "units");
    let mut height = values::<f64>(m, "height");
    let mut extract_root = values::<String>(m, "extract_root");
    let mut rename = values::<String>(m, "rename");
    let mut remove_joints = values::<String>(m, "remove_joints");
    let mut rest_pose = values::<String>(m, "rest_pose");
    let mut out = Vec::new();
    for name in raw_order(raw) {
        let t = match name {
            "frames" => frames.next().map(Transform::Frames),
            "every" => every.next().map(|n| Transform::Every(n as usize)),
            "fps" => fps.next().map(Transform::Fps),
            "order" => order.next().map(Transform::Order),
            "layout" => layout.next().map(Transform::Layout),
            "up" => up.next().map(Transform::Up),
            "scale" => scale.next().map(Transform::Scale),
            "units" => units.next().map(Transform::Units),
            "height" => height.next().map(Transform::Height),
            "reverse" => Some(Transform::Reverse),
            "mirror" => Some(Transform::Mirror),
            "in-place-root" => Some(Transform::InPlaceRoot),
            "root-to-origin" => Some(Transform::RootToOrigin),
            "strip-end-sites" => Some(Transform::StripEndSites),
            "add-end-sites" => Some(Transform::AddEndSites),
            "extract-root" => extract_root.next().map(Transform::ExtractRoot),
            "rename" => rename.next().map(Transform::Rename),
            "remove-joints" => remove_joints.next().map(Transform::RemoveJoints),
            "rest-pose" => rest_pose.next().map(Transform::RestPose),
            _ => None,
        };
        out.push(t.with_context(|| format!("internal error: no value for --{name}"))?);
    }
    Ok(out)
}

pub(super) fn check_values(t: &Transform) -> Result<()> {
    let positive = |what: &str, v: f64| {
        if v.is_finite() && v > 0.0 {
            Ok(())
        } else {
            Err(anyhow!("{what} must be positive, found {}", crate::concat::compact(v)))
        }
    };
    match *t {
        Transform::Fps(f) => positive("--fps", f),
        Transform::Scale(f) => positive("--scale", f),
        Transform::Height(h) => positive("--height", h),
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use clap::CommandFactory;

    use super::*;
    use crate::edit::parse_units;

    fn plan(args: &[&str]) -> Result<Vec<Transform>> {
        let raw: Vec<std::ffi::OsString> =
            ["bvh", "edit", "in.bvh", "-o", "out.bvh"].iter().chain(args).map(Into::into).collect();
        let m = crate::Cli::command().try_get_matches_from(&raw)?;
        transforms(m.subcommand_matches("edit").context("edit")?, &raw)
    }

    #[test]
    fn transforms_keep_their_command_line_order() {
        let p = plan(&[
            "--up",
            "z",
            "--reverse",
            "--frames",
            "100..400",
            "--fps",
            "30",
            "--scale",
            "2",
            "--frames",
            "3",
            "--reverse",
            "--units",
            "m",
        ])
        .unwrap();
        assert_eq!(
            p,
            [
                Transform::Up(SignedAxis::PosZ),
                Transform::Reverse,
                Transform::Frames("100..400".parse().unwrap()),
                Transform::Fps(30.0),
                Transform::Scale(2.0),
                Transform::Frames("3".parse().unwrap()),
                Transform::Reverse,
                Transform::Units(Units::Metres),
            ]
        );
        assert_eq!(
            plan(&[
                "--order", "xyz", "--every", "2", "--mirror", "--layout", "ZXY", "--height", "1.7"
            ])
            .unwrap()
            .len(),
            5
        );
        assert_eq!(
            plan(&["--up", "-z", "--scale=2", "--reverse", "-j", "2", "--source-up", "y"]).unwrap(),
            [Transform::Up(SignedAxis::NegZ), Transform::Scale(2.0), Transform::Reverse]
        );
        assert!(plan(&["--every", "0"]).is_err());
        assert!(plan(&["--order", "xxy"]).is_err());
        assert!(plan(&["--up", "w"]).is_err());
        assert!(plan(&["--units", "furlong"]).is_err());
        assert_eq!(parse_units("cm"), Ok(Units::Centimetres));
        assert_eq!(parse_units("metres"), Ok(Units::Metres));
    }
}
