//! Read, write and animate BVH (Biovision Hierarchy) motion-capture files.
//!
//! Start with [`Bvh::parse`] (strict) or [`ReadOptions`] (strict or
//! lenient, with warnings), write with [`Bvh::write`] or [`WriteOptions`],
//! and stream huge files frame by frame with [`FrameReader`].
//!
//! Conventions: values are kept as written, `f64`, in file units for
//! positions and degrees for rotations; joints are in file order (parents
//! before children), End Sites included as joints of their own kind.
//! `docs/format.md` in the repository lists every ambiguity of the format
//! and how bvhkit resolves it.
//!
//! # Example
//! ```
//! use bvhkit::Bvh;
//!
//! let bvh = Bvh::parse("HIERARCHY
//! ROOT Hips
//! {
//!     OFFSET 0 0 0
//!     CHANNELS 6 Xposition Yposition Zposition Zrotation Xrotation Yrotation
//!     End Site
//!     {
//!         OFFSET 0 5 0
//!     }
//! }
//! MOTION
//! Frames: 1
//! Frame Time: 0.0333333
//! 1 2 3 0 0 0
//! ")?;
//! assert_eq!(bvh.skeleton().len(), 2);
//! assert_eq!(bvh.motion().frame(0)[..3], [1.0, 2.0, 3.0]);
//! // Writing loses nothing: the canonical text parses back to the same data.
//! assert_eq!(Bvh::parse(bvh.to_bytes()?)?, bvh);
//! # Ok::<(), bvhkit::Error>(())
//! ```
//!
//! # Features
//! - `parallel` (default): parse large motion sections on all cores (rayon).
// `unsafe` is allowed at these places only, each with its reason beside it:
// the runtime SIMD dispatch of the batched kernels, inside `simd_kernel!`
// alone (calling an AVX-512F or AVX2 build once the CPU was found to have
// it: crate::simd), the motion scanner's SSE2 kernels, which the build's
// target features guarantee (parse::scan::sse2, and number's tests), its
// AVX2 kernels, used only in the AVX2 and AVX-512F builds of its token loop
// under `simd_kernel!` (parse::scan::avx2, and number's tests), and
// the huge-page advice on a large value buffer (buffer::advise_huge_pages).
#![deny(unsafe_code)]
#![deny(missing_docs)]
#![warn(missing_debug_implementations)]

mod buffer;
mod bvh;
mod channel;
pub mod clean;
pub mod edit;
mod error;
pub mod export;
mod ik;
mod kinematics;
pub mod mix;
mod motion;
mod number;
mod par;
mod parse;
pub mod quality;
pub mod retarget;
pub mod rotation;
mod simd;
mod skeleton;
pub mod units;
mod write;

pub use crate::bvh::Bvh;
pub use crate::channel::Channel;
pub use crate::error::{Error, ErrorKind, Position, Result, Warning, WarningKind};
pub use crate::kinematics::{
    FkLanes, FkScratch, Kinematics, PositionChannels, position_channel_ambiguity,
};
pub use crate::motion::Motion;
pub use crate::parse::{
    DEFAULT_FRAME_TIME, FrameReader, FrameSource, ParseBuffers, ReadOptions, SliceSource,
};
pub use crate::skeleton::{Joint, JointId, JointKind, Skeleton, SkeletonBuilder};
pub use crate::write::{LineEnding, Precision, WriteOptions};
pub use glam;

/// Marsaglia's xorshift64 from `seed` (each call the next state): the unit
/// tests' repeatable values.
#[cfg(test)]
pub(crate) fn xorshift(mut x: u64) -> impl FnMut() -> u64 {
    move || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    }
}

/// The corpus for unit tests (integration tests have `bvhkit_testdata`'s,
/// whose `Bvh` is another crate's type in a unit test).
#[cfg(test)]
pub(crate) mod test_corpus {
    /// Every corpus file the lenient reader accepts (malformed ones it
    /// still refuses are no clips), with its file stem, read one at a time;
    /// `None` after a visible skip (a failure in CI) where the corpus is
    /// absent.
    pub(crate) fn clips(test: &str) -> Option<impl Iterator<Item = (String, crate::Bvh)>> {
        bvhkit_testdata::corpus_or_skip(test)?;
        Some(bvhkit_testdata::corpus_files().into_iter().filter_map(|path| {
            let name = path.file_stem()?.to_string_lossy().into_owned();
            let bytes = std::fs::read(&path).unwrap();
            let (bvh, _) = crate::ReadOptions::new().lenient(true).parse(&bytes).ok()?;
            Some((name, bvh))
        }))
    }
}
