//! The self-contained HTML report of `bvh lint --html`: per file, the
//! metrics, a timeline of the findings (one row per kind, a bar per span,
//! its message and joints on hover), the feet's heights with their contacts
//! and the spike ratio over the clip, then the findings as a table. No
//! script and no network: inline CSS and SVG only.

use std::fmt::Write as _;

use bvhkit::quality::{Kind, Report};

/// Width of the plots in SVG units.
const W: f64 = 1000.0;
/// Left margin for the row labels.
const LEFT: f64 = 130.0;

fn esc(s: &str) -> String {
    let mut o = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => o.push_str("&amp;"),
            '<' => o.push_str("&lt;"),
            '>' => o.push_str("&gt;"),
            '"' => o.push_str("&quot;"),
            '\'' => o.push_str("&#39;"),
            c if c.is_control() => o.push('\u{fffd}'),
            c => o.push(c),
        }
    }
    o
}

fn color(kind: Kind) -> &'static str {
    match kind {
        Kind::Nan => "#000000",
        Kind::Skate => "#d62728",
        Kind::Spike => "#ff7f0e",
        Kind::Pop => "#9467bd",
        Kind::EulerJump => "#8c564b",
        Kind::Gimbal => "#e377c2",
        Kind::BoneStretch => "#7f7f7f",
        Kind::FarJoint => "#bcbd22",
        Kind::GroundPenetration => "#1f77b4",
        Kind::Floating => "#17becf",
        Kind::Frozen => "#2ca02c",
        Kind::Seam => "#393b79",
    }
}

const FOOT_COLORS: [&str; 4] = ["#1f77b4", "#d62728", "#2ca02c", "#9467bd"];

/// The whole page for `reports` (file name, report).
pub(super) fn page(reports: &[(String, &Report)], ignore: &[Kind]) -> String {
    let mut s = String::from(
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\
<title>bvh lint report</title>\n<style>\n\
body{font:14px system-ui,sans-serif;margin:24px;color:#222;max-width:1200px}\n\
h1{font-size:22px}h2{font-size:17px;margin-top:36px;border-top:1px solid #ccc;padding-top:12px}\n\
table{border-collapse:collapse;margin:8px 0}td,th{border:1px solid #ddd;padding:3px 8px;text-align:left}\n\
th{background:#f4f4f4}.ok{color:#2a7d2a;font-weight:600}.bad{color:#b00;font-weight:600}\n\
.metrics td:nth-child(2){text-align:right;font-variant-numeric:tabular-nums}\n\
svg{display:block;margin:8px 0;background:#fff;border:1px solid #ddd}\n\
svg text{font:11px system-ui,sans-serif}.note{color:#666}\n\
</style></head><body>\n<h1>bvh lint report</h1>\n",
    );
    let total: usize = reports.iter().map(|(_, r)| counted(r, ignore)).sum();
    let _ = writeln!(
        s,
        "<p>{} file(s), {} finding(s). Hover a bar for its frames, joints and message. \
         Formulas and thresholds: docs/quality.md.</p>",
        reports.len(),
        total
    );
    for (name, r) in reports {
        file_section(&mut s, name, r, ignore);
    }
    s.push_str("</body></html>\n");
    s
}

fn counted(r: &Report, ignore: &[Kind]) -> usize {
    r.findings.iter().filter(|f| !ignore.contains(&f.kind)).count()
}

fn file_section(s: &mut String, name: &str, r: &Report, ignore: &[Kind]) {
    let n = counted(r, ignore);
    let _ = writeln!(
        s,
        "<h2>{}</h2>\n<p>{} frames at {:.3} fps, figure {:.2} m ({}), {} up{}, ground {:.3} m. \
         <span class=\"{}\">{}</span></p>",
        esc(name),
        r.frames,
        r.fps,
        r.size,
        esc(r.units.symbol()),
        esc(r.up.name()),
        if r.up_detected { " (detected)" } else { "" },
        r.ground,
        if n == 0 { "ok" } else { "bad" },
        if n == 0 { "No findings.".to_string() } else { format!("{n} finding(s).") },
    );
    for note in &r.notes {
        let _ = writeln!(s, "<p class=\"note\">Note: {}</p>", esc(note));
    }
    s.push_str("<table class=\"metrics\"><tr><th>metric</th><th>value</th></tr>");
    for (k, v) in r.metrics.entries() {
        let v = v.map_or("–".to_string(), |v| {
            if v.fract() == 0.0 && v.abs() < 1e15 { format!("{v}") } else { format!("{v:.5}") }
        });
        let _ = write!(s, "<tr><td>{k}</td><td>{v}</td></tr>");
    }
    s.push_str("</table>\n");
    timeline(s, r, ignore);
    feet_plot(s, r);
    findings_table(s, r, ignore);
}

fn x_of(frame: f64, frames: usize) -> f64 {
    LEFT + (W - LEFT - 10.0) * frame / (frames.max(2) - 1) as f64
}

fn axis(s: &mut String, frames: usize, y: f64) {
    let ticks = 10usize;
    for t in 0..=ticks {
        let f = (frames.saturating_sub(1)) * t / ticks;
        let x = x_of(f as f64, frames);
        let _ = write!(
            s,
            "<line x1=\"{x:.1}\" y1=\"{:.1}\" x2=\"{x:.1}\" y2=\"{:.1}\" stroke=\"#eee\"/>\
             <text x=\"{x:.1}\" y=\"{:.1}\" text-anchor=\"middle\" fill=\"#666\">{f}</text>",
            10.0,
            y,
            y + 13.0
        );
    }
}

/// One row per kind of finding, a bar per span.
fn timeline(s: &mut String, r: &Report, ignore: &[Kind]) {
    let kinds: Vec<Kind> = Kind::ALL
        .into_iter()
        .filter(|k| !ignore.contains(k) && r.findings.iter().any(|f| f.kind == *k))
        .collect();
    let row = 22.0;
    let h = 20.0 + row * kinds.len().max(1) as f64 + 20.0;
    let _ = write!(
        s,
        "<svg viewBox=\"0 0 {W} {h}\" width=\"{W}\" height=\"{h}\" role=\"img\" aria-label=\"findings timeline\">"
    );
    let _ = write!(s, "<text x=\"4\" y=\"14\" font-weight=\"600\">findings by frame</text>");
    axis(s, r.frames, h - 20.0);
    if kinds.is_empty() {
        let _ = write!(s, "<text x=\"{LEFT}\" y=\"36\" fill=\"#2a7d2a\">no findings</text>");
    }
    for (i, kind) in kinds.iter().enumerate() {
        let y = 20.0 + row * i as f64;
        let _ = write!(s, "<text x=\"4\" y=\"{:.1}\">{}</text>", y + 14.0, kind.name());
        for f in r.findings.iter().filter(|f| f.kind == *kind) {
            let x0 = x_of(f.frames.0 as f64, r.frames);
            let x1 = x_of(f.frames.1 as f64, r.frames);
            let joints = r.names(&f.joints);
            let shown = if joints.len() > 8 {
                format!("{} ... ({} joints)", joints[..8].join(", "), joints.len())
            } else {
                joints.join(", ")
            };
            let _ = write!(
                s,
                "<rect x=\"{:.1}\" y=\"{:.1}\" width=\"{:.1}\" height=\"{:.1}\" fill=\"{}\" opacity=\"0.85\">\
                 <title>frames {}-{}: {} [{}]</title></rect>",
                x0 - 1.0,
                y + 3.0,
                (x1 - x0 + 2.0).max(3.0),
                row - 6.0,
                color(*kind),
                f.frames.0,
                f.frames.1,
                esc(&f.message),
                esc(&shown)
            );
        }
    }
    s.push_str("</svg>\n");
}

/// The feet's heights above the ground with their contacts shaded, and
/// the spike ratio (largest acceleration over its threshold).
fn feet_plot(s: &mut String, r: &Report) {
    let series = &r.series;
    let n = r.frames;
    if n < 2 {
        return;
    }
    let (h, top, plot) = (200.0, 20.0, 150.0);
    let max_h = series
        .foot_height
        .iter()
        .flatten()
        .copied()
        .filter(|v| v.is_finite())
        .fold(0.1f64, f64::max)
        .min(2.0);
    let y_of =
        |v: f64| top + plot - plot * (v.clamp(-0.1 * max_h, max_h) + 0.1 * max_h) / (1.1 * max_h);
    let _ = write!(
        s,
        "<svg viewBox=\"0 0 {W} {h}\" width=\"{W}\" height=\"{h}\" role=\"img\" aria-label=\"feet heights\">"
    );
    let _ = write!(
        s,
        "<text x=\"4\" y=\"14\" font-weight=\"600\">feet height above the ground (m), contacts shaded; spike ratio (grey, 1 at the dashed line)</text>"
    );
    axis(s, n, h - 20.0);
    let g = y_of(0.0);
    let _ = write!(
        s,
        "<line x1=\"{LEFT}\" y1=\"{g:.1}\" x2=\"{:.1}\" y2=\"{g:.1}\" stroke=\"#999\"/><text x=\"4\" y=\"{:.1}\">ground</text>",
        W - 10.0,
        g + 4.0
    );
    let _ = write!(s, "<text x=\"4\" y=\"{:.1}\">{max_h:.2} m</text>", top + 8.0);
    // Spike ratio, scaled so that 1 sits at 60% of the plot.
    if !series.spike_ratio.is_empty() {
        let ys = |v: f64| top + plot - plot * 0.6 * v.clamp(0.0, 1.6);
        let one = ys(1.0);
        let _ = write!(
            s,
            "<line x1=\"{LEFT}\" y1=\"{one:.1}\" x2=\"{:.1}\" y2=\"{one:.1}\" stroke=\"#bbb\" stroke-dasharray=\"4 3\"/>",
            W - 10.0
        );
        polyline(s, series.spike_ratio.iter().map(|&v| ys(v)), n, "#bbbbbb");
    }
    for (i, (height, contact)) in series.foot_height.iter().zip(&series.contact).enumerate() {
        let c = FOOT_COLORS[i % FOOT_COLORS.len()];
        for (a, b) in bvhkit::quality::runs(contact.iter().copied()) {
            let (x0, x1) = (x_of(a as f64, n), x_of(b as f64, n));
            let _ = write!(
                s,
                "<rect x=\"{x0:.1}\" y=\"{:.1}\" width=\"{:.1}\" height=\"4\" fill=\"{c}\" opacity=\"0.5\"><title>{} in contact, frames {a}-{b}</title></rect>",
                top + plot + 2.0 + 5.0 * i as f64,
                (x1 - x0).max(1.0),
                esc(&r.feet[i].name)
            );
        }
        polyline(s, height.iter().map(|&v| y_of(v)), n, c);
        let _ = write!(
            s,
            "<text x=\"4\" y=\"{:.1}\" fill=\"{c}\">{}</text>",
            top + 40.0 + 14.0 * i as f64,
            esc(&r.feet[i].name)
        );
    }
    s.push_str("</svg>\n");
}

fn polyline(s: &mut String, ys: impl Iterator<Item = f64>, n: usize, color: &str) {
    // At most ~2 points per pixel.
    let step = (n / 2000).max(1);
    let pts: Vec<String> = ys
        .enumerate()
        .filter(|(f, y)| f % step == 0 && y.is_finite())
        .map(|(f, y)| format!("{:.1},{:.1}", x_of(f as f64, n), y))
        .collect();
    let _ = write!(
        s,
        "<polyline fill=\"none\" stroke=\"{color}\" stroke-width=\"1.2\" points=\"{}\"/>",
        pts.join(" ")
    );
}

fn findings_table(s: &mut String, r: &Report, ignore: &[Kind]) {
    let shown: Vec<_> = r.findings.iter().filter(|f| !ignore.contains(&f.kind)).collect();
    if shown.is_empty() {
        return;
    }
    s.push_str("<table><tr><th>frames</th><th>kind</th><th>joints</th><th>message</th></tr>");
    for f in shown.iter().take(500) {
        let joints = r.names(&f.joints);
        let j = if joints.len() > 6 {
            format!("{} ... ({})", joints[..6].join(", "), joints.len())
        } else {
            joints.join(", ")
        };
        let _ = write!(
            s,
            "<tr><td>{}-{}</td><td style=\"color:{}\">{}</td><td>{}</td><td>{}</td></tr>",
            f.frames.0,
            f.frames.1,
            color(f.kind),
            f.kind.name(),
            esc(&j),
            esc(&f.message)
        );
    }
    if shown.len() > 500 {
        let _ = write!(s, "<tr><td colspan=\"4\">... {} more</td></tr>", shown.len() - 500);
    }
    s.push_str("</table>\n");
}
