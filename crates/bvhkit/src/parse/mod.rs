//! Reading BVH text: [`ReadOptions`] and the streaming [`FrameReader`].

mod header;
mod sample;
mod scan;
pub(crate) use scan::join;
mod stream;

use std::path::Path;

use crate::bvh::Bvh;
use crate::error::{Error, ErrorKind, Position, Result, Warning, WarningKind, describe_token};
use crate::motion::Motion;

pub use self::header::DEFAULT_FRAME_TIME;
use self::header::{Header, HeaderParser, Stop};
pub(crate) use self::scan::worker_count;
use self::scan::{RowStats, line_lengths, scan_all};
pub use self::stream::{FrameReader, FrameSource, SliceSource};

/// How to read BVH text.
///
/// Strict (the default): the first problem is an error with its position.
/// Lenient: every recoverable problem becomes a [`Warning`] and the data is
/// repaired as `docs/format.md` describes; unrecoverable problems (a
/// non-number where a number must be, unbalanced braces, an unknown channel
/// name, a channel count that disagrees with the names listed) are errors in
/// both modes.
///
/// In both modes these are not problems: a UTF-8 byte order mark, any line
/// endings (LF, CRLF, CR, mixed), no final newline, any indentation,
/// keywords in any case (`End site`, `ROOT`/`Root`), a whole file on one line
/// in the hierarchy.
///
/// # Example
/// ```
/// use bvhkit::ReadOptions;
///
/// // Declares 5 frames but holds 2.
/// let text = "HIERARCHY\nROOT A\n{\nOFFSET 0 0 0\nCHANNELS 1 Xrotation\n}\nMOTION\nFrames: 5\nFrame Time: 0.1\n1\n2\n";
/// assert!(ReadOptions::new().parse(text.as_bytes()).is_err());
/// let (bvh, warnings) = ReadOptions::new().lenient(true).parse(text.as_bytes())?;
/// assert_eq!(bvh.motion().n_frames(), 2);
/// assert_eq!(warnings[0].to_string(), "8:9: Frames: declares 5 frames but the file holds 2; the frames present are kept");
/// # Ok::<(), bvhkit::Error>(())
/// ```
#[derive(Clone, Debug)]
pub struct ReadOptions {
    lenient: bool,
    parallel: bool,
}

impl Default for ReadOptions {
    fn default() -> ReadOptions {
        ReadOptions::new()
    }
}

impl ReadOptions {
    /// Strict reading, parallel on large inputs.
    pub fn new() -> ReadOptions {
        ReadOptions { lenient: false, parallel: true }
    }

    /// Recover from damaged files with warnings (default: `false`, strict).
    pub fn lenient(&mut self, yes: bool) -> &mut ReadOptions {
        self.lenient = yes;
        self
    }

    /// Parse motion values on all cores when the input is large (default:
    /// `true`; no effect without the `parallel` feature). A
    /// [`FrameReader`] over bytes in memory ([`ReadOptions::frame_reader_slice`])
    /// scans each window of a megabyte in two halves on rayon's pool.
    pub fn parallel(&mut self, yes: bool) -> &mut ReadOptions {
        self.parallel = yes;
        self
    }

    /// Whether these options are lenient.
    pub fn is_lenient(&self) -> bool {
        self.lenient
    }

    /// Parses a whole BVH text held in memory.
    ///
    /// Returns the data and the warnings (always empty in strict mode).
    ///
    /// # Errors
    /// In strict mode, the first problem; in lenient mode, the first
    /// unrecoverable one. Errors carry a [`Position`].
    pub fn parse(&self, input: &[u8]) -> Result<(Bvh, Vec<Warning>)> {
        self.parse_values_into(input, Vec::new())
    }

    /// [`ReadOptions::parse`] into the value buffer that `buffers` holds
    /// (from an earlier [`ParseBuffers::recycle`]), so that a caller that
    /// parses many files, one after another on a thread, writes each
    /// file's values into memory already faulted in instead of fresh pages
    /// (and, with a buffer large enough, allocates nothing for them). The
    /// result is [`ReadOptions::parse`]'s to the bit, warnings and errors
    /// included; the buffer goes into the returned [`Bvh`] (on an error it
    /// is dropped, and the next parse allocates).
    ///
    /// # Errors
    /// As [`ReadOptions::parse`].
    ///
    /// # Example
    /// ```
    /// use bvhkit::{ParseBuffers, ReadOptions};
    ///
    /// let text = b"HIERARCHY ROOT A { OFFSET 0 0 0 CHANNELS 1 Xrotation }
    /// MOTION Frames: 2 Frame Time: 0.1
    /// 10
    /// 20
    /// ";
    /// let mut buffers = ParseBuffers::new();
    /// for _ in 0..3 {
    ///     let (bvh, _) = ReadOptions::new().parse_with(text, &mut buffers)?;
    ///     assert_eq!(bvh.motion().values(), [10.0, 20.0]);
    ///     // Done with it: its values' memory serves the next parse.
    ///     buffers.recycle(bvh);
    /// }
    /// # Ok::<(), bvhkit::Error>(())
    /// ```
    pub fn parse_with(
        &self,
        input: &[u8],
        buffers: &mut ParseBuffers,
    ) -> Result<(Bvh, Vec<Warning>)> {
        self.parse_values_into(input, std::mem::take(&mut buffers.values))
    }

    /// [`ReadOptions::parse`], the motion values scanned into `reuse`
    /// (cleared first; its capacity kept).
    fn parse_values_into(&self, input: &[u8], reuse: Vec<f64>) -> Result<(Bvh, Vec<Warning>)> {
        let header = match HeaderParser::new(input, true, self.lenient).parse() {
            Ok(h) => h,
            Err(Stop::Fatal(e)) => return Err(e),
            Err(Stop::NeedMore) => unreachable!("complete input never needs more"),
        };
        let Header { skeleton, frames_declared, frame_time, data_start, mut warnings, .. } = header;
        let channels = skeleton.n_channels() as u64;
        let data = &input[data_start..];
        let (values, stats) =
            scan_all(data, data_start, channels, self.parallel, reuse).map_err(|bad| {
                Error::new(
                    ErrorKind::BadNumber {
                        context: "motion value",
                        found: describe_token(&input[bad.start..bad.end]),
                    },
                    Some(Position::at(input, bad.start)),
                )
            })?;
        let mut check = Checker { input, lenient: self.lenient, warnings: &mut warnings };
        let (n_frames, values) =
            check.layout(values, &stats, channels as usize, frames_declared, data_start)?;
        let motion = Motion::from_parts(frame_time, n_frames, channels as usize, values);
        Ok((Bvh::from_parts(skeleton, motion), warnings))
    }

    /// Reads and parses a file; errors carry the path.
    ///
    /// # Errors
    /// When the file cannot be read or does not parse.
    pub fn read_path(&self, path: &Path) -> Result<(Bvh, Vec<Warning>)> {
        let bytes = std::fs::read(path).map_err(|e| Error::from(e).with_path(path))?;
        self.parse(&bytes).map_err(|e| e.with_path(path))
    }

    /// Starts streaming a BVH text frame by frame; see [`FrameReader`].
    ///
    /// # Errors
    /// When the header (hierarchy and motion header) cannot be read.
    pub fn frame_reader<R: std::io::Read>(&self, rdr: R) -> Result<FrameReader<R>> {
        FrameReader::new(rdr, self.lenient, self.parallel)
    }

    /// Starts streaming a BVH text that is already in memory (read whole,
    /// or a memory-mapped file), frame by frame; see [`FrameReader`]. The
    /// same frames, warnings and errors as [`ReadOptions::frame_reader`]
    /// over the same bytes, but the bytes are scanned where they are,
    /// never copied: the reader's own memory stays constant (a window of
    /// 256 KiB of values at a time).
    ///
    /// # Errors
    /// When the header (hierarchy and motion header) cannot be read.
    ///
    /// # Example
    /// ```
    /// let text = b"HIERARCHY ROOT A { OFFSET 0 0 0 CHANNELS 1 Xrotation }
    /// MOTION Frames: 2 Frame Time: 0.1
    /// 10
    /// 20
    /// ";
    /// let mut rdr = bvhkit::ReadOptions::new().frame_reader_slice(text)?;
    /// let mut frame = [0.0];
    /// assert!(rdr.read_frame(&mut frame)?);
    /// assert_eq!(frame, [10.0]);
    /// # Ok::<(), bvhkit::Error>(())
    /// ```
    pub fn frame_reader_slice<'a>(&self, bytes: &'a [u8]) -> Result<FrameReader<SliceSource<'a>>> {
        FrameReader::new(SliceSource::new(bytes), self.lenient, self.parallel)
    }
}

/// The memory a parse writes its values into, kept between parses
/// ([`ReadOptions::parse_with`]): a thread that parses many files one
/// after another hands each one's [`Bvh`] back when done with it
/// ([`ParseBuffers::recycle`]), and the next parse writes into the same
/// pages.
#[derive(Debug, Default)]
pub struct ParseBuffers {
    values: Vec<f64>,
}

impl ParseBuffers {
    /// No memory yet: the first parse allocates it.
    pub fn new() -> ParseBuffers {
        ParseBuffers::default()
    }

    /// Takes back the value buffer of `bvh` (a parse's, or any other) for
    /// the next [`ReadOptions::parse_with`], when it is larger than the
    /// one held (the smaller one is freed).
    pub fn recycle(&mut self, bvh: Bvh) {
        let (_, motion) = bvh.into_parts();
        let values = motion.into_values();
        if values.capacity() > self.values.capacity() {
            self.values = values;
        }
    }

    /// Bytes of value memory held for the next parse.
    pub fn capacity_bytes(&self) -> usize {
        self.values.capacity() * size_of::<f64>()
    }
}

/// Whether the motion lines are the frames although they do not all hold
/// one frame's values: there are exactly as many lines as `Frames:`
/// declares, and either every line holds the same wrong number of values,
/// or every line holds at least one frame's values (some with extra ones,
/// as hand-tracking exports write them) (`docs/format.md`). The in-memory
/// and the streaming reader both decide with this.
pub(crate) fn lines_are_frames(stats: &RowStats, declared: Option<u64>, channels: usize) -> bool {
    stats.irregular > 0
        && stats.rows >= 2
        && declared == Some(stats.rows)
        && (stats.uniform || stats.min_len >= channels as u64)
}

/// The warning for [`lines_are_frames`].
pub(crate) fn row_layout_message(stats: &RowStats, channels: usize) -> String {
    let k = stats.first_len as usize;
    if !stats.uniform {
        return format!(
            "motion lines hold {} to {} values but a frame has {channels} channels, and there \
             is one line per declared frame; read line by line, keeping the first {channels} \
             values of each ({} of {} lines, from this one, have other counts)",
            stats.min_len, stats.max_len, stats.irregular, stats.rows
        );
    }
    format!(
        "every motion line holds {k} values but a frame has {channels} channels; \
         read line by line, keeping the first {} values of each{}",
        k.min(channels),
        if k < channels {
            format!(" and setting the other {} channels to 0", channels - k)
        } else {
            String::new()
        }
    )
}

/// Decides how many frames the values make, and reports layout problems.
pub(crate) struct Checker<'a, 'w> {
    pub(crate) input: &'a [u8],
    pub(crate) lenient: bool,
    pub(crate) warnings: &'w mut Vec<Warning>,
}

impl Checker<'_, '_> {
    fn pos(&self, at: usize) -> Option<Position> {
        Some(Position::at(self.input, at))
    }

    fn problem(
        &mut self,
        at: usize,
        kind: WarningKind,
        message: String,
        error: ErrorKind,
    ) -> Result<()> {
        if self.lenient {
            let position = self.pos(at);
            self.warnings.push(Warning { position, kind, message });
            Ok(())
        } else {
            Err(Error::new(error, self.pos(at)))
        }
    }

    fn layout(
        &mut self,
        values: Vec<f64>,
        stats: &RowStats,
        channels: usize,
        frames_declared: Option<(u64, usize)>,
        data_start: usize,
    ) -> Result<(usize, Vec<f64>)> {
        let c = channels as u64;
        let declared = frames_declared.map(|(n, _)| n);
        let (n_frames, values) = if channels == 0 {
            if let Some((off, _)) = stats.last {
                return Err(Error::new(
                    ErrorKind::Syntax {
                        expected: "no motion values (the skeleton has no channels)".into(),
                        found: describe_token(
                            &self.input[off..crate::number::token_end(self.input, off)],
                        ),
                    },
                    self.pos(off),
                ));
            }
            // Every frame is an empty line: never trust `Frames:` beyond the
            // lines present, so `Frames: 1000000000000000` cannot hang a writer.
            let lines = stats.line_ends().saturating_sub(1);
            let n = match declared {
                Some(d) if d <= lines => d,
                Some(_) => lines,
                None => 0,
            };
            (n as usize, values)
        } else if stats.irregular == 0 {
            (stats.rows as usize, values)
        } else if lines_are_frames(stats, declared, channels) {
            let k = stats.first_len as usize;
            let (off, found, row) = stats.first_irregular.unwrap_or_default();
            let error = if stats.uniform {
                ErrorKind::FrameWidth { frame: 0, expected: c, found: k as u64 }
            } else {
                ErrorKind::FrameWidth { frame: row, expected: c, found }
            };
            self.problem(off, WarningKind::RowLayout, row_layout_message(stats, channels), error)?;
            let rows = stats.rows as usize;
            let mut out = vec![0.0; rows * channels];
            let lens = if stats.uniform {
                vec![k as u64; rows]
            } else {
                line_lengths(&self.input[data_start..])
            };
            let mut src = values.as_slice();
            for (dst, &len) in out.chunks_exact_mut(channels).zip(&lens) {
                let (line, rest) = src.split_at((len as usize).min(src.len()));
                let keep = line.len().min(channels);
                dst[..keep].copy_from_slice(&line[..keep]);
                src = rest;
            }
            (rows, out)
        } else {
            let rem = values.len() % channels;
            let last_is_only_problem = stats.irregular == 1
                && rem != 0
                && matches!((stats.first_irregular, stats.last), (Some((a, _, _)), Some((b, _)))
                    if a == b);
            if let Some((off, found, row)) = stats.first_irregular
                && !last_is_only_problem
            {
                self.problem(
                    off,
                    WarningKind::RowLayout,
                    format!(
                        "this motion line holds {found} values but a frame has {channels} channels; \
                         values were read as one stream, {channels} per frame"
                    ),
                    ErrorKind::FrameWidth { frame: row, expected: c, found },
                )?;
            }
            let mut values = values;
            if rem != 0 {
                let off = stats.last.map_or(self.input.len(), |(o, _)| o);
                self.problem(
                    off,
                    WarningKind::TruncatedFrame,
                    format!("the last frame has {rem} of {channels} values; it was dropped"),
                    ErrorKind::FrameWidth {
                        frame: (values.len() / channels) as u64,
                        expected: c,
                        found: rem as u64,
                    },
                )?;
                values.truncate(values.len() - rem);
            }
            (values.len() / channels, values)
        };
        if let Some((d, at)) = frames_declared
            && d != n_frames as u64
        {
            self.problem(
                at,
                WarningKind::FrameCount,
                format!("Frames: declares {d} frames but the file holds {n_frames}; the frames present are kept"),
                ErrorKind::FrameCount { declared: d, found: n_frames as u64 },
            )?;
        }
        Ok((n_frames, values))
    }
}
