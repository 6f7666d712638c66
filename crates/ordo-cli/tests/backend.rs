//! `ordo bench --backend` as a user runs it: SQLite needs nothing installed; the rows carry the
//! engine, the merge group size and syncs per transaction; `ordo report` draws a line per group
//! size; bad input and an unreachable server are one-line errors with exit code 2.

use std::process::{Command, Output};

fn ordo(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_ordo"))
        .args(args)
        .output()
        .expect("run ordo")
}

fn fails_with(args: &[&str], needle: &str) {
    let o = ordo(args);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
    assert_eq!(
        err.trim().lines().count(),
        1,
        "{args:?}: one line, got {err}"
    );
    assert!(err.contains(needle), "{args:?}: {err}");
}

#[test]
fn sqlite_ycsb_with_merging_and_its_report() {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("rows.json");
    let db = dir.path().join("ycsb.sqlite");
    let o = ordo(&[
        "bench",
        "--backend",
        "sqlite",
        "--sqlite-path",
        db.to_str().unwrap(),
        "-w",
        "ycsb",
        "--rows",
        "300",
        "--field-len",
        "16",
        "--read-ratio",
        "0.5",
        "-p",
        "dibs,native",
        "--merge",
        "1,4",
        "-t",
        "1",
        "--seconds",
        "0.3",
        "--warmup",
        "0",
        "--quiet",
        "--json",
        json.to_str().unwrap(),
    ]);
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(
        o.status.success(),
        "{out}{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(out.contains("dibs G=4"), "{out}");
    let rows: Vec<serde_json::Value> =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let names: Vec<(&str, u64)> = rows
        .iter()
        .map(|r| {
            (
                r["protocol"].as_str().unwrap(),
                r["params"]["merge"].as_u64().unwrap(),
            )
        })
        .collect();
    assert_eq!(names, [("dibs", 1), ("native", 1), ("dibs", 4)]);
    // One invocation's runs share the base seed (one figure), each run drawing anew.
    let seeds: Vec<u64> = rows
        .iter()
        .map(|r| r["backend"]["run_seed"].as_u64().unwrap())
        .collect();
    assert_eq!(seeds, [42, 43, 44]);
    for r in &rows {
        assert_eq!(r["params"]["seed"], 42);
        assert_eq!(r["params"]["workload"]["backend"], "sqlite");
        assert!(r["committed"].as_u64().unwrap() > 0, "{r}");
        let syncs = r["backend"]["syncs_per_txn"].as_f64().unwrap();
        assert!(syncs > 0.0, "{r}");
    }
    let svg = dir.path().join("fig");
    let o = ordo(&[
        "report",
        json.to_str().unwrap(),
        "--out",
        svg.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let mut drawn = String::new();
    for f in std::fs::read_dir(&svg).unwrap() {
        drawn += &std::fs::read_to_string(f.unwrap().path()).unwrap_or_default();
    }
    assert!(
        drawn.contains("dibs merge=4"),
        "no line for group size 4 in the report"
    );
}

#[test]
fn bad_backend_requests_are_refused_in_one_line() {
    fails_with(
        &["bench", "--backend", "oracle", "-w", "ycsb"],
        "unknown backend `oracle`",
    );
    fails_with(&["bench", "--merge", "4", "-w", "ycsb"], "need --backend");
    fails_with(
        &["bench", "--backend", "sqlite", "-w", "tpcc"],
        "does not run on a backend",
    );
    fails_with(
        &["bench", "--backend", "sqlite", "-w", "ycsb", "-p", "silo"],
        "does not run on a backend",
    );
    fails_with(
        &[
            "bench",
            "--backend",
            "sqlite",
            "-w",
            "ycsb",
            "--hot-rows",
            "4",
        ],
        "not an option of ycsb on a backend",
    );
    fails_with(
        &[
            "bench",
            "--backend",
            "sqlite",
            "-w",
            "ycsb",
            "-p",
            "native-rc",
            "--rows",
            "10",
            "--seconds",
            "0.1",
        ],
        "sqlite has no READ COMMITTED level",
    );
    fails_with(
        &["bench", "--backend", "sqlite", "-w", "ycsb", "--merge", "0"],
        "invalid --merge",
    );
}

#[test]
fn verify_on_sqlite_records_and_checks_the_history() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("v.sqlite");
    let o = ordo(&[
        "verify",
        "--backend",
        "sqlite",
        "--sqlite-path",
        db.to_str().unwrap(),
        "-w",
        "ycsb",
        "-p",
        "dibs,native",
        "-t",
        "2",
        "--txns",
        "120",
    ]);
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(
        o.status.success(),
        "{out}{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert_eq!(
        out.matches("serializable, no anomalies  => ok").count(),
        2,
        "{out}"
    );
    assert!(out.contains("120 committed"), "{out}");
    fails_with(
        &[
            "verify",
            "--backend",
            "sqlite",
            "-w",
            "ycsb",
            "-p",
            "dibs",
            "--merge",
            "4",
        ],
        "individual commits only",
    );
    fails_with(
        &["verify", "--backend", "sqlite", "-w", "tatp", "-p", "dibs"],
        "versioned ycsb only",
    );
}

/// `ordo spec --backend sqlite`: the spec runs against SQLite with DIBS in front, every
/// permutation's outcome is judged, and the JSON says the same; bad input is one line.
#[test]
fn spec_against_sqlite() {
    let spec = concat!(env!("CARGO_MANIFEST_DIR"), "/../../specs/write-skew.spec");
    let o = ordo(&["spec", spec, "--backend", "sqlite"]);
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(
        out.contains("protocol: dibs over sqlite SERIALIZABLE"),
        "{out}"
    );
    assert_eq!(out.matches("starting permutation").count(), 20, "{out}");
    assert_eq!(out.matches("outcome serializable").count(), 20, "{out}");
    let o = ordo(&[
        "spec",
        spec,
        "--backend",
        "sqlite",
        "-p",
        "native",
        "--json",
    ]);
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).expect("JSON");
    let perms = v["permutations"].as_array().unwrap();
    assert_eq!(perms.len(), 20);
    assert!(perms.iter().all(|p| p["serializable"] == true), "{v}");
    fails_with(
        &["spec", spec, "--backend", "sqlite", "-p", "native-xx"],
        "native-rc",
    );
    fails_with(&["spec", spec, "--backend", "oracle"], "unknown backend");
    fails_with(&["spec", spec, "--sqlite-path", "x.db"], "need --backend");
    fails_with(
        &[
            "spec",
            spec,
            "--backend",
            "postgres",
            "--backend-url",
            "postgres://ordo:ordo@127.0.0.1:1/ordo",
        ],
        "scripts/servers/postgres.sh start",
    );
}
