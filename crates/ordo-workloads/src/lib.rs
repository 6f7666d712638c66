//! The benchmarks of the papers, each written once as transaction programs every protocol can run.
//!
//! * [`tpcc`] — TPC-C (all five transactions, consistency conditions 1–4) and TPC-C++ (Credit Check).
//! * [`ycsb`] — YCSB as DBx1000 and the VLL, PWV and DIBS papers configure it (Zipfian or hot-set keys).

pub mod tpcc;
pub mod ycsb;
pub mod zipf;
