//! Loading BVH files into what the player shows.

use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use bvhkit::{Bvh, JointId, PositionChannels, ReadOptions};
use bvhkit_render::Clip;

use crate::in_place::in_place;
use crate::units::{UnitGuess, of_clip};

/// One open file: the parsed data, its world positions and what lenient
/// parsing had to repair.
#[derive(Clone, Debug)]
pub struct Loaded {
    /// Where it was read from, if from a file.
    pub path: Option<PathBuf>,
    /// The parsed file (for channel names and values).
    pub bvh: Bvh,
    /// Lenient-parse warnings, as `line:column: message`.
    pub warnings: Vec<String>,
    /// World positions of every joint over the motion, in file units.
    pub clip: Clip,
    /// The clip as shown: scaled to metres ([`Loaded::display_scale`]) so
    /// that files in different units stand side by side at one scale.
    pub display: Clip,
    /// [`Loaded::display`] with the roots' horizontal travel removed.
    pub display_in_place: Clip,
    /// The guessed length unit ([`of_clip`] of [`Loaded::clip`], as
    /// `bvh render` and `bvh serve` guess it).
    pub units: UnitGuess,
    /// Metres per file unit as shown ([`UnitGuess::metres_per_unit`]).
    pub display_scale: f64,
}

/// A step applied to every parsed file before it is shown (the file
/// and its name, or path when read from one, in; the file to show out, or an error message): how `bvh
/// view` brings files to Y up (`--up`) with the same code as `bvh render`.
#[derive(Clone)]
pub struct Prepare(pub Arc<PrepareFn>);

/// What a [`Prepare`] calls: the parsed file and its name (or path) in,
/// the file to show or an error message out.
pub type PrepareFn = dyn Fn(Bvh, &str) -> Result<Bvh, String> + Send + Sync;

impl fmt::Debug for Prepare {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Prepare(..)")
    }
}

impl PartialEq for Prepare {
    fn eq(&self, other: &Prepare) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }
}

/// Parses `bytes` leniently into a [`Loaded`] named `name`.
///
/// # Errors
/// The parse error's message when even lenient parsing fails.
pub fn load_bytes(name: &str, bytes: &[u8], mode: PositionChannels) -> Result<Loaded, String> {
    load_bytes_with(name, bytes, mode, None)
}

/// [`load_bytes`], with `prepare` applied to the parsed file first.
///
/// # Errors
/// The parse error's message when even lenient parsing fails, or
/// `prepare`'s.
pub fn load_bytes_with(
    name: &str,
    bytes: &[u8],
    mode: PositionChannels,
    prepare: Option<&Prepare>,
) -> Result<Loaded, String> {
    load_named(name, name, bytes, mode, prepare)
}

/// Parses `bytes` into a [`Loaded`] named `name`; `prepare` is told `what`.
fn load_named(
    name: &str,
    what: &str,
    bytes: &[u8],
    mode: PositionChannels,
    prepare: Option<&Prepare>,
) -> Result<Loaded, String> {
    let (bvh, warnings) =
        ReadOptions::new().lenient(true).parse(bytes).map_err(|e| e.to_string())?;
    let bvh = match prepare {
        Some(p) => (p.0)(bvh, what)?,
        None => bvh,
    };
    let clip = Clip::from_bvh(&bvh, name, mode);
    // The one guess, from the positions drawn (as `bvh render` and `bvh serve`).
    let units = of_clip(&clip);
    let scale = units.metres_per_unit();
    let display = clip.clone().scaled(scale);
    Ok(Loaded {
        path: None,
        warnings: warnings.iter().map(ToString::to_string).collect(),
        display_in_place: in_place(&display),
        display,
        clip,
        bvh,
        units,
        display_scale: scale,
    })
}

/// Reads and parses the file at `path`, named by its file stem.
///
/// # Errors
/// `path: message` when the file cannot be read or parsed.
pub fn load_path(path: &Path, mode: PositionChannels) -> Result<Loaded, String> {
    load_path_with(path, mode, None)
}

/// [`load_path`], with `prepare` applied to the parsed file first (given
/// the path as its name).
///
/// # Errors
/// `path: message` when the file cannot be read or parsed, or `prepare`
/// fails.
pub fn load_path_with(
    path: &Path,
    mode: PositionChannels,
    prepare: Option<&Prepare>,
) -> Result<Loaded, String> {
    let bytes = std::fs::read(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let name = path
        .file_stem()
        .map_or_else(|| path.display().to_string(), |s| s.to_string_lossy().into_owned());
    let what = path.display().to_string();
    let mut loaded =
        load_named(&name, &what, &bytes, mode, prepare).map_err(|e| format!("{what}: {e}"))?;
    loaded.path = Some(path.to_path_buf());
    Ok(loaded)
}

impl Loaded {
    /// The clip shown (in metres): in place or as recorded.
    #[must_use]
    pub fn shown(&self, in_place: bool) -> &Clip {
        if in_place { &self.display_in_place } else { &self.display }
    }

    /// The channel names and values of joint `joint` at clip frame
    /// `frame`, as written in the file (degrees and file units); empty for
    /// an End Site or a frame out of range.
    #[must_use]
    pub fn channel_values(&self, joint: usize, frame: usize) -> Vec<(&'static str, f64)> {
        let s = self.bvh.skeleton();
        let m = self.bvh.motion();
        let Some(j) = s.get(JointId::new(joint)) else { return Vec::new() };
        if frame >= m.n_frames() {
            return Vec::new();
        }
        let values = &m.frame(frame)[j.channel_range()];
        j.channels().iter().zip(values).map(|(c, v)| (c.name(), *v)).collect()
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use bvhkit::glam::DVec3;

    /// A two-frame stick figure in centimetres walking along +X.
    pub(crate) const STICK: &str = "HIERARCHY
ROOT Hips
{
  OFFSET 0 90 0
  CHANNELS 6 Xposition Yposition Zposition Zrotation Xrotation Yrotation
  JOINT Chest
  {
    OFFSET 0 40 0
    CHANNELS 3 Zrotation Xrotation Yrotation
    JOINT Head
    {
      OFFSET 0 40 0
      CHANNELS 3 Zrotation Xrotation Yrotation
      End Site
      {
        OFFSET 0 15 0
      }
    }
  }
  JOINT LeftUpLeg
  {
    OFFSET 10 0 0
    CHANNELS 3 Zrotation Xrotation Yrotation
    End Site
    {
      OFFSET 0 -85 0
    }
  }
}
MOTION
Frames: 2
Frame Time: 0.04
0 90 0 0 0 0 0 0 0 0 0 0 0 0 0
20 92 0 0 0 0 10 0 0 0 0 0 0 0 0
";

    #[test]
    fn loads_positions_units_and_channels() {
        let l = load_bytes("stick", STICK.as_bytes(), PositionChannels::Replace).unwrap();
        assert!(l.warnings.is_empty());
        assert_eq!(l.clip.n_joints(), 6);
        assert_eq!(l.clip.n_frames, 2);
        assert_eq!(l.clip.joint_names[0], "Hips");
        assert_eq!(l.units.units, crate::units::Units::Centimetres);
        assert_eq!(l.clip.frame(1)[0], DVec3::new(20.0, 92.0, 0.0));
        assert_eq!(l.display_scale, 0.01);
        assert!((l.shown(false).frame(1)[0] - DVec3::new(0.2, 0.92, 0.0)).length() < 1e-12);
        assert!((l.shown(true).frame(1)[0] - DVec3::new(0.0, 0.92, 0.0)).length() < 1e-12);
        let ch = l.channel_values(1, 1);
        assert_eq!(ch[0], ("Zrotation", 10.0));
        assert_eq!(ch.len(), 3);
        assert_eq!(
            l.channel_values(0, 1)[..3],
            [("Xposition", 20.0), ("Yposition", 92.0), ("Zposition", 0.0)]
        );
        assert!(l.channel_values(3, 0).is_empty(), "End Site has no channels");
        assert!(l.channel_values(99, 0).is_empty());
        assert!(l.channel_values(0, 2).is_empty());
    }

    #[test]
    fn lenient_problems_become_warnings_and_errors_are_messages() {
        let bad = STICK.replace("Frames: 2", "Frames: 5");
        let l = load_bytes("bad", bad.as_bytes(), PositionChannels::Replace).unwrap();
        assert_eq!(l.clip.n_frames, 2);
        assert!(!l.warnings.is_empty());
        assert!(load_bytes("x", b"not a bvh", PositionChannels::Replace).is_err());
        let e = load_path(Path::new("/nonexistent/x.bvh"), PositionChannels::Add).unwrap_err();
        assert!(e.starts_with("/nonexistent/x.bvh: "), "{e}");
    }

    #[test]
    fn scaled_clips() {
        let l = load_bytes("s", STICK.as_bytes(), PositionChannels::Replace).unwrap();
        assert_eq!(l.clip.clone().scaled(2.0).frame(1)[0], DVec3::new(40.0, 184.0, 0.0));
    }

    #[test]
    fn load_path_names_by_stem() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("walk.bvh");
        std::fs::write(&p, STICK).unwrap();
        let l = load_path(&p, PositionChannels::Replace).unwrap();
        assert_eq!(l.clip.name, "walk");
        assert_eq!(l.path.as_deref(), Some(p.as_path()));
    }
}
