//! Frames sampled from their own lines before a stream reads the file, and
//! the check that the stream's own frames were those: the core's
//! [`bvhkit::edit::run::sample`] (its unit tests hold the check's rules),
//! shared by `bvh edit` (through [`bvhkit::edit::run::Edit`]) and
//! `positions`/`rotations --up auto`; and [`GaveUp`], the marker of a
//! streamed pass that leaves the decision to its exact path.

pub(crate) use bvhkit::edit::run::sample::{Sample, SampleCheck};

/// Why a streamed pass gave up, having put nothing in place, so that its
/// exact path decides instead (`bvh edit`'s whole-clip path, the exports'
/// first pass): a marker the caller finds with `anyhow::Error::is` and
/// never shows; the text says what was not confirmed.
#[derive(Debug)]
pub(crate) struct GaveUp(pub(crate) &'static str);

impl std::fmt::Display for GaveUp {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.0)
    }
}

impl std::error::Error for GaveUp {}
