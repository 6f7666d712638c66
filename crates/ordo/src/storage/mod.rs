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
pub mod zeroed;

pub use arena::{RowId, ABSENT};
pub use database::{CreateTableError, Database};
pub use row::{RowMut, RowRef, Value};
pub use schema::{Column, ColumnSet, ColumnType, Schema, SchemaError};
pub use table::{LoadError, Table, TableId, TableSpec, SUPREMUM};

/// Starts loading the cache line holding `*p` (a hint; no effect on other targets).
#[inline(always)]
pub(crate) fn prefetch<T>(p: *const T) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: prefetching is a hint and never faults, whatever the address.
    unsafe {
        std::arch::x86_64::_mm_prefetch(p.cast::<i8>(), std::arch::x86_64::_MM_HINT_T0)
    };
    #[cfg(not(target_arch = "x86_64"))]
    let _ = p;
}
