//! The floor plan, checked: no protocol family imports another family, and the shared kit imports
//! none (see `docs/architecture.md`).
//!
//! ```text
//!   protocols/mod.rs (the registry) ──▶ every family
//!   family (nocc/, twopl/, silo/, mvcc/, vll/, deterministic/, partitioned/, …)
//!        ──▶ kit/, txn, storage, check, options        never another family
//!   kit/ ──▶ txn, storage, check, options               never a family
//!   range_locks/ ──▶ kit/                               never a family
//! ```
//!
//! The test reads the sources and looks at code (comments left out) for a path into a family other
//! than the file's own: `protocols::<family>` or `super::<family>` from a family's root. Doc links to
//! another family are comments, and allowed: they teach, they do not depend.

use std::path::{Path, PathBuf};

/// The source folder of the protocols.
fn protocols_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src/protocols")
}

/// The families: every folder of `protocols/` but the kit.
fn families() -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(protocols_dir())
        .expect("protocols/ is readable")
        .map(|e| e.expect("a directory entry"))
        .filter(|e| e.path().is_dir())
        .map(|e| e.file_name().into_string().expect("a UTF-8 name"))
        .filter(|n| n != "kit")
        .collect();
    names.sort();
    names
}

/// Every `.rs` file under `dir`.
fn sources(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).expect("a readable folder") {
        let p = e.expect("a directory entry").path();
        if p.is_dir() {
            out.extend(sources(&p));
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
    out.sort();
    out
}

/// The code of `text`: each line up to its `//` comment (string literals holding `//` are rare in
/// `use` paths, and a path inside a string is no import anyway).
fn code_lines(text: &str) -> impl Iterator<Item = (usize, &str)> {
    text.lines()
        .enumerate()
        .map(|(i, l)| (i + 1, l.split("//").next().unwrap_or("")))
}

/// The families that `code` names by path, other than `own`.
fn foreign_paths(
    code: &str,
    families: &[String],
    own: Option<&str>,
    root_file: bool,
) -> Vec<String> {
    let mut found = Vec::new();
    for f in families {
        if Some(f.as_str()) == own {
            continue;
        }
        let named = |prefix: &str| {
            code.match_indices(&format!("{prefix}{f}")).any(|(i, m)| {
                let after = code[i + m.len()..].chars().next();
                let before = code[..i].chars().last();
                !after.is_some_and(|c| c.is_alphanumeric() || c == '_')
                    && !before.is_some_and(|c| c.is_alphanumeric() || c == '_')
            })
        };
        // `super::<family>` reaches a sibling family only from a family's root file (`mod.rs`), or
        // as `super::super::<family>` from below it.
        if named("protocols::") || named("super::super::") || (root_file && named("super::")) {
            found.push(f.clone());
        }
    }
    found
}

/// Every import of a family from a place the floor plan forbids: `(file, line, family)`.
fn violations() -> Vec<(String, usize, String)> {
    let dir = protocols_dir();
    let families = families();
    let mut bad = Vec::new();
    let mut check = |file: &Path, own: Option<&str>| {
        let text = std::fs::read_to_string(file).expect("a readable source file");
        let root_file = file.file_name().is_some_and(|n| n == "mod.rs");
        for (line, code) in code_lines(&text) {
            for f in foreign_paths(code, &families, own, root_file) {
                let shown = file
                    .strip_prefix(&dir)
                    .unwrap_or(file)
                    .display()
                    .to_string();
                bad.push((shown, line, f));
            }
        }
    };
    for f in &families {
        for file in sources(&dir.join(f)) {
            check(&file, Some(f));
        }
    }
    for file in sources(&dir.join("kit")) {
        check(&file, None);
    }
    for file in sources(&dir.join("../range_locks")) {
        check(&file, None);
    }
    bad
}

#[test]
fn no_family_imports_another_family() {
    let families = families();
    for f in [
        "nocc",
        "twopl",
        "silo",
        "mvcc",
        "vll",
        "deterministic",
        "partitioned",
    ] {
        assert!(families.iter().any(|n| n == f), "family {f} is listed");
    }
    let bad = violations();
    assert!(
        bad.is_empty(),
        "imports across families (move what they share to protocols/kit/):\n{}",
        bad.iter()
            .map(|(file, line, f)| format!("  {file}:{line} uses {f}"))
            .collect::<Vec<_>>()
            .join("\n")
    );
}

#[test]
fn the_check_finds_what_it_must() {
    let fams = vec!["vll".to_string(), "twopl".to_string(), "nocc".to_string()];
    let find = |code: &str, own, root| foreign_paths(code, &fams, own, root);
    assert_eq!(
        find("use crate::protocols::vll::sca::Sca;", Some("twopl"), false),
        ["vll"]
    );
    assert_eq!(
        find("use super::super::vll::latch;", Some("nocc"), false),
        ["vll"]
    );
    assert_eq!(
        find("use super::twopl::Detect;", Some("nocc"), true),
        ["twopl"]
    );
    assert!(
        find("use super::twopl::Detect;", Some("nocc"), false).is_empty(),
        "a sibling file"
    );
    assert!(
        find("use crate::protocols::vll::Vll;", Some("vll"), false).is_empty(),
        "its own"
    );
    assert!(find("use crate::protocols::kit::sca;", Some("vll"), false).is_empty());
    assert!(
        find("use crate::protocols::vllr::X;", Some("nocc"), false).is_empty(),
        "whole names"
    );
    let comment: Vec<_> = code_lines("let x = 1; // see crate::protocols::vll").collect();
    assert!(
        find(comment[0].1, Some("nocc"), false).is_empty(),
        "comments are not imports"
    );
    assert_eq!(
        find("crate::protocols::nocc::NoCC", None, false),
        ["nocc"],
        "from the kit"
    );
}
