//! Integration tests of the core library.
mod corpus;
mod edit;
mod edit_b;
mod fk;
mod hostile;
mod lenient;
mod retarget;
mod roundtrip;
mod util;
