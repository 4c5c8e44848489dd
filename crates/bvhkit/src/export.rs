//! What the exports to other formats share (`bvhkit-gltf`, `bvhkit-fbx`):
//! their options ([`Options`]: position channels, unit, up axis, mesh,
//! name), the unit and up-axis choices ([`Scale`], [`Up`]) and the one way
//! each is resolved against a clip ([`Scale::resolve`], [`Up::resolve`]). Each format says what it does with the answer: glTF
//! converts lengths to metres and axes to Y up, FBX states the unit and the
//! axis in its settings and keeps the file's numbers.
//!
//! ```
//! use bvhkit::export::{Scale, Up};
//! use bvhkit::{Bvh, PositionChannels};
//!
//! let bvh = Bvh::parse(
//!     "HIERARCHY\nROOT Hips\n{\n OFFSET 0 0 0\n CHANNELS 3 Zrotation Xrotation Yrotation\n \
//!      End Site\n {\n  OFFSET 0 10 0\n }\n}\nMOTION\nFrames: 1\nFrame Time: 0.5\n0 0 0\n",
//! )?;
//! let unit = Scale::Factor(0.01).resolve(&bvh, PositionChannels::Replace).unwrap();
//! assert_eq!((unit.factor, unit.guessed), (0.01, false));
//! assert_eq!(Scale::Factor(-1.0).resolve(&bvh, PositionChannels::Replace), Err(-1.0));
//! assert_eq!(Up::Keep.resolve(&bvh), (None, None));
//! # Ok::<(), bvhkit::Error>(())
//! ```

use crate::bvh::Bvh;
use crate::edit::axes::{SignedAxis, UpAxis, detect_up};
use crate::kinematics::PositionChannels;
use crate::units::UnitGuess;

/// The unit of an export: how many metres one file unit is.
#[derive(Clone, Copy, Debug, PartialEq, Default)]
pub enum Scale {
    /// The unit guessed from the figure's size ([`crate::units`]); an
    /// unknown unit is taken as the one that makes the figure 1.7 m tall.
    #[default]
    Guess,
    /// One file unit is this many metres (`1.0` keeps the file's numbers).
    Factor(f64),
}

/// A [`Scale`] resolved against a clip.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Unit {
    /// Metres per file unit.
    pub factor: f64,
    /// The unit guessed from the skeleton's size (made under a given
    /// factor too, for reports).
    pub guess: UnitGuess,
    /// Whether the factor came from the guess (`false`: given).
    pub guessed: bool,
}

impl Scale {
    /// The unit of `bvh`, its position channels read as `mode`.
    ///
    /// # Errors
    /// The factor, when it is not a positive finite number.
    pub fn resolve(self, bvh: &Bvh, mode: PositionChannels) -> Result<Unit, f64> {
        let guess = UnitGuess::of_bvh(bvh, mode);
        let (factor, guessed) = match self {
            Scale::Guess => (guess.metres_per_unit(), true),
            Scale::Factor(f) => (f, false),
        };
        if !(factor.is_finite() && factor > 0.0) {
            return Err(factor);
        }
        Ok(Unit { factor, guess, guessed })
    }
}

/// The up axis of an export's input.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Up {
    /// Detected ([`detect_up`]).
    #[default]
    Detect,
    /// Given.
    From(SignedAxis),
    /// Not asked: the file's axes are taken as they are.
    Keep,
}

impl Up {
    /// The up axis of `bvh` under this choice (`None`: kept, or detected
    /// nowhere), and the detection under [`Up::Detect`].
    pub fn resolve(self, bvh: &Bvh) -> (Option<SignedAxis>, Option<UpAxis>) {
        match self {
            Up::Keep => (None, None),
            Up::From(a) => (Some(a), None),
            Up::Detect => {
                let d = detect_up(bvh);
                (d.axis, Some(d))
            }
        }
    }
}

/// The options every export shares (`bvhkit_gltf::ExportOptions` is this
/// type; `bvhkit_fbx::ExportOptions` holds it as `common`).
#[derive(Clone, Debug, PartialEq)]
pub struct Options {
    /// How position channels combine with `OFFSET` (as in `bvh positions`):
    /// the translations exported are those of this reading.
    pub position_channels: PositionChannels,
    /// The unit: glTF multiplies every length by its metres per file unit;
    /// FBX states it and keeps the file's numbers.
    pub scale: Scale,
    /// The up axis: glTF converts from it to its Y up (as `bvh edit --up y
    /// --source-up AXIS` does), keeping the file's axes under [`Up::Keep`]
    /// and when none is detected; FBX states it (Y in those cases) and
    /// keeps the file's numbers.
    pub up: Up,
    /// Add a mesh: a box along every bone, skinned to its joint, so that
    /// any viewer shows the figure.
    pub mesh: bool,
    /// The animation's name (glTF's animation and scene, FBX's stack and
    /// take); `"motion"` when `None`.
    pub name: Option<String>,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            position_channels: PositionChannels::Replace,
            scale: Scale::Guess,
            up: Up::Detect,
            mesh: true,
            name: None,
        }
    }
}

impl Options {
    /// The animation's name: [`Options::name`], or `"motion"`.
    pub fn animation_name(&self) -> String {
        self.name.clone().unwrap_or_else(|| "motion".to_string())
    }
}
