//! What the server tests share: finding a server, or skipping without one.
//!
//! A server is found at `ORDO_MARIADB_URL` / `ORDO_POSTGRES_URL`, else where
//! `scripts/servers/<name>.sh` serves it. One that cannot be reached skips the test with one line,
//! unless `ORDO_REQUIRE_SERVERS=1` (CI), when the test fails.

use ordo_backends::mariadb::Mariadb;
use ordo_backends::postgres::Postgres;
use ordo_backends::{Backend, Error};
use std::sync::Arc;

pub const MARIADB_URL: &str = "mysql://ordo:ordo@127.0.0.1:33306/ordo";
pub const POSTGRES_URL: &str = "postgres://ordo:ordo@127.0.0.1:35432/ordo";

/// `mariadb` or `postgres`, connected once to see that it is there; `None` (said in one line)
/// when it is not and servers are not required.
pub fn server(name: &str) -> Option<Arc<dyn Backend>> {
    let (var, default) = match name {
        "mariadb" => ("ORDO_MARIADB_URL", MARIADB_URL),
        "postgres" => ("ORDO_POSTGRES_URL", POSTGRES_URL),
        other => panic!("no server called {other}"),
    };
    let url = std::env::var(var).unwrap_or_else(|_| default.to_owned());
    let b: Arc<dyn Backend> = match name {
        "mariadb" => Arc::new(Mariadb::new(&url).unwrap()),
        _ => Arc::new(Postgres::new(&url).unwrap()),
    };
    match b.connect() {
        Ok(_) => Some(b),
        Err(e @ Error::Unavailable { .. })
            if std::env::var("ORDO_REQUIRE_SERVERS").as_deref() != Ok("1") =>
        {
            let test = std::thread::current().name().unwrap_or("?").to_owned();
            eprintln!("{test}: skipped, no server: {e} (ORDO_REQUIRE_SERVERS=1 fails instead)");
            None
        }
        Err(e) => panic!("{e}"),
    }
}
