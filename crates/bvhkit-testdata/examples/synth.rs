//! Writes a synthetic BVH clip of about N MB to standard output:
//! `cargo run --release -p bvhkit-testdata --example synth -- 100 > synth.bvh`
//! (the input of the README's command-line timings).
use std::io::Write;

fn main() -> std::io::Result<()> {
    let mb: usize = match std::env::args().nth(1).map(|a| a.parse()) {
        None => 100,
        Some(Ok(mb)) => mb,
        Some(Err(_)) => {
            eprintln!("usage: synth [MEGABYTES]");
            std::process::exit(2);
        }
    };
    let text = bvhkit_testdata::synth_text_of_size(1, mb * 1_000_000);
    std::io::stdout().lock().write_all(text.as_bytes())
}
