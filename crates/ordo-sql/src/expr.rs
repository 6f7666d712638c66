//! Scalar expressions: compiled from sqlparser's AST against one table's columns, then evaluated on
//! rows.
//!
//! Compiling resolves column names to positions once, so evaluation is a walk over a small tree with
//! no name lookups. An uncorrelated subquery (`(SELECT …)`, `EXISTS`, `IN (SELECT …)`) runs while
//! compiling, through the [`Scope`]'s runner (the executor's: the statement's transaction), and
//! becomes a constant. Aggregates (`COUNT/SUM/MIN/MAX`) compile to [`Expr::Agg`] slots filled in by the
//! executor per group.

use crate::catalog::TableDef;
use crate::error::{SqlError, SqlResult};
use crate::value::{Datum, SqlType};
use sqlparser::ast::{self, BinaryOperator as B, UnaryOperator as U};
use std::cmp::Ordering;

/// Binary operators.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Op {
    Add,
    Sub,
    Mul,
    Div,
    Mod,
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
    And,
    Or,
    Concat,
}

/// An aggregate function.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AggFn {
    CountStar,
    Count,
    Sum,
    Min,
    Max,
}

/// One aggregate of a query: the function and its argument.
#[derive(Clone, Debug)]
pub struct Agg {
    pub func: AggFn,
    pub arg: Option<Expr>,
}

/// A compiled expression.
#[derive(Clone, Debug)]
pub enum Expr {
    Col(usize),
    Const(Datum),
    /// `$n`, 0-based.
    Param(usize),
    Bin(Op, Box<Expr>, Box<Expr>),
    Not(Box<Expr>),
    Neg(Box<Expr>),
    Between {
        e: Box<Expr>,
        lo: Box<Expr>,
        hi: Box<Expr>,
        negated: bool,
    },
    InList {
        e: Box<Expr>,
        list: Vec<Expr>,
        negated: bool,
    },
    IsNull(Box<Expr>, bool),
    /// `CAST(x AS t)`, `x::t`.
    Cast(Box<Expr>, SqlType),
    /// `COALESCE(a, b, …)`: the first argument that is not NULL, evaluated left to right only as far
    /// as needed (as PostgreSQL does).
    Coalesce(Vec<Expr>),
    /// The value of aggregate slot `n` for the current group.
    Agg(usize),
}

/// Runs an uncorrelated subquery (through the protocol, in the statement's transaction) and
/// returns its rows and how many columns they have.
pub type Subqueries<'a> = dyn FnMut(&ast::Query) -> SqlResult<(usize, Vec<Vec<Datum>>)> + 'a;

/// What an expression may refer to while being compiled.
pub struct Scope<'a> {
    pub table: Option<&'a TableDef>,
    /// Where aggregates go; `None` where aggregates are not allowed (WHERE, SET, VALUES).
    pub aggs: Option<&'a mut Vec<Agg>>,
    /// Where subqueries run; `None` where a statement has no transaction to run them in (a
    /// subquery there is `0A000`).
    pub sub: Option<&'a mut Subqueries<'a>>,
}

impl<'a> Scope<'a> {
    pub fn plain(table: Option<&'a TableDef>) -> Self {
        Scope {
            table,
            aggs: None,
            sub: None,
        }
    }
    /// A scope for `table` whose subqueries run through `sub`.
    pub fn with_sub(table: Option<&'a TableDef>, sub: &'a mut Subqueries<'a>) -> Self {
        Scope {
            table,
            aggs: None,
            sub: Some(sub),
        }
    }
    /// Runs subquery `q` (see [`Subqueries`]).
    fn run(&mut self, q: &ast::Query) -> SqlResult<(usize, Vec<Vec<Datum>>)> {
        match self.sub.as_deref_mut() {
            Some(f) => f(q),
            None => Err(SqlError::unsupported("a subquery here")),
        }
    }
}

fn ident_name(id: &ast::Ident) -> String {
    if id.quote_style.is_some() {
        id.value.clone()
    } else {
        id.value.to_lowercase()
    }
}

/// The (lower-cased unless quoted) name of an object such as a table.
pub fn object_name(n: &ast::ObjectName) -> SqlResult<String> {
    match n.0.last() {
        Some(ast::ObjectNamePart::Identifier(id)) if n.0.len() == 1 => Ok(ident_name(id)),
        _ => Err(SqlError::unsupported(format!("qualified name {n}"))),
    }
}

pub fn column_name(id: &ast::Ident) -> String {
    ident_name(id)
}

/// Parses a numeric literal.
pub fn number(s: &str) -> SqlResult<Datum> {
    if let Ok(v) = s.parse::<i64>() {
        return Ok(Datum::Int(v));
    }
    // An integer literal past bigint: PostgreSQL would make it NUMERIC, which Ordo lacks; rounding
    // it to a double would print another number, so it is refused as out of range.
    if !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit()) {
        return Err(SqlError::new(
            "22003",
            format!("value \"{s}\" is out of range for type bigint"),
        ));
    }
    match s.parse::<f64>() {
        Ok(v) if v.is_finite() => Ok(Datum::Float(v)),
        // PostgreSQL: "1e400" is out of range for type double precision.
        Ok(_) => Err(SqlError::new(
            "22003",
            format!("\"{s}\" is out of range for type double precision"),
        )),
        Err(_) => Err(SqlError::new("22P02", format!("invalid number \"{s}\""))),
    }
}

/// Compiles `e`.
pub fn compile(e: &ast::Expr, scope: &mut Scope<'_>) -> SqlResult<Expr> {
    use ast::Expr as E;
    Ok(match e {
        E::Identifier(id) => column(scope, &ident_name(id))?,
        // A join's scope: columns named `qualifier.column` (see `crate::exec`).
        E::CompoundIdentifier(ids) if ids.len() == 2 && scope.table.is_some_and(is_join) => {
            let (t, c) = (ident_name(&ids[0]), ident_name(&ids[1]));
            let def = scope.table.expect("checked");
            if !def
                .columns
                .iter()
                .any(|x| x.name.starts_with(&format!("{t}.")))
            {
                return Err(SqlError::new(
                    "42P01",
                    format!("missing FROM-clause entry for table \"{t}\""),
                ));
            }
            def.column(&format!("{t}.{c}"))
                .map(Expr::Col)
                .ok_or_else(|| SqlError::new("42703", format!("column {t}.{c} does not exist")))?
        }
        E::CompoundIdentifier(ids) if ids.len() == 2 => {
            let t = ident_name(&ids[0]);
            match scope.table {
                Some(def) if def.name == t => column(scope, &ident_name(&ids[1]))?,
                _ => {
                    return Err(SqlError::new(
                        "42P01",
                        format!("missing FROM-clause entry for table \"{t}\""),
                    ))
                }
            }
        }
        E::Value(v) => literal(&v.value)?,
        E::Nested(inner) => compile(inner, scope)?,
        // The smallest bigint is written as a minus before a literal one past the largest.
        E::UnaryOp {
            op: U::Minus,
            expr: lit,
        } if matches!(&**lit, E::Value(v) if matches!(&v.value, ast::Value::Number(n, _) if n == "9223372036854775808")) => {
            Expr::Const(Datum::Int(i64::MIN))
        }
        E::UnaryOp { op, expr } => {
            let x = compile(expr, scope)?;
            match op {
                U::Not => Expr::Not(Box::new(x)),
                U::Minus => match x {
                    Expr::Const(Datum::Int(v)) => Expr::Const(Datum::Int(-v)),
                    Expr::Const(Datum::Float(v)) => Expr::Const(Datum::Float(-v)),
                    x => Expr::Neg(Box::new(x)),
                },
                U::Plus => x,
                op => return Err(SqlError::unsupported(format!("operator {op}"))),
            }
        }
        E::BinaryOp { left, op, right } => {
            let op = match op {
                B::Plus => Op::Add,
                B::Minus => Op::Sub,
                B::Multiply => Op::Mul,
                B::Divide => Op::Div,
                B::Modulo => Op::Mod,
                B::Eq => Op::Eq,
                B::NotEq => Op::Ne,
                B::Lt => Op::Lt,
                B::LtEq => Op::Le,
                B::Gt => Op::Gt,
                B::GtEq => Op::Ge,
                B::And => Op::And,
                B::Or => Op::Or,
                B::StringConcat => Op::Concat,
                op => return Err(SqlError::unsupported(format!("operator {op}"))),
            };
            Expr::Bin(
                op,
                Box::new(compile(left, scope)?),
                Box::new(compile(right, scope)?),
            )
        }
        E::Between {
            expr,
            negated,
            low,
            high,
        } => Expr::Between {
            e: Box::new(compile(expr, scope)?),
            lo: Box::new(compile(low, scope)?),
            hi: Box::new(compile(high, scope)?),
            negated: *negated,
        },
        E::InList {
            expr,
            list,
            negated,
        } => Expr::InList {
            e: Box::new(compile(expr, scope)?),
            list: list
                .iter()
                .map(|x| compile(x, scope))
                .collect::<SqlResult<_>>()?,
            negated: *negated,
        },
        E::IsNull(x) => Expr::IsNull(Box::new(compile(x, scope)?), false),
        E::Cast {
            expr,
            data_type,
            format: None,
            kind: ast::CastKind::Cast | ast::CastKind::DoubleColon,
        } => {
            let ty = crate::ddl::sql_type(data_type)?;
            match compile(expr, scope)? {
                // A literal is cast once, here.
                Expr::Const(d) => Expr::Const(d.cast(ty)?),
                x => Expr::Cast(Box::new(x), ty),
            }
        }
        // `DATE '2024-01-02'`, `TIMESTAMP '…'`.
        E::TypedString(ts) => {
            let ty = crate::ddl::sql_type(&ts.data_type)?;
            match &ts.value.value {
                ast::Value::SingleQuotedString(s) => Expr::Const(Datum::Text(s.clone()).cast(ty)?),
                other => return Err(SqlError::unsupported(format!("literal {other}"))),
            }
        }
        E::IsNotNull(x) => Expr::IsNull(Box::new(compile(x, scope)?), true),
        E::Function(f) if object_name(&f.name).is_ok_and(|n| n == "coalesce") => {
            Expr::Coalesce(function_args(f, "coalesce", scope)?)
        }
        E::Function(f) => aggregate(f, scope)?,
        // Uncorrelated subqueries run once, here, through the statement's transaction (see
        // `crate::exec`), and become constants.
        E::Subquery(q) => {
            let (cols, rows) = scope.run(q)?;
            if cols != 1 {
                return Err(SqlError::syntax("subquery must return only one column"));
            }
            match rows.len() {
                0 => Expr::Const(Datum::Null),
                1 => Expr::Const(
                    rows.into_iter()
                        .next()
                        .and_then(|r| r.into_iter().next())
                        .unwrap_or(Datum::Null),
                ),
                _ => {
                    return Err(SqlError::new(
                        "21000",
                        "more than one row returned by a subquery used as an expression",
                    ))
                }
            }
        }
        E::Exists { subquery, negated } => {
            let (_, rows) = scope.run(subquery)?;
            Expr::Const(Datum::Bool(rows.is_empty() == *negated))
        }
        E::InSubquery {
            expr,
            subquery,
            negated,
        } => {
            let e = Box::new(compile(expr, scope)?);
            let (cols, rows) = scope.run(subquery)?;
            if cols != 1 {
                return Err(SqlError::syntax("subquery has too many columns"));
            }
            Expr::InList {
                e,
                list: rows
                    .into_iter()
                    .map(|r| Expr::Const(r.into_iter().next().unwrap_or(Datum::Null)))
                    .collect(),
                negated: *negated,
            }
        }
        other => return Err(SqlError::unsupported(format!("expression {other}"))),
    })
}

/// Whether `def` is the scope of a join: no name, columns named `qualifier.column`.
pub fn is_join(def: &TableDef) -> bool {
    def.name.is_empty()
}

fn column(scope: &Scope<'_>, name: &str) -> SqlResult<Expr> {
    if let Some(def) = scope.table.filter(|d| is_join(d)) {
        let found: Vec<usize> = (0..def.columns.len())
            .filter(|&i| {
                def.columns[i]
                    .name
                    .split_once('.')
                    .is_some_and(|(_, c)| c == name)
            })
            .collect();
        return match found[..] {
            [i] => Ok(Expr::Col(i)),
            [] => Err(SqlError::undefined_column(name)),
            _ => Err(SqlError::new(
                "42702",
                format!("column reference \"{name}\" is ambiguous"),
            )),
        };
    }
    scope
        .table
        .and_then(|t| t.column(name))
        .map(Expr::Col)
        .ok_or_else(|| SqlError::undefined_column(name))
}

fn literal(v: &ast::Value) -> SqlResult<Expr> {
    use ast::Value as V;
    Ok(match v {
        V::Number(s, _) => Expr::Const(number(s)?),
        V::SingleQuotedString(s) => Expr::Const(Datum::Text(s.clone())),
        V::Boolean(b) => Expr::Const(Datum::Bool(*b)),
        V::Null => Expr::Const(Datum::Null),
        V::Placeholder(p) => {
            let n: usize = p
                .strip_prefix('$')
                .and_then(|n| n.parse().ok())
                .filter(|&n| n >= 1)
                .ok_or_else(|| SqlError::unsupported(format!("placeholder {p}")))?;
            Expr::Param(n - 1)
        }
        other => return Err(SqlError::unsupported(format!("literal {other}"))),
    })
}

/// The plain arguments of a scalar function (aggregates allowed where the scope allows them).
fn function_args(f: &ast::Function, name: &str, scope: &mut Scope<'_>) -> SqlResult<Vec<Expr>> {
    let args = match &f.args {
        ast::FunctionArguments::List(l)
            if l.duplicate_treatment.is_none() && l.clauses.is_empty() =>
        {
            &l.args
        }
        _ => return Err(SqlError::unsupported(format!("this form of {name}()"))),
    };
    if args.is_empty() || f.filter.is_some() || f.over.is_some() || !f.within_group.is_empty() {
        return Err(SqlError::unsupported(format!("this form of {name}()")));
    }
    args.iter()
        .map(|a| match a {
            ast::FunctionArg::Unnamed(ast::FunctionArgExpr::Expr(e)) => compile(e, scope),
            _ => Err(SqlError::unsupported(format!("arguments of {name}()"))),
        })
        .collect()
}

fn aggregate(f: &ast::Function, scope: &mut Scope<'_>) -> SqlResult<Expr> {
    let name = object_name(&f.name)?;
    let func = match name.as_str() {
        "count" => AggFn::Count,
        "sum" => AggFn::Sum,
        "min" => AggFn::Min,
        "max" => AggFn::Max,
        _ => return Err(SqlError::unsupported(format!("function {name}()"))),
    };
    let args = match &f.args {
        ast::FunctionArguments::List(l) if l.duplicate_treatment.is_none() => &l.args,
        _ => return Err(SqlError::unsupported(format!("this form of {name}()"))),
    };
    let (func, arg) = match args.as_slice() {
        [ast::FunctionArg::Unnamed(ast::FunctionArgExpr::Wildcard)] if func == AggFn::Count => {
            (AggFn::CountStar, None)
        }
        [ast::FunctionArg::Unnamed(ast::FunctionArgExpr::Expr(e))] => {
            let mut inner = Scope {
                table: scope.table,
                aggs: None,
                sub: match scope.sub.as_mut() {
                    Some(f) => Some(&mut **f),
                    None => None,
                },
            };
            (func, Some(compile(e, &mut inner)?))
        }
        _ => return Err(SqlError::unsupported(format!("arguments of {name}()"))),
    };
    let Some(aggs) = scope.aggs.as_deref_mut() else {
        return Err(SqlError::new(
            "42803",
            "aggregate functions are not allowed here",
        ));
    };
    aggs.push(Agg { func, arg });
    Ok(Expr::Agg(aggs.len() - 1))
}

/// What evaluation reads: the row, the statement's parameters, the group's aggregate values.
pub struct Env<'a> {
    pub row: &'a [Datum],
    pub params: &'a [Datum],
    pub aggs: &'a [Datum],
}

impl Expr {
    /// Evaluates on `env`.
    pub fn eval(&self, env: &Env<'_>) -> SqlResult<Datum> {
        Ok(match self {
            Expr::Col(c) => env.row[*c].clone(),
            Expr::Const(d) => d.clone(),
            Expr::Param(n) => env.params.get(*n).cloned().ok_or_else(|| {
                SqlError::new("42P02", format!("there is no parameter ${}", n + 1))
            })?,
            Expr::Agg(n) => env.aggs[*n].clone(),
            Expr::Not(x) => match x.eval(env)? {
                Datum::Bool(b) => Datum::Bool(!b),
                Datum::Null => Datum::Null,
                d => return Err(not_bool("NOT", &d)),
            },
            Expr::Neg(x) => match x.eval(env)? {
                Datum::Int(v) => Datum::Int(v.checked_neg().ok_or_else(overflow)?),
                Datum::Float(v) => Datum::Float(-v),
                Datum::Null => Datum::Null,
                d => {
                    return Err(SqlError::mismatch(format!(
                        "cannot negate {}",
                        d.type_name()
                    )))
                }
            },
            Expr::Bin(op, a, b) => binary(*op, a, b, env)?,
            Expr::Between { e, lo, hi, negated } => {
                let v = e.eval(env)?;
                let ge = v.sql_cmp(&lo.eval(env)?)?.map(|o| o != Ordering::Less);
                let le = v.sql_cmp(&hi.eval(env)?)?.map(|o| o != Ordering::Greater);
                // `v >= lo AND v <= hi` in three-valued logic.
                match (ge, le) {
                    (Some(false), _) | (_, Some(false)) => Datum::Bool(*negated),
                    (Some(true), Some(true)) => Datum::Bool(!*negated),
                    _ => Datum::Null,
                }
            }
            Expr::InList { e, list, negated } => {
                // `v = x1 OR v = x2 …` in three-valued logic: TRUE on a match, else NULL if any
                // comparison was unknown.
                let v = e.eval(env)?;
                let mut found = Some(false);
                for x in list {
                    match v.sql_cmp(&x.eval(env)?)? {
                        Some(Ordering::Equal) => {
                            found = Some(true);
                            break;
                        }
                        None => found = None,
                        Some(_) => {}
                    }
                }
                match found {
                    Some(f) => Datum::Bool(f != *negated),
                    None => Datum::Null,
                }
            }
            Expr::Cast(x, ty) => x.eval(env)?.cast(*ty)?,
            Expr::Coalesce(args) => {
                for a in args {
                    let v = a.eval(env)?;
                    if v != Datum::Null {
                        return Ok(v);
                    }
                }
                Datum::Null
            }
            Expr::IsNull(x, negated) => Datum::Bool((x.eval(env)? == Datum::Null) != *negated),
        })
    }

    /// Evaluates a condition: true only for TRUE (NULL and FALSE reject the row).
    pub fn test(&self, env: &Env<'_>) -> SqlResult<bool> {
        match self.eval(env)? {
            Datum::Bool(b) => Ok(b),
            Datum::Null => Ok(false),
            d => Err(not_bool("WHERE", &d)),
        }
    }

    /// Whether the expression reads no row (a constant or parameter expression).
    pub fn is_row_free(&self) -> bool {
        match self {
            Expr::Col(_) | Expr::Agg(_) => false,
            Expr::Const(_) | Expr::Param(_) => true,
            Expr::Not(x) | Expr::Neg(x) | Expr::IsNull(x, _) | Expr::Cast(x, _) => x.is_row_free(),
            Expr::Bin(_, a, b) => a.is_row_free() && b.is_row_free(),
            Expr::Between { e, lo, hi, .. } => {
                e.is_row_free() && lo.is_row_free() && hi.is_row_free()
            }
            Expr::InList { e, list, .. } => e.is_row_free() && list.iter().all(Expr::is_row_free),
            Expr::Coalesce(args) => args.iter().all(Expr::is_row_free),
        }
    }

    /// This expression with every column reference replaced by `f` of its position.
    pub fn map_cols(&self, f: &mut dyn FnMut(usize) -> Expr) -> Expr {
        let mut m = |x: &Expr| Box::new(x.map_cols(f));
        match self {
            Expr::Col(c) => f(*c),
            Expr::Const(_) | Expr::Param(_) | Expr::Agg(_) => self.clone(),
            Expr::Bin(op, a, b) => {
                let a = m(a);
                Expr::Bin(*op, a, m(b))
            }
            Expr::Not(x) => Expr::Not(m(x)),
            Expr::Neg(x) => Expr::Neg(m(x)),
            Expr::IsNull(x, n) => Expr::IsNull(m(x), *n),
            Expr::Cast(x, t) => Expr::Cast(m(x), *t),
            Expr::Between { e, lo, hi, negated } => Expr::Between {
                e: m(e),
                lo: m(lo),
                hi: m(hi),
                negated: *negated,
            },
            Expr::InList { e, list, negated } => Expr::InList {
                e: m(e),
                list: list.iter().map(|x| x.map_cols(f)).collect(),
                negated: *negated,
            },
            Expr::Coalesce(args) => Expr::Coalesce(args.iter().map(|x| x.map_cols(f)).collect()),
        }
    }

    /// Splits a condition into its top-level AND terms.
    pub fn conjuncts(&self) -> Vec<&Expr> {
        match self {
            Expr::Bin(Op::And, a, b) => {
                let mut v = a.conjuncts();
                v.extend(b.conjuncts());
                v
            }
            e => vec![e],
        }
    }
}

fn not_bool(ctx: &str, d: &Datum) -> SqlError {
    SqlError::mismatch(format!(
        "argument of {ctx} must be type boolean, not type {}",
        d.type_name()
    ))
}

/// A date from arithmetic, within the years Ordo's dates reach.
fn date(days: Option<i64>) -> SqlResult<Datum> {
    const LIMIT: i64 = 300_000 * 366;
    match days {
        Some(d) if (-LIMIT..=LIMIT).contains(&d) => Ok(Datum::Date(d)),
        _ => Err(SqlError::new("22008", "date out of range")),
    }
}

fn overflow() -> SqlError {
    SqlError::new("22003", "bigint out of range")
}

fn binary(op: Op, a: &Expr, b: &Expr, env: &Env<'_>) -> SqlResult<Datum> {
    if matches!(op, Op::And | Op::Or) {
        let x = a.eval(env)?;
        let truth = |d: Datum| match d {
            Datum::Bool(b) => Ok(Some(b)),
            Datum::Null => Ok(None),
            d => Err(not_bool(if op == Op::And { "AND" } else { "OR" }, &d)),
        };
        let x = truth(x)?;
        // Short-circuit as three-valued logic allows.
        match (op, x) {
            (Op::And, Some(false)) => return Ok(Datum::Bool(false)),
            (Op::Or, Some(true)) => return Ok(Datum::Bool(true)),
            _ => {}
        }
        let y = truth(b.eval(env)?)?;
        return Ok(match (x, y) {
            (Some(x), Some(y)) => Datum::Bool(if op == Op::And { x && y } else { x || y }),
            (_, Some(false)) if op == Op::And => Datum::Bool(false),
            (_, Some(true)) if op == Op::Or => Datum::Bool(true),
            _ => Datum::Null,
        });
    }
    let (x, y) = (a.eval(env)?, b.eval(env)?);
    if x == Datum::Null || y == Datum::Null {
        return Ok(Datum::Null);
    }
    let cmp = |want: fn(Ordering) -> bool| -> SqlResult<Datum> {
        Ok(Datum::Bool(want(x.sql_cmp(&y)?.expect("no NULLs here"))))
    };
    match op {
        Op::Eq => cmp(|o| o == Ordering::Equal),
        Op::Ne => cmp(|o| o != Ordering::Equal),
        Op::Lt => cmp(|o| o == Ordering::Less),
        Op::Le => cmp(|o| o != Ordering::Greater),
        Op::Gt => cmp(|o| o == Ordering::Greater),
        Op::Ge => cmp(|o| o != Ordering::Less),
        Op::Concat => Ok(Datum::Text(format!("{x}{y}"))),
        _ => arith(op, x, y),
    }
}

fn arith(op: Op, x: Datum, y: Datum) -> SqlResult<Datum> {
    let div0 = || SqlError::new("22012", "division by zero");
    match (x, y) {
        // date ± integer is a date; date - date is their distance in days.
        (Datum::Date(d), Datum::Int(n)) | (Datum::Int(n), Datum::Date(d)) if op == Op::Add => {
            date(d.checked_add(n))
        }
        (Datum::Date(d), Datum::Int(n)) if op == Op::Sub => date(d.checked_sub(n)),
        (Datum::Date(a), Datum::Date(b)) if op == Op::Sub => Ok(Datum::Int(a - b)),
        (Datum::Int(a), Datum::Int(b)) => Ok(Datum::Int(match op {
            Op::Add => a.checked_add(b).ok_or_else(overflow)?,
            Op::Sub => a.checked_sub(b).ok_or_else(overflow)?,
            Op::Mul => a.checked_mul(b).ok_or_else(overflow)?,
            Op::Div if b == 0 => return Err(div0()),
            Op::Div => a.checked_div(b).ok_or_else(overflow)?,
            Op::Mod if b == 0 => return Err(div0()),
            Op::Mod => a.checked_rem(b).ok_or_else(overflow)?,
            _ => unreachable!("arith is only called with arithmetic operators"),
        })),
        (x @ (Datum::Int(_) | Datum::Float(_)), y @ (Datum::Int(_) | Datum::Float(_))) => {
            let f = |d: Datum| match d {
                Datum::Int(v) => v as f64,
                Datum::Float(v) => v,
                _ => 0.0,
            };
            let (a, b) = (f(x), f(y));
            let r = match op {
                Op::Add => a + b,
                Op::Sub => a - b,
                Op::Mul => a * b,
                Op::Div if b == 0.0 => return Err(div0()),
                Op::Div => a / b,
                Op::Mod if b == 0.0 => return Err(div0()),
                Op::Mod => a % b,
                _ => unreachable!("arith is only called with arithmetic operators"),
            };
            // As PostgreSQL's float8 operators: a finite result is required of finite inputs, and
            // a product or quotient of non-zero ones must not vanish.
            let out_of_range =
                |what: &str| SqlError::new("22003", format!("value out of range: {what}"));
            if r.is_infinite() && a.is_finite() && b.is_finite() {
                return Err(out_of_range("overflow"));
            }
            if r == 0.0
                && matches!(op, Op::Mul | Op::Div)
                && a != 0.0
                && (op == Op::Div || b != 0.0)
            {
                return Err(out_of_range("underflow"));
            }
            Ok(Datum::Float(r))
        }
        (x, y) => Err(SqlError::new(
            "42883",
            format!(
                "operator does not exist: {} {op:?} {}",
                x.type_name(),
                y.type_name()
            ),
        )),
    }
}
