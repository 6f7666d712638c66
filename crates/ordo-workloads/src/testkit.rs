//! What the workloads' unit tests share: a workload's tables loaded under `nocc`, and one program
//! run alone with its operations checked against its declarations.

use ordo::harness::Workload;
use ordo::protocols::nocc::NoCC;
use ordo::protocols::Protocol;
use ordo::storage::Database;
use ordo::txn::declared::run_checked;
use ordo::txn::Program;

/// `w`'s tables, loaded, under `nocc`.
pub fn loaded<W: Workload>(w: &W) -> NoCC {
    let mut db = Database::new();
    w.load(&mut db).unwrap();
    NoCC::open(db, &Default::default())
}

/// Runs `t` alone under `p`, checking its operations against its declarations (a violation fails
/// the test); the program after its run, or the abort's text if it aborted.
pub fn run_declared<P: Program>(p: &NoCC, mut t: P) -> Result<P, String> {
    let mut worker = p.worker(0, false);
    match run_checked(&mut t, p.begin(&mut worker)) {
        Ok(violations) => {
            assert!(violations.is_empty(), "{}: {violations:?}", t.name());
            Ok(t)
        }
        Err(a) => Err(a.to_string()),
    }
}
