//! `ordo sql` and `ordo spec` as a user runs them.

use std::io::Write;
use std::process::{Command, Output, Stdio};

fn ordo(args: &[&str], stdin: &str) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_ordo"))
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run ordo");
    child
        .stdin
        .take()
        .unwrap()
        .write_all(stdin.as_bytes())
        .unwrap();
    child.wait_with_output().unwrap()
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

#[test]
fn sql_reads_statements_from_stdin_and_c() {
    let o = ordo(
        &["sql", "-p", "silo"],
        "CREATE TABLE t (k INT PRIMARY KEY, v TEXT);\nINSERT INTO t VALUES (1, 'one'),\n (2, 'two;');\nSELECT * FROM t WHERE k >= 2;\n",
    );
    assert!(o.status.success(), "{}", text(&o.stderr));
    let out = text(&o.stdout);
    assert!(out.contains("INSERT 0 2"), "{out}");
    assert!(out.contains(" 2 | two;"), "{out}");
    assert!(out.contains("(1 row)"), "{out}");
    let o = ordo(&["sql", "-c", "SELECT 1 + 2 * 3 AS x"], "");
    assert!(o.status.success());
    assert!(text(&o.stdout).contains(" 7"), "{}", text(&o.stdout));
}

#[test]
fn sql_errors_set_the_exit_code() {
    let o = ordo(&["sql", "-c", "SELEC 1"], "");
    assert_eq!(o.status.code(), Some(2));
    assert!(text(&o.stderr).contains("42601"), "{}", text(&o.stderr));
    let o = ordo(&["sql", "-c", "SELECT * FROM nosuch"], "");
    assert_eq!(o.status.code(), Some(1));
    assert!(text(&o.stderr).contains("relation \"nosuch\" does not exist"));
    let o = ordo(&["sql", "-p", "nosuch", "-c", "SELECT 1"], "");
    assert_eq!(o.status.code(), Some(2));
}

#[test]
fn spec_runs_and_malformed_specs_exit_2_with_file_and_line() {
    let dir = std::env::temp_dir().join(format!("ordo-spec-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let bad = dir.join("bad.spec");
    std::fs::write(
        &bad,
        "session s1\nstep a { SELECT 1; }\nstep b { UPDATE SET; }\n",
    )
    .unwrap();
    let o = ordo(&["spec", bad.to_str().unwrap(), "-p", "nocc"], "");
    assert_eq!(o.status.code(), Some(2));
    let err = text(&o.stderr);
    assert!(err.contains("bad.spec:3:"), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");

    let spec = concat!(env!("CARGO_MANIFEST_DIR"), "/../../specs/lost-update.spec");
    let o = ordo(&["spec", spec, "-p", "2pl-detect"], "");
    assert!(o.status.success(), "{}", text(&o.stderr));
    let out = text(&o.stdout);
    assert!(
        out.contains("<waiting ...>") && out.contains("deadlock detected"),
        "{out}"
    );
    let o = ordo(&["spec", spec, "-p", "silo", "--json"], "");
    assert!(o.status.success());
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["protocol"], "silo");
    assert_eq!(v["permutations"].as_array().unwrap().len(), 2);
    // Without --protocol, the spec's isolation level picks one (and says so when it falls back).
    let o = ordo(&["spec", spec], "");
    assert!(o.status.success());
    assert!(text(&o.stdout).contains("protocol: "));
    std::fs::remove_dir_all(&dir).ok();
}

/// A protocol that runs one interactive transaction at a time serves one SQL session, and a spec,
/// which overlaps its sessions, is refused at once with one line naming the protocols that can run
/// it (before, it hung as soon as two sessions' transactions overlapped).
#[test]
fn spec_refuses_protocols_that_cannot_overlap_sessions_and_sql_runs_them() {
    let spec = concat!(env!("CARGO_MANIFEST_DIR"), "/../../specs/write-skew.spec");
    for p in [
        "vll",
        "calvin",
        "hstore",
        "2pl-deadlock-free",
        "2pl-ordered",
        "vll-partitioned",
    ] {
        let o = ordo(&["spec", spec, "-p", p], "");
        assert_eq!(o.status.code(), Some(2), "{p}: {}", text(&o.stderr));
        let err = text(&o.stderr);
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(
            err.contains(&format!("`{p}` runs one interactive transaction at a time"))
                && err.contains("2pl-detect"),
            "{err}"
        );
        let o = ordo(
            &["sql", "-p", p],
            "CREATE TABLE t (k INT PRIMARY KEY, v INT);\nINSERT INTO t VALUES (1, 10);\nSELECT v FROM t WHERE k = 1;\n",
        );
        assert!(o.status.success(), "{p}: {}", text(&o.stderr));
        assert!(text(&o.stdout).contains(" 10"), "{p}: {}", text(&o.stdout));
    }
}

/// A failing `setup` block stops the run as isolationtester does: the error on stderr in one line,
/// a non-zero exit (2, as every error of `ordo`), and no step run against the missing table.
#[test]
fn spec_stops_when_a_setup_block_fails() {
    let dir = std::env::temp_dir().join(format!("ordo-spec-setup-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    for (name, spec, says) in [
        (
            "global.spec",
            "setup { CREATE TABLE t (k INT PRIMARY KEY); INSERT INTO nosuch VALUES (1); }\n\
             session s1\nstep a { SELECT * FROM t; }\nsession s2\nstep b { SELECT 1; }\n",
            "error: setup failed: relation \"nosuch\" does not exist (42P01)",
        ),
        (
            "session.spec",
            "setup { CREATE TABLE t (k INT PRIMARY KEY); }\n\
             session s1\nsetup { BEGIN; SELECT * FROM nosuch; }\nstep a { SELECT * FROM t; }\n",
            "error: setup of session s1 failed: relation \"nosuch\" does not exist (42P01)",
        ),
    ] {
        let f = dir.join(name);
        std::fs::write(&f, spec).unwrap();
        for p in ["ssi", "2pl-detect"] {
            let o = ordo(&["spec", f.to_str().unwrap(), "-p", p], "");
            assert_eq!(o.status.code(), Some(2), "{name} under {p}");
            let err = text(&o.stderr);
            assert_eq!(err.trim_end(), says, "{name} under {p}");
            let out = text(&o.stdout);
            assert!(out.contains("\nstarting permutation: a"), "{out}");
            assert!(!out.contains("step a"), "no step runs: {out}");
            assert!(!out.contains("summary"), "{out}");
        }
    }
    std::fs::remove_dir_all(&dir).ok();
}
