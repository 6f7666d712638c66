//! `index.html`: every figure with the parameters it holds fixed and its numbers.

use super::figures::{Figure, Point};
use super::plot;

/// Escapes text for HTML.
fn esc(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// The page; `files[i]` is figure i's SVG file name, `titles[i]` its title.
pub fn page(
    figures: &[Figure],
    titles: &[String],
    files: &[String],
    colour_of: &dyn Fn(&str) -> usize,
) -> String {
    let mut h = String::from(
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <title>Ordo benchmark report</title>\n<style>\n\
         body { font-family: sans-serif; margin: 2em; max-width: 1150px; }\n\
         table { border-collapse: collapse; margin: 0.5em 0 1.5em; font-size: 0.9em; }\n\
         td, th { border: 1px solid #ccc; padding: 2px 8px; text-align: right; }\n\
         td:first-child, th:first-child { text-align: left; }\n\
         img { max-width: 100%; border: 1px solid #eee; }\n\
         section { margin-bottom: 3em; }\n</style>\n</head>\n<body>\n\
         <h1>Ordo benchmark report</h1>\n\
         <p>Throughput (committed transactions per second) and aborts per commit, one line per \
         protocol. Written by <code>ordo report</code> from <code>ordo bench --json</code> \
         results. Compare protocols within one figure: absolute numbers move with the machine \
         and its load.</p>\n",
    );
    for (i, ((f, title), file)) in figures.iter().zip(titles).zip(files).enumerate() {
        h += &format!(
            "<section id=\"fig{n}\">\n<h2>Figure {n}: {t}</h2>\n\
             <img src=\"{file}\" alt=\"{t}\" width=\"1100\">\n",
            n = i + 1,
            t = esc(title),
            file = esc(file),
        );
        h += &format!(
            "<p>From {}.</p>\n",
            f.sources
                .iter()
                .map(|s| format!("<code>{}</code>", esc(s)))
                .collect::<Vec<_>>()
                .join(", ")
        );
        h += &data_table(f, colour_of);
        h += "<table>\n<tr><th>parameter</th><th>value</th></tr>\n";
        for (k, v) in &f.fixed {
            h += &format!("<tr><td>{}</td><td>{}</td></tr>\n", esc(k), esc(v));
        }
        h += "</table>\n</section>\n";
    }
    h += "</body>\n</html>\n";
    h
}

/// The plotted numbers: a row per protocol, a column per x.
fn data_table(f: &Figure, colour_of: &dyn Fn(&str) -> usize) -> String {
    let mut xs: Vec<f64> = f
        .lines
        .iter()
        .flat_map(|l| l.points.iter().map(|p| p.x))
        .collect();
    xs.sort_by(f64::total_cmp);
    xs.dedup();
    let what = match &f.relative {
        None => "txn/s".to_string(),
        Some(base) => format!("× {}'s txn/s", esc(base)),
    };
    let mut h = format!(
        "<table>\n<tr><th>{what} (aborts/commit) at {} =</th>",
        esc(f.axis.name())
    );
    for x in &xs {
        h += &format!("<th>{x}</th>");
    }
    h += "</tr>\n";
    for l in &f.lines {
        let c = plot::colour(colour_of(&l.protocol));
        h += &format!(
            "<tr><td><span style=\"color:rgb({},{},{})\">&#9632;</span> {}</td>",
            c.0,
            c.1,
            c.2,
            esc(&l.protocol)
        );
        for x in &xs {
            h += &match l.points.iter().find(|p| p.x == *x) {
                Some(p) => cell(p, f.relative.is_some()),
                None => "<td></td>".into(),
            };
        }
        h += "</tr>\n";
    }
    h + "</table>\n"
}

fn cell(p: &Point, relative: bool) -> String {
    let avg = if p.rows > 1 {
        format!(" <small>mean of {}</small>", p.rows)
    } else {
        String::new()
    };
    let digits = if relative { 3 } else { 0 };
    format!(
        "<td>{:.digits$} ({:.4}){avg}</td>",
        p.committed_per_sec, p.aborts_per_commit
    )
}
