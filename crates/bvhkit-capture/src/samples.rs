//! Sample text: CSV with a `t,sensor,w,x,y,z[,px,py,pz]` header, or JSON
//! lines with the same keys. The format is taken from the first non-empty
//! line (`{` starts JSON lines, anything else is the CSV header).

use serde::Deserialize;

use crate::recorder::Sample;

/// A sample read from text, owning its sensor id.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Reading {
    /// Time in seconds.
    pub t: f64,
    /// The sensor id.
    pub sensor: String,
    /// Orientation `[w, x, y, z]`.
    pub q: [f64; 4],
    /// Position, if the line has one.
    pub p: Option<[f64; 3]>,
}

impl Reading {
    /// The sample, borrowing the sensor id.
    pub fn sample(&self) -> Sample<'_> {
        Sample { t: self.t, sensor: &self.sensor, q: self.q, p: self.p }
    }
}

/// A line that is not a sample: its line and column (characters); fatal
/// when reading cannot go on (a bad CSV header).
pub type LineError = crate::InputError;

#[derive(Clone, Debug)]
enum Format {
    Unknown,
    Csv { columns: usize, idx: [usize; 6], pos: Option<[usize; 3]> },
    Json,
}

/// Reads sample lines one at a time.
#[derive(Clone, Debug)]
pub struct LineReader {
    format: Format,
    line: u64,
}

impl Default for LineReader {
    fn default() -> Self {
        LineReader::new()
    }
}

const REQUIRED: [&str; 6] = ["t", "sensor", "w", "x", "y", "z"];
const POSITION: [&str; 3] = ["px", "py", "pz"];

#[derive(Deserialize)]
struct JsonSample {
    t: f64,
    sensor: String,
    w: f64,
    x: f64,
    y: f64,
    z: f64,
    px: Option<f64>,
    py: Option<f64>,
    pz: Option<f64>,
}

impl LineReader {
    /// A reader that has seen no line yet.
    pub fn new() -> LineReader {
        LineReader { format: Format::Unknown, line: 0 }
    }

    /// Reads the next line (without its line end) into `out`. Returns
    /// `Ok(true)` for a sample, `Ok(false)` for a blank line or the CSV
    /// header.
    ///
    /// # Errors
    /// A malformed line; [`LineError::fatal`] for a bad CSV header.
    pub fn read(&mut self, line: &str, out: &mut Reading) -> Result<bool, LineError> {
        self.line += 1;
        let line = line.strip_suffix('\r').unwrap_or(line);
        // A byte order mark (Windows editors write one) starts the text,
        // not the header.
        let line =
            if self.line == 1 { line.strip_prefix('\u{feff}').unwrap_or(line) } else { line };
        if let Some(at) = line.find('\r') {
            return Err(self.error(
                line[..at].chars().count(),
                "a carriage return inside the line: the file's lines seem to end in \\r alone \
                 (classic Mac OS); end them with \\n or \\r\\n"
                    .into(),
                matches!(self.format, Format::Unknown),
            ));
        }
        if line.trim().is_empty() {
            return Ok(false);
        }
        match self.format {
            Format::Unknown => {
                if line.trim_start().starts_with('{') {
                    self.format = Format::Json;
                    return self.json(line, out);
                }
                self.header(line)?;
                Ok(false)
            }
            Format::Json => self.json(line, out),
            Format::Csv { columns, idx, pos } => self.csv(line, columns, idx, pos, out),
        }
    }

    fn error(&self, column: usize, message: String, fatal: bool) -> LineError {
        LineError { line: self.line, column: column as u64 + 1, message, fatal }
    }

    fn header(&mut self, line: &str) -> Result<(), LineError> {
        let names: Vec<&str> = line.split(',').map(str::trim).collect();
        let find = |n: &str| names.iter().position(|&c| c == n);
        let mut idx = [0; 6];
        for (k, n) in REQUIRED.iter().enumerate() {
            idx[k] = find(n).ok_or_else(|| {
                self.error(0, format!("expected a CSV header with columns t,sensor,w,x,y,z (optionally px,py,pz) or a JSON line, found \"{line}\" (no column \"{n}\")"), true)
            })?;
        }
        let p: Vec<Option<usize>> = POSITION.iter().map(|n| find(n)).collect();
        let pos = match (p[0], p[1], p[2]) {
            (Some(a), Some(b), Some(c)) => Some([a, b, c]),
            (None, None, None) => None,
            _ => {
                return Err(self.error(0, "expected all of px,py,pz or none of them".into(), true));
            }
        };
        let mut col = 0;
        for n in &names {
            if !REQUIRED.contains(n) && !POSITION.contains(n) {
                return Err(self.error(
                    col,
                    format!("unknown column \"{n}\" (expected t,sensor,w,x,y,z,px,py,pz)"),
                    true,
                ));
            }
            col += n.chars().count() + 1;
        }
        self.format = Format::Csv { columns: names.len(), idx, pos };
        Ok(())
    }

    fn csv(
        &self,
        line: &str,
        columns: usize,
        idx: [usize; 6],
        pos: Option<[usize; 3]>,
        out: &mut Reading,
    ) -> Result<bool, LineError> {
        // Fields with their byte offsets; columns (in characters) are only
        // counted for an error message.
        let column = |byte: usize| line[..byte].chars().count();
        let mut fields: [(usize, &str); 9] = [(0, ""); 9];
        let bytes = line.as_bytes();
        let mut n = 0;
        let mut at = 0;
        loop {
            // A plain byte loop: fields are short, and `str::split`'s memchr
            // per field cost more than the parsing around it.
            let end = bytes[at..].iter().position(|&b| b == b',').map_or(bytes.len(), |p| at + p);
            if n == columns {
                return Err(self.error(
                    column(at),
                    format!("expected {columns} fields, found more"),
                    false,
                ));
            }
            fields[n] = (at, &line[at..end]);
            n += 1;
            at = end + 1;
            if end == bytes.len() {
                break;
            }
        }
        if n != columns {
            return Err(self.error(
                column(at.saturating_sub(1).min(line.len())),
                format!("expected {columns} fields, found {n}"),
                false,
            ));
        }
        let num = |k: usize, name: &str| -> Result<f64, LineError> {
            let (c, f) = fields[k];
            f.trim().parse::<f64>().map_err(|_| {
                self.error(column(c), format!("expected a number for {name}, found \"{f}\""), false)
            })
        };
        out.t = num(idx[0], "t")?;
        out.sensor.clear();
        out.sensor.push_str(fields[idx[1]].1.trim());
        for k in 0..4 {
            out.q[k] = num(idx[2 + k], REQUIRED[2 + k])?;
        }
        out.p = match pos {
            Some(p) => Some([num(p[0], "px")?, num(p[1], "py")?, num(p[2], "pz")?]),
            None => None,
        };
        Ok(true)
    }

    fn json(&self, line: &str, out: &mut Reading) -> Result<bool, LineError> {
        let s: JsonSample = serde_json::from_str(line).map_err(|e| {
            self.error(e.column().saturating_sub(1), format!("expected a JSON sample: {e}"), false)
        })?;
        let p = match (s.px, s.py, s.pz) {
            (Some(a), Some(b), Some(c)) => Some([a, b, c]),
            (None, None, None) => None,
            _ => {
                return Err(self.error(
                    0,
                    "expected all of px,py,pz or none of them".into(),
                    false,
                ));
            }
        };
        *out = Reading { t: s.t, sensor: s.sensor, q: [s.w, s.x, s.y, s.z], p };
        Ok(true)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_byte_order_mark_starts_the_text_not_the_header() {
        let (mut r, mut out) = (LineReader::new(), Reading::default());
        assert!(!r.read("\u{feff}t,sensor,w,x,y,z", &mut out).unwrap());
        assert!(r.read("0.5,hips,1,0,0,0", &mut out).unwrap());
        assert_eq!((out.t, out.sensor.as_str(), out.q), (0.5, "hips", [1.0, 0.0, 0.0, 0.0]));
        // The same for JSON lines; a mark later on is no mark.
        let mut r = LineReader::new();
        let json = r#"{"t":0.25,"sensor":"hips","w":1,"x":0,"y":0,"z":0}"#;
        assert!(r.read(&format!("\u{feff}{json}"), &mut out).unwrap());
        assert_eq!(out.t, 0.25);
        assert!(r.read(&format!("\u{feff}{json}"), &mut out).is_err());
    }

    #[test]
    fn carriage_returns_alone_are_an_error_that_says_so() {
        // A CR-only file reaches the reader as one line.
        let e = LineReader::new()
            .read("t,sensor,w,x,y,z\r0,hips,1,0,0,0\r0.01,hips,1,0,0,0\r", &mut Reading::default())
            .unwrap_err();
        assert!(e.fatal);
        assert_eq!((e.line, e.column), (1, 17));
        assert!(e.message.contains("seem to end in \\r alone"), "{}", e.message);
        // CRLF stays fine.
        let mut r = LineReader::new();
        assert!(!r.read("t,sensor,w,x,y,z\r", &mut Reading::default()).unwrap());
        assert!(r.read("0,hips,1,0,0,0\r", &mut Reading::default()).unwrap());
    }
}
