pub mod conn;
pub mod error;
pub mod mariadb;
mod net;
pub mod postgres;
pub mod sqlite;

pub use conn::{Backend, Conn, Intent, Level, Stmt, Value};
pub use error::{Error, Result, Retry};
