//! `ordo` with `-w tpcc` / `-w tpcc++`: listed, verified, and bad options rejected with exit code 2.

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
fn list_shows_tpcc_and_tpccpp() {
    let out = String::from_utf8_lossy(&ordo(&["list"]).stdout).into_owned();
    assert!(out.contains("tpcc ") && out.contains("tpcc++"), "{out}");
}

#[test]
fn bad_tpcc_options_get_one_line_and_exit_code_2() {
    let cases: &[&[&str]] = &[
        &["--warehouses", "0"],
        &["--warehouses", "x"],
        &["--warehouses", "70000"],
        &["--warehouses", "1,4"],
        &["--mix", "nosuch"],
        &["--mix", "no=50,p=40"],
        &["--mix", "no=50,zz=50"],
        &["--mix", "no=50,p=fifty"],
    ];
    for extra in cases {
        for cmd in ["bench", "verify"] {
            let mut args = vec![cmd, "-w", "tpcc", "--tiny", "-p", "nocc"];
            args.extend_from_slice(extra);
            if cmd == "bench" {
                args.extend(["--seconds", "0.1", "--warmup", "0"]);
            }
            let o = ordo(&args);
            let err = stderr(&o);
            assert_eq!(o.status.code(), Some(2), "ordo {args:?}: {err}");
            assert!(err.starts_with("error"), "ordo {args:?}: {err}");
            assert_eq!(err.trim_end().lines().count(), 1, "ordo {args:?}: {err}");
            assert!(!err.contains("panicked"), "ordo {args:?}: {err}");
        }
    }
}

#[test]
fn verify_and_bench_run_tpcc() {
    let o = ordo(&[
        "verify", "-w", "tpcc++", "-p", "silo", "-t", "2", "--txns", "1000",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let o = ordo(&[
        "bench",
        "-w",
        "tpcc",
        "--tiny",
        "--mix",
        "new-order-payment",
        "--no-ytd",
        "-p",
        "nocc",
        "-t",
        "1",
        "--seconds",
        "0.2",
        "--warmup",
        "0",
        "--quiet",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(
        out.contains("\"mix\":\"no=50,p=50\"") && out.contains("\"no_ytd\":true"),
        "{out}"
    );
}
