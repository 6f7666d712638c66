//! placeholder
mod history;
pub use history::*;
