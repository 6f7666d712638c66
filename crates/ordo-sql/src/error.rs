//! Errors in PostgreSQL's words, each with its SQLSTATE.
//!
//! A protocol's [`Abort`] becomes the error PostgreSQL would report for the same situation: every
//! concurrency abort that is not a deadlock is a serialization failure (`40001`), a deadlock victim is
//! `40P01`, a duplicate key `23505`. SQL this layer does not implement is `0A000 not supported: ...`.

use ordo::txn::{Abort, AbortReason};
use std::fmt;

/// An SQL error: SQLSTATE, message, and for syntax errors the line and column in the statement text.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct SqlError {
    pub code: &'static str,
    pub message: String,
    /// 1-based line and column, where known.
    pub position: Option<(u64, u64)>,
}

impl SqlError {
    pub fn new(code: &'static str, message: impl Into<String>) -> Self {
        SqlError {
            code,
            message: message.into(),
            position: None,
        }
    }
    /// `0A000 not supported: ...`
    pub fn unsupported(what: impl fmt::Display) -> Self {
        Self::new("0A000", format!("not supported: {what}"))
    }
    pub fn syntax(message: impl Into<String>) -> Self {
        Self::new("42601", message)
    }
    pub fn undefined_table(name: &str) -> Self {
        Self::new("42P01", format!("relation \"{name}\" does not exist"))
    }
    pub fn undefined_column(name: &str) -> Self {
        Self::new("42703", format!("column \"{name}\" does not exist"))
    }
    pub fn mismatch(message: impl Into<String>) -> Self {
        Self::new("42804", message)
    }
    /// `25P02`: a statement inside a transaction block that already failed.
    pub fn in_failed_transaction() -> Self {
        Self::new(
            "25P02",
            "current transaction is aborted, commands ignored until end of transaction block",
        )
    }
    /// Whether this error is a concurrency failure that a retry may cure (40001, 40P01).
    pub fn is_serialization_failure(&self) -> bool {
        self.code.starts_with("40")
    }
}

impl fmt::Display for SqlError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for SqlError {}

impl From<Abort> for SqlError {
    fn from(a: Abort) -> Self {
        let detail = a.detail.map(|d| format!(" ({d})")).unwrap_or_default();
        let (code, message) = match a.reason {
            AbortReason::Deadlock => ("40P01", "deadlock detected".to_string()),
            AbortReason::Cascade => (
                "40001",
                "could not serialize access: a transaction whose writes this one saw aborted"
                    .to_string(),
            ),
            AbortReason::LockConflict => (
                "40001",
                "could not serialize access due to a lock conflict (no-wait)".to_string(),
            ),
            AbortReason::Died => (
                "40001",
                "could not serialize access: an older transaction holds the lock (wait-die)"
                    .to_string(),
            ),
            AbortReason::Validation => (
                "40001",
                "could not serialize access due to concurrent update (validation failed)"
                    .to_string(),
            ),
            AbortReason::UpdateConflict => (
                "40001",
                "could not serialize access due to concurrent update".to_string(),
            ),
            AbortReason::Unsafe => (
                "40001",
                "could not serialize access due to read/write dependencies among transactions"
                    .to_string(),
            ),
            AbortReason::DuplicateKey => (
                "23505",
                "duplicate key value violates unique constraint".to_string(),
            ),
            AbortReason::InvalidData => ("22000", "invalid data".to_string()),
            AbortReason::User => ("P0001", "transaction aborted by its own logic".to_string()),
        };
        SqlError::new(code, format!("{message}{detail}"))
    }
}

impl From<sqlparser::parser::ParserError> for SqlError {
    /// sqlparser ends its messages with ` at Line: L, Column: C`; keep the position apart.
    fn from(e: sqlparser::parser::ParserError) -> Self {
        let text = match e {
            sqlparser::parser::ParserError::TokenizerError(s)
            | sqlparser::parser::ParserError::ParserError(s) => s,
            sqlparser::parser::ParserError::RecursionLimitExceeded => {
                "statement nested too deeply".into()
            }
        };
        let mut err = SqlError::syntax(format!("syntax error: {text}"));
        if let Some(at) = text.rfind(" at Line: ") {
            let pos = &text[at + " at Line: ".len()..];
            let mut it = pos.split(", Column: ");
            if let (Some(l), Some(c)) = (it.next(), it.next()) {
                if let (Ok(l), Ok(c)) = (l.trim().parse(), c.trim().parse()) {
                    err.position = Some((l, c));
                    err.message = format!("syntax error: {}", &text[..at]);
                }
            }
        }
        err
    }
}

/// Shorthand.
pub type SqlResult<T> = Result<T, SqlError>;
