//! The end-to-end floor that `bvh check` is compared with in the README: read
//! a file into a fresh buffer the plain way (`std::fs::read`), split it on
//! ASCII whitespace and parse every token with `fast-float2`, on one core,
//! storing nothing (`bvhkit_testdata::split_floor`, the core's benchmark
//! baseline).
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
    let (sum, n) = bvhkit_testdata::split_floor(&bytes);
    println!("{n} numbers, sum {sum}");
    Ok(())
}
