//! `ordo reproduce` as a user runs it: the catalogue listed, one result run end to end (quick),
//! and unknown names refused with near matches.

use std::process::{Command, Output};

fn ordo(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_ordo"))
        .args(args)
        .output()
        .expect("run ordo")
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// Every result name `--list` shows, with its estimated seconds and the cores it needs (entry
/// lines are `  NAME  FIGURE  [about N s(, needs C cores)]`).
fn listed() -> Vec<(String, f64, usize)> {
    let o = ordo(&["reproduce", "--list", "--quick"]);
    assert!(o.status.success(), "{}", stderr(&o));
    stdout(&o)
        .lines()
        .filter(|l| l.starts_with("  ") && l.contains("[about "))
        .map(|l| {
            let name = l.split_whitespace().next().unwrap().to_string();
            let about = l.split("[about ").nth(1).unwrap();
            let n: f64 = about.split_whitespace().next().unwrap().parse().unwrap();
            let secs = if about.split_whitespace().nth(1) == Some("min") {
                n * 60.0
            } else {
                n
            };
            let cores = about
                .split("needs ")
                .nth(1)
                .map_or(1, |c| c.split_whitespace().next().unwrap().parse().unwrap());
            (name, secs, cores)
        })
        .collect()
}

#[test]
fn the_list_shows_every_paper_with_its_results() {
    let o = ordo(&["reproduce", "--list"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    let names = listed();
    assert!(names.len() >= 5, "{out}");
    for paper in ["ssi", "vll", "pwv", "dibs", "salt"] {
        assert!(
            out.lines().any(|l| l.starts_with(&format!("{paper}: "))),
            "no paper {paper}: {out}"
        );
        assert!(
            names
                .iter()
                .any(|(n, _, _)| n.starts_with(&format!("{paper}-"))),
            "no result of {paper}"
        );
    }
    assert!(out.contains("all of it: about"), "{out}");
}

#[test]
fn a_result_that_needs_more_cores_says_so_instead_of_running() {
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let Some((name, _, needs)) = listed().into_iter().find(|(_, _, needs)| *needs > cores) else {
        return; // a machine with every core the catalogue asks for
    };
    let dir = std::env::temp_dir().join(format!("ordo-reproduce-cores-{}", std::process::id()));
    let o = ordo(&[
        "reproduce",
        &name,
        "--quick",
        "--out",
        dir.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    assert!(
        out.contains(&format!(
            "not run: needs {needs} cores, this machine has {cores}"
        )),
        "{out}"
    );
    assert!(!dir.join(&name).exists(), "nothing is measured");
    let summary = std::fs::read_to_string(dir.join("summary.md")).unwrap();
    assert!(
        summary.contains(&format!("not run: needs {needs} cores")),
        "{summary}"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn an_unknown_name_is_one_line_with_near_matches_and_exit_code_2() {
    let some = listed()[0].0.clone();
    let typo = format!("{}x", some);
    let o = ordo(&["reproduce", &typo, "--quick"]);
    assert_eq!(o.status.code(), Some(2));
    let e = stderr(&o);
    assert_eq!(e.lines().count(), 1, "{e}");
    assert!(
        e.contains(&format!("no result or paper is named `{typo}`")),
        "{e}"
    );
    assert!(e.contains(&some), "the near match {some} is offered: {e}");
    let o = ordo(&["reproduce"]);
    assert_eq!(o.status.code(), Some(2));
    assert_eq!(stderr(&o).lines().count(), 1);
}

#[test]
fn a_quick_result_writes_its_json_figure_and_verdict() {
    // The quickest result this machine can run, end to end.
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let (name, _, _) = listed()
        .into_iter()
        .filter(|(_, _, needs)| *needs <= cores)
        .min_by(|a, b| a.1.total_cmp(&b.1))
        .unwrap();
    let dir = std::env::temp_dir().join(format!("ordo-reproduce-test-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let o = ordo(&[
        "reproduce",
        &name,
        "--quick",
        "--out",
        dir.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}{}", stdout(&o), stderr(&o));
    let out = stdout(&o);
    assert!(out.contains("verdict: "), "{out}");
    assert!(out.starts_with("machine: "), "{out}");
    let entry = dir.join(&name);
    let rows: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(entry.join("results.json")).unwrap())
            .unwrap();
    assert!(!rows.as_array().unwrap().is_empty());
    assert_eq!(rows[0]["entry"], name.as_str());
    let svgs = std::fs::read_dir(&entry)
        .unwrap()
        .filter(|f| {
            f.as_ref()
                .unwrap()
                .path()
                .extension()
                .is_some_and(|e| e == "svg")
        })
        .count();
    assert!(svgs >= 1, "no figure in {}", entry.display());
    let verdict: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(entry.join("verdict.json")).unwrap())
            .unwrap();
    let v = verdict["verdict"].as_str().unwrap();
    assert!(
        ["reproduced", "shape only", "not reproduced"].contains(&v),
        "{v}"
    );
    for check in verdict["checks"].as_array().unwrap() {
        assert!(check["verdict"].is_string(), "{check}");
        assert!(check["paper"].is_string(), "{check}");
    }
    assert!(verdict["commands"][0]
        .as_str()
        .unwrap()
        .starts_with("ordo bench "));
    let page = std::fs::read_to_string(dir.join("index.html")).unwrap();
    assert!(page.contains(&format!("id=\"{name}\"")), "{page}");
    assert!(page.contains(".svg"), "{page}");
    let summary = std::fs::read_to_string(dir.join("summary.md")).unwrap();
    assert!(summary.contains(&format!("[`{name}`]")), "{summary}");
    std::fs::remove_dir_all(&dir).unwrap();
}
