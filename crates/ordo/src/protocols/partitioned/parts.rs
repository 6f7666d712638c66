//! The set of partitions a transaction touches, from its declared accesses.

use crate::protocols::kit::partition_map::PartitionMap;
use crate::storage::Database;
use crate::txn::{Access, Target, TxResult};

/// Partitions as a bitset (for [`crate::protocols::kit::exec::Cover::Partitions`]) and as
/// an ascending list (the locking order).
#[derive(Clone, Debug, Default)]
pub struct PartSet {
    pub bits: Vec<u64>,
    pub list: Vec<u32>,
}

impl PartSet {
    /// The partitions of `accesses` by `map`. Reads of read-only tables
    /// ([`crate::storage::TableSpec::read_only`]) touch none: H-Store replicates such tables in every
    /// partition; a declared write to one is refused ([`Access::unlocked_in`]). A transaction that
    /// touches no partition still runs in one: the first partition its reads of read-only tables
    /// name (where a plan that left out the pieces after a lookup will most likely need to be:
    /// TPC-C's Order-Status by last name), else partition 0.
    pub fn of<M: Default + Send + Sync>(
        &mut self,
        db: &Database<M>,
        accesses: &[Access],
        map: PartitionMap,
    ) -> TxResult<()> {
        let partitions = map.n;
        self.bits.clear();
        self.bits.resize(partitions.div_ceil(64) as usize, 0);
        let mut add = |p: u64| self.bits[(p / 64) as usize] |= 1 << (p % 64);
        let mut replicated = None;
        for a in accesses {
            if a.unlocked_in(db)? {
                if replicated.is_none() {
                    let (Target::Key(k) | Target::Range { lo: k, .. }) = a.target;
                    replicated = Some(map.of(a.table, k));
                }
                continue;
            }
            match a.target {
                Target::Key(k) => add(map.of(a.table, k)),
                Target::Range { lo, hi } => map.range(a.table, lo, hi, &mut add),
            }
        }
        if self.bits.iter().all(|&b| b == 0) {
            // Only read-only tables (or nothing): still run in one partition, like any transaction.
            let p = replicated.unwrap_or(0);
            self.bits[(p / 64) as usize] = 1 << (p % 64);
        }
        self.list.clear();
        self.list.extend(
            (0..partitions as u32).filter(|&p| self.bits[p as usize / 64] & (1 << (p % 64)) != 0),
        );
        Ok(())
    }

    /// Every partition.
    pub fn all(&mut self, partitions: u64) {
        self.bits.clear();
        self.bits.resize(partitions.div_ceil(64) as usize, 0);
        for p in 0..partitions {
            self.bits[(p / 64) as usize] |= 1 << (p % 64);
        }
        self.list.clear();
        self.list.extend(0..partitions as u32);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::storage::ColumnSet;

    #[test]
    fn keys_map_modulo_and_wide_ranges_take_everything() {
        let db = crate::protocols::conformance::small_db::<()>();
        let mut s = PartSet::default();
        let four = PartitionMap::new(4, None);
        s.of(
            &db,
            &[
                Access::read(0, 7, ColumnSet::ALL),
                Access::read(0, 12, ColumnSet::ALL),
            ],
            four,
        )
        .unwrap();
        assert_eq!(s.list, vec![0, 3]);
        s.of(&db, &[Access::scan(0, 5, 6, ColumnSet::ALL)], four)
            .unwrap();
        assert_eq!(s.list, vec![1, 2]);
        s.of(&db, &[Access::scan(0, 5, 8, ColumnSet::ALL)], four)
            .unwrap();
        assert_eq!(s.list, vec![0, 1, 2, 3]);
        s.of(
            &db,
            &[Access::read(0, 100, ColumnSet::ALL)],
            PartitionMap::new(70, None),
        )
        .unwrap();
        assert_eq!((s.list.clone(), s.bits.len()), (vec![30], 2));
    }

    #[test]
    fn a_transaction_of_replicated_reads_runs_where_they_point() {
        let mut db = crate::protocols::conformance::small_db::<()>();
        let schema = db.table(0).schema().clone();
        let ro = db
            .create_table(crate::storage::TableSpec::new("ro", schema).read_only())
            .unwrap();
        let mut s = PartSet::default();
        let four = PartitionMap::new(4, None);
        s.of(&db, &[Access::read(ro, 7, ColumnSet::ALL)], four)
            .unwrap();
        assert_eq!(s.list, vec![3], "the partition its read names");
        s.of(&db, &[Access::scan(ro, 6, 9, ColumnSet::ALL)], four)
            .unwrap();
        assert_eq!(s.list, vec![2], "a scan's first key's");
        s.of(&db, &[], four).unwrap();
        assert_eq!(s.list, vec![0], "nothing at all: partition 0");
        s.of(
            &db,
            &[
                Access::read(ro, 7, ColumnSet::ALL),
                Access::read(0, 5, ColumnSet::ALL),
            ],
            four,
        )
        .unwrap();
        assert_eq!(s.list, vec![1], "replicated reads name no partition");
    }
}
