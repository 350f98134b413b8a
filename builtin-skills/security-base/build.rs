//! Converts the secrets rules (`src/secret_rules.yaml`, the file people
//! edit) to JSON in OUT_DIR: the component parses JSON at start-up, which
//! is many times faster than YAML inside WebAssembly. The rules are still
//! checked field by field when the component loads them (and by the unit
//! tests).

use std::path::PathBuf;

fn main() {
    let src = PathBuf::from("src/secret_rules.yaml");
    println!("cargo:rerun-if-changed={}", src.display());
    let yaml = std::fs::read_to_string(&src).unwrap_or_else(|e| panic!("{}: {e}", src.display()));
    let value: serde_json::Value =
        serde_yaml::from_str(&yaml).unwrap_or_else(|e| panic!("{}: {e}", src.display()));
    let out = PathBuf::from(std::env::var("OUT_DIR").expect("OUT_DIR")).join("secret_rules.json");
    std::fs::write(&out, value.to_string()).unwrap_or_else(|e| panic!("{}: {e}", out.display()));
}
