//! The isolation levels of §5.2, as a policy the lock manager applies per transaction.
//!
//! | level | `SELECT` locks | inserts and deletes |
//! |---|---|---|
//! | serializable (default) | held until commit | wait for every conflicting lock |
//! | repeatable read | held until commit | pass *range* read locks (phantoms), not equality ones |
//! | read committed | released at the statement's end ([`crate::LockManager::end_statement`]) | as repeatable read |
//! | read uncommitted | none | as repeatable read |
//!
//! A read lock is an *equality* lock when its predicate pins the relation's key column to values
//! (`k = 5`, `k = 5 ∧ x > 3`, `k = 1 ∨ k = 2`); every other read lock is a *range* lock. Which locks
//! may be passed is decided by the reader's level, not the writer's: a phantom is an anomaly the
//! reader sees, so a serializable reader's range locks bind every inserter, whatever its level.
//! Writes are never passed, and readers at every level except read uncommitted wait for conflicting
//! writes (no dirty reads).

/// An isolation level, weakest first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub enum Isolation {
    ReadUncommitted,
    ReadCommitted,
    RepeatableRead,
    #[default]
    Serializable,
}

impl Isolation {
    /// Does a `SELECT` take predicate locks at all?
    pub fn locks_reads(self) -> bool {
        self > Isolation::ReadUncommitted
    }

    /// Are a `SELECT`'s locks released when the statement ends (instead of after commit)?
    pub fn releases_reads_at_statement_end(self) -> bool {
        self == Isolation::ReadCommitted
    }

    /// May inserts and deletes pass this transaction's range read locks?
    pub fn range_reads_passable(self) -> bool {
        self <= Isolation::RepeatableRead
    }

    /// `serializable`, `repeatable read`, `read committed`, `read uncommitted` (any case, `_` or
    /// `-` for spaces), as in `BEGIN ISOLATION LEVEL …`.
    pub fn parse(text: &str) -> Option<Isolation> {
        let t = text.trim().to_ascii_lowercase().replace(['_', '-'], " ");
        match t.split_whitespace().collect::<Vec<_>>().join(" ").as_str() {
            "serializable" => Some(Isolation::Serializable),
            "repeatable read" => Some(Isolation::RepeatableRead),
            "read committed" => Some(Isolation::ReadCommitted),
            "read uncommitted" => Some(Isolation::ReadUncommitted),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn policy_table() {
        use Isolation::*;
        assert!(!ReadUncommitted.locks_reads() && ReadCommitted.locks_reads());
        assert!(
            ReadCommitted.releases_reads_at_statement_end()
                && !RepeatableRead.releases_reads_at_statement_end()
        );
        assert!(RepeatableRead.range_reads_passable() && !Serializable.range_reads_passable());
        assert_eq!(Isolation::parse("REPEATABLE  READ"), Some(RepeatableRead));
        assert_eq!(Isolation::parse("read_committed"), Some(ReadCommitted));
        assert_eq!(Isolation::parse("snapshot"), None);
        assert_eq!(Isolation::default(), Serializable);
    }
}
