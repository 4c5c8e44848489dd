//! Structure-aware: a small description (`Plan`, built by `arbitrary` from
//! the fuzzer's bytes) expands to a BVH text of up to 4 MiB, large
//! enough for the parallel parser to split it across threads and for the
//! streaming reader to cross many reads, then damaged by a few edits; the
//! text goes through the same checks as the `parse` target.
#![no_main]

mod common;

use arbitrary::Arbitrary;
use libfuzzer_sys::fuzz_target;

#[derive(Arbitrary, Debug)]
struct Plan {
    /// Joints below the root (up to 63), each a chain or a sibling.
    joints: u8,
    /// Per joint: bits 0-2 a channel layout, bit 3 a sibling instead of a
    /// child, bit 4 an End Site.
    shapes: Vec<u8>,
    /// Values to cycle through: (digits, places, spelling).
    numbers: Vec<(i32, u8, u8)>,
    /// Added to the channel count of each row, cycled (0 most of the time).
    row_deltas: Vec<i8>,
    /// Line ends: 0 LF, 1 CRLF, 2 CR, 3 mixed.
    eol: u8,
    /// Motion size: with bit 7 set, 2 MiB (where the parallel parser
    /// starts splitting across threads) plus 128 KiB per unit of bits 0-3
    /// (up to 4 MiB); else 8 KiB per unit, 1 to 16 (quicker runs, more of
    /// them).
    size: u8,
    /// `Frames:` as written: `None` the row count, else this offset from it.
    declared: Option<i8>,
    /// Byte strings inserted into the text at these fractions of its length.
    edits: Vec<(u16, Vec<u8>)>,
}

const LAYOUTS: [&str; 6] = [
    "3 Zrotation Xrotation Yrotation",
    "3 Xrotation Yrotation Zrotation",
    "6 Xposition Yposition Zposition Zrotation Xrotation Yrotation",
    "0",
    "1 Yrotation",
    "6 Zrotation Xrotation Yrotation Xposition Yposition Zposition",
];

fn eol(plan: &Plan, i: usize) -> &'static str {
    match plan.eol % 4 {
        0 => "\n",
        1 => "\r\n",
        2 => "\r",
        _ => ["\n", "\r\n", "\r"][i % 3],
    }
}

fn number(out: &mut String, (digits, places, spelling): (i32, u8, u8)) {
    let places = i32::from(places % 9);
    let v = f64::from(digits) / 10f64.powi(places);
    match spelling % 8 {
        0..=3 => out.push_str(&format!("{v:.*}", places as usize)),
        4 => out.push_str(&format!("{v:e}")),
        5 => out.push_str(&format!("{v}")),
        6 => out.push_str(&format!("+{:.*}", places as usize, v.abs())),
        _ => out.push_str(&format!("{digits}")),
    }
}

fn expand(plan: &Plan) -> Vec<u8> {
    let joints = usize::from(plan.joints % 64);
    let shape = |i: usize| plan.shapes.get(i).copied().unwrap_or(0);
    let mut s = String::from("HIERARCHY");
    s.push_str(eol(plan, 0));
    let mut channels = 0;
    let mut depth = 0;
    let mut line = 1;
    for j in 0..=joints {
        let sh = shape(j);
        let layout = if j == 0 { LAYOUTS[2] } else { LAYOUTS[usize::from(sh % 6)] };
        channels += layout.split(' ').next().and_then(|n| n.parse::<usize>().ok()).unwrap_or(0);
        if j > 0 && sh & 8 != 0 && depth > 1 {
            // A sibling: close the previous joint first.
            s.push('}');
            s.push_str(eol(plan, line));
            depth -= 1;
        }
        let kw = if j == 0 { "ROOT" } else { "JOINT" };
        s.push_str(&format!("{kw} j{j}{}{{{}", eol(plan, line), eol(plan, line + 1)));
        s.push_str(&format!(
            "OFFSET {j} 1.5 -2{}CHANNELS {layout}{}",
            eol(plan, line + 2),
            eol(plan, line + 3)
        ));
        line += 4;
        depth += 1;
        if sh & 16 != 0 {
            s.push_str(&format!("End Site {{ OFFSET 0 1 0 }}{}", eol(plan, line)));
            line += 1;
        }
    }
    for _ in 0..depth {
        s.push('}');
        s.push_str(eol(plan, line));
        line += 1;
    }
    // Rows up to the motion size.
    let units = usize::from(plan.size % 16);
    let target = if plan.size & 0x80 != 0 {
        (2 << 20) + units * (128 << 10)
    } else {
        (1 + units) * (8 << 10)
    };
    let mut motion = String::new();
    let mut rows = 0usize;
    let mut k = 0usize;
    while motion.len() < target && (channels > 0 || rows < 1000) {
        let delta = plan.row_deltas.get(rows % plan.row_deltas.len().max(1)).copied().unwrap_or(0);
        let delta = if delta.unsigned_abs() > 8 { 0 } else { isize::from(delta) };
        let n = (channels as isize + delta).max(0) as usize;
        for v in 0..n {
            if v > 0 {
                motion.push(' ');
            }
            let x = plan.numbers.get(k % plan.numbers.len().max(1)).copied().unwrap_or((0, 0, 0));
            number(&mut motion, x);
            k += 1;
        }
        motion.push_str(eol(plan, line + rows));
        rows += 1;
    }
    let declared = match plan.declared {
        None => rows as i64,
        Some(d) => (rows as i64 + i64::from(d)).max(0),
    };
    s.push_str(&format!(
        "MOTION{}Frames: {declared}{}Frame Time: 0.008333{}",
        eol(plan, 1),
        eol(plan, 2),
        eol(plan, 3)
    ));
    s.push_str(&motion);
    let mut bytes = s.into_bytes();
    for (at, ins) in plan.edits.iter().take(4) {
        let at = bytes.len() * usize::from(*at) / 65536;
        let ins = &ins[..ins.len().min(64)];
        bytes.splice(at..at, ins.iter().copied());
    }
    bytes
}

fuzz_target!(|plan: Plan| common::check(&expand(&plan)));
