use std::path::{Path, PathBuf};

/// The shared corpus folder, `../shared/corpus` from the repository root.
pub(crate) fn corpus_dir() -> Option<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/corpus");
    if dir.is_dir() {
        Some(dir)
    } else {
        eprintln!("SKIPPED: the shared corpus ({}) is absent", dir.display());
        None
    }
}

/// Every `.bvh` file of the corpus, sorted by name.
pub(crate) fn corpus_files() -> Vec<PathBuf> {
    let Some(dir) = corpus_dir() else { return Vec::new() };
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "bvh"))
        .collect();
    files.sort();
    assert!(files.len() >= 41, "the corpus should hold at least 41 files, found {}", files.len());
    files
}

pub(crate) fn stem(p: &Path) -> String {
    p.file_stem().unwrap().to_string_lossy().into_owned()
}
