//! Figures as inline SVG, drawn from numbers: lines over time, rows of
//! bars over time, horizontal bars. Each is a `<figure>` whose SVG has a
//! title and a description for a screen reader, tells its series apart by
//! line style and marker shape as well as by colour, and is followed by a
//! table of the same numbers: the figure is for the eye, the table for
//! reading and for whoever cannot see the figure.

use std::fmt::Write;

use super::Html;

const WIDTH: f64 = 720.0;
const LEFT: f64 = 56.0;
/// Room right of a plot: half of a week label centred on its last point.
const RIGHT: f64 = 36.0;

/// What a figure is called: its id on the page, its title (the caption)
/// and a description of what it shows, for a screen reader.
pub struct Figure<'a> {
    pub id: &'a str,
    pub title: &'a str,
    pub desc: &'a str,
}

/// One line of a line chart.
pub struct Series<'a> {
    pub name: &'a str,
    /// One value per x label; None leaves a gap.
    pub values: Vec<Option<f64>>,
    /// SVG `stroke-dasharray`, `""` for solid.
    pub dash: &'a str,
    /// Square markers instead of round ones.
    pub square: bool,
}

fn num(x: f64) -> String {
    let mut s = String::new();
    let _ = write!(s, "{x:.1}");
    s
}

/// Opens the figure and its SVG, with a title and a description.
fn open(page: &mut Html, figure: &Figure<'_>, height: f64) {
    let Figure { id, title, desc } = *figure;
    let labelled = format!("{id}-title {id}-desc");
    page.open("figure", &[("aria-labelledby", &format!("{id}-caption"))])
        .newline()
        .elem("figcaption", &[("id", &format!("{id}-caption"))], title)
        .newline()
        .open(
            "svg",
            &[
                ("xmlns", "http://www.w3.org/2000/svg"),
                ("role", "img"),
                ("aria-labelledby", &labelled),
                ("width", &num(WIDTH)),
                ("height", &num(height)),
                ("viewBox", &format!("0 0 {} {}", num(WIDTH), num(height))),
            ],
        )
        .elem("title", &[("id", &format!("{id}-title"))], title)
        .elem("desc", &[("id", &format!("{id}-desc"))], desc)
        .newline();
}

fn close(page: &mut Html) {
    page.close("svg").newline().close("figure").newline();
}

fn text(page: &mut Html, x: f64, y: f64, anchor: &str, label: &str) {
    page.elem(
        "text",
        &[("x", &num(x)), ("y", &num(y)), ("text-anchor", anchor)],
        label,
    );
}

fn line(page: &mut Html, (x1, y1): (f64, f64), (x2, y2): (f64, f64), style: &str) {
    page.void(
        "line",
        &[
            ("x1", &num(x1)),
            ("y1", &num(y1)),
            ("x2", &num(x2)),
            ("y2", &num(y2)),
            ("style", style),
        ],
    );
}

/// A name as a label left of a chart: what fits in its 200 pixels, cut
/// with an ellipsis (the whole name is the row's title and in the table).
fn label(name: &str) -> String {
    const FITS: usize = 28;
    match name.char_indices().nth(FITS - 1) {
        Some((at, _)) if name.chars().count() > FITS => format!("{}…", &name[..at]),
        _ => name.to_string(),
    }
}

/// Which x labels to print so that they do not overlap.
fn label_every(count: usize, room: f64) -> usize {
    let fits = (room / 64.0).max(1.0) as usize;
    count.div_ceil(fits).max(1)
}

/// Lines of values (0 to `y_max`) over `labels`; `y_label` formats a
/// tick.
pub fn lines(
    page: &mut Html,
    figure: &Figure<'_>,
    labels: &[String],
    series: &[Series<'_>],
    y_max: f64,
    y_label: &dyn Fn(f64) -> String,
) {
    let height = 260.0;
    let (top, bottom) = (16.0, height - 56.0);
    open(page, figure, height);
    let plot = WIDTH - LEFT - RIGHT;
    let x = |i: usize| {
        if labels.len() <= 1 {
            LEFT + plot / 2.0
        } else {
            LEFT + plot * i as f64 / (labels.len() - 1) as f64
        }
    };
    let y = |v: f64| bottom - (bottom - top) * (v / y_max).clamp(0.0, 1.0);
    for tick in 0..=4 {
        let v = y_max * f64::from(tick) / 4.0;
        line(page, (LEFT, y(v)), (WIDTH - RIGHT, y(v)), "stroke:#ddd");
        text(page, LEFT - 6.0, y(v) + 4.0, "end", &y_label(v));
    }
    line(page, (LEFT, bottom), (WIDTH - RIGHT, bottom), "stroke:#555");
    let every = label_every(labels.len(), plot);
    for (i, label) in labels.iter().enumerate().filter(|(i, _)| i % every == 0) {
        text(page, x(i), bottom + 16.0, "middle", label);
    }
    for s in series {
        // A gap breaks the line: each run of values is its own polyline.
        let mut runs: Vec<Vec<(f64, f64)>> = vec![Vec::new()];
        for (i, v) in s.values.iter().enumerate() {
            match (v, runs.last_mut()) {
                (Some(v), Some(run)) => run.push((x(i), y(*v))),
                _ => runs.push(Vec::new()),
            }
        }
        page.open("g", &[]).elem("title", &[], s.name);
        for run in runs.iter().filter(|r| !r.is_empty()) {
            let points: Vec<String> = run
                .iter()
                .map(|(x, y)| format!("{},{}", num(*x), num(*y)))
                .collect();
            page.void(
                "polyline",
                &[
                    ("points", &points.join(" ")),
                    (
                        "style",
                        &format!(
                            "fill:none;stroke:#1b1b1b;stroke-width:2;stroke-dasharray:{}",
                            if s.dash.is_empty() { "none" } else { s.dash }
                        ),
                    ),
                ],
            );
            for (px, py) in run {
                marker(page, *px, *py, s.square);
            }
        }
        page.close("g").newline();
    }
    // The legend: each series' line style and marker, and its name.
    let mut lx = LEFT;
    let ly = height - 14.0;
    for s in series {
        page.void(
            "line",
            &[
                ("x1", &num(lx)),
                ("y1", &num(ly - 4.0)),
                ("x2", &num(lx + 28.0)),
                ("y2", &num(ly - 4.0)),
                (
                    "style",
                    &format!(
                        "stroke:#1b1b1b;stroke-width:2;stroke-dasharray:{}",
                        if s.dash.is_empty() { "none" } else { s.dash }
                    ),
                ),
            ],
        );
        marker(page, lx + 14.0, ly - 4.0, s.square);
        text(page, lx + 34.0, ly, "start", s.name);
        lx += 40.0 + 7.0 * s.name.chars().count() as f64;
    }
    close(page);
}

fn marker(page: &mut Html, x: f64, y: f64, square: bool) {
    if square {
        page.void(
            "rect",
            &[
                ("x", &num(x - 3.5)),
                ("y", &num(y - 3.5)),
                ("width", "7"),
                ("height", "7"),
                ("style", "fill:#fff;stroke:#1b1b1b;stroke-width:1.5"),
            ],
        );
    } else {
        page.void(
            "circle",
            &[
                ("cx", &num(x)),
                ("cy", &num(y)),
                ("r", "3.5"),
                ("style", "fill:#1b1b1b"),
            ],
        );
    }
}

/// One row of bars per name (a small multiple each), over the same
/// `labels`: how a count moves in time, each row labelled, no legend to
/// match by colour.
pub fn bar_rows(
    page: &mut Html,
    figure: &Figure<'_>,
    labels: &[String],
    rows: &[(String, Vec<usize>)],
) {
    let row_height = 42.0;
    let top = 18.0;
    let height = 30.0 + top + row_height * rows.len() as f64;
    let left = 200.0;
    open(page, figure, height);
    let plot = WIDTH - left - RIGHT;
    let slot = plot / labels.len().max(1) as f64;
    let max = rows
        .iter()
        .flat_map(|(_, v)| v.iter().copied())
        .max()
        .unwrap_or(0)
        .max(1);
    // The scale, once: every row's bars share it.
    text(
        page,
        left,
        12.0,
        "start",
        &format!("bar height: 0 to {max} a week, the same in every row"),
    );
    for (r, (name, values)) in rows.iter().enumerate() {
        let base = top + 12.0 + row_height * (r as f64 + 1.0);
        line(
            page,
            (left - 4.0, base - (row_height - 10.0)),
            (left, base - (row_height - 10.0)),
            "stroke:#999",
        );
        text(page, left - 8.0, base - 4.0, "end", &label(name));
        line(page, (left, base), (WIDTH - RIGHT, base), "stroke:#999");
        page.open("g", &[]).elem("title", &[], name);
        for (i, v) in values.iter().enumerate() {
            let h = (row_height - 10.0) * *v as f64 / max as f64;
            page.void(
                "rect",
                &[
                    ("x", &num(left + slot * i as f64 + slot * 0.15)),
                    ("y", &num(base - h)),
                    ("width", &num((slot * 0.7).max(1.0))),
                    ("height", &num(h)),
                    ("style", "fill:#4a4a4a"),
                ],
            );
        }
        page.close("g").newline();
    }
    let every = label_every(labels.len(), plot);
    let y = height - 6.0;
    for (i, label) in labels.iter().enumerate().filter(|(i, _)| i % every == 0) {
        text(page, left + slot * (i as f64 + 0.5), y, "middle", label);
    }
    close(page);
}

/// Horizontal bars, one per name, its value written beside it.
pub fn bars(page: &mut Html, figure: &Figure<'_>, items: &[(String, usize)]) {
    let bar = 22.0;
    let height = 10.0 + bar * items.len() as f64;
    let left = 200.0;
    open(page, figure, height);
    let plot = WIDTH - left - RIGHT - 60.0;
    let max = items.iter().map(|(_, v)| *v).max().unwrap_or(0).max(1);
    for (i, (name, value)) in items.iter().enumerate() {
        let y = 6.0 + bar * i as f64;
        let w = plot * *value as f64 / max as f64;
        page.open("g", &[]).elem("title", &[], name);
        text(page, left - 8.0, y + bar * 0.65, "end", &label(name));
        page.close("g");
        page.void(
            "rect",
            &[
                ("x", &num(left)),
                ("y", &num(y + 3.0)),
                ("width", &num(w.max(1.0))),
                ("height", &num(bar - 6.0)),
                ("style", "fill:#4a4a4a"),
            ],
        );
        text(
            page,
            left + w + 6.0,
            y + bar * 0.65,
            "start",
            &value.to_string(),
        );
    }
    close(page);
}
