//! bvhkit
