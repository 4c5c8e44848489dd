//! The hierarchy and the motion header (`MOTION`, `Frames:`, `Frame Time:`).
//!
//! The grammar is read as a token stream, not line by line, so that files
//! flattened onto one line parse like any other. Only joint names look at
//! line ends: a name runs from the keyword to `{` or the end of the line.
//! No recursion: nesting depth is bounded by memory, not by the stack.

use glam::DVec3;

use crate::channel::Channel;
use crate::error::{Error, ErrorKind, Position, Warning, WarningKind, describe_token};
use crate::number::{is_space, parse_token};
use crate::skeleton::{JointId, JointKind, Skeleton, SkeletonBuilder, check_channels};

/// Longest joint name accepted, in bytes. Real names are under 100 bytes;
/// the limit keeps a hostile file from making the reader copy gigabytes.
pub(crate) const MAX_NAME_LEN: usize = 64 * 1024;

/// The frame time assumed when a file has none (30 frames per second).
pub const DEFAULT_FRAME_TIME: f64 = 1.0 / 30.0;

/// Why header parsing stopped without a result.
pub(crate) enum Stop {
    /// The input ended mid-header and more may come (streaming only).
    NeedMore,
    /// A real error.
    Fatal(Error),
}

impl From<Error> for Stop {
    fn from(e: Error) -> Stop {
        Stop::Fatal(e)
    }
}

type PResult<T> = std::result::Result<T, Stop>;

/// `(frames declared with the offset of the count, frame time)`.
type MotionHeader = (Option<(u64, usize)>, f64);

struct MotionHeaderFields {
    frames_declared: Option<(u64, usize)>,
    frame_time: f64,
}

/// Everything before the motion values.
pub(crate) struct Header {
    pub(crate) skeleton: Skeleton,
    /// `Frames:` as declared, with the offset of its value token.
    pub(crate) frames_declared: Option<(u64, usize)>,
    pub(crate) frame_time: f64,
    /// Offset of the first byte after the header.
    pub(crate) data_start: usize,
    pub(crate) warnings: Vec<Warning>,
}

struct Pending {
    name: String,
    kind: JointKind,
    parent: Option<JointId>,
    offset: Option<DVec3>,
    channels: Option<Vec<Channel>>,
    at: usize,
}

/// Where the parse is.
enum Phase {
    /// Before `HIERARCHY`.
    Start,
    /// Inside the hierarchy.
    Joints,
    /// The hierarchy is read; the motion header starts at the checkpoint.
    Motion(Skeleton),
}

/// Everything a header parse has built so far. It does not borrow the
/// input, so the streaming reader can keep it while its buffer grows and
/// resume the parse at the last checkpoint: the work is linear in the
/// header's length however many pieces it arrives in.
pub(crate) struct HeaderState {
    pos: usize,
    lenient: bool,
    warnings: Vec<Warning>,
    phase: Phase,
    builder: SkeletonBuilder,
    stack: Vec<(JointId, bool)>, // (joint, is_end_site)
    pending: Option<Pending>,
    /// Where to resume after `NeedMore`: the start of the statement being
    /// read, and how many warnings were given before it.
    checkpoint: usize,
    checkpoint_warnings: usize,
}

impl HeaderState {
    /// The offset a resumed parse starts reading at.
    pub(crate) fn checkpoint(&self) -> usize {
        self.checkpoint
    }
}

pub(crate) struct HeaderParser<'a> {
    b: &'a [u8],
    eof: bool,
    st: HeaderState,
}

#[cfg(test)]
thread_local! {
    /// Bytes from the resume point to the end of the input, summed over
    /// every header parse on this thread: an upper bound of the bytes read.
    pub(crate) static SCANNED: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
}

fn eq_kw(tok: &[u8], kw: &str) -> bool {
    tok.eq_ignore_ascii_case(kw.as_bytes())
}

impl<'a> HeaderParser<'a> {
    pub(crate) fn new(b: &'a [u8], eof: bool, lenient: bool) -> HeaderParser<'a> {
        let pos = 0;
        let st = HeaderState {
            pos,
            lenient,
            warnings: Vec::new(),
            phase: Phase::Start,
            builder: SkeletonBuilder::new(),
            stack: Vec::new(),
            pending: None,
            checkpoint: pos,
            checkpoint_warnings: 0,
        };
        HeaderParser { b, eof, st }
    }

    /// Continues a parse that stopped with [`Stop::NeedMore`] over `b`, the
    /// same input grown at its end.
    pub(crate) fn resume(b: &'a [u8], eof: bool, st: HeaderState) -> HeaderParser<'a> {
        HeaderParser { b, eof, st }
    }

    /// The state, to [`resume`](Self::resume) with more input.
    pub(crate) fn into_state(self) -> HeaderState {
        self.st
    }

    /// Marks the current position as the place to resume from.
    fn set_checkpoint(&mut self) {
        self.st.checkpoint = self.st.pos;
        self.st.checkpoint_warnings = self.st.warnings.len();
    }

    fn position(&self, at: usize) -> Option<Position> {
        Some(Position::at(self.b, at))
    }

    fn err(&self, at: usize, kind: ErrorKind) -> Stop {
        Stop::Fatal(Error::new(kind, self.position(at)))
    }

    fn syntax(&self, at: usize, expected: &str, tok: &[u8]) -> Stop {
        self.err(
            at,
            ErrorKind::Syntax { expected: expected.to_string(), found: describe_token(tok) },
        )
    }

    fn eof_err(&self, expected: &str) -> Stop {
        self.err(self.b.len(), ErrorKind::UnexpectedEof { expected: expected.to_string() })
    }

    /// Records a recoverable problem: a warning when lenient, else an error.
    fn problem(&mut self, at: usize, kind: WarningKind, message: String) -> PResult<()> {
        if self.st.lenient {
            self.st.warnings.push(Warning { position: self.position(at), kind, message });
            Ok(())
        } else {
            let kind = match kind {
                WarningKind::FrameTime | WarningKind::MotionHeader => {
                    ErrorKind::MotionHeader { message }
                }
                _ => ErrorKind::Hierarchy { message },
            };
            Err(self.err(at, kind))
        }
    }

    fn skip_ws(&mut self) {
        while self.st.pos < self.b.len() && is_space(self.b[self.st.pos]) {
            self.st.pos += 1;
        }
    }

    /// The next token as `(start, end)`; braces are tokens of their own.
    fn next(&mut self) -> PResult<Option<(usize, usize)>> {
        self.skip_ws();
        let n = self.b.len();
        if self.st.pos == n {
            return if self.eof { Ok(None) } else { Err(Stop::NeedMore) };
        }
        let start = self.st.pos;
        if matches!(self.b[start], b'{' | b'}') {
            self.st.pos += 1;
            return Ok(Some((start, start + 1)));
        }
        let mut i = start;
        while i < n && !is_space(self.b[i]) && !matches!(self.b[i], b'{' | b'}') {
            i += 1;
            if i - start > MAX_NAME_LEN {
                return Err(self.err(
                    start,
                    ErrorKind::Syntax {
                        expected: format!("a token of at most {MAX_NAME_LEN} bytes"),
                        found: describe_token(&self.b[start..i]),
                    },
                ));
            }
        }
        if i == n && !self.eof {
            return Err(Stop::NeedMore);
        }
        self.st.pos = i;
        Ok(Some((start, i)))
    }

    fn peek(&mut self) -> PResult<Option<(usize, usize)>> {
        let save = self.st.pos;
        let t = self.next();
        self.st.pos = save;
        t
    }

    fn tok(&self, t: (usize, usize)) -> &'a [u8] {
        &self.b[t.0..t.1]
    }

    /// Reads the name after `ROOT`/`JOINT`: up to `{` or the end of the line.
    fn name(&mut self, kw_at: usize) -> PResult<String> {
        let n = self.b.len();
        while self.st.pos < n && matches!(self.b[self.st.pos], b' ' | b'\t' | b'\x0b' | b'\x0c') {
            self.st.pos += 1;
        }
        let start = self.st.pos;
        let mut i = start;
        while i < n && !matches!(self.b[i], b'{' | b'\n' | b'\r') {
            i += 1;
            if i - start > MAX_NAME_LEN {
                return Err(self.err(
                    start,
                    ErrorKind::Syntax {
                        expected: format!("a joint name of at most {MAX_NAME_LEN} bytes"),
                        found: describe_token(&self.b[start..i]),
                    },
                ));
            }
        }
        if i == n && !self.eof {
            return Err(Stop::NeedMore);
        }
        self.st.pos = i;
        let mut end = i;
        while end > start && is_space(self.b[end - 1]) {
            end -= 1;
        }
        let raw = &self.b[start..end];
        if raw.is_empty() {
            // A repair must write back as a strictly valid file, and an
            // empty name cannot: name the joint after the line it is on.
            let line = Position::at(self.b, kw_at).line;
            let name = format!("unnamed_line_{line}");
            self.problem(
                kw_at,
                WarningKind::Hierarchy,
                format!("joint has no name; it is named '{name}'"),
            )?;
            return Ok(name);
        }
        match std::str::from_utf8(raw) {
            Ok(s) => Ok(s.to_string()),
            Err(_) if self.st.lenient => {
                self.st.warnings.push(Warning {
                    position: self.position(start),
                    kind: WarningKind::Encoding,
                    message: "joint name is not valid UTF-8; invalid bytes replaced by U+FFFD"
                        .into(),
                });
                Ok(String::from_utf8_lossy(raw).into_owned())
            }
            Err(_) => Err(self.err(start, ErrorKind::InvalidUtf8)),
        }
    }

    fn expect_open_brace(&mut self) -> PResult<()> {
        match self.next()? {
            Some(t) if self.tok(t) == b"{" => Ok(()),
            Some(t) => Err(self.syntax(t.0, "'{'", self.tok(t))),
            None => Err(self.eof_err("'{'")),
        }
    }

    fn number(&mut self, context: &'static str) -> PResult<f64> {
        match self.next()? {
            Some(t) => parse_token(self.tok(t)).ok_or_else(|| {
                self.err(t.0, ErrorKind::BadNumber { context, found: describe_token(self.tok(t)) })
            }),
            None => Err(self.eof_err(&format!("a number ({context})"))),
        }
    }

    fn channels(&mut self, at: usize) -> PResult<Vec<Channel>> {
        let count_tok = match self.next()? {
            Some(t) => t,
            None => return Err(self.eof_err("a channel count")),
        };
        let declared: u64 = std::str::from_utf8(self.tok(count_tok))
            .ok()
            .and_then(|s| s.parse().ok())
            .ok_or_else(|| {
                self.err(
                    count_tok.0,
                    ErrorKind::BadNumber {
                        context: "channel count",
                        found: describe_token(self.tok(count_tok)),
                    },
                )
            })?;
        let mut list = Vec::new();
        while let Some(t) = self.peek()? {
            let tok = self.tok(t);
            if let Some(c) = Channel::from_bytes(tok) {
                self.next()?;
                list.push(c);
                if list.len() > 6 && list.len() as u64 > declared {
                    break;
                }
                continue;
            }
            if (list.len() as u64) < declared && !is_structural(tok) {
                return Err(self.err(t.0, ErrorKind::UnknownChannel { found: describe_token(tok) }));
            }
            break;
        }
        if list.len() as u64 != declared {
            return Err(self.err(
                count_tok.0,
                ErrorKind::ChannelCount { declared, listed: list.len() as u64 },
            ));
        }
        if let Err(message) = check_channels(&list) {
            return Err(self.err(at, ErrorKind::BadChannels { message }));
        }
        Ok(list)
    }

    /// Parses the whole header.
    ///
    /// On [`Stop::NeedMore`] the parser is back at its last checkpoint:
    /// [`into_state`](Self::into_state) and [`resume`](Self::resume) with
    /// more input continue from there.
    pub(crate) fn parse(&mut self) -> PResult<Header> {
        #[cfg(test)]
        SCANNED.with(|c| c.set(c.get() + (self.b.len() - self.st.pos.min(self.b.len()))));
        let r = self.parse_from_checkpoint();
        if let Err(Stop::NeedMore) = r {
            self.st.pos = self.st.checkpoint;
            self.st.warnings.truncate(self.st.checkpoint_warnings);
        }
        r
    }

    fn parse_from_checkpoint(&mut self) -> PResult<Header> {
        if let Phase::Start = self.st.phase {
            self.hierarchy_keyword()?;
            self.st.phase = Phase::Joints;
        }
        if let Phase::Joints = self.st.phase {
            let skeleton = self.joints()?;
            self.st.phase = Phase::Motion(skeleton);
        }
        let after = self.next()?;
        let (frames_declared, frame_time) = self.motion_header(after)?;
        let Phase::Motion(skeleton) = std::mem::replace(&mut self.st.phase, Phase::Start) else {
            unreachable!("the motion phase holds the skeleton")
        };
        Ok(Header {
            skeleton,
            frames_declared,
            frame_time,
            data_start: self.st.pos,
            warnings: std::mem::take(&mut self.st.warnings),
        })
    }

    /// `HIERARCHY` (or a warning when the file starts at `ROOT`).
    fn hierarchy_keyword(&mut self) -> PResult<()> {
        const BOM: &[u8] = b"\xEF\xBB\xBF";
        if self.st.pos == 0 {
            if !self.eof && self.b.len() < BOM.len() && BOM.starts_with(self.b) {
                return Err(Stop::NeedMore);
            }
            if self.b.starts_with(BOM) {
                self.st.pos = BOM.len();
            }
        }
        match self.next()? {
            Some(t) if eq_kw(self.tok(t), "HIERARCHY") => {}
            Some(t) if eq_kw(self.tok(t), "ROOT") => {
                self.problem(
                    t.0,
                    WarningKind::Hierarchy,
                    "the HIERARCHY keyword is missing".into(),
                )?;
                self.st.pos = t.0;
            }
            Some(t) => return Err(self.syntax(t.0, "HIERARCHY", self.tok(t))),
            None => return Err(self.eof_err("HIERARCHY")),
        }
        Ok(())
    }

    /// The joints, one statement at a time, each a checkpoint. Leaves the
    /// position at (and the checkpoint on) the first token after the
    /// hierarchy.
    fn joints(&mut self) -> PResult<Skeleton> {
        let mut builder = std::mem::take(&mut self.st.builder);
        let mut stack = std::mem::take(&mut self.st.stack);
        let mut pending = self.st.pending.take();
        let r = self.joints_with(&mut builder, &mut stack, &mut pending);
        match r {
            Ok(true) => Ok(builder.build()),
            Ok(false) => Err(match self.peek()? {
                Some(t) => self.syntax(t.0, "ROOT", self.tok(t)),
                None => self.eof_err("ROOT"),
            }),
            Err(e) => {
                self.st.builder = builder;
                self.st.stack = stack;
                self.st.pending = pending;
                Err(e)
            }
        }
    }

    /// The loop of [`joints`](Self::joints); `Ok(false)` when the hierarchy
    /// holds no joint.
    fn joints_with(
        &mut self,
        builder: &mut SkeletonBuilder,
        stack: &mut Vec<(JointId, bool)>,
        pending: &mut Option<Pending>,
    ) -> PResult<bool> {
        loop {
            // A statement either completes or leaves `builder`, `stack` and
            // `pending` as they were at its start (but for `flush`, which
            // is done once: the checkpoint's warning count moves past it).
            self.skip_ws();
            self.set_checkpoint();
            let Some(t) = self.next()? else {
                if pending.is_some() || !stack.is_empty() {
                    return Err(self.eof_err("'}'"));
                }
                break;
            };
            let tok = self.tok(t);
            if eq_kw(tok, "ROOT") || eq_kw(tok, "JOINT") {
                self.flush(builder, stack, pending)?;
                self.st.checkpoint_warnings = self.st.warnings.len();
                let mut kind = if eq_kw(tok, "ROOT") { JointKind::Root } else { JointKind::Joint };
                if kind == JointKind::Root && !stack.is_empty() {
                    self.problem(
                        t.0,
                        WarningKind::Hierarchy,
                        "ROOT inside a joint; read as JOINT".into(),
                    )?;
                    kind = JointKind::Joint;
                } else if kind == JointKind::Joint && stack.is_empty() {
                    self.problem(
                        t.0,
                        WarningKind::Hierarchy,
                        "JOINT outside any ROOT; read as ROOT".into(),
                    )?;
                    kind = JointKind::Root;
                }
                if let Some(&(_, true)) = stack.last() {
                    return Err(self.syntax(t.0, "'}' closing the End Site", tok));
                }
                let name = self.name(t.0)?;
                self.expect_open_brace()?;
                let parent = stack.last().map(|&(id, _)| id);
                *pending =
                    Some(Pending { name, kind, parent, offset: None, channels: None, at: t.0 });
            } else if eq_kw(tok, "End") || eq_kw(tok, "EndSite") {
                self.flush(builder, stack, pending)?;
                self.st.checkpoint_warnings = self.st.warnings.len();
                if eq_kw(tok, "End") {
                    match self.next()? {
                        Some(s) if eq_kw(self.tok(s), "Site") => {}
                        Some(s) => return Err(self.syntax(s.0, "'Site' after 'End'", self.tok(s))),
                        None => return Err(self.eof_err("'Site'")),
                    }
                }
                let Some(&(parent, parent_is_end)) = stack.last() else {
                    return Err(self.syntax(t.0, "ROOT (End Site outside any joint)", tok));
                };
                if parent_is_end {
                    return Err(self.syntax(t.0, "'}' closing the End Site", tok));
                }
                // Text between `End Site` and `{` (some writers name End Sites).
                if let Some(nt) = self.peek()?
                    && self.tok(nt) != b"{"
                {
                    let at = nt.0;
                    let _ = self.name(at)?;
                    self.problem(
                        at,
                        WarningKind::Hierarchy,
                        "text after 'End Site' ignored".into(),
                    )?;
                }
                self.expect_open_brace()?;
                *pending = Some(Pending {
                    name: String::new(),
                    kind: JointKind::EndSite,
                    parent: Some(parent),
                    offset: None,
                    channels: None,
                    at: t.0,
                });
            } else if eq_kw(tok, "OFFSET") {
                match &*pending {
                    Some(p) if p.offset.is_none() => {}
                    Some(_) => return Err(self.syntax(t.0, "one OFFSET per joint", tok)),
                    None => return Err(self.syntax(t.0, "JOINT, End Site or '}'", tok)),
                }
                let x = self.number("OFFSET")?;
                let y = self.number("OFFSET")?;
                let z = self.number("OFFSET")?;
                if let Some(p) = pending.as_mut() {
                    p.offset = Some(DVec3::new(x, y, z));
                    if p.channels.is_some() {
                        self.problem(t.0, WarningKind::Hierarchy, "OFFSET after CHANNELS".into())?;
                    }
                }
            } else if eq_kw(tok, "CHANNELS") {
                match &*pending {
                    Some(p) if p.channels.is_none() => {}
                    Some(_) => return Err(self.syntax(t.0, "one CHANNELS per joint", tok)),
                    None => return Err(self.syntax(t.0, "JOINT, End Site or '}'", tok)),
                }
                let list = self.channels(t.0)?;
                if let Some(p) = pending.as_mut() {
                    if p.kind == JointKind::EndSite && !list.is_empty() {
                        return Err(self.syntax(t.0, "no CHANNELS in an End Site", tok));
                    }
                    p.channels = Some(list);
                }
            } else if tok == b"}" {
                self.flush(builder, stack, pending)?;
                if stack.pop().is_none() {
                    return Err(self.syntax(t.0, "ROOT or MOTION (unbalanced '}')", tok));
                }
            } else {
                if pending.is_some() || !stack.is_empty() {
                    return Err(self.syntax(
                        t.0,
                        "OFFSET, CHANNELS, JOINT, End Site or '}' (a joint is still open)",
                        tok,
                    ));
                }
                break;
            }
        }
        // Back to the first token after the hierarchy (or the end).
        self.st.pos = self.st.checkpoint;
        Ok(!builder.is_empty())
    }

    /// Turns the joint whose header and body were read into a builder joint.
    fn flush(
        &mut self,
        builder: &mut SkeletonBuilder,
        stack: &mut Vec<(JointId, bool)>,
        pending: &mut Option<Pending>,
    ) -> PResult<()> {
        let Some(p) = pending.take() else { return Ok(()) };
        let offset = match p.offset {
            Some(o) => o,
            None => {
                self.problem(
                    p.at,
                    WarningKind::Hierarchy,
                    "joint has no OFFSET; (0, 0, 0) assumed".into(),
                )?;
                DVec3::ZERO
            }
        };
        let channels = match p.channels {
            Some(c) => c,
            None if p.kind == JointKind::EndSite => Vec::new(),
            None => {
                self.problem(
                    p.at,
                    WarningKind::Hierarchy,
                    "joint has no CHANNELS; none assumed".into(),
                )?;
                Vec::new()
            }
        };
        let id = match (p.kind, p.parent) {
            (JointKind::EndSite, Some(parent)) => builder.end_site(parent, offset),
            (_, Some(parent)) => builder.joint(parent, &p.name, offset, &channels),
            (_, None) => builder.root(&p.name, offset, &channels),
        }
        .map_err(|e| {
            self.err(
                p.at,
                ErrorKind::Syntax { expected: "a valid joint".into(), found: e.message() },
            )
        })?;
        stack.push((id, p.kind == JointKind::EndSite));
        Ok(())
    }

    /// The motion header, from its first token `after` (`None`: there is
    /// none): `(frames declared, frame time)`; the position is
    /// left after it.
    fn motion_header(&mut self, after: Option<(usize, usize)>) -> PResult<MotionHeader> {
        let mut header =
            MotionHeaderFields { frames_declared: None, frame_time: DEFAULT_FRAME_TIME };
        let Some(t) = after else {
            self.problem(
                self.b.len(),
                WarningKind::MotionHeader,
                "no MOTION section; the file has zero frames".into(),
            )?;
            self.st.pos = self.b.len();
            return Ok((None, DEFAULT_FRAME_TIME));
        };
        let tok = self.tok(t);
        if eq_kw(tok, "MOTION") {
            // fine
        } else if starts_with_kw(tok, "Frames") || eq_kw(tok, "Frame") {
            self.problem(t.0, WarningKind::MotionHeader, "the MOTION keyword is missing".into())?;
            self.st.pos = t.0;
        } else {
            return Err(self.syntax(t.0, "ROOT or MOTION", tok));
        }

        // Frames:
        let mut motion_kw_end = self.st.pos;
        match self.peek()? {
            Some(f) if starts_with_kw(self.tok(f), "Frames") => {
                self.next()?;
                let rest = &self.tok(f)[6..];
                let value_tok = if rest.is_empty() || rest == b":" {
                    if rest.is_empty() {
                        self.colon()?;
                    }
                    self.next()?
                } else if let Some(v) = rest.strip_prefix(b":") {
                    Some((f.1 - v.len(), f.1))
                } else {
                    return Err(self.syntax(f.0, "'Frames:'", self.tok(f)));
                };
                let Some(v) = value_tok else { return Err(self.eof_err("the frame count")) };
                let n = std::str::from_utf8(self.tok(v))
                    .ok()
                    .and_then(|s| s.parse::<u64>().ok())
                    .ok_or_else(|| {
                    self.err(
                        v.0,
                        ErrorKind::BadNumber {
                            context: "frame count",
                            found: describe_token(self.tok(v)),
                        },
                    )
                })?;
                header.frames_declared = Some((n, v.0));
                motion_kw_end = self.st.pos;
            }
            Some(f) => {
                self.problem(
                    f.0,
                    WarningKind::MotionHeader,
                    "the 'Frames:' line is missing".into(),
                )?;
            }
            None => {
                self.problem(
                    self.b.len(),
                    WarningKind::MotionHeader,
                    "the 'Frames:' line is missing".into(),
                )?;
            }
        }

        // Frame Time:
        let mut have_time = false;
        if let Some(f) = self.peek()? {
            let ftok = self.tok(f);
            let glued = starts_with_kw(ftok, "FrameTime");
            if eq_kw(ftok, "Frame") || glued {
                self.next()?;
                let rest: &[u8] = if glued {
                    &ftok[9..]
                } else {
                    match self.next()? {
                        Some(tt) if starts_with_kw(self.tok(tt), "Time") => &self.tok(tt)[4..],
                        Some(tt) => {
                            return Err(self.syntax(tt.0, "'Time:' after 'Frame'", self.tok(tt)));
                        }
                        None => return Err(self.eof_err("'Time:'")),
                    }
                };
                let value = if rest.is_empty() {
                    self.colon()?;
                    self.next()?
                } else if rest == b":" {
                    self.next()?
                } else if let Some(v) = rest.strip_prefix(b":") {
                    let end = self.st.pos;
                    Some((end - v.len(), end))
                } else {
                    return Err(self.syntax(f.0, "'Frame Time:'", rest));
                };
                match value {
                    Some(v) => {
                        let x = parse_token(self.tok(v)).ok_or_else(|| {
                            self.err(
                                v.0,
                                ErrorKind::BadNumber {
                                    context: "frame time",
                                    found: describe_token(self.tok(v)),
                                },
                            )
                        })?;
                        if x > 0.0 {
                            header.frame_time = x;
                        } else {
                            self.problem(
                                v.0,
                                WarningKind::FrameTime,
                                format!("Frame Time is {x}; 1/30 s (30 fps) assumed"),
                            )?;
                        }
                    }
                    None => {
                        self.problem(
                            self.b.len(),
                            WarningKind::FrameTime,
                            "Frame Time has no value; 1/30 s (30 fps) assumed".into(),
                        )?;
                    }
                }
                have_time = true;
            }
        }
        if !have_time {
            let at = self.peek()?.map_or(self.b.len(), |t| t.0);
            self.problem(
                at,
                WarningKind::FrameTime,
                "the 'Frame Time:' line is missing; 1/30 s (30 fps) assumed".into(),
            )?;
        }
        let _ = motion_kw_end;
        Ok((header.frames_declared, header.frame_time))
    }

    /// Consumes a lone `:` token (as in `Frames : 10`).
    fn colon(&mut self) -> PResult<()> {
        match self.next()? {
            Some(c) if self.tok(c) == b":" => Ok(()),
            Some(c) => {
                // `Frames 10`: accept without the colon.
                self.st.pos = c.0;
                self.problem(c.0, WarningKind::MotionHeader, "':' missing after the keyword".into())
            }
            None => Err(self.eof_err("':'")),
        }
    }
}

fn starts_with_kw(tok: &[u8], kw: &str) -> bool {
    tok.len() >= kw.len() && tok[..kw.len()].eq_ignore_ascii_case(kw.as_bytes())
}

/// Tokens that end a channel list.
fn is_structural(tok: &[u8]) -> bool {
    ["JOINT", "End", "OFFSET", "CHANNELS", "ROOT", "MOTION", "}", "{", "EndSite"]
        .iter()
        .any(|k| eq_kw(tok, k))
}
