//! BVH clips as machine-learning datasets: Parquet tables and NPZ archives.
//!
//! [`Clip::compute`] turns a parsed file into per-frame, per-joint features
//! (world positions, local rotations, velocities, contacts) with the core's
//! forward kinematics and rotation conversion; [`ParquetWriter`] writes
//! clips one row group each (the long table: one row per clip × frame ×
//! joint, or the wide table: one row per clip × frame) and collects their
//! skeletons into a [`SkeletonTable`], written beside it as
//! `OUT.skeleton.parquet`; [`NpzWriter`] writes per-clip arrays for
//! `numpy.load`. The tables are documented in `docs/datasets.md`.
//!
//! # Example
//!
//! ```
//! use bvhkit_dataset::{Clip, Options, ParquetWriter};
//! let bvh = bvhkit::Bvh::parse(
//!     "HIERARCHY\nROOT Hips\n{\n OFFSET 0 0 0\n CHANNELS 6 Xposition Yposition Zposition Zrotation Xrotation Yrotation\n \
//!      End Site\n {\n  OFFSET 0 10 0\n }\n}\nMOTION\nFrames: 2\nFrame Time: 0.1\n0 90 0 0 0 0\n0 95 0 90 0 0\n",
//! )?;
//! let options = Options::default();
//! let clip = Clip::compute("walk.bvh", &bvh, &options);
//! assert_eq!(clip.rows(), 4); // 2 frames × 2 joints (Hips, Hips_End)
//! let mut w = ParquetWriter::new(Vec::new(), &options)?;
//! w.write_clip(clip)?;
//! let (bytes, skeletons) = w.finish()?;
//! assert!(bytes.starts_with(b"PAR1"));
//! assert_eq!(skeletons.len(), 2);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! # Implementation notes
//!
//! Clips as machine-learning datasets (`docs/datasets.md`), in its own crate so
//! the core stays lean (Apache `arrow-array`/`arrow-schema`/`arrow-buffer` and
//! `parquet` with only its `arrow` and `snap` features; `zip` without codecs
//! for NPZ).
//!
//! The Spark example job (`binaryFile` + `mapInPandas` with the Python
//! package), tested against `bvh export`'s rows (`tests/python/test_spark.py`);
//! `tests/python` reads the CLI's output back with pyarrow, DuckDB and NumPy
//! (run by `scripts/test.sh` in the Python venv); `tests/main.rs` with the
//! `parquet` crate's reader against golden positions and reference quaternions.

#![deny(missing_docs)]

mod features;
mod long;
pub mod npy;
mod npz;
mod parquet;

pub use crate::features::{Clip, Contacts, Dtype, Layout, Options, Rotations};
pub use crate::npz::NpzWriter;
pub use crate::parquet::{
    METADATA_KEY, PAIR_KEY, ParquetWriter, PreparedClip, Preparer, ROW_GROUP_ROWS, Shared,
    SkeletonTable, WriteShared, options_json, schema, skeleton_path,
};
pub use ::parquet::basic::Compression;

/// What can go wrong while writing a dataset.
#[derive(Debug)]
pub enum Error {
    /// Writing failed.
    Io(std::io::Error),
    /// The Parquet encoder failed.
    Parquet(::parquet::errors::ParquetError),
    /// Arrow arrays could not be built.
    Arrow(arrow_schema::ArrowError),
    /// The ZIP writer failed.
    Zip(zip::result::ZipError),
    /// A clip is too large for the format (what overflows is named).
    TooLarge(String),
    /// A clip lacks features the writer's options ask for (it was computed
    /// with other options).
    Missing(&'static str),
    /// A clip's arrays do not hold a value per frame and joint, or a parent
    /// index names no joint (what is wrong is named).
    Inconsistent(&'static str),
    /// A second clip of one name: a clip's name is its key (the NPZ
    /// arrays' prefix, the Parquet `clip` column).
    DuplicateClip(String),
    /// A value is not finite in the output's float type
    /// ([`Clip::check_finite`]).
    NotFinite {
        /// The clip's name.
        clip: String,
        /// The column (`px`, `vx`, ...; `rotations` for any rotation component).
        column: String,
        /// The frame.
        frame: usize,
        /// The joint's name (End Sites as `bvh positions` names them).
        joint: String,
        /// The value computed, before any conversion to `f32`.
        value: f64,
        /// The output's float type.
        dtype: Dtype,
    },
}

impl std::fmt::Display for Error {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Error::Io(e) => write!(f, "{e}"),
            Error::Parquet(e) => write!(f, "parquet: {e}"),
            Error::Arrow(e) => write!(f, "arrow: {e}"),
            Error::Zip(e) => write!(f, "npz: {e}"),
            Error::TooLarge(what) => write!(f, "clip too large: {what} overflow"),
            Error::Inconsistent(what) => {
                write!(f, "the clip's {what} do not match its joints and frames")
            }
            Error::Missing(what) => {
                write!(
                    f,
                    "the clip was computed without {what}, which the writer's options ask for"
                )
            }
            Error::NotFinite { clip, column, frame, joint, value, dtype } => write!(
                f,
                "clip {clip:?}: {column} of joint {joint:?} at frame {frame} is {value:e}, not finite as a {}-bit float; extreme values would be written as infinities{}",
                match dtype {
                    Dtype::F64 => 64,
                    Dtype::F32 => 32,
                },
                match dtype {
                    Dtype::F32 => " (--dtype f64 holds values up to 1.8e308)",
                    Dtype::F64 => "",
                }
            ),
            Error::DuplicateClip(name) => write!(
                f,
                "two clips are named {name:?}: a clip's name is its key, so names must differ"
            ),
        }
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Error::Io(e) => Some(e),
            Error::Parquet(e) => Some(e),
            Error::Arrow(e) => Some(e),
            Error::Zip(e) => Some(e),
            _ => None,
        }
    }
}

impl From<std::io::Error> for Error {
    fn from(e: std::io::Error) -> Error {
        Error::Io(e)
    }
}
impl From<::parquet::errors::ParquetError> for Error {
    fn from(e: ::parquet::errors::ParquetError) -> Error {
        Error::Parquet(e)
    }
}
impl From<arrow_schema::ArrowError> for Error {
    fn from(e: arrow_schema::ArrowError) -> Error {
        Error::Arrow(e)
    }
}
impl From<zip::result::ZipError> for Error {
    fn from(e: zip::result::ZipError) -> Error {
        Error::Zip(e)
    }
}

/// The result of this crate's writers.
pub type Result<T> = std::result::Result<T, Error>;
