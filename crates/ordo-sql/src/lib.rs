//! A small SQL front for Ordo, and a runner for PostgreSQL isolationtester specs.
pub mod access;
pub mod catalog;
pub mod ddl;
pub mod engine;
pub mod error;
pub mod exec;
pub mod expr;
pub mod format;
pub mod index;
pub mod key;
pub mod session;
pub mod spec;
pub mod value;
