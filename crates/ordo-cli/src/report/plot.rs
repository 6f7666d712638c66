//! Drawing one figure as SVG with plotters: throughput (left) and aborts per commit (right) against
//! the figure's x axis, one coloured line per protocol, a shared legend on the right.
//!
//! Only plotters' SVG backend is used: it writes text as SVG `<text>` for the viewer to render, so
//! no font library is needed at build or run time.

use super::figures::{Figure, Point};
use plotters::coord::ranged1d::{AsRangedCoord, ValueFormatter};
use plotters::coord::Shift;
use plotters::prelude::*;

const WIDTH: u32 = 1100;
const HEIGHT: u32 = 440;
const LEGEND: u32 = 170;

/// Distinct colours (Tableau 10, then two more), by protocol index.
const PALETTE: [RGBColor; 12] = [
    RGBColor(31, 119, 180),
    RGBColor(255, 127, 14),
    RGBColor(44, 160, 44),
    RGBColor(214, 39, 40),
    RGBColor(148, 103, 189),
    RGBColor(140, 86, 75),
    RGBColor(227, 119, 194),
    RGBColor(127, 127, 127),
    RGBColor(188, 189, 34),
    RGBColor(23, 190, 207),
    RGBColor(0, 0, 0),
    RGBColor(120, 120, 255),
];

/// The colour of a protocol, by its index in the report's protocol list.
pub fn colour(index: usize) -> RGBColor {
    PALETTE[index % PALETTE.len()]
}

/// One of the two plotted metrics.
struct Metric {
    caption: String,
    value: fn(&Point) -> f64,
    format: fn(f64) -> String,
}

/// Throughput: txn/s, or a multiple of the figure's base protocol's ([`Figure::relative`]).
fn throughput(figure: &Figure) -> Metric {
    let (caption, format): (String, fn(f64) -> String) = match &figure.relative {
        None => ("committed txn/s".into(), si),
        Some(base) => (format!("committed txn/s ÷ {base}'s"), short),
    };
    Metric {
        caption,
        value: |p| p.committed_per_sec,
        format,
    }
}

fn aborts() -> Metric {
    Metric {
        caption: "aborts per commit".into(),
        value: |p| p.aborts_per_commit,
        format: short,
    }
}

/// 1234567 → "1.23M", 52000 → "52k".
fn si(v: f64) -> String {
    let (scaled, suffix) = match v.abs() {
        a if a >= 1e6 => (v / 1e6, "M"),
        a if a >= 1e3 => (v / 1e3, "k"),
        _ => (v, ""),
    };
    format!("{}{suffix}", short(scaled))
}

/// At most three significant digits, no trailing zeros.
fn short(v: f64) -> String {
    let digits = if v.abs() >= 100.0 || v == 0.0 {
        0
    } else if v.abs() >= 10.0 {
        1
    } else {
        (2 - v.abs().log10().floor() as i32).clamp(2, 6) as usize
    };
    let s = format!("{v:.digits$}");
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        s
    }
}

/// The SVG text of `figure`; `colour_of` gives each protocol's colour index (see [`colour`]).
pub fn svg(
    figure: &Figure,
    title: &str,
    colour_of: &dyn Fn(&str) -> usize,
) -> Result<String, DrawingAreaErrorKind<std::io::Error>> {
    let mut out = String::new();
    {
        let root = SVGBackend::with_string(&mut out, (WIDTH, HEIGHT)).into_drawing_area();
        draw(&root, figure, title, colour_of)?;
        root.present()?;
    }
    Ok(out)
}

type Fallible = Result<(), DrawingAreaErrorKind<std::io::Error>>;

fn draw(
    root: &DrawingArea<SVGBackend<'_>, Shift>,
    figure: &Figure,
    title: &str,
    colour_of: &dyn Fn(&str) -> usize,
) -> Fallible {
    root.fill(&WHITE)?;
    let root = root.titled(title, ("sans-serif", 20))?;
    let (plots, legend) = root.split_horizontally(WIDTH - LEGEND);
    let (left, right) = plots.split_horizontally((WIDTH - LEGEND) / 2);
    let xs: Vec<f64> = figure
        .lines
        .iter()
        .flat_map(|l| l.points.iter().map(|p| p.x))
        .collect();
    let (lo, hi) = xs
        .iter()
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), &x| {
            (a.min(x), b.max(x))
        });
    let integers = xs.iter().all(|x| x.fract() == 0.0);
    // Integer axes (threads, warehouses) get about one tick per integer, up to 12.
    let ticks = if integers && hi >= lo {
        ((hi - lo) as usize + 1).clamp(2, 12)
    } else {
        10
    };
    let axis = (integers, ticks);
    // Widely spread positive values (hot rows 10..10000) read best on a log axis.
    if lo > 0.0 && hi / lo >= 100.0 {
        let range = (lo / 1.3..hi * 1.3).log_scale();
        panels((&left, &right), figure, range, axis, colour_of)?;
    } else {
        let pad = if hi > lo { (hi - lo) * 0.05 } else { 0.5 };
        panels(
            (&left, &right),
            figure,
            (lo - pad)..(hi + pad),
            axis,
            colour_of,
        )?;
    }
    legend_box(&legend, figure, colour_of)?;
    Ok(())
}

/// Throughput on the left, aborts per commit on the right, over the same x range.
fn panels<X>(
    (left, right): (
        &DrawingArea<SVGBackend<'_>, Shift>,
        &DrawingArea<SVGBackend<'_>, Shift>,
    ),
    figure: &Figure,
    x_range: X,
    axis: (bool, usize),
    colour_of: &dyn Fn(&str) -> usize,
) -> Fallible
where
    X: AsRangedCoord<Value = f64> + Clone,
    X::CoordDescType: ValueFormatter<f64>,
{
    let tp = throughput(figure);
    panel(left, figure, x_range.clone(), axis, &tp, colour_of)?;
    panel(right, figure, x_range, axis, &aborts(), colour_of)
}

fn panel<X>(
    area: &DrawingArea<SVGBackend<'_>, Shift>,
    figure: &Figure,
    x_range: X,
    (integers, ticks): (bool, usize),
    metric: &Metric,
    colour_of: &dyn Fn(&str) -> usize,
) -> Fallible
where
    X: AsRangedCoord<Value = f64>,
    X::CoordDescType: ValueFormatter<f64>,
{
    let max = figure
        .lines
        .iter()
        .flat_map(|l| l.points.iter().map(metric.value))
        .fold(0.0, f64::max);
    let top = if max > 0.0 { max * 1.1 } else { 1.0 };
    let mut chart = ChartBuilder::on(area)
        .margin(12)
        .x_label_area_size(45)
        .y_label_area_size(60)
        .build_cartesian_2d(x_range, 0.0..top)?;
    let x_format = |x: &f64| {
        if !integers || x.fract() == 0.0 {
            short(*x)
        } else {
            String::new() // no "2.5 threads"
        }
    };
    let y_format = |y: &f64| (metric.format)(*y);
    chart
        .configure_mesh()
        .light_line_style(TRANSPARENT)
        .x_labels(ticks)
        .x_desc(figure.axis.label())
        .y_desc(metric.caption.as_str())
        .x_label_formatter(&x_format)
        .y_label_formatter(&y_format)
        .axis_desc_style(("sans-serif", 15))
        .label_style(("sans-serif", 13))
        .draw()?;
    for line in &figure.lines {
        let c = colour(colour_of(&line.protocol));
        let points: Vec<(f64, f64)> = line
            .points
            .iter()
            .map(|p| (p.x, (metric.value)(p)))
            .collect();
        chart.draw_series(LineSeries::new(points.iter().copied(), c.stroke_width(2)))?;
        chart.draw_series(points.iter().map(|&p| Circle::new(p, 4, c.filled())))?;
    }
    Ok(())
}

/// The protocols' colours, one row each, beside the plots.
fn legend_box(
    area: &DrawingArea<SVGBackend<'_>, Shift>,
    figure: &Figure,
    colour_of: &dyn Fn(&str) -> usize,
) -> Fallible {
    let font = ("sans-serif", 14).into_font().color(&BLACK);
    for (i, line) in figure.lines.iter().enumerate() {
        let y = 40 + 24 * i as i32;
        let c = colour(colour_of(&line.protocol));
        area.draw(&PathElement::new(vec![(8, y), (36, y)], c.stroke_width(2)))?;
        area.draw(&Circle::new((22, y), 4, c.filled()))?;
        area.draw(&Text::new(line.protocol.clone(), (44, y - 8), font.clone()))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_are_short() {
        assert_eq!(si(1_234_567.0), "1.23M");
        assert_eq!(si(52_000.0), "52k");
        assert_eq!(si(350.0), "350");
        assert_eq!(short(0.0), "0");
        assert_eq!(short(0.99), "0.99");
        assert_eq!(short(0.0004), "0.0004");
        assert_eq!(short(16.0), "16");
        assert_eq!(short(2.5), "2.5");
    }
}
