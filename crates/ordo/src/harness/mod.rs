//! Benchmark and verification harness.
