//! The end-to-end floor that `bvh check` is compared with in the README: read
//! a file into a fresh buffer the plain way (`std::fs::read`), split it on
//! ASCII whitespace and parse every token with `fast-float2`, on one core,
//! storing nothing (the same loop as the core's benchmark baseline).
//!
//! ```sh
//! cargo run --release -p bvhkit-testdata --example synth -- 100 > synth.bvh
//! cargo build --release -p bvhkit-cli --example split_floor
//! target/release/examples/split_floor synth.bvh
//! ```
#![allow(clippy::print_stdout, clippy::print_stderr)]

fn main() -> std::io::Result<()> {
    let Some(path) = std::env::args_os().nth(1) else {
        eprintln!("usage: split_floor FILE");
        std::process::exit(2);
    };
    let bytes = std::fs::read(path)?;
    let (mut sum, mut n) = (0.0f64, 0usize);
    for tok in bytes.split(u8::is_ascii_whitespace) {
        if tok.is_empty() {
            continue;
        }
        if let Ok(v) = fast_float2::parse::<f64, _>(tok) {
            sum += v;
            n += 1;
        }
    }
    println!("{n} numbers, sum {sum}");
    Ok(())
}
