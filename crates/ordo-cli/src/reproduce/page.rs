//! What `ordo reproduce` writes besides each result's files: `index.html`, every result run with
//! its verdict and figures; `summary.md`, the same as a Markdown table (the compass of
//! `docs/results/README.md` is made from it); and each result's `verdict.json`.

use super::catalogue::PaperFile;
use super::rule::Verdict;
use super::{measured, EntryResult, Machine};
use serde_json::json;

fn esc(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

fn verdict_text(r: &EntryResult) -> String {
    match (&r.checks, r.verdict) {
        (None, _) => format!("not run: needs {} cores", r.entry.min_cores),
        (Some(_), Some(v)) => v.text().to_string(),
        (Some(_), None) => "-".into(),
    }
}

fn paper_of<'a>(papers: &'a [PaperFile], r: &EntryResult) -> &'a str {
    papers
        .iter()
        .find(|p| p.paper.id == r.entry.paper)
        .map_or("", |p| p.paper.title.as_str())
}

/// One result's verdict, as `verdict.json` keeps it.
pub fn verdict_json(r: &EntryResult, machine: &Machine) -> serde_json::Value {
    let checks: Vec<serde_json::Value> = r
        .entry
        .checks
        .iter()
        .enumerate()
        .map(|(i, c)| {
            let o = r.checks.as_ref().map(|o| &o[i]);
            json!({
                "claim": c.claim,
                "paper": c.paper,
                "rule": c.reproduced.to_string(),
                "shape_rule": c.shape.map(|s| s.to_string()),
                "value": o.and_then(|o| o.value),
                "points": o.map(|o| &o.points),
                "note": o.and_then(|o| o.note.clone()),
                "verdict": o.map(|o| o.verdict.text()),
            })
        })
        .collect();
    json!({
        "result": r.entry.name,
        "paper": r.entry.paper,
        "figure": r.entry.figure,
        "claim": r.entry.claim,
        "verdict": verdict_text(r),
        "checks": checks,
        "commands": r.commands,
        "seconds": r.seconds,
        "consistency_broken": r.broken,
        "machine": {"cores": machine.cores, "cpu": machine.cpu, "os": std::env::consts::OS},
    })
}

fn colour(text: &str) -> &'static str {
    match text {
        "reproduced" => "#1a7f37",
        "shape only" => "#9a6700",
        "not reproduced" => "#cf222e",
        _ => "#57606a",
    }
}

/// The page linking every result run.
pub fn html(
    title: &str,
    papers: &[PaperFile],
    results: &[EntryResult],
    machine: &Machine,
) -> String {
    let mut h = format!(
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>{t}</title>\n\
         <style>\nbody {{ font-family: sans-serif; margin: 2em; max-width: 1150px; }}\n\
         table {{ border-collapse: collapse; margin: 0.5em 0 1em; font-size: 0.9em; }}\n\
         td, th {{ border: 1px solid #ccc; padding: 2px 8px; text-align: left; vertical-align: top; }}\n\
         img {{ max-width: 100%; border: 1px solid #eee; }}\n\
         .v {{ font-weight: bold; }}\ncode {{ font-size: 0.85em; }}\n\
         section {{ margin-bottom: 3em; }}\n</style>\n</head>\n<body>\n<h1>{t}</h1>\n\
         <p>Machine: {m}. Each result's verdict is computed from its measured rows by the rule \
         its catalogue entry states (<code>crates/ordo-cli/catalogue/</code>); a result's \
         verdict is its weakest check's. {tally}.</p>\n<table>\n<tr><th>result</th><th>paper</th>\
         <th>figure</th><th>verdict</th></tr>\n",
        t = esc(title),
        m = esc(&machine.describe()),
        tally = esc(&tally(results)),
    );
    for r in results {
        let v = verdict_text(r);
        h += &format!(
            "<tr><td><a href=\"#{n}\">{n}</a></td><td>{p}</td><td>{f}</td>\
             <td class=\"v\" style=\"color:{c}\">{v}</td></tr>\n",
            n = esc(&r.entry.name),
            p = esc(paper_of(papers, r)),
            f = esc(&r.entry.figure),
            c = colour(&v),
            v = esc(&v),
        );
    }
    h += "</table>\n";
    for r in results {
        let e = r.entry;
        let v = verdict_text(r);
        h += &format!(
            "<section id=\"{n}\">\n<h2>{n}: {t}</h2>\n<p>{p}, {f}. <em>{claim}</em></p>\n\
             <p class=\"v\" style=\"color:{c}\">{v}</p>\n",
            n = esc(&e.name),
            t = esc(&e.title),
            p = esc(paper_of(papers, r)),
            f = esc(&e.figure),
            claim = esc(&e.claim),
            c = colour(&v),
            v = esc(&v),
        );
        match &r.checks {
            None => {
                h += &format!("<p>{}</p>\n", esc(e.needs.as_deref().unwrap_or("")));
            }
            Some(outcomes) => {
                h += "<table>\n<tr><th>check</th><th>paper</th><th>ours</th><th>rule</th>\
                      <th>verdict</th></tr>\n";
                for (c, o) in e.checks.iter().zip(outcomes) {
                    h += &format!(
                        "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td>\
                         <td style=\"color:{}\">{}{}</td></tr>\n",
                        esc(&c.claim),
                        esc(&c.paper),
                        measured(o),
                        esc(&c.reproduced.to_string()),
                        colour(o.verdict.text()),
                        o.verdict.text(),
                        o.note
                            .as_ref()
                            .map_or(String::new(), |n| format!(" ({})", esc(n))),
                    );
                }
                h += "</table>\n";
                for (file, title) in &r.figures {
                    h += &format!(
                        "<img src=\"{n}/{file}\" alt=\"{t}\" width=\"1100\">\n",
                        n = esc(&e.name),
                        file = esc(file),
                        t = esc(title)
                    );
                }
                h += &format!(
                    "<p><a href=\"{n}/index.html\">figures with their numbers</a> · \
                     <a href=\"{n}/results.json\">results.json</a> · \
                     <a href=\"{n}/bench.txt\">bench.txt</a> · {s:.0} s</p>\n",
                    n = esc(&e.name),
                    s = r.seconds
                );
            }
        }
        for c in &r.commands {
            h += &format!("<pre><code>{}</code></pre>\n", esc(c));
        }
        h += "</section>\n";
    }
    h += "</body>\n</html>\n";
    h
}

fn cell(s: &str) -> String {
    s.replace('|', "\\|").replace('\n', " ")
}

/// How many checks came to each verdict, and how many results were not run: one line.
pub fn tally(results: &[EntryResult]) -> String {
    let mut n = [0usize; 3];
    for o in results.iter().filter_map(|r| r.checks.as_ref()).flatten() {
        n[o.verdict as usize] += 1;
    }
    let not_run = results.iter().filter(|r| r.checks.is_none()).count();
    let s = |k: usize| if k == 1 { "" } else { "s" };
    let checks = n.iter().sum::<usize>();
    format!(
        "{} result{}, {checks} check{}: {} reproduced, {} shape only, {} not reproduced; \
         {not_run} result{} not run (too few cores)",
        results.len(),
        s(results.len()),
        s(checks),
        n[Verdict::Reproduced as usize],
        n[Verdict::ShapeOnly as usize],
        n[Verdict::NotReproduced as usize],
        s(not_run),
    )
}

/// The same as a Markdown table: a row per check.
pub fn markdown(papers: &[PaperFile], results: &[EntryResult], machine: &Machine) -> String {
    let mut m = format!(
        "Machine: {}. Written by `ordo reproduce`; each verdict is computed from the measured rows \
         by the rule in the result's catalogue entry (`crates/ordo-cli/catalogue/`). {}.\n\n\
         | result | paper, figure | check | paper says | ours | rule | verdict |\n\
         |---|---|---|---|---:|---|---|\n",
        machine.describe(),
        tally(results)
    );
    for r in results {
        let e = r.entry;
        // A result not run here has no directory to link.
        let name = if r.checks.is_some() {
            format!("[`{n}`]({n}/index.html)", n = e.name)
        } else {
            format!("`{}`", e.name)
        };
        let head = format!(
            "{name} | {p}, {f}",
            p = cell(paper_of(papers, r)),
            f = cell(&e.figure)
        );
        match &r.checks {
            None => {
                m += &format!(
                    "| {head} | {} | | | | not run: needs {} cores |\n",
                    cell(&e.claim),
                    e.min_cores
                );
            }
            Some(outcomes) => {
                for (i, (c, o)) in e.checks.iter().zip(outcomes).enumerate() {
                    let first = if i == 0 { head.clone() } else { " | ".into() };
                    m += &format!(
                        "| {first} | {} | {} | {} | {} | {} |\n",
                        cell(&c.claim),
                        cell(&c.paper),
                        measured(o),
                        c.reproduced,
                        o.verdict.text()
                    );
                }
            }
        }
    }
    m
}
