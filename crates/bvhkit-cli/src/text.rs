//! Text from files made safe for a terminal: the one place the CLI escapes.
//!
//! Joint names, tokens quoted in error messages and file names come from
//! files the user did not write; printed raw, a name holding `ESC [ 2 J`
//! would clear the screen, and one holding `\r` or a bidirectional override
//! would hide what is printed before it. Every line the CLI prints that
//! contains such text goes through [`escape`]; JSON output through
//! [`escape_json`], which keeps the values exact.
//!
//! # Implementation notes
//!
//! `escape`, the one place text from files (names, quoted tokens, file names)
//! is made safe for a terminal; every message line goes through it.
//! `error_chain`: an error and its causes on one line as anyhow's `{:#}`,
//! without saying a cause twice (the core's I/O errors and `bvhkit-write`'s
//! print their source and return it too; a context naming the output over an
//! error naming it), used wherever the CLI prints an error. Data outputs (BVH,
//! CSV) are written exactly; JSON gets `\uXXXX` escapes (serde's for C0
//! controls, `escape_json` for DEL, C1 and bidirectional controls), so it
//! parses to the exact names.

use std::borrow::Cow;

/// Whether `c` must not reach a terminal as it is: control characters (C0,
/// DEL, C1) and the Unicode bidirectional embedding, override and isolate
/// characters, which reorder what a terminal shows.
fn is_unsafe(c: char) -> bool {
    c.is_control() || matches!(c, '\u{202A}'..='\u{202E}' | '\u{2066}'..='\u{2069}')
}

/// `s` with every unsafe character written as an escape: `\n`, `\r`, `\t`,
/// `\x1b` (below U+0080) or `\u{202e}`; everything else, backslashes
/// included, is unchanged. Borrows when there is nothing to escape.
pub(crate) fn escape(s: &str) -> Cow<'_, str> {
    if !s.chars().any(is_unsafe) {
        return Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len() + 8);
    for c in s.chars() {
        match c {
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if is_unsafe(c) && (c as u32) < 0x80 => {
                out.push_str(&format!("\\x{:02x}", c as u32));
            }
            c if is_unsafe(c) => out.push_str(&format!("\\u{{{:x}}}", c as u32)),
            c => out.push(c),
        }
    }
    Cow::Owned(out)
}

/// An error and its causes as one line, `what: why: why`, as anyhow's
/// `{:#}` writes it, but without saying anything twice: a cause whose text
/// the line already ends with is left out, and a cause that starts with
/// what the line ends with (from a `: ` on) adds only the rest. Errors
/// that print their source and also return it from `source()` (the
/// core's I/O errors, `bvhkit-write`'s) would otherwise say "No space
/// left on device" twice, and a context naming the output over an error
/// naming it too, "writing x.bvh: writing x.bvh".
pub(crate) fn error_chain(err: &anyhow::Error) -> String {
    let mut line = String::new();
    for cause in err.chain() {
        let text = cause.to_string();
        if line.is_empty() {
            line = text;
            continue;
        }
        if line.ends_with(&text) {
            continue;
        }
        // The longest end of the line, from a segment's start, that the
        // cause starts with.
        let starts = std::iter::once(0).chain(line.match_indices(": ").map(|(i, _)| i + 2));
        let overlap = starts.map(|i| &line[i..]).find(|end| text.starts_with(end));
        match overlap {
            Some(end) => {
                let rest = text[end.len()..].to_string();
                line.push_str(&rest);
            }
            None => {
                line.push_str(": ");
                line.push_str(&text);
            }
        }
    }
    line
}

/// JSON text with the unsafe characters serde leaves as they are (DEL, C1
/// controls, bidirectional controls; serde escapes those below U+0020 in strings)
/// written as `\uXXXX` escapes. Outside strings JSON is ASCII, so this
/// only touches strings, and the JSON parses to the same values.
pub(crate) fn escape_json(json: &str) -> Cow<'_, str> {
    // Raw line ends and tabs are whitespace between tokens (serde escapes them in strings).
    let unsafe_in_json = |c: char| is_unsafe(c) && !matches!(c, '\n' | '\r' | '\t');
    if !json.chars().any(unsafe_in_json) {
        return Cow::Borrowed(json);
    }
    let mut out = String::with_capacity(json.len() + 8);
    for c in json.chars() {
        if unsafe_in_json(c) {
            out.push_str(&format!("\\u{:04x}", c as u32));
        } else {
            out.push(c);
        }
    }
    Cow::Owned(out)
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
    fn a_cause_already_said_is_said_once() {
        let os = || std::io::Error::from_raw_os_error(28);
        let said = os().to_string();
        // The core's I/O error shows its source and returns it.
        let core = anyhow::Error::from(bvhkit::Error::from(os())).context("a.bvh: writing b.bvh");
        assert_eq!(error_chain(&core), format!("a.bvh: writing b.bvh: {said}"));
        assert_eq!(format!("{core:#}"), format!("a.bvh: writing b.bvh: {said}: {said}"));
        // Causes that add something are all kept, in order.
        let plain = anyhow::Error::from(os()).context("writing b.bvh").context("a.bvh");
        assert_eq!(error_chain(&plain), format!("a.bvh: writing b.bvh: {said}"));
        // A context naming the output over an error that names it too.
        let named = anyhow::Error::from(std::io::Error::other(format!("writing b.bvh: {said}")))
            .context("a.bvh: writing b.bvh");
        assert_eq!(error_chain(&named), format!("a.bvh: writing b.bvh: {said}"));
        // Overlaps count from a segment's start only: "xb" does not end in "b: c"'s "b".
        let partial = anyhow::Error::from(std::io::Error::other("b: c")).context("a: xb");
        assert_eq!(error_chain(&partial), "a: xb: b: c");
    }

    #[test]
    fn plain_text_is_borrowed_unchanged() {
        for s in ["Hips", "l_hand/thumb.01", "é 日本 \\ 'quoted'", ""] {
            assert!(matches!(escape(s), Cow::Borrowed(b) if b == s), "{s}");
        }
    }

    #[test]
    fn control_and_bidi_characters_are_escaped() {
        assert_eq!(escape("a\x1b[2Jb"), "a\\x1b[2Jb");
        assert_eq!(escape("x\ny\rz\t"), "x\\ny\\rz\\t");
        assert_eq!(escape("\0\x7f"), "\\x00\\x7f");
        assert_eq!(escape("\u{9b}31m"), "\\u{9b}31m", "C1 CSI");
        assert_eq!(escape("abc\u{202e}cba"), "abc\\u{202e}cba");
        assert_eq!(escape("\u{2066}x\u{2069}"), "\\u{2066}x\\u{2069}");
        // Nothing unsafe survives, whatever the input.
        let all: String = (0u32..0x3000).filter_map(char::from_u32).collect();
        assert!(!escape(&all).chars().any(is_unsafe));
    }

    #[test]
    fn json_keeps_its_values() {
        let name = "a\u{1b}b\u{7f}\u{9b}c\u{202e}d\"\\";
        let json = serde_json::to_string(&[name]).unwrap();
        let safe = escape_json(&json);
        assert!(!safe.chars().any(is_unsafe), "{safe}");
        assert_eq!(safe, r#"["a\u001bb\u007f\u009bc\u202ed\"\\"]"#);
        let back: Vec<String> = serde_json::from_str(&safe).unwrap();
        assert_eq!(back, [name]);
        assert!(matches!(escape_json("[1,\n\t2]"), Cow::Borrowed(_)));
        let pretty = serde_json::to_string_pretty(&[name]).unwrap();
        let back: Vec<String> = serde_json::from_str(&escape_json(&pretty)).unwrap();
        assert_eq!(back, [name]);
    }
}
