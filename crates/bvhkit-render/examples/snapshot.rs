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
    std::fs::write(
        dir.join("walk.gif"),
        raster::render_gif(&[&a], &small, &AnimationOptions::default())?,
    )?;
    Ok(())
}
