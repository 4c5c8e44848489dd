//! Writes a synthetic BVH clip to standard output: of about N MB
//! (`cargo run --release -p bvhkit-testdata --example synth -- 100 > synth.bvh`,
//! the input of the README's command-line timings), or of J joints and F
//! frames (`... --example synth -- 72 2000 > clip.bvh`, the capture latency
//! benchmark's input).
use std::io::Write;

fn main() -> std::io::Result<()> {
    let args: Vec<usize> = match std::env::args().skip(1).map(|a| a.parse()).collect() {
        Ok(a) => a,
        Err(_) => usage(),
    };
    let text = match args[..] {
        [] => bvhkit_testdata::synth_text_of_size(1, 100_000_000),
        [mb] => bvhkit_testdata::synth_text_of_size(1, mb * 1_000_000),
        [joints, frames] => bvhkit_testdata::synth_text(1, joints, frames),
        _ => usage(),
    };
    std::io::stdout().lock().write_all(text.as_bytes())
}

fn usage() -> ! {
    eprintln!("usage: synth [MEGABYTES] | synth JOINTS FRAMES");
    std::process::exit(2);
}
