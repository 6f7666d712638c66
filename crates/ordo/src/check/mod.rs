//! Serializability checker: Adya's Direct Serialization Graph over a recorded [`History`].
//!
//! # The model
//!
//! Every transaction the engine runs is recorded as a [`TxnRecord`]: its reads
//! (naming the version seen) and its writes (naming the version replaced).
//! Versions are named by the id of the transaction that wrote them, with
//! [`INITIAL`] for the loader's version. Because each write names its `prev`
//! exactly, the *version order* of every item is known — it is the chain of
//! `prev -> new` links — and the checker needs no search: it builds Adya's
//! **Direct Serialization Graph** (DSG, Adya's PhD thesis, MIT 1999) and looks
//! for cycles in it.
//!
//! The DSG's nodes are the committed transactions. Its edges are the direct
//! dependencies, each labelled with the item that induced it:
//!
//! | edge | meaning | `Ti -> Tj` when |
//! |------|---------|-----------------|
//! | `ww` | write dependency | `Tj` installs the committed version right after `Ti`'s |
//! | `wr` | read dependency | `Tj` reads the version `Ti` wrote |
//! | `rw` | anti-dependency | `Ti` reads a version and `Tj` installs the next committed one |
//! | `prw` | predicate anti-dependency | `Ti` scans a range and sees a key in it as never existing; `Tj` inserts that key (the first committed version) |
//!
//! Versions written by aborted transactions are skipped when linking
//! committed versions. A history is (conflict-)serializable under its version
//! order iff the DSG is acyclic and no committed transaction observed aborted
//! state: any topological order of the DSG is then an equivalent serial order.
//!
//! # Anomaly classes
//!
//! | class | witness | forbidden from |
//! |-------|---------|----------------|
//! | G0 | cycle of `ww` edges (dirty write) | PL-1 (read uncommitted) up |
//! | G1a | committed read of an aborted version | PL-2 (read committed) up |
//! | G1b | intermediate read (*not detectable here*, see [`anomaly`]) | PL-2 up |
//! | G1c | cycle of `ww`/`wr` edges | PL-2 up |
//! | G-single | cycle with exactly one `rw` edge (lost update, read skew) | snapshot isolation (PL-SI) up |
//! | G2-item | cycle with two or more `rw` edges (write skew) | PL-2.99 (repeatable read) up |
//! | G2 | cycle with two or more anti-dependencies, one of them a predicate's (phantom) | PL-3 (serializable) |
//!
//! Each strongly connected component of the DSG is reported once, with the
//! most severe class found in the order G0, G1c, G-single, G2-item, G2 and one
//! concrete witness cycle (see [`Anomaly`]).
//!
//! # What to expect from each protocol
//!
//! * **Serializable protocols** (2PL, OCC, SSI, ...) must never produce any
//!   cycle, nor G1a: [`Report::is_serializable`] must hold.
//! * **Snapshot isolation** may produce G2-item (write skew: two transactions
//!   each read what the other writes) and G2 (phantoms: each scans a range
//!   the other inserts into) but never G-single, G1 or G0: first committer
//!   wins rules out lost updates and snapshots rule out read skew.
//! * **No isolation** (`nocc`) may produce anything, including G1a, since its
//!   aborted writes are not undone.
//!
//! [`AnomalyKind::VersionFork`] is not an isolation level violation but an
//! engine invariant violation: two committed writers claimed to replace the
//! same version. It does not affect [`Report::is_serializable`].
//!
//! # Entry points
//!
//! [`check`] runs everything and returns a [`Report`]; [`Dsg::build`] exposes
//! the graph itself; [`dbcop::to_dbcop_json`] exports a history for the
//! external `dbcop` checker.

pub mod anomaly;
pub mod dbcop;
pub mod graph;
mod hash;
pub mod history;
mod scc;

#[cfg(test)]
mod tests;

use std::fmt;

use serde::{Deserialize, Serialize};

pub use anomaly::{find_anomalies, Anomaly, AnomalyKind};
pub use graph::{Dsg, EdgeKind, EdgeWitness};
pub use history::{Event, History, ItemKey, TxnId, TxnRecord, INITIAL};

/// How many anomalies [`Report`]'s `Display` lists before eliding the rest.
const DISPLAY_LIMIT: usize = 20;

/// The outcome of [`check`].
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Report {
    /// Committed transactions (DSG nodes).
    pub committed: usize,
    /// Aborted transactions.
    pub aborted: usize,
    /// Distinct DSG edges.
    pub edges: usize,
    /// Everything found: version forks, G1a reads, one cycle per nontrivial SCC.
    pub anomalies: Vec<Anomaly>,
}

impl Report {
    /// No G0, G1a, G1b, G1c, G-single, G2-item or G2 anomaly was found.
    pub fn is_serializable(&self) -> bool {
        !self
            .anomalies
            .iter()
            .any(|a| a.kind.breaks_serializability())
    }

    /// Whether some anomaly of `kind` was found.
    pub fn has(&self, kind: AnomalyKind) -> bool {
        self.anomalies.iter().any(|a| a.kind == kind)
    }

    /// Number of anomalies of `kind`.
    pub fn count(&self, kind: AnomalyKind) -> usize {
        self.anomalies.iter().filter(|a| a.kind == kind).count()
    }

    /// One line: sizes and per-kind counts, e.g.
    /// `1200 committed, 31 aborted, 3400 edges: serializable` or
    /// `... edges: G-single=1 G2-item=2`.
    pub fn summary(&self) -> String {
        let head = format!(
            "{} committed, {} aborted, {} edges:",
            self.committed, self.aborted, self.edges
        );
        let counts: Vec<String> = AnomalyKind::ALL
            .iter()
            .map(|&k| (k, self.count(k)))
            .filter(|&(_, n)| n > 0)
            .map(|(k, n)| format!("{k}={n}"))
            .collect();
        if counts.is_empty() {
            format!("{head} serializable, no anomalies")
        } else {
            let verdict = if self.is_serializable() {
                "serializable"
            } else {
                "NOT serializable"
            };
            format!("{head} {verdict}: {}", counts.join(" "))
        }
    }
}

impl fmt::Display for Report {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "{}", self.summary())?;
        for a in self.anomalies.iter().take(DISPLAY_LIMIT) {
            writeln!(f, "  {a}")?;
        }
        if self.anomalies.len() > DISPLAY_LIMIT {
            writeln!(f, "  ... and {} more", self.anomalies.len() - DISPLAY_LIMIT)?;
        }
        Ok(())
    }
}

/// Checks a recorded history: builds the DSG and reports every anomaly class
/// it can detect. Runs in time roughly linear in the size of the history.
pub fn check(history: &History) -> Report {
    let dsg = Dsg::build(history);
    let anomalies = find_anomalies(&dsg);
    Report {
        committed: dsg.committed(),
        aborted: dsg.aborted,
        edges: dsg.edge_count(),
        anomalies,
    }
}
