//! The README's embedding example, kept compiling and true.

use ordo::protocols::{silo::Silo, Protocol, ProtocolConfig};
use ordo::storage::{Column, ColumnSet, ColumnType, Database, Schema, TableSpec};
use ordo::txn::Tx;

#[test]
fn readme_embedding_example() -> Result<(), Box<dyn std::error::Error>> {
    let mut db = Database::new();
    let schema = Schema::new(vec![Column::new("balance", ColumnType::Int)])?;
    let accounts = db.create_table(TableSpec::new("accounts", schema))?;
    let engine = Silo::open(db, &ProtocolConfig::default());
    let mut worker = engine.worker(0, false);
    let mut tx = engine.begin(&mut worker);
    tx.insert(accounts, 7, |row| row.set_int(0, 100))?;
    tx.commit()?;

    let mut tx = engine.begin(&mut worker);
    let balance = tx.get(accounts, 7, ColumnSet::ALL)?.map(|r| r.int(0));
    assert_eq!(balance, Some(100));
    tx.commit()?;
    Ok(())
}
