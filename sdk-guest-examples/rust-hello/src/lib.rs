//! rust-hello
