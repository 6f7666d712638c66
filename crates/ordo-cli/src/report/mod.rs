//! `ordo report FILE... -o DIR`: figures like the papers' from `ordo bench --json` results.
//!
//! Each figure plots throughput and aborts per commit against threads (or, for a sweep, against the
//! swept parameter), one line per protocol ([`figures`] groups the rows, [`plot`] draws an SVG,
//! [`html`] writes `index.html` with every figure and its run parameters). The same input gives the
//! same files, byte for byte.

pub mod figures;
mod html;
pub mod input;
mod plot;

use crate::{Error, Result};
use clap::Args;
use figures::{Axis, Figure};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

#[derive(Args, Debug)]
pub struct ReportArgs {
    /// Result files written by `ordo bench --json`.
    #[arg(required = true, value_name = "FILE")]
    pub files: Vec<PathBuf>,
    /// Directory to write the SVG figures and index.html into (created if missing).
    #[arg(short = 'o', long = "out", value_name = "DIR")]
    pub out: PathBuf,
    /// Plot throughput as a multiple of this protocol's at the same point (e.g. `nocc`: the papers'
    /// "overhead against no locking"), in every figure that has a line for it.
    #[arg(long, value_name = "PROTOCOL")]
    pub relative: Option<String>,
}

/// The figure's title: workload, what varies, and what is fixed along it — with the parameters
/// that tell it apart from the other figures of its workload and axis (`figures`), so that, say,
/// Fig. 8's short and long sweeps are not two figures of one name.
fn title(f: &Figure, figures: &[Figure]) -> String {
    let mut base = title_of(f);
    let apart = distinguishing(f, figures);
    if !apart.is_empty() {
        let list: Vec<String> = apart.iter().map(|(k, v)| format!("{k} = {v}")).collect();
        base = format!("{base} ({})", list.join(", "));
    }
    match &f.relative {
        None => base,
        Some(p) => format!("{base}, relative to {p}"),
    }
}

/// The fixed parameters of `f` that some other figure of the same workload and axis has at another
/// value (or not at all), without the `workload.` prefix; the thread count, already in the title,
/// is left out.
fn distinguishing(f: &Figure, figures: &[Figure]) -> Vec<(String, String)> {
    let peers: Vec<&Figure> = figures
        .iter()
        .filter(|g| !std::ptr::eq(*g, f) && g.workload == f.workload && g.axis == f.axis)
        .collect();
    f.fixed
        .iter()
        .filter(|(k, v)| {
            k != "threads"
                && peers
                    .iter()
                    .any(|g| !g.fixed.iter().any(|(gk, gv)| gk == k && gv == v))
        })
        .map(|(k, v)| {
            (
                k.strip_prefix("workload.").unwrap_or(k).to_string(),
                v.clone(),
            )
        })
        .collect()
}

fn title_of(f: &Figure) -> String {
    match &f.axis {
        Axis::Threads => format!("{}: scaling with threads", f.workload),
        Axis::Param(_) => {
            let threads = f
                .fixed
                .iter()
                .find(|(k, _)| k == "threads")
                .map_or("?", |(_, v)| v.as_str());
            let s = if threads == "1" { "" } else { "s" };
            format!(
                "{}: {} sweep, {threads} thread{s}",
                f.workload,
                f.axis.label()
            )
        }
    }
}

/// A file name made of safe characters.
fn file_name(i: usize, f: &Figure) -> String {
    let safe = |s: &str| -> String {
        s.chars()
            .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
            .collect()
    };
    format!(
        "fig{}-{}-{}.svg",
        i + 1,
        safe(&f.workload),
        safe(f.axis.name())
    )
}

fn write(path: &Path, text: &str) -> Result<()> {
    std::fs::write(path, text).map_err(|source| Error::Write {
        path: path.to_path_buf(),
        source,
    })
}

pub fn run(args: ReportArgs) -> Result<ExitCode> {
    let mut rows = Vec::new();
    for path in &args.files {
        rows.extend(input::read(path)?);
    }
    let drawn = draw(&rows, &args.out, args.relative.as_deref())?;
    println!(
        "{} figure{} from {} result{} in {}",
        drawn.files.len(),
        if drawn.files.len() == 1 { "" } else { "s" },
        rows.len(),
        if rows.len() == 1 { "" } else { "s" },
        drawn.index.display()
    );
    Ok(ExitCode::SUCCESS)
}

/// What [`draw`] wrote.
pub struct Drawn {
    /// `index.html`.
    pub index: PathBuf,
    /// Each figure's SVG file name (in the output directory) and title.
    pub files: Vec<(String, String)>,
}

/// Draws `rows` into `out` (created if missing): an SVG per figure and `index.html`; with
/// `relative`, throughput as a multiple of that protocol's.
pub fn draw(rows: &[input::Row], out: &Path, relative: Option<&str>) -> Result<Drawn> {
    let mut figures = figures::group(rows);
    if let Some(base) = relative {
        if figures::relative_to(&mut figures, base) == 0 {
            return Err(Error::InvalidInput(format!(
                "--relative {base}: no figure has a line for protocol `{base}`"
            )));
        }
    }
    let protocols = figures::protocols(&figures);
    let colour_of = |p: &str| protocols.iter().position(|q| q == p).unwrap_or(0);
    std::fs::create_dir_all(out).map_err(|source| Error::CreateDir {
        path: out.to_path_buf(),
        source,
    })?;
    let titles: Vec<String> = figures.iter().map(|f| title(f, &figures)).collect();
    let files: Vec<String> = figures
        .iter()
        .enumerate()
        .map(|(i, f)| file_name(i, f))
        .collect();
    for ((f, t), name) in figures.iter().zip(&titles).zip(&files) {
        let svg = plot::svg(f, t, &colour_of).map_err(|source| Error::Draw {
            figure: name.clone(),
            source,
        })?;
        write(&out.join(name), &svg)?;
    }
    let index = out.join("index.html");
    write(&index, &html::page(&figures, &titles, &files, &colour_of))?;
    Ok(Drawn {
        index,
        files: files.into_iter().zip(titles).collect(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A `vll-micro` row of a contention-index sweep, short or long transactions.
    fn row(protocol: &str, ci: f64, long: bool, threads: u64) -> String {
        format!(
            r#"{{"workload": "vll-micro", "protocol": "{protocol}", "threads": {threads},
              "committed_per_sec": 100.0, "aborts_per_commit": 0.0,
              "sweep": {{"param": "ci", "value": {ci}}},
              "params": {{"workload": {{"ci": {ci}, "long": {long}, "records": 1000}},
                          "seconds": 1.0, "warmup": 0.0, "reps": 1, "seed": 42, "prefetch": true}},
              "machine": {{"cores": 2}}}}"#
        )
    }

    fn figures_of(rows: &[String]) -> Vec<Figure> {
        figures::group(&input::parse(&format!("[{}]", rows.join(",")), "r.json").unwrap())
    }

    #[test]
    fn figures_of_one_workload_and_axis_are_titled_by_what_tells_them_apart() {
        let figs = figures_of(&[
            row("nocc", 0.01, false, 2),
            row("nocc", 0.1, false, 2),
            row("nocc", 0.01, true, 2),
            row("nocc", 0.1, true, 2),
        ]);
        let titles: Vec<String> = figs.iter().map(|f| title(f, &figs)).collect();
        assert_eq!(
            titles,
            [
                "vll-micro: contention index sweep, 2 threads (long = false)",
                "vll-micro: contention index sweep, 2 threads (long = true)",
            ]
        );
    }

    #[test]
    fn a_figure_alone_or_set_apart_by_threads_only_gets_no_suffix() {
        let figs = figures_of(&[row("nocc", 0.01, false, 2), row("nocc", 0.01, false, 4)]);
        let titles: Vec<String> = figs.iter().map(|f| title(f, &figs)).collect();
        assert_eq!(
            titles,
            [
                "vll-micro: contention index sweep, 2 threads",
                "vll-micro: contention index sweep, 4 threads",
            ]
        );
        let one = figures_of(&[row("vll", 0.01, true, 1)]);
        assert_eq!(
            title(&one[0], &one),
            "vll-micro: contention index sweep, 1 thread"
        );
    }
}
