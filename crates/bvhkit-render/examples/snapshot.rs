//! Writes a few pictures of a synthetic walker to a folder, for a look.
//!
//! `cargo run -p bvhkit-render --example snapshot -- /tmp/render`

#[path = "../tests/common/walker.rs"]
mod walker;

use bvhkit_render::raster::{self, AnimationOptions, RenderOptions, SheetOptions};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let dir = std::path::PathBuf::from(std::env::args().nth(1).unwrap_or_else(|| ".".into()));
    std::fs::create_dir_all(&dir)?;
    let a = walker::walker("a", 90, 0.0);
    let b = walker::walker("b", 60, 0.0);
    let opts = RenderOptions::default();
    std::fs::write(dir.join("one.png"), raster::render_png(&[&a], 10, &opts)?)?;
    std::fs::write(dir.join("two.png"), raster::render_png(&[&a, &b], 20, &opts)?)?;
    let front = RenderOptions { azimuth: 90.0, elevation: 5.0, ..opts.clone() };
    std::fs::write(dir.join("side.png"), raster::render_png(&[&a], 7, &front)?)?;
    let small = RenderOptions { width: 320, height: 240, ..opts.clone() };
    std::fs::write(
        dir.join("sheet.png"),
        raster::render_contact_sheet(&a, &small, &SheetOptions::default())?,
    )?;
    let gif_bytes = raster::render_gif(&[&a], &small, &AnimationOptions::default())?;
    std::fs::write(dir.join("walk.gif"), &gif_bytes)?;
    // Composite the GIF's delta frames and save frame 45, to look at the
    // palette mapping next to the PNG of the same frame.
    let mut d = gif::DecodeOptions::new();
    d.set_color_output(gif::ColorOutput::RGBA);
    let mut dec = d.read_info(gif_bytes.as_slice())?;
    let (w, h) = (usize::from(dec.width()), usize::from(dec.height()));
    let mut canvas = vec![0u8; w * h * 4];
    for _ in 0..=45 {
        let Some(f) = dec.read_next_frame()? else { break };
        let (fx, fy, fw) = (usize::from(f.left), usize::from(f.top), usize::from(f.width));
        for (row, src) in f.buffer.chunks_exact(fw * 4).enumerate() {
            let at = ((fy + row) * w + fx) * 4;
            canvas[at..at + fw * 4].copy_from_slice(src);
        }
    }
    let img = raster::Image { width: w as u32, height: h as u32, data: canvas };
    std::fs::write(dir.join("gif_frame45.png"), img.to_png()?)?;
    std::fs::write(dir.join("png_frame45.png"), raster::render_png(&[&a], 45, &small)?)?;
    Ok(())
}
