//! The plot of the scale run, hand-written SVG (no plotting library):
//! `bulk-compare --plot POINTS OUT.svg` reads the `SCALE-POINT` lines the
//! scale run printed and draws two panels against the number of services
//! (log scale): the cost per destination of the table (cold create and
//! full listing, ours and the plain client's), and the cost per changed
//! destination of 10 changes (ours from the cached view, the plain
//! client's 10 edits).

use std::collections::BTreeMap;
use std::fmt::Write as _;

/// Points of one series: (services, value).
type Series = Vec<(f64, f64)>;

/// The panels, in order: (id, title, y axis label, log y).
const PANELS: [(&str, &str, &str, bool); 2] = [
    (
        "table",
        "Cost per destination of the table",
        "ns per destination (guest instructions)",
        false,
    ),
    (
        "change",
        "10 changed destinations (log scale)",
        "µs per changed destination (10^3 guest instructions)",
        true,
    ),
];

const W: f64 = 1040.0;
const H: f64 = 520.0;
const PANEL_W: f64 = W / 2.0;
const LEFT: f64 = 78.0;
const RIGHT: f64 = 18.0;
const TOP: f64 = 56.0;
const BOTTOM: f64 = 180.0;

/// Parses `SCALE-POINT|panel|series|services|value` lines (others skipped).
pub(crate) fn parse(text: &str) -> BTreeMap<String, BTreeMap<String, Series>> {
    let mut out: BTreeMap<String, BTreeMap<String, Series>> = BTreeMap::new();
    for l in text.lines() {
        let l = l.trim_end_matches('\r');
        let Some(rest) = l.strip_prefix("SCALE-POINT|") else {
            continue;
        };
        let f: Vec<&str> = rest.split('|').collect();
        if let [panel, series, x, y] = f[..] {
            if let (Ok(x), Ok(y)) = (x.parse::<f64>(), y.parse::<f64>()) {
                out.entry(panel.to_string())
                    .or_default()
                    .entry(series.to_string())
                    .or_default()
                    .push((x, y));
            }
        }
    }
    for panel in out.values_mut() {
        for s in panel.values_mut() {
            s.sort_by(|a, b| a.0.total_cmp(&b.0));
        }
    }
    out
}

/// A round step for about `n` ticks up to `max`.
fn nice_step(max: f64, n: f64) -> f64 {
    let raw = (max / n).max(1e-9);
    let mag = 10f64.powf(raw.log10().floor());
    let m = raw / mag;
    let k = if m <= 1.0 {
        1.0
    } else if m <= 2.0 {
        2.0
    } else if m <= 2.5 {
        2.5
    } else if m <= 5.0 {
        5.0
    } else {
        10.0
    };
    k * mag
}

fn label_services(x: f64) -> String {
    if x >= 1000.0 && (x / 1000.0).fract() == 0.0 {
        format!("{}k", x / 1000.0)
    } else {
        format!("{x}")
    }
}

fn esc(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

/// Colour and dash of a series: the plain client grey and dashed, ours in
/// colour; cold create and listing told apart by hue.
fn style(series: &str) -> (&'static str, &'static str, &'static str) {
    let plain = series.contains("plain");
    let colour = match (series.contains("listing"), plain) {
        (true, true) => "#7f7f7f",
        (true, false) => "#d95f02",
        (false, true) => "#404040",
        (false, false) => "#1b6ac9",
    };
    let dash = if plain { "7,5" } else { "none" };
    let marker = if plain { "square" } else { "circle" };
    (colour, dash, marker)
}

/// The y axis: value to pixel, and the ticks (value, label).
struct YAxis {
    log: bool,
    lo: f64,
    hi: f64,
    ticks: Vec<(f64, String)>,
}

impl YAxis {
    fn new(max: f64, min_positive: f64, log: bool) -> Self {
        if log {
            let lo = 10f64.powf(min_positive.max(1e-9).log10().floor());
            let hi = 10f64.powf((max * 1.2).max(lo * 10.0).log10().ceil());
            let mut ticks = Vec::new();
            let mut d = lo;
            while d <= hi * 1.0001 {
                for m in [1.0, 2.0, 5.0] {
                    let v = d * m;
                    if v <= hi * 1.0001 {
                        ticks.push((v, format!("{v}")));
                    }
                }
                d *= 10.0;
            }
            YAxis { log, lo, hi, ticks }
        } else {
            let step = nice_step(max * 1.08, 5.0);
            let hi = (max * 1.08 / step).ceil() * step;
            let mut ticks = Vec::new();
            let mut y = 0.0;
            while y <= hi + step / 2.0 {
                let label = if step >= 1.0 {
                    format!("{y:.0}")
                } else {
                    format!("{y:.1}")
                };
                ticks.push((y, label));
                y += step;
            }
            YAxis {
                log,
                lo: 0.0,
                hi,
                ticks,
            }
        }
    }

    /// The fraction of the axis height at value `y`.
    fn frac(&self, y: f64) -> f64 {
        if self.log {
            (y.max(self.lo).log10() - self.lo.log10()) / (self.hi.log10() - self.lo.log10())
        } else {
            (y - self.lo) / (self.hi - self.lo).max(1e-9)
        }
    }
}

fn panel(
    svg: &mut String,
    at: f64,
    (title, ylabel, log_y): (&str, &str, bool),
    series: &BTreeMap<String, Series>,
) {
    let (x0, x1) = (at + LEFT, at + PANEL_W - RIGHT);
    let (y0, y1) = (H - BOTTOM, TOP);
    let xs = series.values().flatten().map(|p| p.0);
    let (xmin, xmax) = xs
        .clone()
        .fold((f64::MAX, f64::MIN), |(a, b), x| (a.min(x), b.max(x)));
    if xmin > xmax {
        return;
    }
    let (lmin, lmax) = ((xmin / 1.6).log10(), (xmax * 1.6).log10());
    let ymax_data = series.values().flatten().map(|p| p.1).fold(0.0, f64::max);
    let ymin_positive = series
        .values()
        .flatten()
        .map(|p| p.1)
        .filter(|&v| v > 0.0)
        .fold(f64::MAX, f64::min);
    let axis = YAxis::new(ymax_data, ymin_positive, log_y);
    let px = |x: f64| x0 + (x.log10() - lmin) / (lmax - lmin) * (x1 - x0);
    let py = |y: f64| y0 - axis.frac(y) * (y0 - y1);
    let _ = writeln!(
        svg,
        r#"<text x="{:.1}" y="28" font-size="17" font-weight="bold" text-anchor="middle">{}</text>"#,
        (x0 + x1) / 2.0,
        esc(title)
    );
    // Y grid and ticks.
    for (y, label) in &axis.ticks {
        let yy = py(*y);
        let _ = writeln!(
            svg,
            r##"<line x1="{x0:.1}" y1="{yy:.1}" x2="{x1:.1}" y2="{yy:.1}" stroke="#e3e3e3"/><text x="{:.1}" y="{:.1}" font-size="12" text-anchor="end">{label}</text>"##,
            x0 - 6.0,
            yy + 4.0,
        );
    }
    // X ticks: the measured sizes, and decade grid lines.
    let mut sizes: Vec<f64> = xs.collect();
    sizes.sort_by(f64::total_cmp);
    sizes.dedup();
    let mut d = 10f64.powf(lmin.ceil());
    while d.log10() <= lmax {
        let xx = px(d);
        let _ = writeln!(
            svg,
            r##"<line x1="{xx:.1}" y1="{y0:.1}" x2="{xx:.1}" y2="{y1:.1}" stroke="#efefef"/>"##
        );
        d *= 10.0;
    }
    for s in &sizes {
        let xx = px(*s);
        let _ = writeln!(
            svg,
            r##"<line x1="{xx:.1}" y1="{y0:.1}" x2="{xx:.1}" y2="{:.1}" stroke="#000"/><text x="{xx:.1}" y="{:.1}" font-size="12" text-anchor="middle">{}</text>"##,
            y0 + 5.0,
            y0 + 19.0,
            label_services(*s)
        );
    }
    let _ = writeln!(
        svg,
        r##"<rect x="{x0:.1}" y="{y1:.1}" width="{:.1}" height="{:.1}" fill="none" stroke="#000"/>"##,
        x1 - x0,
        y0 - y1
    );
    let _ = writeln!(
        svg,
        r#"<text x="{:.1}" y="{:.1}" font-size="13" text-anchor="middle">services (10 destinations each), log scale</text>"#,
        (x0 + x1) / 2.0,
        y0 + 38.0
    );
    let _ = writeln!(
        svg,
        r#"<text transform="translate({:.1},{:.1}) rotate(-90)" font-size="13" text-anchor="middle">{}</text>"#,
        at + 18.0,
        (y0 + y1) / 2.0,
        esc(ylabel)
    );
    // Series and legend.
    for (i, (name, pts)) in series.iter().enumerate() {
        let (colour, dash, marker) = style(name);
        let path: Vec<String> = pts
            .iter()
            .map(|(x, y)| format!("{:.1},{:.1}", px(*x), py(*y)))
            .collect();
        let _ = writeln!(
            svg,
            r#"<polyline points="{}" fill="none" stroke="{colour}" stroke-width="2.2" stroke-dasharray="{dash}"/>"#,
            path.join(" ")
        );
        for (x, y) in pts {
            let (cx, cy) = (px(*x), py(*y));
            if marker == "circle" {
                let _ = writeln!(
                    svg,
                    r#"<circle cx="{cx:.1}" cy="{cy:.1}" r="4" fill="{colour}"/>"#
                );
            } else {
                let _ = writeln!(
                    svg,
                    r#"<rect x="{:.1}" y="{:.1}" width="8" height="8" fill="{colour}"/>"#,
                    cx - 4.0,
                    cy - 4.0
                );
            }
        }
        let ly = y0 + 62.0 + 22.0 * i as f64;
        let lx = x0 + 10.0;
        let _ = writeln!(
            svg,
            r#"<line x1="{lx:.1}" y1="{ly:.1}" x2="{:.1}" y2="{ly:.1}" stroke="{colour}" stroke-width="2.2" stroke-dasharray="{dash}"/><text x="{:.1}" y="{:.1}" font-size="13">{}</text>"#,
            lx + 36.0,
            lx + 44.0,
            ly + 4.0,
            esc(name)
        );
    }
}

/// The whole SVG of the points.
pub(crate) fn svg(points: &BTreeMap<String, BTreeMap<String, Series>>, caption: &str) -> String {
    let mut svg = String::new();
    let _ = writeln!(
        svg,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{H}" viewBox="0 0 {W} {H}" font-family="DejaVu Sans, Helvetica, Arial, sans-serif">"#
    );
    let _ = writeln!(svg, r##"<rect width="100%" height="100%" fill="#fff"/>"##);
    for (i, (id, title, ylabel, log_y)) in PANELS.iter().enumerate() {
        if let Some(series) = points.get(*id) {
            panel(
                &mut svg,
                i as f64 * PANEL_W,
                (title, ylabel, *log_y),
                series,
            );
        }
    }
    let _ = writeln!(
        svg,
        r##"<text x="{:.1}" y="{:.1}" font-size="12" text-anchor="middle" fill="#444">{}</text>"##,
        W / 2.0,
        H - 10.0,
        esc(caption)
    );
    svg.push_str("</svg>\n");
    svg
}

/// `--plot POINTS OUT`: reads the points, writes the SVG.
pub(crate) fn run(points: &str, out: &str, caption: &str) -> std::io::Result<()> {
    let text = std::fs::read_to_string(points)?;
    let parsed = parse(&text);
    if parsed.is_empty() {
        return Err(std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            format!("{points}: no SCALE-POINT lines"),
        ));
    }
    std::fs::write(out, svg(&parsed, caption))
}
