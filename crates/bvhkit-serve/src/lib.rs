//! bvhkit-serve
