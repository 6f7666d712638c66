//! DDL: CREATE TABLE, CREATE [UNIQUE] INDEX, ALTER TABLE … ADD COLUMN and DROP TABLE/INDEX change
//! the catalog; the engine then rebuilds the protocol instance (see [`crate::engine`]), carrying
//! every row over by column name.

use crate::catalog::{Catalog, ColumnDef, IndexDef, TableDef, UniqueDef};
use crate::error::{SqlError, SqlResult};
use crate::expr;
use crate::value::{SqlType, TEXT_LIMIT};
use sqlparser::ast::{self, DataType as D};
use std::sync::atomic::AtomicU64;
use std::sync::Arc;

pub(crate) fn sql_type(t: &D) -> SqlResult<SqlType> {
    let len = |l: &Option<ast::CharacterLength>| match l {
        Some(ast::CharacterLength::IntegerLength { length, .. }) => u16::try_from(*length)
            .map_err(|_| SqlError::unsupported(format!("{t}: longer than 65535"))),
        _ => Ok(TEXT_LIMIT),
    };
    Ok(match t {
        D::Int(_) | D::Integer(_) | D::BigInt(_) | D::SmallInt(_) | D::Int4(_) | D::Int8(_) => {
            SqlType::Int
        }
        D::Double(_) | D::DoublePrecision | D::Float(_) | D::Real | D::Float4 | D::Float8 => {
            SqlType::Float
        }
        D::Text => SqlType::Text(TEXT_LIMIT),
        D::Varchar(l) | D::Char(l) | D::Character(l) => match len(l)? {
            // A nullable column keeps one byte for NULL (see `crate::value`); PostgreSQL refuses 0.
            0 => {
                return Err(SqlError::new(
                    "22023",
                    format!(
                        "length for type {} must be at least 1",
                        if matches!(t, D::Varchar(_)) {
                            "varchar"
                        } else {
                            "char"
                        }
                    ),
                ))
            }
            n => SqlType::Text(n),
        },
        D::Bool | D::Boolean => SqlType::Bool,
        D::Date => SqlType::Date,
        D::Timestamp(None, ast::TimezoneInfo::None | ast::TimezoneInfo::WithoutTimeZone) => {
            SqlType::Timestamp
        }
        D::Timestamp(None, ast::TimezoneInfo::WithTimeZone | ast::TimezoneInfo::Tz) => {
            SqlType::TimestampTz
        }
        other => return Err(SqlError::unsupported(format!("type {other}"))),
    })
}

/// A column of `CREATE TABLE` or `ALTER TABLE … ADD`: its definition, whether it is `PRIMARY
/// KEY`, and its `UNIQUE` constraint (with the name given, if any).
#[allow(clippy::type_complexity)]
fn column_def(c: &ast::ColumnDef) -> SqlResult<(ColumnDef, bool, Option<Option<String>>)> {
    let name = expr::column_name(&c.name);
    // SERIAL, BIGSERIAL, SMALLSERIAL: an integer column, NOT NULL, filled from its sequence.
    let serial = match &c.data_type {
        D::Custom(n, args) if args.is_empty() => expr::object_name(n).is_ok_and(|n| {
            matches!(
                n.as_str(),
                "serial" | "serial4" | "bigserial" | "serial8" | "smallserial" | "serial2"
            )
        }),
        _ => false,
    };
    let ty = if serial {
        SqlType::Int
    } else {
        sql_type(&c.data_type)?
    };
    let (mut not_null, mut pk, mut unique, mut default) = (serial, false, None, None);
    for o in &c.options {
        match &o.option {
            ast::ColumnOption::Unique {
                is_primary: true, ..
            } => pk = true,
            ast::ColumnOption::Unique {
                is_primary: false,
                characteristics: None,
            } => unique = Some(o.name.as_ref().map(expr::column_name)),
            ast::ColumnOption::NotNull => not_null = true,
            ast::ColumnOption::Null => {}
            // A constant DEFAULT, cast to the column's type once.
            ast::ColumnOption::Default(_) if serial || default.is_some() => {
                return Err(SqlError::syntax(format!(
                    "multiple default values specified for column \"{name}\""
                )))
            }
            ast::ColumnOption::Default(e) => {
                default = Some(crate::engine::constant(e)?.coerce(ty, &name)?)
            }
            other => return Err(SqlError::unsupported(format!("column option {other}"))),
        }
    }
    if default == Some(crate::value::Datum::Null) {
        default = None;
    }
    Ok((
        ColumnDef {
            name,
            ty,
            not_null,
            default,
            sequence: serial.then(|| Arc::new(std::sync::atomic::AtomicI64::new(1))),
        },
        pk,
        unique,
    ))
}

/// The catalog after `ALTER TABLE t ADD [COLUMN] [IF NOT EXISTS] c type [NOT NULL] [DEFAULT v]
/// [UNIQUE]`, the one alteration supported. The rebuild gives existing rows the default (or NULL,
/// refused in a NOT NULL column: `23502`), see [`crate::engine`].
pub fn alter_table(
    cat: &Catalog,
    name: &ast::ObjectName,
    if_exists: bool,
    ops: &[ast::AlterTableOperation],
) -> SqlResult<Option<Catalog>> {
    let t = expr::object_name(name)?;
    let Some(ti) = cat.tables.iter().position(|x| x.name == t) else {
        if if_exists {
            return Ok(None);
        }
        return Err(SqlError::undefined_table(&t));
    };
    let mut next = cat.clone();
    for op in ops {
        let ast::AlterTableOperation::AddColumn {
            if_not_exists,
            column_def: c,
            column_position: None,
            ..
        } = op
        else {
            return Err(SqlError::unsupported(format!("ALTER TABLE {op}")));
        };
        let (col, is_pk, unique) = column_def(c)?;
        if next.tables[ti].column(&col.name).is_some() {
            if *if_not_exists {
                continue;
            }
            return Err(SqlError::new(
                "42701",
                format!("column \"{}\" of relation \"{t}\" already exists", col.name),
            ));
        }
        if is_pk {
            return Err(SqlError::unsupported(
                "ALTER TABLE ADD of a PRIMARY KEY column",
            ));
        }
        if next.tables[ti].columns.len() >= ordo::storage::schema::MAX_COLUMNS {
            return Err(SqlError::new("54011", "tables can have at most 64 columns"));
        }
        let n = col.name.clone();
        next.tables[ti].columns.push(col);
        if let Some(u) = unique {
            add_unique(&mut next, ti, u, &[n])?;
        }
    }
    Ok(Some(next))
}

/// The catalog after `CREATE TABLE`.
pub fn create_table(cat: &Catalog, ct: &ast::CreateTable) -> SqlResult<Option<Catalog>> {
    let name = expr::object_name(&ct.name)?;
    if cat.table(&name).is_some() {
        if ct.if_not_exists {
            return Ok(None);
        }
        return Err(SqlError::new(
            "42P07",
            format!("relation \"{name}\" already exists"),
        ));
    }
    if ct.query.is_some() {
        return Err(SqlError::unsupported("CREATE TABLE AS"));
    }
    if ct.columns.is_empty() {
        // PostgreSQL allows a table of no columns; storage needs one (before, XX000).
        return Err(SqlError::unsupported("a table without columns"));
    }
    let mut columns = Vec::new();
    let mut pk = Vec::new();
    // UNIQUE constraints: (name if given, column names).
    let mut uniques: Vec<(Option<String>, Vec<String>)> = Vec::new();
    for c in &ct.columns {
        let n = expr::column_name(&c.name);
        if columns.iter().any(|x: &ColumnDef| x.name == n) {
            return Err(SqlError::new(
                "42701",
                format!("column \"{n}\" specified more than once"),
            ));
        }
        let (col, is_pk, unique) = column_def(c)?;
        if is_pk {
            pk.push(columns.len());
        }
        if let Some(u) = unique {
            uniques.push((u, vec![n.clone()]));
        }
        columns.push(col);
    }
    for tc in &ct.constraints {
        match tc {
            ast::TableConstraint::PrimaryKey { columns: cols, .. } => {
                if !pk.is_empty() {
                    return Err(SqlError::new(
                        "42P16",
                        format!("multiple primary keys for table \"{name}\" are not allowed"),
                    ));
                }
                for ic in cols {
                    let n = match &ic.column.expr {
                        ast::Expr::Identifier(id) => expr::column_name(id),
                        e => return Err(SqlError::unsupported(format!("primary key on {e}"))),
                    };
                    pk.push(
                        columns
                            .iter()
                            .position(|c| c.name == n)
                            .ok_or_else(|| SqlError::undefined_column(&n))?,
                    );
                }
            }
            ast::TableConstraint::Unique {
                name: cname,
                columns: cols,
                characteristics: None,
                nulls_distinct: ast::NullsDistinctOption::None | ast::NullsDistinctOption::Distinct,
                index_name: None,
                index_type: None,
                ..
            } => {
                let names = cols
                    .iter()
                    .map(|ic| match &ic.column.expr {
                        ast::Expr::Identifier(id) => Ok(expr::column_name(id)),
                        e => Err(SqlError::unsupported(format!("UNIQUE on {e}"))),
                    })
                    .collect::<SqlResult<_>>()?;
                uniques.push((cname.as_ref().map(expr::column_name), names));
            }
            other => return Err(SqlError::unsupported(format!("constraint {other}"))),
        }
    }
    // Primary-key columns are NOT NULL, as in PostgreSQL.
    for &c in &pk {
        columns[c].not_null = true;
    }
    if columns.len() > ordo::storage::schema::MAX_COLUMNS {
        return Err(SqlError::new("54011", "tables can have at most 64 columns"));
    }
    if pk.len() > 1
        && pk
            .iter()
            .any(|&c| !matches!(columns[c].ty, SqlType::Int | SqlType::Bool))
    {
        return Err(SqlError::unsupported(
            "a composite primary key of non-integer columns (keys must fit in 64 bits)",
        ));
    }
    if pk.len() > 8 {
        return Err(SqlError::unsupported(
            "a primary key of more than 8 columns (keys must fit in 64 bits)",
        ));
    }
    let mut next = cat.clone();
    next.tables.push(TableDef {
        name,
        columns,
        primary_key: pk,
        indexes: Vec::new(),
        uniques: Vec::new(),
        storage: 0,
        next_row_id: Arc::new(AtomicU64::new(1)),
    });
    let ti = next.tables.len() - 1;
    for (cname, cols) in uniques {
        add_unique(&mut next, ti, cname, &cols)?;
    }
    Ok(Some(next))
}

/// Adds a UNIQUE constraint on columns `cols` of table `ti`, named `name` or as PostgreSQL names
/// it (`<table>_<columns>_key`, numbered if taken). As in PostgreSQL, one on the primary key's
/// columns or on those of an earlier UNIQUE constraint adds nothing.
fn add_unique(
    cat: &mut Catalog,
    ti: usize,
    name: Option<String>,
    cols: &[String],
) -> SqlResult<()> {
    let t = &cat.tables[ti];
    let columns = cols
        .iter()
        .map(|n| {
            t.column(n).ok_or_else(|| {
                SqlError::new(
                    "42703",
                    format!("column \"{n}\" named in key does not exist"),
                )
            })
        })
        .collect::<SqlResult<Vec<usize>>>()?;
    if let Some(i) = (1..columns.len()).find(|&i| columns[..i].contains(&columns[i])) {
        return Err(SqlError::new(
            "42701",
            format!("column \"{}\" appears twice in unique constraint", cols[i]),
        ));
    }
    if t.primary_key == columns || t.uniques.iter().any(|u| u.columns == columns) {
        return Ok(());
    }
    let types: Vec<_> = columns.iter().map(|&c| t.columns[c].ty).collect();
    if crate::unique::entry_len(&types) > crate::unique::ENTRY_MAX {
        return Err(SqlError::unsupported(format!(
            "a unique constraint over more than {} bytes of columns",
            crate::unique::ENTRY_MAX
        )));
    }
    let name = match name {
        Some(n) if cat.relation_exists(&n) => {
            return Err(SqlError::new(
                "42P07",
                format!("relation \"{n}\" already exists"),
            ))
        }
        Some(n) => n,
        None => {
            let base = format!("{}_{}_key", t.name, cols.join("_"));
            let mut n = base.clone();
            let mut i = 1;
            while cat.relation_exists(&n) {
                n = format!("{base}{i}");
                i += 1;
            }
            n
        }
    };
    cat.tables[ti].uniques.push(UniqueDef {
        name,
        columns,
        storage: 0,
    });
    Ok(())
}

/// The catalog after `CREATE INDEX`.
pub fn create_index(cat: &Catalog, ci: &ast::CreateIndex) -> SqlResult<Option<Catalog>> {
    let t = expr::object_name(&ci.table_name)?;
    let ti = cat
        .tables
        .iter()
        .position(|x| x.name == t)
        .ok_or_else(|| SqlError::undefined_table(&t))?;
    if ci.predicate.is_some() || !ci.include.is_empty() || ci.nulls_distinct == Some(false) {
        return Err(SqlError::unsupported("partial or covering indexes"));
    }
    let cols = ci
        .columns
        .iter()
        .map(|ic| match &ic.column.expr {
            ast::Expr::Identifier(id) => Ok(expr::column_name(id)),
            e => Err(SqlError::unsupported(format!("index on expression {e}"))),
        })
        .collect::<SqlResult<Vec<_>>>()?;
    if ci.unique {
        let name = match &ci.name {
            Some(n) => expr::object_name(n)?,
            None => format!("{t}_{}_idx", cols.join("_")),
        };
        if cat.relation_exists(&name) {
            if ci.if_not_exists {
                return Ok(None);
            }
            return Err(SqlError::new(
                "42P07",
                format!("relation \"{name}\" already exists"),
            ));
        }
        let mut next = cat.clone();
        let before = next.tables[ti].uniques.len();
        add_unique(&mut next, ti, Some(name.clone()), &cols)?;
        if next.tables[ti].uniques.len() == before {
            // The same columns as the primary key or another constraint: a second structure
            // would add nothing but its name, so it is made anyway (as PostgreSQL does).
            let columns = cols
                .iter()
                .filter_map(|n| next.tables[ti].column(n))
                .collect();
            next.tables[ti].uniques.push(UniqueDef {
                name,
                columns,
                storage: 0,
            });
        }
        return Ok(Some(next));
    }
    let col = match ci.columns.as_slice() {
        [ic] => match &ic.column.expr {
            ast::Expr::Identifier(id) => expr::column_name(id),
            e => return Err(SqlError::unsupported(format!("index on expression {e}"))),
        },
        _ => return Err(SqlError::unsupported("multi-column indexes")),
    };
    let column = cat.tables[ti]
        .column(&col)
        .ok_or_else(|| SqlError::undefined_column(&col))?;
    let name = match &ci.name {
        Some(n) => expr::object_name(n)?,
        None => format!("{t}_{col}_idx"),
    };
    if cat.index_owner(&name).is_some() || cat.table(&name).is_some() {
        if ci.if_not_exists {
            return Ok(None);
        }
        return Err(SqlError::new(
            "42P07",
            format!("relation \"{name}\" already exists"),
        ));
    }
    let mut next = cat.clone();
    next.tables[ti].indexes.push(IndexDef {
        name,
        column,
        storage: 0,
    });
    Ok(Some(next))
}

/// The catalog after `DROP TABLE` / `DROP INDEX`.
pub fn drop(
    cat: &Catalog,
    kind: &ast::ObjectType,
    names: &[ast::ObjectName],
    if_exists: bool,
) -> SqlResult<Option<Catalog>> {
    let mut next = cat.clone();
    for n in names {
        let n = expr::object_name(n)?;
        match kind {
            ast::ObjectType::Table => match next.tables.iter().position(|t| t.name == n) {
                Some(i) => {
                    next.tables.remove(i);
                }
                None if if_exists => {}
                None => return Err(SqlError::undefined_table(&n)),
            },
            ast::ObjectType::Index => match next.index_owner(&n) {
                Some(i) => {
                    next.tables[i].indexes.retain(|x| x.name != n);
                    next.tables[i].uniques.retain(|x| x.name != n);
                }
                None if if_exists => {}
                None => {
                    return Err(SqlError::new(
                        "42704",
                        format!("index \"{n}\" does not exist"),
                    ))
                }
            },
            other => return Err(SqlError::unsupported(format!("DROP {other}"))),
        }
    }
    Ok(Some(next))
}
