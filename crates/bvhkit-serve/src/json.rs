//! Compact JSON encoding of clips for the page.

use std::fmt::Write as _;

use bvhkit_render::Clip;
use bvhkit_render::units::of_clip;

/// Encodes clips as the compact JSON document the page fetches from `/clips.json`.
///
/// The document is `{"version":1,"clips":[...]}` where each clip has the fields of
/// [`Clip`] (`name`, `frame_time`, `n_frames`, `joint_names`, `parents`,
/// `is_end_site`) plus `n_joints`, `glitch_frames` (the frames the camera
/// leaves out of its framing: [`Clip::glitch_frames`]), `units` (the guess
/// of [`of_clip`]: `symbol` such as `"cm"`, `label`, `size` in
/// file units, and `metres_per_unit`, by which the page scales the clip to
/// metres), and `positions`
/// flattened to `[x, y, z, x, y, z, ...]`, frame-major, in file units with
/// Y up.
///
/// Positions and the frame time are rounded to 6 significant digits.
/// Non-finite numbers are written as `null`, so the output is always valid JSON.
/// Inconsistent clips are repaired rather than rejected: `n_joints` is
/// `parents.len()`, `n_frames` is clamped to the frames `positions` really holds,
/// missing names become `joint<i>`, and a parent that is not a smaller index
/// becomes `null`.
///
/// # Example
/// ```
/// use bvhkit_render::{Clip, glam::DVec3};
///
/// let clip = Clip {
///     name: "stick".into(),
///     joint_names: vec!["Hips".into(), "Head".into()],
///     parents: vec![None, Some(0)],
///     is_end_site: vec![false, true],
///     frame_time: 1.0 / 30.0,
///     n_frames: 1,
///     positions: vec![DVec3::ZERO, DVec3::new(0.0, 1.0 / 3.0, f64::NAN)],
/// };
/// let json = bvhkit_serve::clips_json(&[clip]);
/// assert!(json.contains(r#""parents":[null,0]"#));
/// assert!(json.contains(r#""positions":[0,0,0,0,0.333333,null]"#));
/// ```
#[must_use]
pub fn clips_json(clips: &[Clip]) -> String {
    let n_numbers: usize = clips.iter().map(|c| c.positions.len() * 3).sum();
    let mut out = String::with_capacity(64 + n_numbers * 9);
    out.push_str(r#"{"version":1,"clips":["#);
    for (clip_idx, clip) in clips.iter().enumerate() {
        if clip_idx > 0 {
            out.push(',');
        }
        push_clip(&mut out, clip);
    }
    out.push_str("]}");
    out
}

pub(crate) fn push_clip(out: &mut String, clip: &Clip) {
    let n_joints = clip.parents.len();
    let n_frames = clip.positions.len().checked_div(n_joints).map_or(0, |n| n.min(clip.n_frames));

    out.push_str(r#"{"name":"#);
    push_str(out, &clip.name);
    out.push_str(r#","frame_time":"#);
    push_num(out, clip.frame_time);
    let _ = write!(out, r#","n_frames":{n_frames},"n_joints":{n_joints},"joint_names":["#);
    for joint_idx in 0..n_joints {
        if joint_idx > 0 {
            out.push(',');
        }
        match clip.joint_names.get(joint_idx) {
            Some(name) => push_str(out, name),
            None => {
                let _ = write!(out, r#""joint{joint_idx}""#);
            }
        }
    }
    out.push_str(r#"],"parents":["#);
    for (joint_idx, parent) in clip.parents.iter().enumerate() {
        if joint_idx > 0 {
            out.push(',');
        }
        match parent {
            Some(p) if *p < joint_idx => {
                let _ = write!(out, "{p}");
            }
            _ => out.push_str("null"),
        }
    }
    out.push_str(r#"],"is_end_site":["#);
    for joint_idx in 0..n_joints {
        if joint_idx > 0 {
            out.push(',');
        }
        let end = clip.is_end_site.get(joint_idx).copied().unwrap_or(false);
        out.push_str(if end { "true" } else { "false" });
    }
    out.push_str(r#"],"glitch_frames":["#);
    for (i, f) in clip.glitch_frames().iter().filter(|f| **f < n_frames).enumerate() {
        if i > 0 {
            out.push(',');
        }
        let _ = write!(out, "{f}");
    }
    let units = of_clip(clip);
    out.push_str(r#"],"units":{"symbol":"#);
    push_str(out, units.units.symbol());
    out.push_str(r#","label":"#);
    push_str(out, &units.label());
    out.push_str(r#","size":"#);
    push_num(out, units.size);
    out.push_str(r#","metres_per_unit":"#);
    push_num(out, units.metres_per_unit());
    out.push_str(r#"},"positions":["#);
    for (i, p) in clip.positions[..n_frames * n_joints].iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        push_num(out, p.x);
        out.push(',');
        push_num(out, p.y);
        out.push(',');
        push_num(out, p.z);
    }
    out.push_str("]}");
}

/// Writes `s` as a JSON string literal.
fn push_str(out: &mut String, s: &str) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if (c as u32) < 0x20 => {
                let _ = write!(out, "\\u{:04x}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push('"');
}

/// Writes `v` rounded to 6 significant digits, as short as possible;
/// `null` when it is not finite.
pub(crate) fn push_num(out: &mut String, v: f64) {
    if !v.is_finite() {
        out.push_str("null");
        return;
    }
    if v == 0.0 {
        out.push('0');
        return;
    }
    let exp = v.abs().log10().floor() as i32;
    if !(-5..=15).contains(&exp) {
        // `{:e}` prints the shortest mantissa, e.g. `1.5e-7`, which is valid JSON.
        let rounded: f64 = format!("{v:.5e}").parse().unwrap_or(v);
        let _ = write!(out, "{rounded:e}");
        return;
    }
    let decimals = (5 - exp).max(0) as usize;
    let start = out.len();
    let _ = write!(out, "{v:.decimals$}");
    if out[start..].contains('.') {
        let trimmed = out[start..].trim_end_matches('0').trim_end_matches('.').len();
        out.truncate(start + trimmed);
    }
    if &out[start..] == "-0" {
        out.truncate(start);
        out.push('0');
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn num(v: f64) -> String {
        let mut s = String::new();
        push_num(&mut s, v);
        s
    }

    #[test]
    fn numbers_are_short_and_valid() {
        assert_eq!(num(0.0), "0");
        assert_eq!(num(-0.0), "0");
        assert_eq!(num(1.0), "1");
        assert_eq!(num(-12.5), "-12.5");
        assert_eq!(num(123.456789), "123.457");
        assert_eq!(num(1.0 / 3.0), "0.333333");
        assert_eq!(num(0.000123456789), "0.000123457");
        assert_eq!(num(-0.0000001), "-1e-7");
        assert_eq!(num(1234567.0), "1234567");
        assert_eq!(num(1e300), "1e300");
        assert_eq!(num(f64::NAN), "null");
        assert_eq!(num(f64::INFINITY), "null");
        assert_eq!(num(f64::NEG_INFINITY), "null");
        assert_eq!(num(-1e-9), "-1e-9");
        assert_eq!(num(0.0000049999999), "5e-6");
        assert_eq!(num(0.00001), "0.00001");
    }

    #[test]
    fn strings_are_escaped() {
        let mut s = String::new();
        push_str(&mut s, "a\"b\\c\nd\u{1}é");
        assert_eq!(s, r#""a\"b\\c\nd\u0001é""#);
    }
}
