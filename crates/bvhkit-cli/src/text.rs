//! Text from files made safe for a terminal: the one place the CLI escapes.
//!
//! Joint names, tokens quoted in error messages and file names come from
//! files the user did not write; printed raw, a name holding `ESC [ 2 J`
//! would clear the screen, and one holding `\r` or a bidirectional override
//! would hide what is printed before it. Every line the CLI prints that
//! contains such text goes through [`escape`]. JSON output needs nothing
//! more: serde escapes control characters itself.

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

#[cfg(test)]
mod tests {
    use super::*;

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
}
