//! Compiles the catalogue of the papers' results (`catalogue/*.toml`, read by `ordo reproduce`)
//! into the binary: every TOML file there, in name order, so that a paper's entries land by adding
//! its file, with no code to change.

use std::fmt::Write;
use std::path::Path;

fn main() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("catalogue");
    println!("cargo:rerun-if-changed={}", dir.display());
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .expect("crates/ordo-cli/catalogue exists")
        .map(|e| e.expect("a readable catalogue directory").path())
        .filter(|p| p.extension().is_some_and(|e| e == "toml"))
        .collect();
    files.sort();
    let mut code = String::from("/// The catalogue's files: (file name, contents).\npub const FILES: &[(&str, &str)] = &[\n");
    for f in &files {
        println!("cargo:rerun-if-changed={}", f.display());
        let name = f.file_name().unwrap().to_string_lossy();
        writeln!(
            code,
            "    ({name:?}, include_str!({:?})),",
            f.display().to_string()
        )
        .unwrap();
    }
    code += "];\n";
    let out = Path::new(&std::env::var("OUT_DIR").expect("cargo sets OUT_DIR"))
        .join("catalogue_files.rs");
    std::fs::write(out, code).expect("OUT_DIR is writable");
}
