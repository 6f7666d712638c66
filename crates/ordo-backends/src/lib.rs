pub mod conn;
pub mod driver;
pub mod error;
pub mod session;
pub mod sqlite;
pub mod workloads;

pub use conn::{Backend, Conn, Intent, Level, Stmt, Value};
pub use error::{Error, Result, Retry};
