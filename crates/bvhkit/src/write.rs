//! Writing BVH text: [`WriteOptions`].

use std::io::Write;

use crate::bvh::Bvh;
use crate::error::{Error, Result};
use crate::number::{write_fixed, write_shortest};
use crate::skeleton::{JointKind, Skeleton};

/// How numbers are printed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Precision {
    /// The shortest decimal that reads back to the same `f64`, without
    /// exponent (`0`, `-0`, `12.5`, `0.0000001`). Nothing is lost.
    #[default]
    Shortest,
    /// Exactly this many digits after the point (`Fixed(6)`: `12.500000`).
    /// Values are rounded: use it only for tools that need it.
    Fixed(u8),
}

/// Line endings.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum LineEnding {
    /// `\n` (the default).
    #[default]
    Lf,
    /// `\r\n`.
    CrLf,
}

/// How to write BVH text.
///
/// The canonical form: `HIERARCHY`, one tab per nesting level (capped at 255
/// levels so that a pathological depth cannot blow up the output), `End
/// Site`, `MOTION`, `Frames:`, `Frame Time:`, one frame per line, values
/// separated by one space.
///
/// # Example
/// ```
/// use bvhkit::{Bvh, Precision, WriteOptions};
/// let bvh = Bvh::parse("HIERARCHY ROOT A { OFFSET 0 0 0 CHANNELS 1 Xrotation } MOTION Frames: 1 Frame Time: 0.1 1.23456")?;
/// let mut out = Vec::new();
/// WriteOptions::new().precision(Precision::Fixed(2)).write(&bvh, &mut out)?;
/// assert!(String::from_utf8(out).unwrap().ends_with("Frame Time: 0.10\n1.23\n"));
/// # Ok::<(), bvhkit::Error>(())
/// ```
#[derive(Clone, Debug, Default)]
pub struct WriteOptions {
    precision: Precision,
    line_ending: LineEnding,
}

const MAX_INDENT: usize = 255;

impl WriteOptions {
    /// Canonical output: shortest numbers, LF.
    pub fn new() -> WriteOptions {
        WriteOptions::default()
    }

    /// Number format (default: [`Precision::Shortest`]).
    pub fn precision(&mut self, p: Precision) -> &mut WriteOptions {
        self.precision = p;
        self
    }

    /// Line endings (default: [`LineEnding::Lf`]).
    pub fn line_ending(&mut self, e: LineEnding) -> &mut WriteOptions {
        self.line_ending = e;
        self
    }

    fn num(&self, out: &mut Vec<u8>, v: f64) -> Result<()> {
        if !v.is_finite() {
            return Err(Error::invalid(format!("cannot write the non-finite value {v}")));
        }
        match self.precision {
            Precision::Shortest => write_shortest(out, v),
            Precision::Fixed(d) => write_fixed(out, v, d),
        }
        Ok(())
    }

    fn eol(&self, out: &mut Vec<u8>) {
        match self.line_ending {
            LineEnding::Lf => out.push(b'\n'),
            LineEnding::CrLf => out.extend_from_slice(b"\r\n"),
        }
    }

    /// Writes `bvh` to `wtr`.
    ///
    /// # Errors
    /// On I/O errors, or when an offset, value or the frame time is not
    /// finite (it could not be read back).
    pub fn write<W: Write>(&self, bvh: &Bvh, mut wtr: W) -> Result<()> {
        let mut out = Vec::with_capacity(64 * 1024);
        self.write_hierarchy(bvh, &mut out)?;
        wtr.write_all(&out)?;
        out.clear();
        let motion = bvh.motion();
        for frame in motion.frames() {
            self.write_frame(frame, &mut out)?;
            if out.len() >= 60 * 1024 {
                wtr.write_all(&out)?;
                out.clear();
            }
        }
        wtr.write_all(&out)?;
        wtr.flush().map_err(Error::from)
    }

    /// Writes one frame as one line (values separated by one space, then
    /// the line ending) to `out`, as [`WriteOptions::write`] writes every
    /// frame: with [`WriteOptions::write_header`], a motion can be written
    /// a frame at a time.
    ///
    /// # Errors
    /// When a value is not finite.
    pub fn write_frame(&self, frame: &[f64], out: &mut Vec<u8>) -> Result<()> {
        for (i, &v) in frame.iter().enumerate() {
            if i > 0 {
                out.push(b' ');
            }
            self.num(out, v)?;
        }
        self.eol(out);
        Ok(())
    }

    /// Writes the hierarchy and the motion header (everything before the
    /// first frame) to `out`.
    ///
    /// # Errors
    /// When an offset or the frame time is not finite.
    pub fn write_hierarchy(&self, bvh: &Bvh, out: &mut Vec<u8>) -> Result<()> {
        let m = bvh.motion();
        self.write_header(bvh.skeleton(), m.n_frames(), m.frame_time(), out)
    }

    /// Writes the hierarchy of `skel` and a motion header for `n_frames`
    /// frames of `frame_time` seconds to `out`: the same bytes as
    /// [`WriteOptions::write_hierarchy`] for a clip of that shape, for
    /// writers that stream frames ([`WriteOptions::write_frame`]).
    ///
    /// # Errors
    /// When an offset or the frame time is not finite.
    ///
    /// # Example
    /// ```
    /// use bvhkit::{Bvh, WriteOptions};
    /// let bvh = Bvh::parse("HIERARCHY ROOT A { OFFSET 0 0 0 CHANNELS 1 Xrotation } MOTION Frames: 2 Frame Time: 0.5\n1\n2")?;
    /// let opts = WriteOptions::new();
    /// let mut out = Vec::new();
    /// opts.write_header(bvh.skeleton(), 2, 0.5, &mut out)?;
    /// for f in bvh.motion().frames() {
    ///     opts.write_frame(f, &mut out)?;
    /// }
    /// assert_eq!(out, bvh.to_bytes()?);
    /// # Ok::<(), bvhkit::Error>(())
    /// ```
    pub fn write_header(
        &self,
        skel: &Skeleton,
        n_frames: usize,
        frame_time: f64,
        out: &mut Vec<u8>,
    ) -> Result<()> {
        out.extend_from_slice(b"HIERARCHY");
        self.eol(out);
        let indent =
            |out: &mut Vec<u8>, d: usize| out.extend(std::iter::repeat_n(b'\t', d.min(MAX_INDENT)));
        let mut open: Vec<usize> = Vec::new(); // depths of joints whose `}` is pending
        for j in skel.joints() {
            let d = j.depth();
            while open.last().is_some_and(|&o| o >= d) {
                let o = open.pop().unwrap_or_default();
                indent(out, o);
                out.push(b'}');
                self.eol(out);
            }
            indent(out, d);
            match j.kind() {
                JointKind::Root => {
                    out.extend_from_slice(b"ROOT ");
                    out.extend_from_slice(j.name().as_bytes());
                }
                JointKind::Joint => {
                    out.extend_from_slice(b"JOINT ");
                    out.extend_from_slice(j.name().as_bytes());
                }
                JointKind::EndSite => out.extend_from_slice(b"End Site"),
            }
            self.eol(out);
            indent(out, d);
            out.push(b'{');
            self.eol(out);
            indent(out, d + 1);
            out.extend_from_slice(b"OFFSET");
            let o = j.offset();
            for v in [o.x, o.y, o.z] {
                out.push(b' ');
                self.num(out, v)?;
            }
            self.eol(out);
            if !j.is_end_site() {
                indent(out, d + 1);
                out.extend_from_slice(format!("CHANNELS {}", j.channels().len()).as_bytes());
                for c in j.channels() {
                    out.push(b' ');
                    out.extend_from_slice(c.name().as_bytes());
                }
                self.eol(out);
            }
            open.push(d);
        }
        while let Some(o) = open.pop() {
            indent(out, o);
            out.push(b'}');
            self.eol(out);
        }
        out.extend_from_slice(b"MOTION");
        self.eol(out);
        out.extend_from_slice(format!("Frames: {n_frames}").as_bytes());
        self.eol(out);
        out.extend_from_slice(b"Frame Time: ");
        self.num(out, frame_time)?;
        self.eol(out);
        Ok(())
    }
}
