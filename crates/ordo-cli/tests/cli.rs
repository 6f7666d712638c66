//! The `ordo` binary as a user runs it: output shape, JSON, and one-line errors with exit code 2.

use std::process::{Command, Output};

fn ordo(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_ordo"))
        .args(args)
        .output()
        .expect("run ordo")
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

#[test]
fn list_names_every_protocol_and_workload() {
    let o = ordo(&["list"]);
    assert!(o.status.success());
    let out = String::from_utf8_lossy(&o.stdout);
    for p in ordo::protocols::names() {
        assert!(out.contains(p), "`ordo list` lacks {p}");
    }
    assert!(out.contains("ycsb"));
}

#[test]
fn bad_input_gets_one_line_and_exit_code_2() {
    let small = ["--seconds", "0.1", "--warmup", "0"];
    let cases: Vec<Vec<&str>> = vec![
        vec!["bench", "-p", "nosuch"],
        vec!["bench", "-w", "nosuch"],
        vec!["bench", "-t", "0"],
        vec!["bench", "-t", "two"],
        vec!["bench", "--theta", "-1"],
        vec!["bench", "--read-ratio", "1.5"],
        vec!["bench", "--ops", "0"],
        vec!["bench", "--seconds", "0"],
        vec!["bench", "--reps", "0"],
        vec![
            "bench",
            "--theta",
            "0.5",
            "--hot-rows",
            "10",
            "--hot-per-txn",
            "1",
        ],
        vec!["bench", "--hot-rows", "10"],
        vec!["verify", "-p", "nocc", "--txns", "0"],
        vec!["verify", "-p", ""],
        vec!["frobnicate"],
        vec!["bench", "--theta", "abc"],
        vec!["bench", "-w", "smallbank", "--customers", "1"],
        vec!["bench", "-w", "smallbank", "--hotspot-prob", "2"],
        vec!["bench", "-w", "smallbank", "--hotspot-size", "20000"],
        vec!["bench", "-w", "sibench", "--items", "0"],
        vec!["bench", "-w", "sibench", "--query-ratio", "10"],
        vec!["bench", "-w", "sibench", "--query-ratio", "0:0"],
        vec!["bench", "-w", "sibench", "--customers", "10"],
        vec!["verify", "-p", "nocc", "-w", "smallbank", "--theta", "0.5"],
        vec!["bench", "-w", "tatp", "--subscribers", "0"],
        vec!["bench", "-w", "tatp", "--subscribers", "-5"],
        vec!["bench", "-w", "tatp", "--items", "10"],
    ];
    for mut args in cases {
        if args[0] == "bench" {
            args.extend(small);
            if !args.contains(&"-w") {
                args.extend(["--rows", "1000"]);
            }
        }
        let o = ordo(&args);
        assert_eq!(o.status.code(), Some(2), "ordo {args:?}: {}", stderr(&o));
        let err = stderr(&o);
        assert!(err.starts_with("error"), "ordo {args:?}: {err}");
        assert_eq!(
            err.trim_end().lines().count(),
            1,
            "ordo {args:?}: not one line: {err}"
        );
        assert!(!err.contains("panicked"), "ordo {args:?} panicked: {err}");
    }
}

#[test]
fn bench_prints_a_row_per_run_and_writes_json() {
    let dir = std::env::temp_dir().join(format!("ordo-cli-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let json = dir.join("r.json");
    let o = ordo(&[
        "bench",
        "-p",
        "nocc",
        "-t",
        "1,2",
        "--rows",
        "2000",
        "--seconds",
        "0.2",
        "--warmup",
        "0",
        "--quiet",
        "--json",
        json.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = String::from_utf8_lossy(&o.stdout);
    assert_eq!(
        out.lines().filter(|l| l.starts_with("nocc ")).count(),
        2,
        "{out}"
    );
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let runs = v.as_array().unwrap();
    assert_eq!(runs.len(), 2);
    for (r, t) in runs.iter().zip([1, 2]) {
        for field in [
            "workload",
            "protocol",
            "threads",
            "committed_per_sec",
            "aborts_per_commit",
            "latency_p50_us",
            "latency_p99_us",
            "params",
        ] {
            assert!(r.get(field).is_some(), "missing {field}");
        }
        assert_eq!(r["threads"], t);
        assert_eq!(r["protocol"], "nocc");
        assert!(r["committed_per_sec"].as_f64().unwrap() > 0.0);
        assert_eq!(r["params"]["workload"]["rows"], 2000);
    }
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn verify_exit_code_follows_the_promise() {
    // nocc promises nothing: anomalies are reported but the exit code is 0.
    let o = ordo(&[
        "verify", "-p", "nocc", "-t", "2", "--txns", "60000", "--rows", "50",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(String::from_utf8_lossy(&o.stdout).contains("NOT serializable"));
    for p in ordo::protocols::all()
        .into_iter()
        .filter(|p| p.isolation == ordo::protocols::Isolation::Serializable)
    {
        let o = ordo(&[
            "verify", "-p", p.name, "-t", "2", "--txns", "20000", "--rows", "50",
        ]);
        assert_eq!(
            o.status.code(),
            Some(0),
            "{}: {}",
            p.name,
            String::from_utf8_lossy(&o.stdout)
        );
    }
}

#[test]
fn every_workload_verifies_under_every_serializable_protocol() {
    for w in ["smallbank", "sibench", "tatp"] {
        assert!(
            String::from_utf8_lossy(&ordo(&["list"]).stdout).contains(w),
            "`ordo list` lacks {w}"
        );
        let names: Vec<&str> = ordo::protocols::all()
            .into_iter()
            .filter(|p| p.isolation == ordo::protocols::Isolation::Serializable)
            .map(|p| p.name)
            .collect();
        let o = ordo(&[
            "verify",
            "-w",
            w,
            "-p",
            &names.join(","),
            "-t",
            "2",
            "--txns",
            "5000",
        ]);
        let out = String::from_utf8_lossy(&o.stdout);
        assert_eq!(o.status.code(), Some(0), "{w}: {out}{}", stderr(&o));
        assert_eq!(out.matches("=> ok").count(), names.len(), "{w}: {out}");
    }
}
