//! Writing BVH text: [`WriteOptions`].
//!
//! # Implementation notes
//!
//! `WriteOptions` (shortest or fixed precision, LF or CRLF). Motion rows are
//! formatted in pieces of about 256 KiB, a few per thread at a time on rayon's
//! current pool, and written in order, so the bytes never depend on the thread
//! count; each batch of pieces is formatted on the pool while the calling
//! thread writes the batch before it (`rayon::in_place_scope`, so the output
//! needs no `Send`). `write_header` and `write_frame` write a motion a frame at
//! a time (`bvh edit` streams with them).

use std::io::Write;

use crate::bvh::Bvh;
use crate::error::{Error, Result};
use crate::number::{write_fixed, write_shortest, write_shortest_f32_row, write_shortest_row};
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
    /// For motion that was stored as 32-bit floats (FBX curves): each
    /// motion value that is exactly a 32-bit float as the shortest decimal
    /// that reads back to that float (`0.1` for `0.1f32`, where
    /// [`Precision::Shortest`] writes `0.10000000149011612`), any other
    /// value as [`Precision::Shortest`]. Read as 32-bit floats, the values
    /// come back exactly; read as `f64`, each is within half a 32-bit ulp
    /// of the float. The hierarchy's numbers and the frame time are written
    /// as with [`Precision::Shortest`].
    ShortestF32,
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

/// Bytes of motion text a piece of [`WriteOptions::write`] aims at.
const PIECE: usize = 256 * 1024;

/// A batch of motion rows: each piece's frame range, text and outcome.
type Batch = Vec<(std::ops::Range<usize>, Vec<u8>, Result<()>)>;

/// Runs `format` (on rayon's pool) while `write` runs on this thread, and
/// returns `write`'s result: the next batch is formatted while the previous
/// one is written.
#[cfg(feature = "parallel")]
fn overlapped<R>(format: impl FnOnce() + Send, write: impl FnOnce() -> R) -> R {
    rayon::in_place_scope(|s| {
        s.spawn(|_| format());
        write()
    })
}

#[cfg(not(feature = "parallel"))]
fn overlapped<R>(format: impl FnOnce(), write: impl FnOnce() -> R) -> R {
    format();
    write()
}

/// `f` on every piece, on rayon's pool.
#[cfg(feature = "parallel")]
fn for_each_piece(
    pieces: &mut Batch,
    f: impl Fn(&mut (std::ops::Range<usize>, Vec<u8>, Result<()>)) + Sync + Send,
) {
    use rayon::prelude::*;
    pieces.par_iter_mut().for_each(f);
}

#[cfg(not(feature = "parallel"))]
fn for_each_piece(
    pieces: &mut Batch,
    f: impl Fn(&mut (std::ops::Range<usize>, Vec<u8>, Result<()>)),
) {
    pieces.iter_mut().for_each(f);
}

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
            Precision::Shortest | Precision::ShortestF32 => write_shortest(out, v),
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
    /// Motion rows are formatted in pieces of about 256 KiB of text, a few
    /// pieces per thread at a time (on all cores with the `parallel`
    /// feature: rayon's current pool), and written in order: the bytes are
    /// the same whatever the number of threads.
    ///
    /// # Errors
    /// On I/O errors, or when an offset, value or the frame time is not
    /// finite (it could not be read back). The text before the piece holding
    /// the first such value is then written.
    pub fn write<W: Write>(&self, bvh: &Bvh, mut wtr: W) -> Result<()> {
        let mut out = Vec::with_capacity(64 * 1024);
        self.write_hierarchy(bvh, &mut out)?;
        wtr.write_all(&out)?;
        let motion = bvh.motion();
        let n = motion.n_frames();
        // Shortest numbers of motion data take about 10 bytes with their space.
        let rows = (PIECE / (10 * motion.n_channels().max(1))).max(1);
        let per_batch = 4 * crate::parse::worker_count();
        // Two batches: one being formatted (on the pool) while the one
        // before it is written (on this thread); buffers are reused.
        let (mut formatting, mut written): (Batch, Batch) = (Vec::new(), Vec::new());
        let mut spare = vec![out];
        let mut next = 0;
        loop {
            formatting.clear();
            while next < n && formatting.len() < per_batch {
                let end = (next + rows).min(n);
                formatting.push((next..end, spare.pop().unwrap_or_default(), Ok(())));
                next = end;
            }
            let format = |batch: &mut Batch| {
                if batch.len() > 1 {
                    for_each_piece(batch, |(range, buf, r)| {
                        *r = self.rows(motion, range.clone(), buf)
                    });
                } else {
                    for (range, buf, r) in batch.iter_mut() {
                        *r = self.rows(motion, range.clone(), buf);
                    }
                }
            };
            let mut write = |batch: &mut Batch| -> Result<()> {
                for (_, buf, r) in batch.iter_mut() {
                    std::mem::replace(r, Ok(()))?;
                    wtr.write_all(buf)?;
                }
                Ok(())
            };
            let batch = &mut formatting;
            overlapped(|| format(batch), || write(&mut written))?;
            if formatting.is_empty() {
                break;
            }
            spare.extend(written.drain(..).map(|(_, buf, _)| buf));
            std::mem::swap(&mut formatting, &mut written);
        }
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
        let row = match self.precision {
            Precision::Shortest => Some(write_shortest_row(out, frame)),
            Precision::ShortestF32 => Some(write_shortest_f32_row(out, frame)),
            Precision::Fixed(_) => None,
        };
        if let Some(failed) = row {
            if let Some(i) = failed {
                return Err(Error::invalid(format!(
                    "cannot write the non-finite value {}",
                    frame[i]
                )));
            }
            self.eol(out);
            return Ok(());
        }
        for (i, &v) in frame.iter().enumerate() {
            if i > 0 {
                out.push(b' ');
            }
            self.num(out, v)?;
        }
        self.eol(out);
        Ok(())
    }

    /// Formats frames `range` of `motion` into `out` (cleared first).
    fn rows(
        &self,
        motion: &crate::motion::Motion,
        range: std::ops::Range<usize>,
        out: &mut Vec<u8>,
    ) -> Result<()> {
        out.clear();
        out.reserve(PIECE + PIECE / 4);
        for f in range {
            self.write_frame(motion.frame(f), out)?;
        }
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ReadOptions;

    fn write_with(bvh: &Bvh, opts: &WriteOptions, threads: usize) -> Vec<u8> {
        let run = || {
            let mut out = Vec::new();
            opts.write(bvh, &mut out).unwrap();
            out
        };
        #[cfg(feature = "parallel")]
        {
            let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap();
            pool.install(run)
        }
        #[cfg(not(feature = "parallel"))]
        {
            let _ = threads;
            run()
        }
    }

    /// The writer of the release before parallel pieces, kept as the
    /// reference: every frame in order into one buffer.
    fn write_plainly(bvh: &Bvh, opts: &WriteOptions) -> Vec<u8> {
        let mut out = Vec::new();
        opts.write_hierarchy(bvh, &mut out).unwrap();
        for frame in bvh.motion().frames() {
            for (i, &v) in frame.iter().enumerate() {
                if i > 0 {
                    out.push(b' ');
                }
                opts.num(&mut out, v).unwrap();
            }
            opts.eol(&mut out);
        }
        out
    }

    fn inputs() -> Vec<(String, Bvh)> {
        // Synthetic texts: several pieces of motion, and a single joint of
        // one channel (a piece of many short rows).
        let text = |joints: usize, frames: usize| {
            let mut s = String::from(
                "HIERARCHY\nROOT j0\n{\nOFFSET 0 0 0\nCHANNELS 6 Xposition Yposition Zposition Zrotation Xrotation Yrotation\n",
            );
            for i in 1..joints {
                s.push_str(&format!(
                    "JOINT j{i}\n{{\nOFFSET 0 1.5 0\nCHANNELS 3 Zrotation Xrotation Yrotation\n"
                ));
            }
            s.push_str("End Site\n{\nOFFSET 0 1 0\n}\n");
            s.push_str(&"}\n".repeat(joints));
            let c = 3 * joints + 3;
            s.push_str(&format!("MOTION\nFrames: {frames}\nFrame Time: 0.008333\n"));
            let mut x: u64 = 99;
            for _ in 0..frames {
                let row: Vec<String> = (0..c)
                    .map(|_| {
                        x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                        let v = ((x >> 11) as f64 / (1u64 << 53) as f64) * 360.0 - 180.0;
                        format!("{v}")
                    })
                    .collect();
                s.push_str(&row.join(" "));
                s.push('\n');
            }
            s
        };
        let one = "HIERARCHY ROOT a { OFFSET 0 0 0 CHANNELS 1 Xrotation } MOTION Frames: 70000 Frame Time: 0.1\n"
            .to_string()
            + &(0..70000).map(|i| format!("{}.{}\n", i % 360, i % 7)).collect::<String>();
        let none =
            "HIERARCHY ROOT a { OFFSET 0 0 0 CHANNELS 0 } MOTION Frames: 3 Frame Time: 0.1\n\n\n\n";
        [
            ("synthetic".to_string(), text(30, 2500)),
            ("one channel".into(), one),
            ("no channels".into(), none.into()),
        ]
        .into_iter()
        .map(|(name, t)| (name, ReadOptions::new().parse(t.as_bytes()).unwrap().0))
        .collect()
    }

    #[test]
    fn bytes_do_not_depend_on_the_thread_count() {
        let mut crlf = WriteOptions::new();
        crlf.line_ending(LineEnding::CrLf).precision(Precision::Fixed(3));
        for (name, bvh) in inputs() {
            for opts in [WriteOptions::new(), crlf.clone()] {
                let want = write_plainly(&bvh, &opts);
                assert!(name != "synthetic" || want.len() > 4 * PIECE, "{}", want.len());
                for threads in [1, 2, 3, 8] {
                    assert!(write_with(&bvh, &opts, threads) == want, "{name}, {threads} threads");
                }
            }
        }
    }

    #[cfg(feature = "parallel")]
    #[test]
    fn a_non_finite_value_is_an_error_after_the_pieces_before_it() {
        let (_, bvh) = inputs().swap_remove(1);
        let (skel, motion) = bvh.into_parts();
        let mut values = motion.values().to_vec();
        values[60_000] = f64::NAN;
        let motion = crate::Motion::new(0.1, 1, values).unwrap();
        let bvh = Bvh::new(skel, motion).unwrap();
        for threads in [1, 2, 8] {
            let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap();
            let mut out = Vec::new();
            let err = pool.install(|| WriteOptions::new().write(&bvh, &mut out)).unwrap_err();
            assert!(err.to_string().contains("NaN"), "{err}");
            let text = String::from_utf8(out).unwrap();
            // Whole lines only, all before the bad frame.
            assert!(text.ends_with('\n'));
            let frames = text.lines().count() - 8;
            assert!(frames <= 60_000, "{frames}");
        }
    }
}
