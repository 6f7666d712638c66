//! A database: the set of tables one protocol instance runs on.
//!
//! A database may be given a memory limit ([`Database::set_memory_limit`]; the benchmark harness
//! sets the machine's memory). Creating a table then checks what the tables declared so far will take
//! once they hold their declared capacities ([`Table::footprint`]) and refuses a table that would
//! take the total past the limit — before its index is allocated or a row is loaded, so that a
//! configuration that cannot fit fails at once with a clear message instead of loading for minutes
//! and being killed for memory.

use super::table::{Table, TableId, TableSpec};

/// Tables, by [`TableId`], each generic over the protocol's per-record state `M`.
pub struct Database<M> {
    tables: Vec<Table<M>>,
    /// Bytes the tables may take once loaded ([`Table::footprint`], summed); `None`: no limit.
    memory_limit: Option<u64>,
    /// Their footprints so far.
    reserved: u64,
}

impl<M: Default + Send + Sync> Default for Database<M> {
    fn default() -> Self {
        Self::new()
    }
}

impl<M: Default + Send + Sync> Database<M> {
    /// An empty database with no memory limit.
    pub fn new() -> Self {
        Database {
            tables: Vec::new(),
            memory_limit: None,
            reserved: 0,
        }
    }

    /// Faults in every table's row slots up to its declared capacity ([`Table::prefault`]), as a
    /// buffer pool is allocated up front: the benchmark harness calls it once the workload is
    /// loaded, so that no measured insert waits for fresh memory to be zeroed.
    pub fn prefault(&mut self) {
        for t in &mut self.tables {
            t.prefault();
        }
    }

    /// Refuses, from now on, tables whose footprints would bring the total past `limit` bytes.
    pub fn set_memory_limit(&mut self, limit: Option<u64>) {
        self.memory_limit = limit;
    }

    /// What the tables created so far take, at least, once they hold their declared capacities.
    pub fn footprint(&self) -> u64 {
        self.reserved
    }

    /// Adds a table; names must be unique, and the tables must fit the memory limit.
    pub fn create_table(&mut self, spec: TableSpec) -> Result<TableId, CreateTableError> {
        if self.tables.iter().any(|t| t.name() == spec.name) {
            return Err(CreateTableError::Duplicate(spec.name));
        }
        let needs = Table::<M>::footprint(&spec);
        let total = self.reserved.saturating_add(needs);
        if let Some(limit) = self.memory_limit {
            if total > limit {
                return Err(CreateTableError::OverMemory {
                    table: spec.name,
                    rows: spec.capacity as u64,
                    total,
                    limit,
                });
            }
        }
        self.reserved = total;
        let id = self.tables.len() as TableId;
        self.tables.push(Table::new(id, spec));
        Ok(id)
    }

    /// The table with id `id` (ids come from [`Self::create_table`]; an unknown id is a programming error).
    #[inline]
    pub fn table(&self, id: TableId) -> &Table<M> {
        &self.tables[id as usize]
    }

    pub fn table_by_name(&self, name: &str) -> Option<&Table<M>> {
        self.tables.iter().find(|t| t.name() == name)
    }

    pub fn tables(&self) -> &[Table<M>] {
        &self.tables
    }
}

/// Why a table could not be created.
#[derive(Debug, thiserror::Error)]
pub enum CreateTableError {
    /// A table of that name exists already.
    #[error("table `{0}` already exists")]
    Duplicate(String),
    /// The tables would not fit the database's memory limit.
    #[error(
        "table `{table}` ({rows} rows) would bring the tables to at least {} of memory, past the \
         database's limit of {}",
        bytes(*total),
        bytes(*limit)
    )]
    OverMemory {
        table: String,
        rows: u64,
        /// The tables' footprint with this one.
        total: u64,
        limit: u64,
    },
}

/// `n` bytes for people: `1.5 GiB`.
pub fn bytes(n: u64) -> String {
    const UNITS: [&str; 6] = ["B", "KiB", "MiB", "GiB", "TiB", "PiB"];
    let mut v = n as f64;
    let mut u = 0;
    while v >= 1024.0 && u + 1 < UNITS.len() {
        v /= 1024.0;
        u += 1;
    }
    if u == 0 {
        format!("{n} B")
    } else {
        format!("{v:.1} {}", UNITS[u])
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::storage::{Column, ColumnType, Schema};

    fn spec(name: &str, rows: usize) -> TableSpec {
        let schema = Schema::new(vec![Column::new("v", ColumnType::Int)]).unwrap();
        TableSpec::new(name, schema).capacity(rows)
    }

    #[test]
    fn tables_past_the_memory_limit_are_refused_before_they_are_built() {
        let mut db = Database::<u64>::new();
        // Header (version + an 8-byte meta) and one data word: 24 bytes, padded to 32; the index
        // takes 2 × 1,000 keys rounded up to 2,048 slots of 16 bytes.
        assert_eq!(
            Table::<u64>::footprint(&spec("a", 1000)),
            1000 * 32 + 2048 * 16
        );
        db.set_memory_limit(Some(100_000));
        db.create_table(spec("a", 1000)).unwrap();
        assert_eq!(db.footprint(), 64_768);
        // A second such table would reach 129,536 bytes.
        match db.create_table(spec("b", 1000)) {
            Err(CreateTableError::OverMemory {
                table, rows, total, ..
            }) => {
                assert_eq!((table.as_str(), rows, total), ("b", 1000, 129_536));
            }
            other => panic!("expected OverMemory, got {other:?}"),
        }
        assert_eq!(db.tables().len(), 1, "the refused table was not created");
        assert_eq!(db.footprint(), 64_768);
        // A capacity no machine has is refused without overflow (and without allocating).
        let err = db.create_table(spec("huge", usize::MAX)).unwrap_err();
        assert!(err.to_string().contains("huge"), "{err}");
        // Without a limit, anything is created (the default).
        db.set_memory_limit(None);
        db.create_table(spec("b", 1000)).unwrap();
        assert!(matches!(
            db.create_table(spec("b", 1)),
            Err(CreateTableError::Duplicate(_))
        ));
    }

    #[test]
    fn bytes_are_printed_in_binary_units() {
        assert_eq!(bytes(0), "0 B");
        assert_eq!(bytes(1023), "1023 B");
        assert_eq!(bytes(1536), "1.5 KiB");
        assert_eq!(bytes(24 << 30), "24.0 GiB");
        assert_eq!(bytes(u64::MAX), "16384.0 PiB");
    }
}
