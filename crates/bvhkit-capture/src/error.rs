//! The one error of a place in the input, for sample lines and for frames
//! of the Axis Neuron-style stream alike: `line:column: message`.

use std::fmt;

/// Input that is not what was expected, and where: a sample line that is
/// not a sample ([`crate::LineError`]) or a frame of the Axis Neuron-style
/// stream that is not one of the skeleton's ([`crate::FrameError`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct InputError {
    /// 1-based line (for a stream frame: of its first token).
    pub line: u64,
    /// 1-based column where the problem starts: characters in a sample
    /// line, bytes in the stream (its frame's first token).
    pub column: u64,
    /// What was expected and found.
    pub message: String,
    /// Whether reading cannot go on (a bad CSV header); otherwise only this
    /// line or frame is malformed (never set by the stream, which reads on
    /// from the next `||`).
    pub fatal: bool,
}

impl fmt::Display for InputError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}: {}", self.line, self.column, self.message)
    }
}

impl std::error::Error for InputError {}
