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
    // Each workload's options and each protocol's knobs, with their defaults.
    for option in ordo_workloads::catalog::options() {
        assert!(
            out.contains(&format!("--{}", option.name)),
            "lacks --{}",
            option.name
        );
    }
    assert!(out.contains("--theta[,…]"), "sweeps are marked: {out}");
    assert!(out.contains("--vll-batch 4"), "{out}");
}

#[test]
fn an_option_of_another_workload_names_its_owner() {
    for (args, says) in [
        (
            &["verify", "-p", "nocc", "-w", "smallbank", "--theta", "0.5"][..],
            "error: --theta is an option of -w ycsb, not of -w smallbank",
        ),
        (
            &["bench", "-w", "vll-range", "--ci", "0.1"][..],
            "error: --ci is an option of -w vll-micro, not of -w vll-range",
        ),
    ] {
        let o = ordo(args);
        assert_eq!(o.status.code(), Some(2), "ordo {args:?}");
        assert_eq!(stderr(&o).trim_end(), says, "ordo {args:?}");
    }
}

#[test]
fn bad_input_gets_one_line_and_exit_code_2() {
    let small = ["--seconds", "0.1", "--warmup", "0"];
    let mut cases: Vec<Vec<&str>> = vec![
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
        vec!["bench", "--theta", "0,0.9", "--read-ratio", "0.5,1"],
        vec!["bench", "--theta", "0.9,0.9"],
        vec!["bench", "--theta", "0,-1"],
        vec!["verify", "-p", "nocc", "--theta", "0,0.9"],
        vec!["report"],
        vec!["report", "no-such-file.json", "-o", "out"],
        vec!["report", "no-such-file.json"],
        vec!["bench", "-w", "smallbank", "--customers", "1"],
        vec!["bench", "-w", "smallbank", "--hotspot-prob", "2"],
        vec!["bench", "-w", "smallbank", "--hotspot-size", "20000"],
        vec!["bench", "-w", "sibench", "--items", "0"],
        vec!["bench", "-w", "sibench", "--query-ratio", "10"],
        vec!["bench", "-w", "sibench", "--query-ratio", "0:0"],
        vec!["bench", "-w", "sibench", "--query-ratio", "4294967295:1"],
        vec!["bench", "-w", "sibench", "--query-ratio", "99999999999:1"],
        vec!["bench", "-w", "sibench", "--customers", "10"],
        vec!["verify", "-p", "nocc", "-w", "smallbank", "--theta", "0.5"],
        vec!["bench", "-w", "tatp", "--subscribers", "0"],
        vec!["bench", "-w", "tatp", "--subscribers", "-5"],
        vec!["bench", "-w", "tatp", "--items", "10"],
        vec!["bench", "-w", "vll-micro", "--remote-wait", "50"],
        vec!["bench", "-w", "ycsb", "--remote-wait", "50"],
        vec!["bench", "-p", "vll", "--vll-batch", "0"],
        vec!["bench", "-p", "vll", "--vll-batch", "1025"],
        vec!["bench", "-p", "vll", "--vll-blocked-limit", "0"],
        vec!["bench", "-p", "vll", "--vll-blocked-limit", "-3"],
        vec!["verify", "-p", "vll", "--vll-batch", "0"],
        vec!["bench", "-p", "vll-sca", "--vll-sca-bits", "63"],
        vec!["bench", "-p", "vll-sca", "--vll-sca-bits", "134217729"],
        vec!["verify", "-p", "vll-sca", "--vll-sca-bits", "-1"],
        // So skewed that a transaction's distinct keys are never all drawn (it used to hang).
        vec!["bench", "-w", "ycsb", "--rows", "1000", "--theta", "1e14"],
        // 1 / CI hot records overflowed the size check (it used to panic).
        vec!["bench", "-w", "vll-micro", "--ci", "1e-300"],
        // The range micro-benchmark: prefixes longer than the keys, keys too wide, options of
        // vll-micro other than the --long they share.
        vec!["bench", "-w", "vll-range", "--shared-prefix", "17"],
        vec!["bench", "-w", "vll-range", "--shared-prefix", "7,7"],
        vec!["bench", "-w", "vll-range", "--key-bits", "25"],
        vec!["bench", "-w", "vll-range", "--ci", "0.1"],
        vec!["bench", "-w", "vll-micro", "--shared-prefix", "7"],
        // The range lock managers' benchmark (Fig. 14).
        vec!["range-locks", "-m", "vllr,btree"],
        vec!["range-locks", "-m", ""],
        vec!["range-locks", "--delayed", "1.5"],
        vec!["range-locks", "--delayed", "0,0"],
        vec!["range-locks", "--delay-us", "-1"],
        vec!["range-locks", "--shared-prefix", "33"],
        vec!["range-locks", "--shared-prefix", "6.5"],
        vec!["range-locks", "--key-bits", "57"],
        vec!["range-locks", "--key-bits", "0"],
        vec!["range-locks", "--blocked-limit", "0"],
        vec!["range-locks", "--shared", "2"],
        vec!["range-locks", "--seconds", "0"],
        vec!["range-locks", "--json", "/no-such-dir/r.json"],
        // Output that cannot be written: refused before the runs, not after them.
        vec!["bench", "--json", "/no-such-dir/r.json"],
        vec!["bench", "--json", "/"],
        vec!["verify", "-p", "nocc", "--history", "/no-such-dir/h"],
    ];
    // Tables that cannot fit the machine's memory (read from /proc/meminfo): refused before loading
    // (they used to load until killed).
    if cfg!(target_os = "linux") {
        cases.push(vec!["bench", "-w", "ycsb", "--rows", "99999999999999"]);
        cases.push(vec!["verify", "-w", "tpcc", "--warehouses", "65535"]);
        cases.push(vec![
            "bench",
            "-w",
            "vll-micro",
            "--records",
            "18446744073709551615",
        ]);
    }
    for wait in ["-1", "nan", "2000000"] {
        let two = ["--partitions", "2"];
        cases.push(
            [
                &["bench", "-w", "vll-micro", "--remote-wait", wait][..],
                &two,
            ]
            .concat(),
        );
    }
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
fn repeated_protocols_run_interleaved_with_nocc_first() {
    let o = ordo(&[
        "bench",
        "-p",
        "silo,nocc,silo,nocc",
        "-t",
        "1",
        "--rows",
        "2000",
        "--seconds",
        "0.05",
        "--warmup",
        "0",
        "--quiet",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = String::from_utf8_lossy(&o.stdout);
    let order: Vec<&str> = out
        .lines()
        .filter_map(|l| l.split_whitespace().next())
        .filter(|p| ["nocc", "silo"].contains(p))
        .collect();
    // The first nocc moves to the front; the rest keep their order.
    assert_eq!(order, ["nocc", "silo", "silo", "nocc"], "{out}");
}

#[test]
fn bench_prints_a_row_per_run_and_writes_json() {
    let dir = std::env::temp_dir().join(format!("ordo-cli-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let json = dir.join("r.json");
    // Workers pinned to CPUs where that exists (Linux); elsewhere `--pin` is refused.
    let pin = cfg!(target_os = "linux");
    let mut args = vec![
        "bench",
        "-p",
        "nocc,vll",
        "-t",
        "1,2",
        "--rows",
        "2000",
        "--seconds",
        "0.2",
        "--warmup",
        "0",
        "--quiet",
        "--vll-batch",
        "2",
        "--json",
        json.to_str().unwrap(),
    ];
    if pin {
        args.push("--pin");
    }
    let o = ordo(&args);
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
    assert_eq!(runs.len(), 4);
    let expected = [("nocc", 1), ("nocc", 2), ("vll", 1), ("vll", 2)];
    for (r, (protocol, t)) in runs.iter().zip(expected) {
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
        assert_eq!(r["protocol"], protocol);
        assert!(r["committed_per_sec"].as_f64().unwrap() > 0.0);
        assert_eq!(r["params"]["workload"]["rows"], 2000);
        // The knobs a run used are recorded with it (the default where not given).
        // The knobs a protocol read are recorded with its run (the default where not given);
        // another protocol's are not.
        let knobs = match protocol {
            "vll" => serde_json::json!({"vll-blocked-limit": 16, "vll-batch": 2}),
            _ => serde_json::json!({}),
        };
        assert_eq!(r["params"]["knobs"], knobs, "{r}");
        assert_eq!(r["params"]["pin"], pin);
        assert!(
            r.get("sweep").is_some_and(|s| s.is_null()),
            "no sweep: null"
        );
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
    // (Protocols that end deadlocks only by the lock-wait timeout, as `sc-chopping-ser` does,
    // take minutes over 20,000 transactions on 50 rows; the protocols' own tests check their
    // histories at length, this one the exit code.)
    for p in ordo::protocols::all()
        .into_iter()
        .filter(|p| p.isolation == ordo::protocols::Isolation::Serializable)
    {
        let o = ordo(&[
            "verify", "-p", p.name, "-t", "2", "--txns", "4000", "--rows", "50",
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

/// `--history` writes what current dbcop reads (tagged `Read`/`Write` events, `committed`
/// transactions), listing committed transactions only: under a protocol that aborts, every read
/// names the initial value (`null`) or a version some listed transaction wrote.
#[test]
fn verify_history_is_dbcop_json_of_committed_transactions() {
    let dir = scratch("dbcop");
    let base = dir.join("h");
    let o = ordo(&[
        "verify",
        "-p",
        "2pl-nowait",
        "-t",
        "2",
        "--txns",
        "4000",
        "--rows",
        "20",
        "--history",
        base.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let text = std::fs::read_to_string(dir.join("h.2pl-nowait.json")).unwrap();
    let v: serde_json::Value = serde_json::from_str(&text).unwrap();
    for key in ["params", "info", "start", "end", "data"] {
        assert!(v.get(key).is_some(), "dbcop's History has {key}");
    }
    let mut written = std::collections::HashSet::new();
    let mut reads = Vec::new();
    let mut txns = 0;
    for session in v["data"].as_array().unwrap() {
        for t in session.as_array().unwrap() {
            txns += 1;
            assert_eq!(t["committed"], true, "{t}");
            assert_eq!(t.as_object().unwrap().len(), 2, "events and committed: {t}");
            for e in t["events"].as_array().unwrap() {
                let e = e.as_object().unwrap();
                assert_eq!(e.len(), 1, "one variant per event: {e:?}");
                let (tag, body) = e.iter().next().unwrap();
                let var = body["variable"].as_u64().unwrap();
                match tag.as_str() {
                    "Write" => {
                        let version = body["version"].as_u64().unwrap();
                        assert!(written.insert((var, version)), "unique writes");
                    }
                    "Read" => reads.push((var, body["version"].as_u64())),
                    other => panic!("unknown event {other}"),
                }
            }
        }
    }
    assert!(txns > 100, "{txns} transactions listed");
    assert!(!reads.is_empty());
    for (var, version) in reads {
        if let Some(version) = version {
            assert!(
                written.contains(&(var, version)),
                "read of {var}@{version}: no committed writer listed"
            );
        }
    }
    assert!(!text.contains("\"success\""), "the old dbcop layout");
    std::fs::remove_dir_all(&dir).ok();
}

/// A fresh scratch directory for one test.
fn scratch(name: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("ordo-cli-{name}-{}", std::process::id()));
    std::fs::remove_dir_all(&dir).ok();
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

#[test]
fn a_sweep_records_its_points_and_report_draws_them() {
    let dir = scratch("sweep");
    let json = dir.join("sweep.json");
    let o = ordo(&[
        "bench",
        "--theta",
        "0,0.9",
        "-p",
        "nocc,silo",
        "-t",
        "1",
        "--rows",
        "1000",
        "--seconds",
        "0.05",
        "--warmup",
        "0",
        "--quiet",
        "--json",
        json.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(
        out.contains("sweep theta=0") && out.contains("sweep theta=0.9"),
        "{out}"
    );
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let runs = v.as_array().unwrap();
    assert_eq!(runs.len(), 4, "2 points × 2 protocols");
    for (r, theta) in runs.iter().zip([0.0, 0.0, 0.9, 0.9]) {
        assert_eq!(r["sweep"]["param"], "theta");
        assert_eq!(r["sweep"]["value"], theta);
        assert_eq!(r["params"]["workload"]["theta"], theta);
        assert_eq!(r["consistency"], "ok");
    }

    let report = |out: &std::path::Path| {
        let o = ordo(&[
            "report",
            json.to_str().unwrap(),
            "-o",
            out.to_str().unwrap(),
        ]);
        assert!(o.status.success(), "{}", stderr(&o));
    };
    let (a, b) = (dir.join("a"), dir.join("b"));
    report(&a);
    report(&b);
    let index = std::fs::read_to_string(a.join("index.html")).unwrap();
    let svgs: Vec<String> = std::fs::read_dir(&a)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .filter(|n| n.ends_with(".svg"))
        .collect();
    assert_eq!(svgs.len(), 1, "one figure: {svgs:?}");
    for name in &svgs {
        assert!(
            index.contains(&format!("src=\"{name}\"")),
            "{name} not in index.html"
        );
        let svg = std::fs::read_to_string(a.join(name)).unwrap();
        assert!(svg.starts_with("<svg"), "{name}");
        for p in ["nocc", "silo", "θ", "committed txn/s", "aborts per commit"] {
            assert!(svg.contains(p), "{name} lacks {p}");
        }
        assert_eq!(
            svg,
            std::fs::read_to_string(b.join(name)).unwrap(),
            "same input, same figure"
        );
    }
    assert!(index.contains("threads") && index.contains("machine.cores"));

    // Relative to nocc: nocc's line is 1 at every point, silo's is its ratio.
    let rel = dir.join("rel");
    let relative_to = |base: &str| {
        let (json, rel) = (json.to_str().unwrap(), rel.to_str().unwrap());
        ordo(&["report", json, "-o", rel, "--relative", base])
    };
    let o = relative_to("nocc");
    assert!(o.status.success(), "{}", stderr(&o));
    let index = std::fs::read_to_string(rel.join("index.html")).unwrap();
    assert!(index.contains("relative to nocc"), "{index}");
    assert!(
        index.contains("<td>1.000 ("),
        "nocc's own line is 1: {index}"
    );
    let svg = std::fs::read_to_string(rel.join(&svgs[0])).unwrap();
    assert!(svg.contains("÷ nocc"), "the axis says what it divides by");
    let o = relative_to("2pl-table");
    assert_eq!(o.status.code(), Some(2), "no figure has 2pl-table");
    assert_eq!(stderr(&o).trim_end().lines().count(), 1, "{}", stderr(&o));
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn report_rejects_malformed_input_with_one_line_naming_the_file() {
    let dir = scratch("malformed");
    let out = dir.join("out");
    for (name, text) in [
        ("broken.json", "[{"),
        ("empty.json", "[]"),
        ("other.json", r#"[{"protocol": "silo"}]"#),
    ] {
        let path = dir.join(name);
        std::fs::write(&path, text).unwrap();
        let o = ordo(&[
            "report",
            path.to_str().unwrap(),
            "-o",
            out.to_str().unwrap(),
        ]);
        assert_eq!(o.status.code(), Some(2), "{name}: {}", stderr(&o));
        let err = stderr(&o);
        assert!(err.starts_with("error") && err.contains(name), "{err}");
        assert_eq!(err.trim_end().lines().count(), 1, "{err}");
    }
    assert!(!out.join("index.html").exists(), "nothing written on error");
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn every_workload_verifies_under_every_serializable_protocol() {
    for w in ["smallbank", "sibench", "tatp", "vll-range", "pwv-micro"] {
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

/// `-w vll-range` sweeps `--shared-prefix` (Fig. 15) and shares vll-micro's `--long`; each point
/// records its parameters.
#[test]
fn a_range_sweep_records_its_prefix_and_the_shared_long_option() {
    let json = scratch("vll-range").join("r.json");
    let o = ordo(&[
        "bench",
        "-w",
        "vll-range",
        "--key-bits",
        "10",
        "--shared-prefix",
        "8,4",
        "--long",
        "-p",
        "vllr",
        "-t",
        "2",
        "--seconds",
        "0.1",
        "--warmup",
        "0",
        "--quiet",
        "--json",
        json.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let runs = v.as_array().unwrap();
    let points: Vec<(f64, u64, bool)> = runs
        .iter()
        .map(|r| {
            let w = &r["params"]["workload"];
            assert_eq!(r["sweep"]["param"], "shared-prefix");
            (
                r["sweep"]["value"].as_f64().unwrap(),
                w["shared_prefix"].as_u64().unwrap(),
                w["long"].as_bool().unwrap(),
            )
        })
        .collect();
    assert_eq!(points, [(8.0, 8, true), (4.0, 4, true)]);
}

#[test]
fn range_locks_compares_the_managers_and_report_draws_fig_14() {
    let dir = scratch("range-locks");
    let json = dir.join("rl.json");
    let o = ordo(&[
        "range-locks",
        "--delayed",
        "0,1",
        "--delay-us",
        "50",
        "--shared-prefix",
        "4,12",
        "--seconds",
        "0.05",
        "--json",
        json.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = String::from_utf8_lossy(&o.stdout);
    assert_eq!(out.matches("workload range-locks").count(), 2, "{out}");
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let rows = v.as_array().unwrap();
    assert_eq!(
        rows.len(),
        2 * 4 * 2,
        "2 contention levels × 4 managers × 2 points"
    );
    for r in rows {
        assert!(r["committed"].as_u64().unwrap() > 0, "{r}");
        assert_eq!(r["sweep"]["param"], "delayed");
        assert_eq!(r["params"]["workload"]["delay_us"], 50.0);
        let delayed = r["sweep"]["value"].as_f64().unwrap();
        let picked = r["picked_by_sca"].as_u64().unwrap();
        // Only VLLR with SCA picks blocked transactions, and only when some wait.
        if r["protocol"] != "vllr-sca" || delayed == 0.0 {
            assert_eq!(picked, 0, "{r}");
        }
        // Nothing blocks when no transaction holds its lock while the next one asks.
        if delayed == 0.0 {
            assert_eq!(r["blocked"], 0, "{r}");
        }
    }
    let figures = dir.join("fig");
    let o = ordo(&[
        "report",
        json.to_str().unwrap(),
        "-o",
        figures.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let svgs: Vec<String> = std::fs::read_dir(&figures)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .filter(|n| n.ends_with(".svg"))
        .collect();
    assert_eq!(svgs.len(), 2, "a figure per contention level: {svgs:?}");
    let svg = std::fs::read_to_string(figures.join(&svgs[0])).unwrap();
    for p in [
        "vllr-sca",
        "standard",
        "hierarchical",
        "fraction of transactions delayed",
    ] {
        assert!(svg.contains(p), "{} lacks {p}", svgs[0]);
    }
    std::fs::remove_dir_all(&dir).ok();
}
