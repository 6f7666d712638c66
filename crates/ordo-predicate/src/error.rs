//! The crate's one error type: malformed predicates and requests are refused with an `Error`,
//! never a panic, and a lock wait that runs out of time is an `Error::Timeout` the caller answers by
//! rolling back, releasing and restarting (§3.1).

use crate::predicate::ColumnId;

/// Why a predicate, template or lock request was refused, or why a wait ended.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Error {
    /// The predicate text could not be parsed (byte offset into the text).
    #[error("predicate syntax error at byte {at}: {message}")]
    Parse { at: usize, message: String },
    /// A column name the resolver does not know.
    #[error("unknown column `{0}`")]
    UnknownColumn(String),
    /// A column id past the relation's width (or past the 64 columns a `ColumnSet` holds).
    #[error("column {column} out of range: the relation has {width} columns")]
    ColumnOutOfRange { column: ColumnId, width: u16 },
    /// `AND ()` or `OR ()`: almost certainly a bug in whoever built the predicate.
    #[error("empty {0} in a predicate")]
    EmptyConnective(&'static str),
    /// Nesting deeper than `predicate::MAX_DEPTH` (recursion is bounded so no input overflows the stack).
    #[error("predicate nested deeper than {0} levels")]
    TooDeep(usize),
    /// A relation id the lock manager was not configured with.
    #[error("unknown relation {0}")]
    UnknownRelation(u32),
    /// A relation declared with no columns, more than 64 columns, zero buckets or a key column out of range.
    #[error("bad relation {relation}: {message}")]
    BadRelation { relation: u32, message: String },
    /// A prepared-statement id the lock manager was not configured with.
    #[error("unknown prepared template {0}")]
    UnknownTemplate(u32),
    /// A template names parameter `$n` but the request supplied fewer values.
    #[error("template {template} takes {expected} parameters, {given} given")]
    Arity {
        template: u32,
        expected: usize,
        given: usize,
    },
    /// A scalar the order-preserving encodings cannot represent (NaN).
    #[error("unsupported scalar: {0}")]
    UnsupportedScalar(String),
    /// The optimization list of `Optimizations::parse` named something unknown.
    #[error(
        "unknown optimization `{0}` (naive, grouping, prepared, filter, column, threshold, full)"
    )]
    UnknownOptimization(String),
    /// The wait for a conflicting lock ran past its timeout (plus jitter): a possible deadlock. The
    /// caller rolls the transaction back, calls `release`, and restarts it.
    #[error("timed out waiting for a conflicting predicate lock (possible deadlock)")]
    Timeout,
}
