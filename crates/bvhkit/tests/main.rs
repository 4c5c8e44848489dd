//! Integration tests of the core library.
mod corpus;
mod fk;
mod hostile;
mod lenient;
mod roundtrip;
mod util;
