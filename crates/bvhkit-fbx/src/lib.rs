//! FBX export and import of BVH motion.
//!
//! [`export`] writes a [`Bvh`] as a binary FBX 7.4 file, the layout the
//! Autodesk FBX SDK writes, with a small record writer of its own: the
//! header extension, `GlobalSettings` (up, front and coordinate axes and
//! the unit, stated rather than applied, so the numbers are the file's),
//! `Documents`, `Definitions`, `Objects` (one `LimbNode` model and its
//! `NodeAttribute` per joint, End Sites as leaf bones, the rest pose as
//! `Lcl Translation`, each joint's BVH channel order as its FBX
//! `RotationOrder`, a `BindPose`; one `AnimationStack` and
//! `AnimationLayer`, an `AnimationCurveNode` for the translation and the
//! rotation of each animated joint, one `AnimationCurve` per channel whose
//! keys are the channel's values at the frame times in FBX ticks) and
//! `Connections`. The curves hold the file's own Euler angles in degrees:
//! nothing is resampled or converted to another order.
//!
//! [`import`] reads an FBX file (binary or ASCII, any version the `ufbx`
//! reader takes) back into a [`Bvh`]: the `LimbNode` hierarchy (or every
//! node under the root), the rest translations, and the animation at its
//! own keys. The mapping is described in `docs/fbx.md`. For a binary file
//! whose curves have their keys on the frames (every export), the scene is
//! loaded without its keys and each curve's arrays are read from the file
//! itself (`raw.rs`), a 4-byte float per key instead of ufbx's 48-byte
//! keyframe; anything else goes through ufbx's keys.
//!
//! ```
//! use bvhkit::Bvh;
//! use bvhkit_fbx::{ExportOptions, ImportOptions, export, import};
//!
//! let bvh = Bvh::parse(
//!     "HIERARCHY\nROOT Hips\n{\n OFFSET 0 0 0\n CHANNELS 6 Xposition Yposition Zposition Zrotation Xrotation Yrotation\n \
//!      End Site\n {\n  OFFSET 0 10 0\n }\n}\nMOTION\nFrames: 2\nFrame Time: 0.5\n0 90 0 0 0 0\n1 90 0 90 0 0\n",
//! )?;
//! let fbx = export(&bvh, &ExportOptions::default())?;
//! assert_eq!(&fbx.bytes[..18], b"Kaydara FBX Binary");
//! let back = import(&fbx.bytes, &ImportOptions::default())?;
//! assert_eq!(back.bvh.skeleton().len(), 2);
//! assert_eq!(back.bvh.motion().frame(1), [1.0, 90.0, 0.0, 90.0, 0.0, 0.0]);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
#![deny(missing_docs)]

use std::fmt;

use bvhkit::Bvh;
use bvhkit::edit::axes::{SignedAxis, UpAxis};
use bvhkit::units::UnitGuess;

mod export;
mod import;
mod node;
mod raw;

pub use export::{TICKS_PER_SECOND, frame_ticks};

/// The unit and up-axis choices ([`bvhkit::export`]): FBX states them in
/// its `GlobalSettings` (`UnitScaleFactor`, in centimetres per unit; the up
/// axis) and keeps the file's numbers.
pub use bvhkit::export::{Options, Scale, Up};

/// Options of [`export`].
#[derive(Clone, Debug)]
pub struct ExportOptions {
    /// The options every export shares ([`Options`]): position channels
    /// (`Add` writes `OFFSET + value` in the translation curves), the unit
    /// stated (an unknown guessed unit stated so that the figure is 1.7 m
    /// tall), the up axis stated (Y under [`Up::Keep`] and when none is
    /// detected), the mesh (one `Geometry`, a `Skin` and a `Cluster` per
    /// joint with bones) and the name of the animation stack and take.
    pub common: Options,
    /// Write End Sites as leaf `LimbNode`s (named as `bvh positions` names them).
    pub end_sites: bool,
    /// Constant (stepped) keys instead of linear ones.
    pub constant: bool,
}

impl Default for ExportOptions {
    fn default() -> Self {
        ExportOptions { common: Options::default(), end_sites: true, constant: false }
    }
}

/// What was stated in the file.
#[derive(Clone, Debug, PartialEq)]
pub struct Applied {
    /// Metres per file unit (`UnitScaleFactor` is 100 times this).
    pub factor: f64,
    /// The unit guessed from the skeleton's size.
    pub guess: UnitGuess,
    /// Whether the factor came from the guess.
    pub guessed: bool,
    /// The up axis stated (`None`: Y stated without knowing the file's).
    pub up: Option<SignedAxis>,
    /// The detection, under [`Up::Detect`].
    pub detected: Option<UpAxis>,
}

impl fmt::Display for Applied {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.guessed {
            write!(
                f,
                "units guessed {}, stated as {} m per unit",
                self.guess.label(),
                self.factor
            )?;
        } else {
            write!(
                f,
                "stated as {} m per unit (given; guess was {})",
                self.factor,
                self.guess.label()
            )?;
        }
        match (self.up, &self.detected) {
            (Some(a), Some(d)) => write!(f, "; up axis detected {d}, stated as {a}"),
            (None, Some(d)) => write!(f, "; up axis {d}: stated as y"),
            (Some(a), None) => write!(f, "; up axis {a} given, stated"),
            (None, None) => f.write_str("; up axis stated as y"),
        }
    }
}

/// An FBX file made by [`export`].
#[derive(Clone, Debug)]
pub struct Export {
    /// The bytes of the `.fbx` file.
    pub bytes: Vec<u8>,
    /// The unit and up axis stated.
    pub applied: Applied,
    /// The model name of every joint, in skeleton order.
    pub names: Vec<String>,
    /// Names that were taken already, and what they became.
    pub renamed: Vec<(String, String)>,
}

/// Why a file cannot be exported or imported.
#[derive(Debug, Clone, PartialEq)]
pub enum Error {
    /// The frame time is not a positive finite number while there are several frames.
    FrameTime(f64),
    /// A value is not finite as a 32-bit float (FBX curve values).
    NotFinite {
        /// The joint's name.
        joint: String,
        /// The frame (`None`: the offset).
        frame: Option<usize>,
    },
    /// The scale factor is not a positive finite number.
    Scale(f64),
    /// The file would pass 4 GiB (about this many bytes), the limit of FBX 7.4.
    TooLarge(usize),
    /// The FBX reader's error.
    Read(String),
    /// The writer of [`export_to`] failed (its message).
    Write(String),
    /// The FBX file holds nothing that makes a BVH skeleton.
    NoSkeleton,
    /// The FBX skeleton cannot be a BVH skeleton (the core's message).
    Skeleton(String),
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::FrameTime(t) => write!(f, "frame time {t} is not a positive number"),
            Error::NotFinite { joint, frame: Some(i) } => {
                write!(f, "joint {joint}, frame {i}: a value is not finite as a 32-bit float")
            }
            Error::NotFinite { joint, frame: None } => {
                write!(f, "joint {joint}: its OFFSET is not finite")
            }
            Error::Scale(s) => write!(f, "scale {s} is not a positive number"),
            Error::TooLarge(n) => {
                write!(f, "{n} bytes is beyond the 4 GiB of a binary FBX 7.4 file")
            }
            Error::Read(e) => write!(f, "reading the FBX file: {e}"),
            Error::Write(e) => write!(f, "writing the FBX file: {e}"),
            Error::NoSkeleton => f.write_str("the FBX file has no skeleton (no LimbNode, no node)"),
            Error::Skeleton(e) => write!(f, "the FBX skeleton: {e}"),
        }
    }
}

impl std::error::Error for Error {}

/// Exports `bvh` as a binary FBX 7.4 file: see the crate docs.
///
/// # Errors
/// [`Error::FrameTime`], [`Error::NotFinite`], [`Error::Scale`], [`Error::TooLarge`].
pub fn export(bvh: &Bvh, options: &ExportOptions) -> Result<Export, Error> {
    let mut bytes = Vec::new();
    let mut x = export::export(bvh, options, &mut bytes)?;
    x.bytes = bytes;
    Ok(x)
}

/// [`export`] straight into `w`, a few MiB at a time, without holding the
/// whole file in memory (`bvh export` writes its output so); the returned
/// [`Export`]'s `bytes` are empty. The same bytes as [`export`]'s.
///
/// # Errors
/// As [`export`], and [`Error::Write`] when `w` fails. After an error,
/// part of the file may have been written.
pub fn export_to(
    bvh: &Bvh,
    options: &ExportOptions,
    w: &mut dyn std::io::Write,
) -> Result<Export, Error> {
    export::export(bvh, options, w)
}

/// Options of [`import`].
#[derive(Clone, Debug, Default)]
pub struct ImportOptions {
    /// Sample at this many frames per second instead of the file's keys.
    pub fps: Option<f64>,
    /// The name of the animation stack to read (default: the first).
    pub stack: Option<String>,
}

/// What [`import`] read.
#[derive(Clone, Debug)]
pub struct Import {
    /// The motion.
    pub bvh: Bvh,
    /// Metres per unit the file states.
    pub metres_per_unit: f64,
    /// Notes on what was approximated (joints whose rotation was baked
    /// from pivots or pre-rotations, resampling).
    pub notes: Vec<String>,
}

/// Reads FBX bytes into a BVH motion: see the crate docs.
///
/// # Errors
/// [`Error::Read`] when `ufbx` cannot read the file, [`Error::NoSkeleton`],
/// [`Error::Skeleton`].
pub fn import(bytes: &[u8], options: &ImportOptions) -> Result<Import, Error> {
    import::import(bytes, options)
}

/// [`import`] through `ufbx`'s keyframes only (never the fast path that
/// reads the curves' arrays from the file): the reference the fast path is
/// tested against.
///
/// # Errors
/// As [`import`].
#[doc(hidden)]
pub fn import_through_ufbx_keys(bytes: &[u8], options: &ImportOptions) -> Result<Import, Error> {
    import::import_through_ufbx_keys(bytes, options)
}

/// [`import`]'s fast path alone: `Ok(None)` when the file needs `ufbx`'s
/// keys (an ASCII file, curves off the frames, joints to bake, `fps`).
///
/// # Errors
/// As [`import`].
#[doc(hidden)]
pub fn import_fast_path(bytes: &[u8], options: &ImportOptions) -> Result<Option<Import>, Error> {
    import::import_fast_path(bytes, options)
}
