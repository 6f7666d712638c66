//! Ordo: one in-memory storage core on which many concurrency-control protocols run side by side.
pub mod check;
