//! `FrameReader`: constant-memory streaming of the motion, frame by frame.
//!
//! It streams over a `FrameSource` (sealed: any
//! `Read`, read 256 KiB at a time into a buffer that is only ever grown, never
//! cleared; or `SliceSource`, bytes already in memory such as a mapped file
//! (`ReadOptions::frame_reader_slice`), scanned in place a window of 1 MiB at a
//! time, never copied, each window cut at a line end and scanned in two halves
//! on rayon's pool (`scan::scan_window`: the second half with statistics of its
//! own, merged after the first; scanned again in order in the one case it
//! cannot decide alone, line lengths to record from an irregular line in the
//! first half)). `read_frames` hands out runs of frames in one copy (an error
//! after some frames comes at the next call). It applies the same layout
//! decisions as `parse/mod.rs` (`lines_are_frames` is shared); the one that
//! needs the whole motion (every line a frame of the wrong width, or of at
//! least one frame with extra values) is taken by reading ahead at most 16 MiB
//! of motion from the first line that does not hold one frame (lines before it
//! are handed out as they come). The hierarchy is read by resuming the header
//! state machine (`HeaderState`) at its last statement when more input arrives,
//! so a header costs linear work however many reads it takes; line and column
//! come from the scanner's line-end counts, not a second pass over the bytes.

use std::io::Read;

use self::private::Buffer;
use super::header::{HeaderParser, HeaderState, Stop};
use super::scan::{RowStats, scan_window};
use super::{lines_are_frames, row_layout_message};
use crate::error::{Error, ErrorKind, Position, Result, Warning, WarningKind, describe_token};
use crate::skeleton::Skeleton;

const CHUNK: usize = 256 * 1024;
/// How far a [`SliceSource`]'s window widens at a time: large enough that
/// scanning it on two threads pays.
const SLICE_STEP: usize = 2 * 1024 * 1024;
/// Largest hierarchy the streaming reader buffers.
const MAX_HEADER: usize = 64 * 1024 * 1024;
/// How much motion text a lenient reader holds back, when the first motion
/// line does not hold one frame, to see whether every line is a frame.
pub(crate) const LOOKAHEAD: usize = 16 * 1024 * 1024;

/// Where a [`FrameReader`] gets its bytes: any [`Read`] (read in chunks into
/// a buffer of the reader's own), or bytes already in memory
/// ([`SliceSource`], scanned in place, never copied).
///
/// The trait is sealed: it is implemented for every `R: Read` and for
/// [`SliceSource`], and nothing else.
pub trait FrameSource: private::Sealed {}

impl<R: Read> FrameSource for R {}
impl FrameSource for SliceSource<'_> {}

/// Bytes in memory (a file read whole or memory-mapped) as the source of a
/// [`FrameReader`] ([`ReadOptions::frame_reader_slice`]): the reader scans
/// them where they are, widening the window 2 MiB at a time, so the bytes are
/// never copied and the reader's own memory stays as small as with any
/// other source.
///
/// [`ReadOptions::frame_reader_slice`]: crate::ReadOptions::frame_reader_slice
#[derive(Debug)]
pub struct SliceSource<'a> {
    data: &'a [u8],
    /// The window not yet consumed: `data[start..end]`.
    start: usize,
    end: usize,
}

impl<'a> SliceSource<'a> {
    pub(crate) fn new(data: &'a [u8]) -> SliceSource<'a> {
        SliceSource { data, start: 0, end: 0 }
    }
}

mod private {
    use super::{CHUNK, Read, Result, SLICE_STEP, SliceSource};

    /// The bytes a [`super::FrameReader`] has read from a `Read` and not
    /// consumed yet: `bytes[..filled]`. The vector only grows (its tail is
    /// read into), so reading costs no clearing of memory.
    #[derive(Debug, Default)]
    pub struct Buffer {
        bytes: Vec<u8>,
        filled: usize,
    }

    /// The window of input a [`super::FrameReader`] scans: the bytes it
    /// holds unconsumed, which its [`Buffer`] holds for a `Read` and the
    /// source itself points at for bytes in memory.
    pub trait Sealed {
        /// Makes more bytes visible in the window, if there is any input
        /// left; returns how many were added (0 at the end).
        fn more(&mut self, buf: &mut Buffer) -> Result<usize>;
        /// The unconsumed bytes seen so far.
        fn window<'s>(&'s self, buf: &'s Buffer) -> &'s [u8];
        /// Drops the first `n` bytes of the window.
        fn consume(&mut self, buf: &mut Buffer, n: usize);
    }

    impl<R: Read> Sealed for R {
        /// Reads up to one chunk after the bytes held.
        fn more(&mut self, buf: &mut Buffer) -> Result<usize> {
            let want = buf.filled + CHUNK;
            if buf.bytes.len() < want {
                buf.bytes.resize(want, 0);
            }
            loop {
                match self.read(&mut buf.bytes[buf.filled..want]) {
                    Ok(n) => {
                        buf.filled += n;
                        return Ok(n);
                    }
                    Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                    Err(e) => return Err(e.into()),
                }
            }
        }

        fn window<'s>(&'s self, buf: &'s Buffer) -> &'s [u8] {
            &buf.bytes[..buf.filled]
        }

        fn consume(&mut self, buf: &mut Buffer, n: usize) {
            buf.bytes.copy_within(n..buf.filled, 0);
            buf.filled -= n;
        }
    }

    impl Sealed for SliceSource<'_> {
        /// Widens the window by up to one chunk.
        fn more(&mut self, _: &mut Buffer) -> Result<usize> {
            let end = self.data.len().min(self.end + SLICE_STEP);
            let added = end - self.end;
            self.end = end;
            Ok(added)
        }

        fn window<'s>(&'s self, _: &'s Buffer) -> &'s [u8] {
            &self.data[self.start..self.end]
        }

        fn consume(&mut self, _: &mut Buffer, n: usize) {
            self.start += n;
        }
    }
}

/// How the motion values make frames.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Layout {
    /// Not known yet (lenient reading): lines of one frame are handed out
    /// as they come; from the first line that does not hold one frame, the
    /// reader looks ahead (up to [`LOOKAHEAD`]) before deciding.
    Undecided,
    /// A stream of values, one frame per `n_channels` values.
    Stream,
    /// As a stream, but decided after looking ahead [`LOOKAHEAD`] bytes
    /// without reaching the end.
    StreamPastLookahead,
    /// Each line is a frame ([`lines_are_frames`]); `stats.lens` holds the
    /// value count of every line.
    Lines,
}

/// Reads a BVH text frame by frame into a caller-owned buffer, in constant
/// memory whatever the length of the motion.
///
/// The hierarchy and motion header are read when the reader is made; then
/// each [`FrameReader::read_frame`] fills one frame. Motion is read as a
/// stream of values, `n_channels` per frame, and repaired as
/// [`ReadOptions::parse`] repairs it. One repair needs the whole motion: when
/// there are as many lines as `Frames:` declares and every line holds the
/// same wrong number of values, or every line holds at least one frame's
/// values, some more, the lines are the frames. A lenient reader hands out
/// lines of exactly one frame as they come; from the first line that does
/// not hold one frame it reads ahead, up to 16 MiB of motion text, before
/// handing out more; a longer motion is read as a stream, with a warning
/// saying so if it then turns out to need the repair.
///
/// [`ReadOptions::parse`]: crate::ReadOptions::parse
///
/// # Example
/// ```
/// let text = "HIERARCHY ROOT A { OFFSET 0 0 0 CHANNELS 2 Xposition Zrotation }
/// MOTION
/// Frames: 2
/// Frame Time: 0.5
/// 1 2
/// 3 4
/// ";
/// let mut rdr = bvhkit::ReadOptions::new().frame_reader(text.as_bytes())?;
/// let mut frame = vec![0.0; rdr.skeleton().n_channels()];
/// let mut sum = 0.0;
/// while rdr.read_frame(&mut frame)? {
///     sum += frame[1];
/// }
/// assert_eq!(sum, 6.0);
/// # Ok::<(), bvhkit::Error>(())
/// ```
#[derive(Debug)]
pub struct FrameReader<R> {
    rdr: R,
    lenient: bool,
    /// Whether a large window may be scanned on two threads.
    parallel: bool,
    skeleton: Skeleton,
    frame_time: f64,
    frames_declared: Option<u64>,
    frames_declared_pos: Option<Position>,
    warnings: Vec<Warning>,
    /// Unscanned bytes read from a `Read` (see [`FrameSource`]); the
    /// window's first byte is byte `buf_base` of the input.
    buf: Buffer,
    buf_base: usize,
    eof: bool,
    /// Scanned values not yet handed out, from `pending_start`.
    pending: Vec<f64>,
    /// The second half of a window scanned on two threads, until it joins
    /// `pending`.
    spare: Vec<f64>,
    pending_start: usize,
    stats: RowStats,
    frames_read: u64,
    /// Frames left to hand out when there are no channels.
    empty_frames_left: Option<u64>,
    done: bool,
    /// Position tracking over the bytes already dropped from `buf`.
    line: u64,
    column: u64,
    last_cr: bool,
    /// `stats`' count of line ends when `line` was last moved.
    ends_counted: u64,
    first_irregular_pos: Option<Position>,
    last_row_pos: Option<Position>,
    /// The start (absolute offset) and position of the line still open
    /// at the end of the last piece scanned: when a piece ends inside a
    /// line (a window of a mapped file cut before the last line's end),
    /// its start is consumed before the line is counted as a row, and the
    /// row's position comes from here.
    open_line_pos: Option<(usize, Position)>,
    layout: Layout,
    /// Offset of the first motion byte not yet handed out in a frame, as
    /// far as an undecided layout knows (the lookahead counts from here).
    held_from: usize,
    /// An error met by [`FrameReader::read_frames`] after it had frames to
    /// hand out: returned by the next call.
    deferred: Option<Error>,
}

impl<R: FrameSource> FrameReader<R> {
    pub(crate) fn new(mut rdr: R, lenient: bool, parallel: bool) -> Result<FrameReader<R>> {
        let mut buf = Buffer::default();
        let mut eof = false;
        let mut state = None;
        let header = loop {
            // Read at least a chunk, and at least as much as the parse will
            // read again from its checkpoint: the bytes read twice then
            // never outnumber the bytes of the header.
            let resume_at = state.as_ref().map_or(0, HeaderState::checkpoint);
            let have = rdr.window(&buf).len();
            let want = have + (have - resume_at.min(have));
            while !eof {
                let got = rdr.more(&mut buf)?;
                eof = got == 0;
                let have = rdr.window(&buf).len();
                if have >= want || have > MAX_HEADER {
                    break;
                }
            }
            let window = rdr.window(&buf);
            let mut parser = match state.take() {
                None => HeaderParser::new(window, eof, lenient),
                Some(st) => HeaderParser::resume(window, eof, st),
            };
            match parser.parse() {
                Ok(h) => break h,
                Err(Stop::Fatal(e)) => return Err(e),
                Err(Stop::NeedMore) if window.len() > MAX_HEADER => {
                    return Err(Error::new(
                        ErrorKind::Hierarchy {
                            message: format!(
                                "the hierarchy is larger than {} MiB",
                                MAX_HEADER >> 20
                            ),
                        },
                        Some(Position::at(window, window.len())),
                    ));
                }
                Err(Stop::NeedMore) => state = Some(parser.into_state()),
            }
        };
        let window = rdr.window(&buf);
        let start = Position::at(window, header.data_start);
        let frames_declared_pos = header.frames_declared.map(|(_, at)| Position::at(window, at));
        let last_cr = header.data_start > 0 && window[header.data_start - 1] == b'\r';
        rdr.consume(&mut buf, header.data_start);
        Ok(FrameReader {
            rdr,
            lenient,
            parallel,
            frame_time: header.frame_time,
            frames_declared: header.frames_declared.map(|(n, _)| n),
            frames_declared_pos,
            skeleton: header.skeleton,
            warnings: header.warnings,
            buf,
            buf_base: header.data_start,
            eof,
            pending: Vec::new(),
            spare: Vec::new(),
            pending_start: 0,
            // Line lengths are kept while a lenient reader decides the layout.
            stats: {
                let mut stats = RowStats::default();
                stats.lens = lenient.then(Vec::new);
                stats
            },
            frames_read: 0,
            empty_frames_left: None,
            done: false,
            line: start.line,
            column: start.column,
            last_cr,
            ends_counted: 0,
            first_irregular_pos: None,
            last_row_pos: None,
            open_line_pos: None,
            layout: if lenient { Layout::Undecided } else { Layout::Stream },
            held_from: header.data_start,
            deferred: None,
        })
    }

    /// The skeleton(s) read from the header.
    pub fn skeleton(&self) -> &Skeleton {
        &self.skeleton
    }

    /// Seconds per frame (1/30 when the file has none and reading is lenient).
    pub fn frame_time(&self) -> f64 {
        self.frame_time
    }

    /// The frame count the file declares, if it declares one.
    pub fn frames_declared(&self) -> Option<u64> {
        self.frames_declared
    }

    /// How many bytes of the input the reader has consumed: it never looks
    /// at the input before this offset again (their values are parsed, or
    /// handed out). A caller streaming bytes in memory may release the
    /// memory behind it (a mapped file's pages).
    pub fn bytes_consumed(&self) -> usize {
        self.buf_base
    }

    /// Frames handed out so far.
    pub fn frames_read(&self) -> u64 {
        self.frames_read
    }

    /// Warnings so far (the last ones arrive when `read_frame` returns `false`).
    pub fn warnings(&self) -> &[Warning] {
        &self.warnings
    }

    /// Takes the warnings gathered so far.
    pub fn take_warnings(&mut self) -> Vec<Warning> {
        std::mem::take(&mut self.warnings)
    }

    /// Fills `frame` with the next frame's values; `false` at the end.
    ///
    /// # Errors
    /// On I/O errors and bad values; in strict mode also on layout problems.
    ///
    /// # Panics
    /// When `frame.len()` is not the skeleton's channel count.
    pub fn read_frame(&mut self, frame: &mut [f64]) -> Result<bool> {
        let c = self.skeleton.n_channels();
        assert_eq!(frame.len(), c, "frame buffer must hold one value per channel");
        if c == 0 {
            return self.next_empty_frame();
        }
        loop {
            match self.layout {
                Layout::Lines => return Ok(self.next_line(frame)),
                Layout::Stream | Layout::StreamPastLookahead => {
                    if self.pending.len() - self.pending_start >= c {
                        let values = &self.pending[self.pending_start..self.pending_start + c];
                        frame.copy_from_slice(values);
                        self.pending_start += c;
                        self.frames_read += 1;
                        return Ok(true);
                    }
                }
                Layout::Undecided => {
                    // Lines of exactly one frame read the same whichever
                    // way the layout is decided: hand them out.
                    if self.frames_read < self.regular_rows() {
                        let at = self.pending_start;
                        frame.copy_from_slice(&self.pending[at..at + c]);
                        self.pending_start += c;
                        self.frames_read += 1;
                        if self.frames_read == self.stats.rows
                            && let Some((start, _)) = self.stats.last
                        {
                            self.held_from = start;
                        }
                        return Ok(true);
                    }
                    let st = &self.stats;
                    if st.irregular > 0 && !(st.uniform || st.min_len >= c as u64) {
                        // Lines of other widths, one shorter than a frame:
                        // not every line is a frame.
                        self.layout = Layout::Stream;
                        self.stats.lens = None;
                        continue;
                    }
                    if self.buf_base - self.held_from > LOOKAHEAD {
                        self.layout = Layout::StreamPastLookahead;
                        self.stats.lens = None;
                        continue;
                    }
                }
            }
            if self.done {
                return Ok(false);
            }
            if self.pending_start > 0 {
                self.pending.drain(..self.pending_start);
                self.pending_start = 0;
            }
            if self.eof && self.rdr.window(&self.buf).is_empty() {
                if self.layout == Layout::Undecided {
                    self.layout = Layout::Stream;
                    if lines_are_frames(&self.stats, self.frames_declared, c) {
                        self.warnings.push(Warning {
                            position: self.first_irregular_pos,
                            kind: WarningKind::RowLayout,
                            message: row_layout_message(&self.stats, c),
                        });
                        self.layout = Layout::Lines;
                        self.done = true;
                    } else {
                        self.stats.lens = None;
                    }
                    continue;
                }
                self.finish()?;
                continue;
            }
            if !self.eof {
                let got = self.rdr.more(&mut self.buf)?;
                self.eof = got == 0;
                if !self.eof && self.rdr.window(&self.buf).len() < CHUNK / 2 {
                    continue;
                }
            }
            self.scan_buffer(c)?;
        }
    }

    /// Appends up to `max` frames' values to `out` (frame after frame, one
    /// frame's values per channel) and returns how many frames it added; 0
    /// at the end (or when `max` is 0). The frames are those
    /// [`FrameReader::read_frame`] hands out, but runs of them are copied
    /// in one piece.
    ///
    /// # Errors
    /// As [`FrameReader::read_frame`]. Frames before a bad one are handed
    /// out first: a call that meets an error after adding frames returns
    /// them, and the next call returns the error.
    ///
    /// # Example
    /// ```
    /// let text = "HIERARCHY ROOT A { OFFSET 0 0 0 CHANNELS 2 Xposition Zrotation }
    /// MOTION
    /// Frames: 3
    /// Frame Time: 0.5
    /// 1 2
    /// 3 4
    /// 5 6
    /// ";
    /// let mut rdr = bvhkit::ReadOptions::new().frame_reader_slice(text.as_bytes())?;
    /// let mut batch = Vec::new();
    /// assert_eq!(rdr.read_frames(&mut batch, 2)?, 2);
    /// assert_eq!(rdr.read_frames(&mut batch, 2)?, 1);
    /// assert_eq!(rdr.read_frames(&mut batch, 2)?, 0);
    /// assert_eq!(batch, [1.0, 2.0, 3.0, 4.0, 5.0, 6.0]);
    /// # Ok::<(), bvhkit::Error>(())
    /// ```
    pub fn read_frames(&mut self, out: &mut Vec<f64>, max: usize) -> Result<usize> {
        self.read_frames_in(out, max, false)
    }

    /// [`FrameReader::read_frames`], but returns as soon as it has added
    /// frames and would have to scan more input for the next one: the
    /// frames ready (at most `max`), scanning at most one more window of
    /// input when none are. Called with an empty `out`, the buffer those
    /// frames were parsed into becomes `out` when all of them fit in `max`
    /// (they are not copied), so a caller that hands each window's frames
    /// on as a batch costs no copy of the values.
    ///
    /// # Errors
    /// As [`FrameReader::read_frames`].
    pub fn read_window(&mut self, out: &mut Vec<f64>, max: usize) -> Result<usize> {
        self.read_frames_in(out, max, true)
    }

    fn read_frames_in(
        &mut self,
        out: &mut Vec<f64>,
        max: usize,
        one_window: bool,
    ) -> Result<usize> {
        if let Some(e) = self.deferred.take() {
            return Err(e);
        }
        let c = self.skeleton.n_channels();
        let mut n = 0;
        while n < max {
            // Frames that need no decision: every whole frame of a stream,
            // and, while the layout is undecided, the lines of one frame
            // before the first that is not (as `read_frame` hands them out).
            let ready = match self.layout {
                _ if c == 0 => 0,
                Layout::Stream | Layout::StreamPastLookahead => {
                    (self.pending.len() - self.pending_start) / c
                }
                Layout::Undecided => {
                    usize::try_from(self.regular_rows().saturating_sub(self.frames_read))
                        .unwrap_or(usize::MAX)
                }
                Layout::Lines => 0,
            };
            let take = ready.min(max - n);
            if take > 0 {
                let at = self.pending_start;
                if take == ready
                    && n == 1
                    && at == c
                    && out.len() == c
                    && same_bits(out, &self.pending[..c])
                {
                    // The frame just handed out was the first of a freshly
                    // scanned window, and every frame ready goes too: the
                    // window's values become `out` (no copy) and only the
                    // values after those frames stay pending.
                    let end = at + take * c;
                    std::mem::swap(out, &mut self.pending);
                    self.pending.clear();
                    self.pending.extend_from_slice(&out[end..]);
                    out.truncate(end);
                    self.pending_start = 0;
                } else {
                    out.extend_from_slice(&self.pending[at..at + take * c]);
                    self.pending_start += take * c;
                }
                self.frames_read += take as u64;
                n += take;
                if self.layout == Layout::Undecided
                    && self.frames_read == self.stats.rows
                    && let Some((start, _)) = self.stats.last
                {
                    self.held_from = start;
                }
                continue;
            }
            // The next frame needs more input (or a decision).
            if one_window && n > 0 {
                break;
            }
            let at = out.len();
            out.resize(at + c, 0.0);
            match self.read_frame(&mut out[at..]) {
                Ok(true) => n += 1,
                Ok(false) => {
                    out.truncate(at);
                    break;
                }
                Err(e) => {
                    out.truncate(at);
                    if n == 0 {
                        return Err(e);
                    }
                    self.deferred = Some(e);
                    break;
                }
            }
        }
        Ok(n)
    }

    fn scan_buffer(&mut self, c: usize) -> Result<()> {
        let before_irregular = self.stats.first_irregular.is_some();
        let window = self.rdr.window(&self.buf);
        let used = scan_window(
            window,
            self.buf_base,
            c as u64,
            &mut self.pending,
            &mut self.spare,
            &mut self.stats,
            self.eof,
            self.parallel,
        )
        .map_err(|bad| {
            let tok = window[bad.start - self.buf_base..bad.end - self.buf_base].to_vec();
            let pos = self.track_to(bad.start);
            Error::new(
                ErrorKind::BadNumber { context: "motion value", found: describe_token(&tok) },
                Some(pos),
            )
        })?;
        // With no channels, any value is an error: report the first one while
        // its bytes are still in the buffer (its line may not have ended yet).
        if c == 0
            && !self.pending.is_empty()
            && let Some(off) = self
                .stats
                .first_irregular
                .map(|t| t.0)
                .or(self.stats.open_line_start())
                .filter(|&o| o >= self.buf_base)
        {
            let rel = off - self.buf_base;
            let window = self.rdr.window(&self.buf);
            let tok = window[rel..crate::number::token_end(window, rel)].to_vec();
            return Err(Error::new(
                ErrorKind::Syntax {
                    expected: "no motion values (the skeleton has no channels)".into(),
                    found: describe_token(&tok),
                },
                Some(self.track_to(off)),
            ));
        }
        // Record positions of the rows the checks may need, while their bytes are here.
        let new_irregular = !before_irregular && self.stats.first_irregular.is_some();
        let targets = [
            if new_irregular { self.stats.first_irregular.map(|t| t.0) } else { None },
            self.stats.last.map(|t| t.0).filter(|&o| o >= self.buf_base),
            self.stats.open_line_start().filter(|&o| o >= self.buf_base),
        ];
        let mut found = [None, None, None];
        self.advance(used, &targets, &mut found);
        // The line open at the end of the piece before, if a row that
        // started there ended in this piece.
        let open_before = self.open_line_pos;
        if let (Some(o), Some(p)) = (targets[2], found[2]) {
            self.open_line_pos = Some((o, p));
        }
        if let Some(p) = found[0] {
            self.first_irregular_pos = Some(p);
        } else if new_irregular
            && let (Some((start, _, _)), Some((open, p))) =
                (self.stats.first_irregular, open_before)
            && start == open
        {
            self.first_irregular_pos = Some(p);
        }
        if let Some(p) = found[1] {
            self.last_row_pos = Some(p);
        } else if let (Some((start, _)), Some((open, p))) = (self.stats.last, open_before)
            && start == open
        {
            // The last row began in an earlier piece, as the line then open.
            self.last_row_pos = Some(p);
        }
        if new_irregular && !self.lenient {
            let (_, len, row) = self.stats.first_irregular.unwrap_or_default();
            return Err(Error::new(
                ErrorKind::FrameWidth { frame: row, expected: c as u64, found: len },
                self.first_irregular_pos,
            ));
        }
        Ok(())
    }

    /// End-of-input checks: cut last frame, layout, frame count.
    fn finish(&mut self) -> Result<()> {
        self.done = true;
        let c = self.skeleton.n_channels();
        let rem = self.pending.len() - self.pending_start;
        let st = &self.stats;
        let last_is_only_problem = st.irregular == 1
            && rem != 0
            && matches!((st.first_irregular, st.last), (Some((a, _, _)), Some((b, _))) if a == b);
        if let Some((_, found, _)) = st.first_irregular
            && !last_is_only_problem
        {
            let mut message = format!(
                "this motion line holds {found} values but a frame has {c} channels; \
                 values were read as one stream, {c} per frame"
            );
            if self.layout == Layout::StreamPastLookahead
                && lines_are_frames(st, self.frames_declared, c)
            {
                let holds = if st.uniform {
                    format!("every line holds {found} values")
                } else {
                    format!("every line holds {} to {} values", st.min_len, st.max_len)
                };
                message.push_str(&format!(
                    " ({holds}, one line per declared frame: reading the whole file in memory \
                     reads it line by line; streaming decides within the first {} MiB of motion)",
                    LOOKAHEAD >> 20
                ));
            }
            self.warnings.push(Warning {
                position: self.first_irregular_pos,
                kind: WarningKind::RowLayout,
                message,
            });
        }
        if rem != 0 {
            let frame = self.frames_read;
            if !self.lenient {
                return Err(Error::new(
                    ErrorKind::FrameWidth { frame, expected: c as u64, found: rem as u64 },
                    self.last_row_pos,
                ));
            }
            self.warnings.push(Warning {
                position: self.last_row_pos,
                kind: WarningKind::TruncatedFrame,
                message: format!("the last frame has {rem} of {c} values; it was dropped"),
            });
            self.pending.clear();
            self.pending_start = 0;
        }
        self.check_count(self.frames_read)
    }

    fn check_count(&mut self, found: u64) -> Result<()> {
        if let Some(d) = self.frames_declared
            && d != found
        {
            if !self.lenient {
                return Err(Error::new(
                    ErrorKind::FrameCount { declared: d, found },
                    self.frames_declared_pos,
                ));
            }
            self.warnings.push(Warning {
                position: self.frames_declared_pos,
                kind: WarningKind::FrameCount,
                message: format!(
                    "Frames: declares {d} frames but the file holds {found}; the frames present are kept"
                ),
            });
        }
        Ok(())
    }

    /// Hands out the next line as a frame: its first values, then zeros
    /// for channels the line does not reach.
    fn next_line(&mut self, frame: &mut [f64]) -> bool {
        let row = self.frames_read;
        let first = self.regular_rows();
        let len = if row < first {
            frame.len()
        } else {
            let lens = self.stats.lens.as_deref().unwrap_or_default();
            let Some(&len) = lens.get((row - first) as usize) else { return false };
            len as usize
        };
        let Some(line) = self.pending.get(self.pending_start..self.pending_start + len) else {
            return false;
        };
        let keep = len.min(frame.len());
        frame[..keep].copy_from_slice(&line[..keep]);
        frame[keep..].fill(0.0);
        self.pending_start += len;
        self.frames_read += 1;
        true
    }

    /// Motion lines before the first that does not hold one frame (all of
    /// them while there is none).
    fn regular_rows(&self) -> u64 {
        self.stats.first_irregular.map_or(self.stats.rows, |(_, _, row)| row)
    }

    fn next_empty_frame(&mut self) -> Result<bool> {
        if self.empty_frames_left.is_none() {
            // Count the lines left: a frame with no channels is an empty line.
            loop {
                if !self.rdr.window(&self.buf).is_empty() {
                    self.scan_buffer(0)?;
                }
                if self.eof && self.rdr.window(&self.buf).is_empty() {
                    break;
                }
                let got = self.rdr.more(&mut self.buf)?;
                self.eof = got == 0;
            }
            let lines = self.stats.line_ends().saturating_sub(1);
            let n = self.frames_declared.map_or(0, |d| d.min(lines));
            self.check_count(n)?;
            self.empty_frames_left = Some(n);
        }
        match self.empty_frames_left {
            Some(n) if n > 0 => {
                self.empty_frames_left = Some(n - 1);
                self.frames_read += 1;
                Ok(true)
            }
            _ => Ok(false),
        }
    }

    /// Drops `used` scanned bytes, keeping line and column up to date and
    /// noting the positions of the absolute offsets in `targets`, which
    /// are the starts of motion lines.
    ///
    /// The scan has counted the line ends in these bytes (`stats`): only
    /// the last line of the piece, and the bytes after a target, are
    /// looked at again, so a piece costs little more than its last line.
    fn advance(
        &mut self,
        used: usize,
        targets: &[Option<usize>; 3],
        found: &mut [Option<Position>; 3],
    ) {
        let piece = &self.rdr.window(&self.buf)[..used];
        let Some(&last) = piece.last() else { return };
        let ends_now = self.stats.lf + self.stats.cr - self.stats.crlf;
        // A `\r\n` split between the previous piece and this one counts
        // once (the scan saw only the `\n`).
        let split_pair = u64::from(self.last_cr && piece[0] == b'\n');
        self.line += ends_now - self.ends_counted - split_pair;
        self.ends_counted = ends_now;
        let column_before = self.column;
        self.column = match piece.iter().rposition(|&x| x == b'\n' || x == b'\r') {
            Some(i) => 1 + chars(&piece[i + 1..]),
            None => self.column + chars(piece),
        };
        self.last_cr = last == b'\r';
        for (t, f) in targets.iter().zip(found.iter_mut()) {
            let Some(t) = t.filter(|&t| t >= self.buf_base && t < self.buf_base + used) else {
                continue;
            };
            let rel = t - self.buf_base;
            // `piece[rel]` starts a token, so no `\r\n` pair is cut at `rel`.
            let line = self.line - line_ends(&piece[rel..]);
            let column = match piece[..rel].iter().rposition(|&x| x == b'\n' || x == b'\r') {
                Some(i) => 1 + chars(&piece[i + 1..rel]),
                None => column_before + chars(&piece[..rel]),
            };
            *f = Some(Position { line, column, byte: t as u64 });
        }
        self.rdr.consume(&mut self.buf, used);
        self.buf_base += used;
    }

    /// The position of absolute offset `abs` (which must be in `buf`).
    fn track_to(&self, abs: usize) -> Position {
        let (mut line, mut column, mut last_cr) = (self.line, self.column, self.last_cr);
        for &b in &self.rdr.window(&self.buf)[..abs - self.buf_base] {
            match b {
                b'\n' if last_cr => last_cr = false,
                b'\n' | b'\r' => {
                    line += 1;
                    column = 1;
                    last_cr = b == b'\r';
                }
                _ => {
                    last_cr = false;
                    if b & 0xC0 != 0x80 {
                        column += 1;
                    }
                }
            }
        }
        Position { line, column, byte: abs as u64 }
    }
}

/// Whether `a` and `b` hold the same values, bit for bit.
fn same_bits(a: &[f64], b: &[f64]) -> bool {
    a.len() == b.len() && a.iter().zip(b).all(|(x, y)| x.to_bits() == y.to_bits())
}

/// Characters in `b`: bytes that do not continue a UTF-8 sequence.
fn chars(b: &[u8]) -> u64 {
    b.iter().map(|&x| u64::from(x & 0xC0 != 0x80)).sum()
}

/// Line ends in `b`: `\n`, `\r` and `\r\n`, each one.
fn line_ends(b: &[u8]) -> u64 {
    let mut n = 0;
    let mut cr = false;
    for &x in b {
        n += u64::from(x == b'\r' || (x == b'\n' && !cr));
        cr = x == b'\r';
    }
    n
}

#[cfg(test)]
mod tests {
    use super::super::header::SCANNED;
    use crate::ReadOptions;

    /// A reader that hands out at most `n` bytes per call.
    struct Trickle<'a>(&'a [u8], usize);

    impl std::io::Read for Trickle<'_> {
        fn read(&mut self, out: &mut [u8]) -> std::io::Result<usize> {
            let n = self.0.len().min(self.1).min(out.len());
            out[..n].copy_from_slice(&self.0[..n]);
            self.0 = &self.0[n..];
            Ok(n)
        }
    }

    /// Everything a stream gives: the skeleton, every value's bits and
    /// the warnings, or the error.
    fn stream<R: std::io::Read>(rdr: R, lenient: bool) -> String {
        let mut r = match ReadOptions::new().lenient(lenient).frame_reader(rdr) {
            Ok(r) => r,
            Err(e) => return format!("header error: {e}"),
        };
        let mut out = format!("{:?}\n", r.skeleton());
        let mut frame = vec![0.0; r.skeleton().n_channels()];
        loop {
            match r.read_frame(&mut frame) {
                Ok(true) => out.extend(frame.iter().map(|v| format!("{:x} ", v.to_bits()))),
                Ok(false) => break,
                Err(e) => {
                    out.push_str(&format!("error: {e}\n"));
                    break;
                }
            }
        }
        for w in r.warnings() {
            out.push_str(&format!("warning: {w}\n"));
        }
        out
    }

    /// `depth` joints, each the child of the one before.
    fn deep(depth: usize, frames: usize) -> Vec<u8> {
        let mut s = String::from("HIERARCHY\n");
        for i in 0..depth {
            let kw = if i == 0 { "ROOT" } else { "JOINT" };
            s.push_str(&format!(
                "{kw} j{i}\n{{\nOFFSET {i} 0.5 -1\nCHANNELS 3 Zrotation Xrotation Yrotation\n"
            ));
        }
        s.push_str("End Site\n{\nOFFSET 0 1 0\n}\n");
        for _ in 0..depth {
            s.push_str("}\n");
        }
        s.push_str(&format!("MOTION\nFrames: {frames}\nFrame Time: 0.04\n"));
        for f in 0..frames {
            let row: Vec<String> = (0..3 * depth).map(|k| format!("{}.25", (k + f) % 90)).collect();
            s.push_str(&row.join(" "));
            s.push('\n');
        }
        s.into_bytes()
    }

    /// What a reader over `text` gives: frames (as bits), then the
    /// warnings, or the error. Through `frame_reader` in reads of `step`
    /// bytes, frame by frame, or (`step == 0`) through `frame_reader_slice`
    /// in batches of `batch` frames, parallel or not.
    fn outcome(text: &[u8], lenient: bool, step: usize, batch: usize, parallel: bool) -> Outcome {
        let mut opts = ReadOptions::new();
        opts.lenient(lenient).parallel(parallel);
        let mut frames = Vec::new();
        let end = |warnings: &[crate::Warning], e: Option<crate::Error>| {
            let mut w: Vec<String> = warnings.iter().map(|w| w.to_string()).collect();
            w.extend(e.map(|e| format!("error: {e}")));
            w
        };
        if step > 0 {
            let mut r = match opts.frame_reader(Trickle(text, step)) {
                Ok(r) => r,
                Err(e) => return Outcome { frames, end: vec![format!("header: {e}")] },
            };
            let mut frame = vec![0.0; r.skeleton().n_channels()];
            loop {
                match r.read_frame(&mut frame) {
                    Ok(true) => frames.extend(frame.iter().map(|v| v.to_bits())),
                    Ok(false) => return Outcome { frames, end: end(r.warnings(), None) },
                    Err(e) => return Outcome { frames, end: end(r.warnings(), Some(e)) },
                }
            }
        }
        let mut r = match opts.frame_reader_slice(text) {
            Ok(r) => r,
            Err(e) => return Outcome { frames, end: vec![format!("header: {e}")] },
        };
        let mut values = Vec::new();
        loop {
            match r.read_frames(&mut values, batch) {
                Ok(0) => break,
                Ok(_) => {}
                Err(e) => {
                    frames.extend(values.iter().map(|v| v.to_bits()));
                    return Outcome { frames, end: end(r.warnings(), Some(e)) };
                }
            }
        }
        frames.extend(values.iter().map(|v| v.to_bits()));
        Outcome { frames, end: end(r.warnings(), None) }
    }

    /// [`outcome`] of a mapped text read by [`FrameReader::read_window`],
    /// up to `max` frames at a time, each call into an empty buffer (where
    /// the window's own buffer is handed over when it all fits) that is
    /// then appended to the frames so far.
    fn outcome_windows(text: &[u8], lenient: bool, max: usize) -> (Outcome, usize) {
        let mut opts = ReadOptions::new();
        opts.lenient(lenient);
        let mut r = match opts.frame_reader_slice(text) {
            Ok(r) => r,
            Err(e) => {
                return (Outcome { frames: Vec::new(), end: vec![format!("header: {e}")] }, 0);
            }
        };
        let mut frames = Vec::new();
        let mut window = Vec::with_capacity(1);
        // Calls that handed a buffer over (`window` came back another one).
        let mut handed_over = 0;
        let error = loop {
            window.clear();
            let before = window.as_ptr();
            let got = r.read_window(&mut window, max);
            handed_over += usize::from(window.as_ptr() != before);
            frames.extend(window.iter().map(|v| v.to_bits()));
            match got {
                Ok(0) => break None,
                Ok(k) => assert_eq!(k * r.skeleton().n_channels(), window.len()),
                Err(e) => break Some(e),
            }
        };
        let mut end: Vec<String> = r.warnings().iter().map(|w| w.to_string()).collect();
        end.extend(error.map(|e| format!("error: {e}")));
        (Outcome { frames, end }, handed_over)
    }

    #[derive(Debug, PartialEq)]
    struct Outcome {
        frames: Vec<u64>,
        end: Vec<String>,
    }

    /// Asserts that two outcomes agree: the same warnings or error, and the
    /// same frames, except that before an error one reader may have handed
    /// out fewer frames than the other (each stops at the window it was
    /// scanning), so the shorter is a prefix of the longer.
    #[track_caller]
    fn assert_agree(a: &Outcome, b: &Outcome, what: &str) {
        assert_eq!(a.end, b.end, "{what}");
        let error = a.end.last().is_some_and(|l| l.starts_with("error"));
        if error {
            let n = a.frames.len().min(b.frames.len());
            assert!(a.frames[..n] == b.frames[..n], "{what}: frames differ");
        } else {
            assert_eq!(a.frames.len(), b.frames.len(), "{what}: frame counts");
            assert!(a.frames == b.frames, "{what}: frames differ");
        }
    }

    /// `lines` lines of motion for 3 channels, about 3 MB: several
    /// windows, each scanned in two halves; `edit` changes line `k`.
    fn big(lines: usize, eol: &str, edit: impl Fn(usize) -> Option<String>) -> Vec<u8> {
        let mut s = format!(
            "HIERARCHY{eol}ROOT A{eol}{{{eol}OFFSET 0 0 0{eol}CHANNELS 3 Xposition Zrotation Yrotation{eol}}}{eol}MOTION{eol}Frames: {lines}{eol}Frame Time: 0.01{eol}"
        );
        for k in 0..lines {
            match edit(k) {
                Some(line) => s.push_str(&line),
                None => s.push_str(&format!("{k}.25 -{}.5 {}", k % 360, k % 7)),
            }
            s.push_str(eol);
        }
        s.into_bytes()
    }

    /// The reader that scans bytes in place, with large windows scanned in
    /// two halves on two threads, gives what the reader of a `Read` gives:
    /// the same frames, warnings and errors (at the same line and column),
    /// whether the problem sits in a window's first half, its second half
    /// or at the cut, in batches of any size.
    #[test]
    fn scanning_in_place_in_two_halves_changes_nothing() {
        let lines = 150_000;
        // A line at about every tenth of the file, and around the first
        // window's middle and end (windows are about 2 MiB; lines about 20
        // bytes).
        let spots =
            [lines * 3 / 10 + 3, 52_000, 52_600, 104_000, 105_000, lines * 7 / 10, lines - 1];
        type Edit = Box<dyn Fn(usize, usize) -> Option<String>>;
        let cases: Vec<(&str, Edit)> = vec![
            ("regular", Box::new(|_, _| None)),
            ("one long line", Box::new(|k, at| (k == at).then(|| "1 2 3 4".to_string()))),
            ("one short line", Box::new(|k, at| (k == at).then(|| "1 2".to_string()))),
            ("a bad token", Box::new(|k, at| (k == at).then(|| "1 2x 3".to_string()))),
            ("a control byte", Box::new(|k, at| (k == at).then(|| "1 \x01 3".to_string()))),
            ("a frame over two lines", Box::new(|k, at| (k == at).then(|| "1 2\n3".to_string()))),
            // Every line from here on holds 2 values: lines are frames only
            // if there are as many as declared, which there are.
            ("short lines from here", Box::new(|k, at| (k >= at).then(|| format!("{k} 1")))),
            ("an empty line", Box::new(|k, at| (k == at).then(String::new))),
        ];
        let mut checked = 0;
        for eol in ["\n", "\r\n"] {
            for (name, edit) in &cases {
                let at_list = if *name == "regular" { &spots[..1] } else { &spots[..] };
                for &at in at_list {
                    let text = big(lines, eol, |k| edit(k, at));
                    for lenient in [false, true] {
                        let what = format!("{name} at line {at}, {eol:?}, lenient {lenient}");
                        let read = outcome(&text, lenient, 256 * 1024, 0, true);
                        for (batch, parallel) in [(4096, true), (1, false)] {
                            let sliced = outcome(&text, lenient, 0, batch, parallel);
                            assert_agree(&read, &sliced, &format!("{what}, batch {batch}"));
                        }
                        // Window by window: every window handed over whole,
                        // or a few frames at a time.
                        for max in [1 << 30, 7] {
                            let (windows, handed_over) = outcome_windows(&text, lenient, max);
                            assert_agree(&read, &windows, &format!("{what}, windows of {max}"));
                            if *name == "regular" && max > lines {
                                // The window's own buffer, not a copy.
                                assert!(handed_over >= 1, "{what}: {handed_over} handed over");
                            }
                        }
                        checked += 1;
                    }
                }
            }
        }
        assert!(checked > 100, "{checked}");
    }

    /// A mapped text of several windows read window by window: each
    /// window's buffer is handed over (no copy), and the frames are those
    /// of the reader of a `Read`.
    #[test]
    fn windows_are_handed_over_whole() {
        let lines = 500_000;
        let text = big(lines, "\n", |_| None);
        for lenient in [false, true] {
            let read = outcome(&text, lenient, 256 * 1024, 0, true);
            let (windows, handed_over) = outcome_windows(&text, lenient, 1 << 30);
            assert_agree(&read, &windows, &format!("lenient {lenient}"));
            assert_eq!(windows.frames.len(), 3 * lines);
            // About 9 MB in windows of 2 MiB.
            assert!(handed_over >= 4, "lenient {lenient}: {handed_over} handed over");
        }
    }

    #[test]
    fn a_deep_header_streams_in_linear_work() {
        let text = deep(100_000, 2);
        let header_len = text.windows(6).position(|w| w == b"MOTION").unwrap();
        let (bvh, _) = ReadOptions::new().parse(&text).unwrap();
        SCANNED.with(|c| c.set(0));
        let mut r = ReadOptions::new().frame_reader(&text[..]).unwrap();
        let scanned = SCANNED.with(|c| c.get());
        assert_eq!(r.skeleton(), bvh.skeleton());
        assert_eq!(r.skeleton().len(), 100_001);
        // The header arrives in 256 KiB reads (about 30 of them); reading
        // it again from the start each time would scan it about 15 times.
        assert!(
            scanned <= 3 * header_len,
            "{scanned} bytes scanned for a header of {header_len} bytes"
        );
        let mut frame = vec![0.0; r.skeleton().n_channels()];
        for f in 0..2 {
            assert!(r.read_frame(&mut frame).unwrap());
            let bits = |v: &[f64]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
            assert_eq!(bits(&frame), bits(bvh.motion().frame(f)));
        }
        assert!(!r.read_frame(&mut frame).unwrap());
    }

    #[test]
    fn a_header_in_tiny_reads_scans_each_byte_a_few_times() {
        let text = deep(2_000, 1);
        let header_len = text.windows(6).position(|w| w == b"MOTION").unwrap();
        SCANNED.with(|c| c.set(0));
        let whole = stream(&text[..], false);
        let scanned_whole = SCANNED.with(|c| c.get());
        SCANNED.with(|c| c.set(0));
        assert_eq!(stream(Trickle(&text, 5), false), whole);
        let scanned_tiny = SCANNED.with(|c| c.get());
        assert!(scanned_whole <= header_len + 1024 * 1024, "{scanned_whole}");
        assert!(scanned_tiny <= 3 * text.len(), "{scanned_tiny} for {} bytes", text.len());
    }

    /// A header resumed after every few bytes gives what one read gives:
    /// the same skeleton, frames, warnings and errors, on every quirk and
    /// hostile fixture (their hierarchies are small enough for one read).
    #[test]
    fn resuming_the_header_changes_nothing() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data");
        let mut n = 0;
        for dir in ["quirks", "hostile"] {
            for entry in std::fs::read_dir(root.join(dir)).unwrap() {
                let path = entry.unwrap().path();
                if path.extension().is_none_or(|e| e != "bvh") {
                    continue;
                }
                let text = std::fs::read(&path).unwrap();
                if text.len() > 1 << 20 {
                    continue;
                }
                for lenient in [false, true] {
                    let whole = stream(&text[..], lenient);
                    for step in [1, 3, 64] {
                        let tiny = stream(Trickle(&text, step), lenient);
                        assert_eq!(tiny, whole, "{} in reads of {step} bytes", path.display());
                    }
                }
                n += 1;
            }
        }
        assert!(n >= 60, "{n} fixtures");
    }
}
