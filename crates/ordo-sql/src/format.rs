//! Result tables as PostgreSQL's tools print them (`psql`'s aligned format, which isolationtester's
//! expected-output files use too):
//!
//! ```text
//! id|balance
//! --+-------
//!  1|    100
//! (1 row)
//! ```

use crate::exec::ResultSet;
use crate::value::Datum;

/// Renders `rs` as isolationtester does (cells side by side, `|` between them).
pub fn table(rs: &ResultSet) -> String {
    render(rs, "")
}

/// Renders `rs` as psql does (one space of padding around every cell).
pub fn psql_table(rs: &ResultSet) -> String {
    render(rs, " ")
}

fn render(rs: &ResultSet, pad: &str) -> String {
    let sep = format!("{pad}|{pad}");
    let cells: Vec<Vec<String>> = rs
        .rows
        .iter()
        .map(|r| r.iter().map(Datum::to_string).collect())
        .collect();
    let n = rs.columns.len();
    let mut width: Vec<usize> = rs.columns.iter().map(|c| c.chars().count()).collect();
    for r in &cells {
        for (i, c) in r.iter().enumerate().take(n) {
            width[i] = width[i].max(c.chars().count());
        }
    }
    let numeric: Vec<bool> = (0..n)
        .map(|i| {
            rs.rows
                .iter()
                .all(|r| r[i].is_numeric() || r[i] == Datum::Null)
                && !rs.rows.is_empty()
        })
        .collect();
    let mut out = String::new();
    let head: Vec<String> = rs
        .columns
        .iter()
        .zip(&width)
        .map(|(c, &w)| {
            // Headers are centred.
            let pad = w - c.chars().count();
            let left = pad / 2;
            format!("{}{}{}", " ".repeat(left), c, " ".repeat(pad - left))
        })
        .collect();
    out.push_str(pad);
    out.push_str(head.join(&sep).trim_end());
    out.push('\n');
    let dashes: Vec<String> = width
        .iter()
        .map(|&w| "-".repeat(w + 2 * pad.len()))
        .collect();
    out.push_str(&dashes.join("+"));
    out.push('\n');
    for r in &cells {
        let line: Vec<String> = r
            .iter()
            .enumerate()
            .map(|(i, c)| {
                if numeric[i] {
                    format!("{c:>w$}", w = width[i])
                } else {
                    format!("{c:<w$}", w = width[i])
                }
            })
            .collect();
        out.push_str(pad);
        out.push_str(line.join(&sep).trim_end());
        out.push('\n');
    }
    let k = rs.rows.len();
    out.push_str(&format!("({k} row{})\n", if k == 1 { "" } else { "s" }));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn aligned_like_postgres() {
        let rs = ResultSet {
            columns: vec!["id".into(), "balance".into()],
            rows: vec![vec![Datum::Int(1), Datum::Int(100)]],
        };
        assert_eq!(table(&rs), "id|balance\n--+-------\n 1|    100\n(1 row)\n");
        assert_eq!(
            psql_table(&rs),
            " id | balance\n----+---------\n  1 |     100\n(1 row)\n"
        );
    }
}
