//! Loading BVH files into what the player shows.

use std::path::{Path, PathBuf};

use bvhkit::glam::DVec3;
use bvhkit::{Bvh, JointId, Kinematics, PositionChannels, ReadOptions};
use bvhkit_render::Clip;

use crate::in_place::in_place;
use crate::units::{HUMAN_SIZE_M, UnitGuess};

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
    /// The guessed length unit.
    pub units: UnitGuess,
    /// Metres per file unit as shown: the guessed unit's, or for unknown
    /// units the factor that makes the skeleton [`HUMAN_SIZE_M`] tall.
    pub display_scale: f64,
}

/// Metres per file unit for display: the unit's size when known, else the
/// factor that makes the skeleton human-sized (1 when it has no size).
#[must_use]
pub fn display_scale(units: &UnitGuess) -> f64 {
    match units.units.metres() {
        Some(m) => m,
        None if units.size.is_finite() && units.size > 1e-9 => HUMAN_SIZE_M / units.size,
        None => 1.0,
    }
}

/// `clip` with every position multiplied by `scale`.
#[must_use]
pub fn scaled(clip: &Clip, scale: f64) -> Clip {
    let mut out = clip.clone();
    out.positions.iter_mut().for_each(|p| *p *= scale);
    out
}

/// World positions, names and hierarchy of `bvh` as a renderer clip.
#[must_use]
pub fn clip_of(bvh: &Bvh, name: &str, mode: PositionChannels) -> Clip {
    let s = bvh.skeleton();
    let fk = Kinematics::new(s, mode);
    Clip {
        name: name.to_string(),
        joint_names: s.display_names(),
        parents: s.joints().iter().map(|j| j.parent().map(JointId::index)).collect(),
        is_end_site: s.joints().iter().map(|j| j.is_end_site()).collect(),
        frame_time: bvh.motion().frame_time(),
        n_frames: bvh.motion().n_frames(),
        positions: fk.positions_all(bvh.motion()),
    }
}

/// The rest pose (every channel 0) of `bvh`'s skeleton.
#[must_use]
pub fn rest_pose(bvh: &Bvh, mode: PositionChannels) -> Vec<DVec3> {
    let s = bvh.skeleton();
    let fk = Kinematics::new(s, mode);
    let zeros = vec![0.0; s.n_channels()];
    let mut out = vec![DVec3::ZERO; s.len()];
    fk.positions(&zeros, &mut out);
    out
}

/// Parses `bytes` leniently into a [`Loaded`] named `name`.
///
/// # Errors
/// The parse error's message when even lenient parsing fails.
pub fn load_bytes(name: &str, bytes: &[u8], mode: PositionChannels) -> Result<Loaded, String> {
    let (bvh, warnings) =
        ReadOptions::new().lenient(true).parse(bytes).map_err(|e| e.to_string())?;
    let clip = clip_of(&bvh, name, mode);
    let first = clip.positions.get(..clip.n_joints()).unwrap_or(&[]);
    let units = UnitGuess::new(&rest_pose(&bvh, mode), first);
    let scale = display_scale(&units);
    let display = scaled(&clip, scale);
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
    let bytes = std::fs::read(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let name = path
        .file_stem()
        .map_or_else(|| path.display().to_string(), |s| s.to_string_lossy().into_owned());
    let mut loaded =
        load_bytes(&name, &bytes, mode).map_err(|e| format!("{}: {e}", path.display()))?;
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
    fn unknown_units_are_shown_human_sized() {
        use crate::units::Units;
        let g = UnitGuess { units: Units::Unknown, size: 30.0 };
        assert!((display_scale(&g) * 30.0 - HUMAN_SIZE_M).abs() < 1e-12);
        assert_eq!(display_scale(&UnitGuess { units: Units::Unknown, size: 0.0 }), 1.0);
        assert_eq!(display_scale(&UnitGuess { units: Units::Inches, size: 60.0 }), 0.0254);
        let l = load_bytes("s", STICK.as_bytes(), PositionChannels::Replace).unwrap();
        assert_eq!(scaled(&l.clip, 2.0).frame(1)[0], DVec3::new(40.0, 184.0, 0.0));
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
