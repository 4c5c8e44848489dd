//! Rasterisation with tiny-skia.
