//! NPZ output: a ZIP of NPY arrays (stored, not compressed), readable by
//! `numpy.load`, several arrays per clip named `CLIP/ARRAY`.

use std::io::{Seek, Write};

use zip::write::SimpleFileOptions;
use zip::{CompressionMethod, ZipWriter};

use crate::features::{Clip, Dtype};
use crate::{Result, npy};

/// Writes clips into an NPZ file. For a clip named `CLIP` (the same name as
/// the Parquet `clip` column) it holds:
///
/// - `CLIP/positions`: frames × joints × 3, world positions (root-relative
///   when asked);
/// - `CLIP/rotations`: frames × joints × the representation's width (4, 6
///   or 9), local rotations;
/// - `CLIP/velocities`: frames × joints × 3, when asked;
/// - `CLIP/contacts`: frames × joints, bool, when asked;
/// - `CLIP/joints`: joint names (a NumPy unicode array), End Sites included;
/// - `CLIP/parents`: int32, -1 for roots;
/// - `CLIP/offsets`: joints × 3, float64;
/// - `CLIP/frame_time`: a float64 scalar (seconds);
/// - `CLIP/units`: the unit guess's name, a unicode scalar.
///
/// The float arrays have the export's dtype.
pub struct NpzWriter<W: Write + Seek> {
    zip: ZipWriter<Sticky<W>>,
    dtype: Dtype,
    /// The clips' names so far: each is a key.
    names: std::collections::HashSet<String>,
}

/// The archive's writer, which keeps its first error: every write after
/// it is thrown away without one (the position still counted), so that
/// the archive, dropped after a failure (a full disk), does not fail again
/// and print its own complaint to standard error; the write that failed
/// and [`NpzWriter::finish`] report the error.
struct Sticky<W> {
    inner: W,
    failed: bool,
    /// The position, as the archive sees it.
    pos: u64,
}

impl<W: Write> Write for Sticky<W> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        if self.failed {
            self.pos += buf.len() as u64;
            return Ok(buf.len());
        }
        let n = self.inner.write(buf).inspect_err(|_| self.failed = true)?;
        self.pos += n as u64;
        Ok(n)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        if self.failed {
            return Ok(());
        }
        self.inner.flush().inspect_err(|_| self.failed = true)
    }
}

impl<W: Seek> Seek for Sticky<W> {
    fn seek(&mut self, pos: std::io::SeekFrom) -> std::io::Result<u64> {
        if self.failed {
            self.pos = match pos {
                std::io::SeekFrom::Start(p) => p,
                std::io::SeekFrom::Current(d) => self.pos.saturating_add_signed(d),
                std::io::SeekFrom::End(_) => self.pos,
            };
            return Ok(self.pos);
        }
        self.pos = self.inner.seek(pos).inspect_err(|_| self.failed = true)?;
        Ok(self.pos)
    }
}

impl<W: Write + Seek> NpzWriter<W> {
    /// Starts an archive on `w`.
    pub fn new(w: W, dtype: Dtype) -> NpzWriter<W> {
        let zip = ZipWriter::new(Sticky { inner: w, failed: false, pos: 0 });
        NpzWriter { zip, dtype, names: std::collections::HashSet::new() }
    }

    fn start(&mut self, clip: &str, array: &str, bytes: usize) -> Result<()> {
        let options = SimpleFileOptions::default()
            .compression_method(CompressionMethod::Stored)
            .large_file(bytes >= (1 << 31));
        self.zip.start_file(format!("{clip}/{array}.npy"), options)?;
        Ok(())
    }

    fn floats(
        &mut self,
        clip: &str,
        array: &str,
        shape: &[usize],
        cols: &[&Vec<f64>],
    ) -> Result<()> {
        let (descr, size) = match self.dtype {
            Dtype::F64 => ("<f8", 8),
            Dtype::F32 => ("<f4", 4),
        };
        let n: usize = shape.iter().product();
        self.start(clip, array, n * size + 128)?;
        self.zip.write_all(&npy::header(descr, shape))?;
        let rows = cols.first().map_or(0, |c| c.len());
        let mut buf = Vec::with_capacity(1 << 16);
        for r in 0..rows {
            for c in cols {
                match self.dtype {
                    Dtype::F64 => buf.extend_from_slice(&c[r].to_le_bytes()),
                    Dtype::F32 => buf.extend_from_slice(&(c[r] as f32).to_le_bytes()),
                }
            }
            if buf.len() >= (1 << 16) - 128 {
                self.zip.write_all(&buf)?;
                buf.clear();
            }
        }
        self.zip.write_all(&buf)?;
        Ok(())
    }

    /// Adds `clip`'s arrays.
    ///
    /// # Errors
    /// When writing fails, or [`crate::Error::DuplicateClip`] for a second clip of
    /// one name (nothing of it written).
    pub fn write_clip(&mut self, clip: &Clip) -> Result<()> {
        if !self.names.insert(clip.name.clone()) {
            return Err(crate::Error::DuplicateClip(clip.name.clone()));
        }
        clip.check_finite(self.dtype)?;
        let (nf, nj) = (clip.n_frames, clip.joints.len());
        let name = clip.name.as_str();
        let pos: Vec<&Vec<f64>> = clip.positions.iter().collect();
        self.floats(name, "positions", &[nf, nj, 3], &pos)?;
        let rot: Vec<&Vec<f64>> = clip.rotations.iter().collect();
        self.floats(name, "rotations", &[nf, nj, rot.len()], &rot)?;
        if let Some(v) = &clip.velocities {
            let v: Vec<&Vec<f64>> = v.iter().collect();
            self.floats(name, "velocities", &[nf, nj, 3], &v)?;
        }
        if let Some(c) = &clip.contacts {
            self.start(name, "contacts", c.len() + 128)?;
            self.zip.write_all(&npy::header("|b1", &[nf, nj]))?;
            let bytes: Vec<u8> = c.iter().map(|&b| u8::from(b)).collect();
            self.zip.write_all(&bytes)?;
        }
        let width = clip.joints.iter().map(|n| n.chars().count()).max().unwrap_or(0).max(1);
        self.start(name, "joints", nj * width * 4 + 128)?;
        self.zip.write_all(&npy::header(&format!("<U{width}"), &[nj]))?;
        for n in &clip.joints {
            let mut k = 0;
            for ch in n.chars() {
                self.zip.write_all(&u32::from(ch).to_le_bytes())?;
                k += 1;
            }
            for _ in k..width {
                self.zip.write_all(&[0; 4])?;
            }
        }
        self.start(name, "parents", nj * 4 + 128)?;
        self.zip.write_all(&npy::header("<i4", &[nj]))?;
        for p in &clip.parents {
            self.zip.write_all(&p.to_le_bytes())?;
        }
        self.start(name, "offsets", nj * 24 + 128)?;
        self.zip.write_all(&npy::header("<f8", &[nj, 3]))?;
        for o in &clip.offsets {
            for v in o {
                self.zip.write_all(&v.to_le_bytes())?;
            }
        }
        self.start(name, "frame_time", 136)?;
        self.zip.write_all(&npy::header("<f8", &[]))?;
        self.zip.write_all(&clip.frame_time.to_le_bytes())?;
        let units = clip.units.units.to_string();
        let w = units.chars().count().max(1);
        self.start(name, "units", w * 4 + 128)?;
        self.zip.write_all(&npy::header(&format!("<U{w}"), &[]))?;
        for ch in units.chars() {
            self.zip.write_all(&u32::from(ch).to_le_bytes())?;
        }
        Ok(())
    }

    /// Writes the archive's directory; returns the writer.
    ///
    /// # Errors
    /// When writing fails.
    pub fn finish(self) -> Result<W> {
        let sticky = self.zip.finish()?;
        if sticky.failed {
            // A write failed and its error was returned then: the archive
            // is incomplete.
            return Err(std::io::Error::other("an earlier write of the archive failed").into());
        }
        Ok(sticky.inner)
    }
}
