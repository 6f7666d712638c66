//! Runs every spec in `specs/` under every registered protocol, each run on a thread of its own
//! with a deadline (a hang fails the test naming the spec and the protocol): a protocol that runs
//! concurrent interactive sessions (`Interactive::Concurrent`: 2PL, Silo, the multi-version levels,
//! `nocc`) runs each twice and its output is compared with `specs/expected/<protocol>/<spec>.out`
//! (regenerate with `ORDO_BLESS=1`); any other is refused at once with a one-line error.
//!
//! Also holds the bars of the isolation specs: under a serializable protocol every permutation's
//! history is serializable and the phantom never lets both inserts commit after both counted; `nocc`
//! visibly fails write skew and the phantom; and isolationtester's semantics for blocked steps and
//! failing setup blocks.

use ordo::protocols::{Interactive, Isolation};
use ordo_sql::spec::{self, run::render_text, RunError, RunOptions};
use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// Every registered protocol that runs concurrent interactive sessions, whatever it promises (a
/// level below serializable shows the anomalies it allows): a protocol is tested here the moment it
/// is registered.
fn protocols() -> Vec<&'static ordo::protocols::ProtocolInfo> {
    ordo::protocols::all()
        .into_iter()
        .filter(|i| i.interactive == Interactive::Concurrent)
        .collect()
}

fn specs_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../specs")
}

/// The longest one run of a spec may take: runs take well under a second; a run past this hangs.
const DEADLINE: Duration = Duration::from_secs(60);

/// Runs `text` (named `what`) under `protocol` on a thread of its own; panics naming both if no
/// result comes within [`DEADLINE`] (the thread is left behind).
fn run_text_within(
    what: &str,
    text: &str,
    protocol: &str,
) -> Result<(spec::run::SpecResult, String), RunError> {
    let parsed = spec::parse_spec(what, text).unwrap();
    let (tx, rx) = mpsc::channel();
    let p = protocol.to_string();
    let sp = parsed.clone();
    std::thread::spawn(move || {
        let r = spec::run_spec(&sp, &RunOptions { protocol: Some(p) });
        let _ = tx.send(r.map(|res| {
            let out = render_text(&sp, &res);
            (res, out)
        }));
    });
    match rx.recv_timeout(DEADLINE) {
        Ok(r) => r,
        Err(mpsc::RecvTimeoutError::Timeout) => {
            panic!("{what} under {protocol}: no result within {DEADLINE:?} (a hang)")
        }
        Err(mpsc::RecvTimeoutError::Disconnected) => panic!("{what} under {protocol}: panicked"),
    }
}

fn run_within(file: &Path, protocol: &str) -> Result<(spec::run::SpecResult, String), RunError> {
    let text = std::fs::read_to_string(file).unwrap();
    run_text_within(&file.display().to_string(), &text, protocol)
}

fn run(file: &Path, protocol: &str) -> (spec::run::SpecResult, String) {
    run_within(file, protocol)
        .unwrap_or_else(|e| panic!("{} under {protocol}: {e}", file.display()))
}

fn spec_files() -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(specs_dir())
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "spec"))
        .collect();
    files.sort();
    files
}

#[test]
fn every_spec_runs_as_expected_or_is_refused_under_every_protocol_within_a_deadline() {
    let bless = std::env::var_os("ORDO_BLESS").is_some();
    let files = spec_files();
    assert!(files.len() >= 7, "the classic anomalies are all there");
    let all = ordo::protocols::all();
    assert!(all.len() > protocols().len(), "some protocols are refused");
    for f in &files {
        let stem = f.file_stem().unwrap().to_str().unwrap();
        for info in &all {
            let p = info.name;
            if info.interactive != Interactive::Concurrent {
                let start = Instant::now();
                let why = match run_within(f, p) {
                    Err(RunError::NotConcurrent(why)) => why,
                    Err(e) => panic!("{stem} under {p}: refused for another reason: {e}"),
                    Ok(_) => panic!("{stem} under {p}: ran, but {p} cannot overlap sessions"),
                };
                assert!(
                    start.elapsed() < Duration::from_secs(5),
                    "{stem} under {p}: refused only after {:?}",
                    start.elapsed()
                );
                assert_eq!(why.lines().count(), 1, "{why}");
                assert!(why.starts_with(&format!("`{p}` runs ")), "{why}");
                continue;
            }
            let (_, first) = run(f, p);
            let (_, second) = run(f, p);
            assert_eq!(first, second, "{stem} under {p}: two runs differ");
            let expected = specs_dir()
                .join("expected")
                .join(p)
                .join(format!("{stem}.out"));
            if bless {
                std::fs::create_dir_all(expected.parent().unwrap()).unwrap();
                std::fs::write(&expected, &first).unwrap();
                continue;
            }
            let want = std::fs::read_to_string(&expected)
                .unwrap_or_else(|_| panic!("missing {}", expected.display()));
            assert_eq!(
                first,
                want,
                "{stem} under {p} differs from {}",
                expected.display()
            );
        }
    }
}

fn both_committed(p: &spec::run::PermutationResult) -> bool {
    p.sessions
        .iter()
        .all(|(_, ends)| ends.first() == Some(&ordo_sql::session::TxnEnd::Committed))
}

#[test]
fn serializable_protocols_pass_write_skew_and_phantom_and_nocc_rc_si_fail_them() {
    for stem in ["write-skew", "phantom"] {
        let f = specs_dir().join(format!("{stem}.spec"));
        for info in protocols() {
            let p = info.name;
            let (res, _) = run(&f, p);
            // The first permutation of each reads in both sessions before either writes: serializable
            // executions cannot commit both.
            let racy = res
                .permutations
                .iter()
                .find(|x| x.steps.starts_with(&["r1".to_string(), "r2".to_string()]))
                .expect("a permutation where both read first");
            if info.isolation == Isolation::None {
                assert!(both_committed(racy), "{stem}: nocc commits both");
                assert!(
                    res.permutations.iter().any(|x| !x.serializable),
                    "{stem}: the checker sees nocc's anomaly"
                );
            } else if info.isolation != Isolation::Serializable {
                // Write skew on rows is what snapshot reads allow. (The phantom's two inserts both
                // update the index's posting list for the day — one row — so `si` aborts one as an
                // update conflict and `rc` lets both commit; its expected output pins each.)
                if stem == "write-skew" {
                    assert!(both_committed(racy), "{stem} under {p}: both commit");
                }
            } else {
                assert!(!both_committed(racy), "{stem} under {p}: both committed");
                for perm in &res.permutations {
                    assert!(perm.serializable, "{stem} under {p}: {:?}", perm.steps);
                }
            }
        }
    }
}

/// Two sessions update the same row. `u2` blocks behind `s1`; then `s2`'s own next step is due while
/// `u2` still waits, and only `s1`'s later step could unblock it. isolationtester waits, and after
/// `PGISOLATIONTIMEOUT` cancels `u2`: it fails with 57014, which aborts `s2`'s transaction (its
/// next steps fail with 25P02 and its COMMIT rolls back), and `s1` runs on untouched. The runner does
/// the same at once, and never ends `s1`'s transaction for it.
const BLOCKED_SESSION_STEP_DUE: &str = "
setup { CREATE TABLE t (k INT PRIMARY KEY, v INT); INSERT INTO t VALUES (1, 0); }
teardown { DROP TABLE t; }
session s1
setup { BEGIN; }
step u1 { UPDATE t SET v = 1 WHERE k = 1; }
step c1 { COMMIT; }
session s2
setup { BEGIN; }
step u2 { UPDATE t SET v = 2 WHERE k = 1; }
step r2 { SELECT v FROM t WHERE k = 1; }
step c2 { COMMIT; }
step check { SELECT v FROM t WHERE k = 1; }
permutation u1 u2 r2 c1 c2 check
permutation u1 u2 c1 r2 c2 check
";

#[test]
fn a_step_due_from_a_blocked_session_cancels_the_blocked_step_as_isolationtester_does() {
    for p in ["2pl-detect", "2pl-table-detect", "si", "ssi", "rc"] {
        let (res, out) = run_text_within("blocked.spec", BLOCKED_SESSION_STEP_DUE, p).unwrap();
        let first = &out[out.find("starting permutation: u1 u2 r2").unwrap()..];
        let first = &first[..first.find("\nstarting permutation").unwrap()];
        let want = "step u1: UPDATE t SET v = 1 WHERE k = 1;
step u2: UPDATE t SET v = 2 WHERE k = 1; <waiting ...>
canceling step u2: session s2's next step is due and nothing can unblock it
step u2: <... completed>
ERROR:  canceling statement due to user request
step r2: SELECT v FROM t WHERE k = 1;
ERROR:  current transaction is aborted, commands ignored until end of transaction block
step c1: COMMIT;
step c2: COMMIT;
step check: SELECT v FROM t WHERE k = 1;
v
-
1
(1 row)
summary: s1 committed; s2 aborted 57014,committed;";
        assert!(first.contains(want), "{p}:\n{first}");
        // Where s1 commits first, u2 completes after the step that unblocked it and s2 goes on.
        let second = &res.permutations[1];
        let lines: Vec<String> = second
            .events
            .iter()
            .map(|e| {
                format!(
                    "{}{}{}",
                    e.step,
                    if e.waiting { " waiting" } else { "" },
                    if e.completed_late { " completed" } else { "" }
                )
            })
            .collect();
        assert_eq!(
            lines,
            [
                "u1",
                "u2 waiting",
                "c1",
                "u2 completed",
                "r2",
                "c2",
                "check"
            ],
            "{p}"
        );
        assert!(second.events.iter().all(|e| e.canceling.is_none()), "{p}");
    }
}

/// A step still blocked when the permutation ends is cancelled too (isolationtester's final wait),
/// and the other session's transaction is left as the spec left it.
#[test]
fn steps_blocked_at_the_end_of_a_permutation_are_cancelled() {
    let text = "
setup { CREATE TABLE t (k INT PRIMARY KEY, v INT); INSERT INTO t VALUES (1, 0); }
session s1
step b1 { BEGIN; UPDATE t SET v = 1 WHERE k = 1; }
session s2
step u2 { UPDATE t SET v = 2 WHERE k = 1; }
permutation b1 u2
";
    let (res, out) = run_text_within("end.spec", text, "2pl-detect").unwrap();
    assert!(
        out.contains(
            "step u2: UPDATE t SET v = 2 WHERE k = 1; <waiting ...>
canceling step u2: the permutation has ended and nothing can unblock it
step u2: <... completed>
ERROR:  canceling statement due to user request
"
        ),
        "{out}"
    );
    // s1's transaction was still open at the end: the disconnect rolls it back, unrecorded.
    assert!(out.contains("summary: s1 -; s2 aborted 57014;"), "{out}");
    assert_eq!(res.permutations.len(), 1);
}

/// A failing setup block stops the run with the error (isolationtester: `setup failed: ...`, exit
/// 1), keeping the permutations that ran before; it is not a note per permutation.
#[test]
fn a_failing_setup_stops_the_run_with_its_error() {
    let text = "
setup { CREATE TABLE t (k INT PRIMARY KEY); INSERT INTO nosuch VALUES (1); }
session s1
step a { SELECT * FROM t; }
";
    match run_text_within("setup.spec", text, "ssi") {
        Err(RunError::SetupFailed {
            message,
            steps,
            done,
        }) => {
            assert_eq!(
                message,
                "setup failed: relation \"nosuch\" does not exist (42P01)"
            );
            assert_eq!(steps, ["a"]);
            assert!(done.permutations.is_empty());
        }
        other => panic!("{:?}", other.map(|r| r.1)),
    }
    let text = "
setup { CREATE TABLE t (k INT PRIMARY KEY); }
session s1
setup { SELECT * FROM t; }
step a { SELECT * FROM t; }
session s2
setup { SELECT * FROM nosuch; }
step b { SELECT * FROM t; }
";
    match run_text_within("session-setup.spec", text, "2pl-detect") {
        Err(e @ RunError::SetupFailed { .. }) => assert_eq!(
            e.to_string(),
            "setup of session s2 failed: relation \"nosuch\" does not exist (42P01)"
        ),
        other => panic!("{:?}", other.map(|r| r.1)),
    }
}
