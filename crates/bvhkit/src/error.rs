use std::fmt;
use std::io;
use std::path::{Path, PathBuf};

/// A convenient alias for `Result<T, bvhkit::Error>`.
pub type Result<T> = std::result::Result<T, Error>;

/// A place in a BVH text.
///
/// Lines and columns start at 1; columns count characters (not bytes) from
/// the start of the line; `byte` is the 0-based offset in the input.
/// `\n`, `\r\n` and a lone `\r` each end a line.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Position {
    /// Line number, from 1.
    pub line: u64,
    /// Column (characters from the start of the line), from 1.
    pub column: u64,
    /// Byte offset in the input, from 0.
    pub byte: u64,
}

impl Position {
    /// The position of byte `offset` of `input`.
    ///
    /// This scans `input` up to `offset`; it is meant for errors and
    /// warnings, never for hot loops.
    ///
    /// # Example
    /// ```
    /// let p = bvhkit::Position::at(b"HIERARCHY\r\nROOT A", 15);
    /// assert_eq!((p.line, p.column), (2, 5));
    /// ```
    pub fn at(input: &[u8], offset: usize) -> Position {
        let offset = offset.min(input.len());
        let mut line = 1u64;
        let mut line_start = 0usize;
        let mut i = 0;
        while i < offset {
            match input[i] {
                b'\n' => {
                    line += 1;
                    line_start = i + 1;
                }
                b'\r' if input.get(i + 1) != Some(&b'\n') => {
                    line += 1;
                    line_start = i + 1;
                }
                _ => {}
            }
            i += 1;
        }
        let mut start = line_start;
        if line == 1 && input.starts_with(b"\xEF\xBB\xBF") {
            start = start.max(3.min(offset));
        }
        // Count characters: every byte that is not a UTF-8 continuation byte.
        let column =
            1 + input[start..offset].iter().filter(|&&b| (b & 0xC0) != 0x80).count() as u64;
        Position { line, column, byte: offset as u64 }
    }
}

impl fmt::Display for Position {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}", self.line, self.column)
    }
}

/// An error from reading, writing or building BVH data.
///
/// It carries the [`Position`] where the problem was found when there is
/// one, and the file path when the data came from a file. Its `Display` form
/// is `path:line:column: message`, the form editors jump to.
pub struct Error(Box<Inner>);

struct Inner {
    kind: ErrorKind,
    pos: Option<Position>,
    path: Option<PathBuf>,
}

/// What went wrong.
#[derive(Debug)]
#[non_exhaustive]
pub enum ErrorKind {
    /// Reading or writing failed.
    Io(io::Error),
    /// A token that does not fit the grammar at this point.
    Syntax {
        /// What the grammar allows here.
        expected: String,
        /// What the input holds (shortened when long).
        found: String,
    },
    /// A token that must be a finite decimal number is not.
    BadNumber {
        /// What the token was for (`OFFSET`, `motion value`, ...).
        context: &'static str,
        /// The token (shortened when long).
        found: String,
    },
    /// A channel name that is not one of the six BVH channels.
    UnknownChannel {
        /// The token.
        found: String,
    },
    /// `CHANNELS n` followed by a different number of channel names.
    ChannelCount {
        /// The declared count.
        declared: u64,
        /// The number of channel names listed.
        listed: u64,
    },
    /// The same channel twice on one joint, or more than six channels.
    BadChannels {
        /// What is wrong.
        message: String,
    },
    /// A motion line whose value count is not the channel count.
    FrameWidth {
        /// The 0-based frame the line starts.
        frame: u64,
        /// Channels per frame.
        expected: u64,
        /// Values on the line.
        found: u64,
    },
    /// `Frames:` disagrees with the frames present.
    FrameCount {
        /// The count declared by `Frames:`.
        declared: u64,
        /// The frames present.
        found: u64,
    },
    /// A hierarchy that deviates from the grammar (a missing `HIERARCHY`,
    /// `OFFSET`, `CHANNELS` or name, a misplaced `ROOT` or `JOINT`).
    Hierarchy {
        /// What is wrong.
        message: String,
    },
    /// A problem with `MOTION`, `Frames:` or `Frame Time:` (missing, zero,
    /// negative, misplaced).
    MotionHeader {
        /// What is wrong.
        message: String,
    },
    /// The input ended before the structure was complete.
    UnexpectedEof {
        /// What was still expected.
        expected: String,
    },
    /// A joint name that is not valid UTF-8.
    InvalidUtf8,
    /// A value given to a function was out of its domain.
    InvalidArgument(String),
}

impl Error {
    pub(crate) fn new(kind: ErrorKind, pos: Option<Position>) -> Error {
        Error(Box::new(Inner { kind, pos, path: None }))
    }

    pub(crate) fn invalid(msg: impl Into<String>) -> Error {
        Error::new(ErrorKind::InvalidArgument(msg.into()), None)
    }

    /// What went wrong.
    pub fn kind(&self) -> &ErrorKind {
        &self.0.kind
    }

    /// Where in the text, when known.
    pub fn position(&self) -> Option<Position> {
        self.0.pos
    }

    /// The file the text came from, when known.
    pub fn path(&self) -> Option<&Path> {
        self.0.path.as_deref()
    }

    /// Whether this is an I/O error (as opposed to bad data).
    pub fn is_io(&self) -> bool {
        matches!(self.0.kind, ErrorKind::Io(_))
    }

    /// The same error, tagged with the file it came from.
    pub fn with_path(mut self, path: impl Into<PathBuf>) -> Error {
        self.0.path = Some(path.into());
        self
    }

    /// The message alone, without path and position.
    pub fn message(&self) -> String {
        self.0.kind.to_string()
    }
}

impl fmt::Display for ErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ErrorKind::Io(e) => write!(f, "{e}"),
            ErrorKind::Syntax { expected, found } => {
                write!(f, "expected {expected}, found {found}")
            }
            ErrorKind::BadNumber { context, found } => {
                write!(f, "expected a number ({context}), found {found}")
            }
            ErrorKind::UnknownChannel { found } => write!(
                f,
                "expected a channel name (Xposition, Yposition, Zposition, Xrotation, Yrotation or Zrotation), found {found}"
            ),
            ErrorKind::ChannelCount { declared, listed } => {
                write!(f, "CHANNELS declares {declared} channels but lists {listed}")
            }
            ErrorKind::BadChannels { message } => write!(f, "{message}"),
            ErrorKind::FrameWidth { frame, expected, found } => write!(
                f,
                "expected {expected} values on the line of frame {frame} (one per channel), found {found}"
            ),
            ErrorKind::FrameCount { declared, found } => {
                write!(f, "Frames: declares {declared} frames but the file holds {found}")
            }
            ErrorKind::MotionHeader { message } | ErrorKind::Hierarchy { message } => {
                write!(f, "{message}")
            }
            ErrorKind::UnexpectedEof { expected } => {
                write!(f, "expected {expected}, found the end of the input")
            }
            ErrorKind::InvalidUtf8 => write!(f, "joint name is not valid UTF-8"),
            ErrorKind::InvalidArgument(m) => write!(f, "{m}"),
        }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(p) = &self.0.path {
            write!(f, "{}:", p.display())?;
        }
        if let Some(pos) = &self.0.pos {
            write!(f, "{}:{}:", pos.line, pos.column)?;
        }
        if self.0.path.is_some() || self.0.pos.is_some() {
            f.write_str(" ")?;
        }
        write!(f, "{}", self.0.kind)
    }
}

impl fmt::Debug for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Error")
            .field("kind", &self.0.kind)
            .field("pos", &self.0.pos)
            .field("path", &self.0.path)
            .finish()
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match &self.0.kind {
            ErrorKind::Io(e) => Some(e),
            _ => None,
        }
    }
}

impl From<io::Error> for Error {
    fn from(e: io::Error) -> Error {
        Error::new(ErrorKind::Io(e), None)
    }
}

/// A problem that lenient reading recovered from.
///
/// Its `Display` form is `line:column: message` when it has a position.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Warning {
    /// Where, when the problem has a place in the text.
    pub position: Option<Position>,
    /// Which kind of problem, for programs that filter warnings.
    pub kind: WarningKind,
    /// What was wrong and what was done about it.
    pub message: String,
}

/// The kinds of problems lenient reading recovers from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum WarningKind {
    /// `Frames:` disagrees with the frames present; the frames present are kept.
    FrameCount,
    /// `Frame Time:` is missing, zero, negative or not a number; 1/30 s is assumed.
    FrameTime,
    /// No `MOTION` keyword, no `Frames:` line, or no motion section at all.
    MotionHeader,
    /// Motion lines do not hold one frame each; values were read as a stream
    /// or row by row.
    RowLayout,
    /// The last frame has too few values and was dropped.
    TruncatedFrame,
    /// The hierarchy deviates from the grammar in a way that was repaired
    /// (missing `HIERARCHY`, `OFFSET` or name, a misplaced `ROOT`, ...).
    Hierarchy,
    /// A joint name is not valid UTF-8; invalid bytes were replaced by U+FFFD.
    Encoding,
}

impl fmt::Display for Warning {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(p) = self.position {
            write!(f, "{}:{}: ", p.line, p.column)?;
        }
        f.write_str(&self.message)
    }
}

/// Shortens a token for an error message: at most 40 characters, quoted.
pub(crate) fn describe_token(tok: &[u8]) -> String {
    if tok.is_empty() {
        return "the end of the input".to_string();
    }
    let s = String::from_utf8_lossy(&tok[..tok.len().min(160)]);
    let mut out: String = s.chars().take(40).collect();
    if out.len() < s.len() || tok.len() > 160 {
        out.push_str("...");
    }
    format!("'{out}'")
}

/// `v` for a message: as `{}` shows it, but with an exponent where that
/// would be a long run of zeros (`1e300`, `1e-300`, not 301 digits).
pub(crate) fn num(v: f64) -> String {
    if v != 0.0 && v.is_finite() && !(1e-6..1e15).contains(&v.abs()) {
        format!("{v:e}")
    } else {
        format!("{v}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn positions_count_every_kind_of_line_end() {
        let text = b"a\nb\r\nc\rd";
        assert_eq!(Position::at(text, 0), Position { line: 1, column: 1, byte: 0 });
        assert_eq!(Position::at(text, 2).line, 2);
        assert_eq!(Position::at(text, 5).line, 3);
        assert_eq!(Position::at(text, 7), Position { line: 4, column: 1, byte: 7 });
    }

    #[test]
    fn columns_count_characters_and_skip_the_bom() {
        let text = "\u{feff}ROOT é x".as_bytes();
        let x = text.iter().position(|&b| b == b'x').unwrap();
        assert_eq!(Position::at(text, x).column, 8);
    }

    #[test]
    fn display_is_editor_friendly() {
        let e = Error::new(
            ErrorKind::Syntax { expected: "'{'".into(), found: "'OFFSET'".into() },
            Some(Position { line: 57, column: 13, byte: 0 }),
        )
        .with_path("walk.bvh");
        assert_eq!(e.to_string(), "walk.bvh:57:13: expected '{', found 'OFFSET'");
    }

    #[test]
    fn long_tokens_are_shortened() {
        let long = vec![b'a'; 1 << 20];
        let d = describe_token(&long);
        assert!(d.len() < 50, "{d}");
        assert!(d.ends_with("...'"));
    }
}
