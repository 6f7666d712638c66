//! A database: the set of tables one protocol instance runs on.

use super::table::{Table, TableId, TableSpec};

/// Tables, by [`TableId`], each generic over the protocol's per-record state `M`.
pub struct Database<M> {
    tables: Vec<Table<M>>,
}

impl<M: Default + Send + Sync> Default for Database<M> {
    fn default() -> Self {
        Self::new()
    }
}

impl<M: Default + Send + Sync> Database<M> {
    pub fn new() -> Self {
        Database { tables: Vec::new() }
    }

    /// Adds a table; names must be unique.
    pub fn create_table(&mut self, spec: TableSpec) -> Result<TableId, DuplicateTable> {
        if self.tables.iter().any(|t| t.name() == spec.name) {
            return Err(DuplicateTable(spec.name));
        }
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

/// A table of that name exists already.
#[derive(Debug, thiserror::Error)]
#[error("table `{0}` already exists")]
pub struct DuplicateTable(pub String);
