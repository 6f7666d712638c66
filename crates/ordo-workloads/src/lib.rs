//! The benchmarks of the papers, each written once as transaction programs every protocol can run.
//!
//! * [`tpcc`] — TPC-C (all five transactions, consistency conditions 1–4) and TPC-C++ (Credit Check).
//! * [`vll_micro`] — the VLL paper's micro-benchmark (1 hot + 9 cold records, contention index).
//! * [`ycsb`] — YCSB as DBx1000 and the VLL, PWV and DIBS papers configure it (Zipfian or hot-set keys).

pub mod tpcc;
pub mod vll_micro;
pub mod ycsb;
pub mod zipf;
