//! The columns a statement reads: every column an expression names, or every column of the table
//! when the expression holds something the walker does not know (never fewer than it reads).

use super::LockTable;
use crate::expr::column_name;
use ordo_predicate::predicate::ColumnId;
use ordo_predicate::ColumnSet;
use sqlparser::ast::{self, Expr as E};

/// The column an identifier names in `t` (under its name or `alias`).
pub(super) fn column_ref(e: &E, t: &LockTable, alias: Option<&str>) -> Option<ColumnId> {
    match e {
        E::Identifier(id) => t.column(&column_name(id)),
        E::CompoundIdentifier(ids) if ids.len() == 2 => {
            let q = &ids[0].value;
            if q.eq_ignore_ascii_case(&t.name) || alias.is_some_and(|a| a.eq_ignore_ascii_case(q)) {
                t.column(&column_name(&ids[1]))
            } else {
                None
            }
        }
        E::Nested(inner) => column_ref(inner, t, alias),
        _ => None,
    }
}

/// The columns `e` reads; every column when it holds something the walker does not know.
pub(super) fn columns(e: &E, t: &LockTable, alias: Option<&str>) -> ColumnSet {
    let mut set = ColumnSet::NONE;
    if collect(e, t, alias, &mut set) {
        set
    } else {
        t.all()
    }
}

/// Adds the columns of `e` to `set`; `false`: unknown (read every column).
fn collect(e: &E, t: &LockTable, alias: Option<&str>, set: &mut ColumnSet) -> bool {
    match e {
        E::Identifier(_) | E::CompoundIdentifier(_) => match column_ref(e, t, alias) {
            Some(c) => {
                *set = set.union(ColumnSet::of(&[c]));
                true
            }
            None => false,
        },
        E::Value(_) => true,
        E::Nested(x) | E::UnaryOp { expr: x, .. } | E::Cast { expr: x, .. } => {
            collect(x, t, alias, set)
        }
        E::IsNull(x) | E::IsNotNull(x) | E::IsTrue(x) | E::IsFalse(x) => collect(x, t, alias, set),
        E::BinaryOp { left, right, .. } => {
            collect(left, t, alias, set) && collect(right, t, alias, set)
        }
        E::Between {
            expr, low, high, ..
        } => {
            collect(expr, t, alias, set)
                && collect(low, t, alias, set)
                && collect(high, t, alias, set)
        }
        E::InList { expr, list, .. } => {
            collect(expr, t, alias, set) && list.iter().all(|x| collect(x, t, alias, set))
        }
        E::Function(f) => match &f.args {
            ast::FunctionArguments::None => true,
            ast::FunctionArguments::List(l) => l.args.iter().all(|a| match a {
                ast::FunctionArg::Unnamed(ast::FunctionArgExpr::Expr(x)) => {
                    collect(x, t, alias, set)
                }
                // count(*): the rows, not their columns.
                ast::FunctionArg::Unnamed(ast::FunctionArgExpr::Wildcard) => true,
                _ => false,
            }),
            ast::FunctionArguments::Subquery(_) => false,
        },
        _ => false,
    }
}

pub(super) fn items(
    projection: &[ast::SelectItem],
    t: &LockTable,
    alias: Option<&str>,
) -> ColumnSet {
    let mut set = ColumnSet::NONE;
    for item in projection {
        let known = match item {
            ast::SelectItem::UnnamedExpr(e) | ast::SelectItem::ExprWithAlias { expr: e, .. } => {
                collect(e, t, alias, &mut set)
            }
            _ => false,
        };
        if !known {
            return t.all();
        }
    }
    set
}

pub(super) fn where_columns(
    selection: Option<&E>,
    t: &LockTable,
    alias: Option<&str>,
) -> ColumnSet {
    selection.map_or(ColumnSet::NONE, |e| columns(e, t, alias))
}
