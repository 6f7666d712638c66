//! The storage core: schemas, row images, the row arena and tables with their indexes.
//!
//! Storage knows nothing about isolation. Each table is generic over `M`, the per-record state a
//! protocol keeps beside every row (see [`arena`]); protocols read and write rows through the copying
//! helpers of [`Table`] and decide themselves when that is safe.

pub mod arena;
pub mod database;
pub mod hash_index;
pub mod row;
pub mod schema;
pub mod table;

pub use arena::{RowId, ABSENT};
pub use database::{Database, DuplicateTable};
pub use row::{RowMut, RowRef, Value};
pub use schema::{Column, ColumnSet, ColumnType, Schema, SchemaError};
pub use table::{LoadError, Table, TableId, TableSpec, SUPREMUM};
