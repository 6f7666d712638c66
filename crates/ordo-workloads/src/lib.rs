//! The benchmarks of the papers, each written once as transaction programs every protocol can run.
//!
//! * [`vll_micro`] — the VLL paper's micro-benchmark (1 hot + 9 cold records, contention index).
//! * [`ycsb`] — YCSB as DBx1000 and the VLL, PWV and DIBS papers configure it (Zipfian or hot-set keys).

pub mod vll_micro;
pub mod ycsb;
pub mod zipf;
