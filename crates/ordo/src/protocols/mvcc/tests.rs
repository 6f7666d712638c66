//! Contract and garbage-collection tests.
