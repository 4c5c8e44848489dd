use std::io;
use std::path::Path;

use crate::error::{Error, Result};
use crate::motion::Motion;
use crate::parse::ReadOptions;
use crate::skeleton::Skeleton;
use crate::write::WriteOptions;

/// A BVH file: one or more skeletons and their motion.
///
/// Invariant: the motion has exactly as many channels per frame as the
/// skeleton declares.
///
/// # Example
/// ```
/// let text = "HIERARCHY
/// ROOT Hips
/// {
/// \tOFFSET 0 0 0
/// \tCHANNELS 3 Zrotation Xrotation Yrotation
/// \tEnd Site
/// \t{
/// \t\tOFFSET 0 10 0
/// \t}
/// }
/// MOTION
/// Frames: 1
/// Frame Time: 0.0333333
/// 0 90 0
/// ";
/// let bvh = bvhkit::Bvh::parse(text)?;
/// assert_eq!(bvh.motion().frame(0), [0.0, 90.0, 0.0]);
/// assert_eq!(bvh.to_string(), text.replace("0.0333333\n", "0.0333333\n"));
/// # Ok::<(), bvhkit::Error>(())
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct Bvh {
    skeleton: Skeleton,
    motion: Motion,
}

impl Bvh {
    /// Puts a skeleton and a motion together.
    ///
    /// # Errors
    /// When the motion's channel count differs from the skeleton's.
    pub fn new(skeleton: Skeleton, motion: Motion) -> Result<Bvh> {
        if skeleton.n_channels() != motion.n_channels() {
            return Err(Error::invalid(format!(
                "the skeleton has {} channels but the motion has {}",
                skeleton.n_channels(),
                motion.n_channels()
            )));
        }
        Ok(Bvh { skeleton, motion })
    }

    pub(crate) fn from_parts(skeleton: Skeleton, motion: Motion) -> Bvh {
        debug_assert_eq!(skeleton.n_channels(), motion.n_channels());
        Bvh { skeleton, motion }
    }

    /// Parses a BVH text strictly: the first problem is an error.
    ///
    /// This is `ReadOptions::new().parse(text)` without the (always empty)
    /// warnings; use [`ReadOptions::lenient`] to recover from damaged files.
    ///
    /// # Errors
    /// On any deviation from the format, with its position.
    pub fn parse(text: impl AsRef<[u8]>) -> Result<Bvh> {
        ReadOptions::new().parse(text.as_ref()).map(|(bvh, _)| bvh)
    }

    /// Reads and strictly parses a file; errors carry the path.
    ///
    /// # Errors
    /// When the file cannot be read or does not parse.
    pub fn from_path(path: impl AsRef<Path>) -> Result<Bvh> {
        ReadOptions::new().read_path(path.as_ref()).map(|(bvh, _)| bvh)
    }

    /// The skeleton(s).
    pub fn skeleton(&self) -> &Skeleton {
        &self.skeleton
    }

    /// The motion.
    pub fn motion(&self) -> &Motion {
        &self.motion
    }

    /// The motion, to edit values or the frame time (its shape stays fixed).
    pub fn motion_mut(&mut self) -> &mut Motion {
        &mut self.motion
    }

    /// Takes the file apart.
    pub fn into_parts(self) -> (Skeleton, Motion) {
        (self.skeleton, self.motion)
    }

    /// Writes the canonical form (tabs, LF, shortest round-trip numbers).
    ///
    /// # Errors
    /// On I/O errors, or when a value is not finite.
    pub fn write<W: io::Write>(&self, wtr: W) -> Result<()> {
        WriteOptions::new().write(self, wtr)
    }

    /// The canonical form as bytes.
    ///
    /// # Errors
    /// When a value is not finite.
    pub fn to_bytes(&self) -> Result<Vec<u8>> {
        let mut out = Vec::new();
        self.write(&mut out)?;
        Ok(out)
    }
}

impl std::fmt::Display for Bvh {
    /// The canonical form; non-finite values make this fail.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let bytes = self.to_bytes().map_err(|_| std::fmt::Error)?;
        f.write_str(&String::from_utf8_lossy(&bytes))
    }
}
