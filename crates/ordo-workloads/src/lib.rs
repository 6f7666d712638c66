//! The benchmarks of the papers, each written once as transaction programs every protocol can run.
//!
//! * [`ycsb`] — YCSB as DBx1000 and the VLL, PWV and DIBS papers configure it (Zipfian or hot-set keys).

pub mod ycsb;
pub mod zipf;
