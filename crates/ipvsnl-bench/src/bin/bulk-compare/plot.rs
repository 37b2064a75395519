//! The plot of the scale run, drawn with `plotters` (its SVG backend):
//! `bulk-compare --plot POINTS OUT.svg` reads the `SCALE-POINT` lines the
//! scale run printed and draws two panels against the number of services
//! (log scale): the cost per destination of the table (cold create, the
//! full listing and the settings listing, ours and the plain clients'), and the cost per changed
//! destination of 10 changes (ours from the cached view, the plain
//! client's 10 edits). `scripts/measure/bench --scale` keeps the points beside the
//! plot (benches/scale.points), so it can be drawn again without a VM.

use std::collections::BTreeMap;

use plotters::backend::SVGBackend;
use plotters::coord::ranged1d::{DefaultFormatting, KeyPointHint};
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

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

const W: u32 = 1040;
const H: u32 = 560;
/// The height of the caption strip at the bottom.
const CAPTION_H: u32 = 26;
/// The height of a panel's legend, under its chart (six series of 22 px).
const LEGEND_H: u32 = 148;
const FONT: &str = "sans-serif";

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

/// Colour, dash and marker of a series: the plain clients grey, dashed,
/// with squares; ours in colour, solid, with dots; cold create, the full
/// listing and the settings listing told apart by hue (and the plain
/// clients by shade).
fn style(series: &str) -> (RGBColor, bool) {
    let plain = series.contains("plain");
    let colour = match (
        series.contains("settings"),
        series.contains("listing"),
        plain,
    ) {
        (true, _, true) => RGBColor(0xaa, 0xaa, 0xaa),
        (true, _, false) => RGBColor(0x1b, 0x9e, 0x77),
        (false, true, true) => RGBColor(0x7f, 0x7f, 0x7f),
        (false, true, false) => RGBColor(0xd9, 0x5f, 0x02),
        (false, false, true) => RGBColor(0x40, 0x40, 0x40),
        (false, false, false) => RGBColor(0x1b, 0x6a, 0xc9),
    };
    (colour, plain)
}

/// An axis drawn linear in its position: the position is the value, or
/// its log10 on a log axis. Ticks are (position, label).
#[derive(Clone)]
struct Axis {
    log: bool,
    lo: f64,
    hi: f64,
    ticks: Vec<(f64, String)>,
}

impl Axis {
    /// The y axis of values up to `max` (`min_positive`: the least value
    /// above 0, for a log axis).
    fn values(max: f64, min_positive: f64, log: bool) -> Self {
        if log {
            let lo = 10f64.powf(min_positive.max(1e-9).log10().floor());
            let hi = 10f64.powf((max * 1.2).max(lo * 10.0).log10().ceil());
            let mut ticks = Vec::new();
            let mut d = lo;
            while d <= hi * 1.0001 {
                for m in [1.0, 2.0, 5.0] {
                    let v = d * m;
                    if v <= hi * 1.0001 {
                        ticks.push((v.log10(), format!("{v}")));
                    }
                }
                d *= 10.0;
            }
            Axis {
                log,
                lo: lo.log10(),
                hi: hi.log10(),
                ticks,
            }
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
            Axis {
                log,
                lo: 0.0,
                hi,
                ticks,
            }
        }
    }

    /// The x axis, log scale: a tick at each measured size.
    fn services(sizes: &[f64]) -> Self {
        let (min, max) = (sizes[0], sizes[sizes.len() - 1]);
        Axis {
            log: true,
            lo: (min / 1.6).log10(),
            hi: (max * 1.6).log10(),
            ticks: sizes
                .iter()
                .map(|&s| (s.log10(), label_services(s)))
                .collect(),
        }
    }

    /// The position of value `v`.
    fn at(&self, v: f64) -> f64 {
        if self.log {
            v.max(10f64.powf(self.lo)).log10()
        } else {
            v
        }
    }

    /// The label of the tick at position `p`.
    fn label(&self, p: f64) -> String {
        self.ticks
            .iter()
            .min_by(|a, b| (a.0 - p).abs().total_cmp(&(b.0 - p).abs()))
            .map(|t| t.1.clone())
            .unwrap_or_default()
    }
}

impl Ranged for Axis {
    /// Labels come from [`Axis::label`].
    type FormatOption = DefaultFormatting;
    type ValueType = f64;

    fn map(&self, position: &f64, limit: (i32, i32)) -> i32 {
        let fraction = (position - self.lo) / (self.hi - self.lo);
        limit.0 + (fraction * f64::from(limit.1 - limit.0)).round() as i32
    }

    /// The ticks, and no light grid lines.
    fn key_points<Hint: KeyPointHint>(&self, hint: Hint) -> Vec<f64> {
        if hint.weight().allow_light_points() {
            return Vec::new();
        }
        self.ticks.iter().map(|t| t.0).collect()
    }

    fn range(&self) -> std::ops::Range<f64> {
        self.lo..self.hi
    }
}

type Area<'a> = DrawingArea<SVGBackend<'a>, plotters::coord::Shift>;
type Failed = Box<dyn std::error::Error>;

fn panel(
    area: &Area,
    (title, ylabel, log_y): (&str, &str, bool),
    series: &BTreeMap<String, Series>,
) -> Result<(), Failed> {
    let mut sizes: Vec<f64> = series.values().flatten().map(|p| p.0).collect();
    sizes.sort_by(f64::total_cmp);
    sizes.dedup();
    if sizes.is_empty() {
        return Ok(());
    }
    let ymax = series.values().flatten().map(|p| p.1).fold(0.0, f64::max);
    let ymin_positive = series
        .values()
        .flatten()
        .map(|p| p.1)
        .filter(|&v| v > 0.0)
        .fold(f64::MAX, f64::min);
    let (x, y) = (
        Axis::services(&sizes),
        Axis::values(ymax, ymin_positive, log_y),
    );
    let (chart_area, legend_area) = area.split_vertically(area.dim_in_pixel().1 - LEGEND_H);
    let mut chart = ChartBuilder::on(&chart_area)
        .caption(title, (FONT, 21).into_font().style(FontStyle::Bold))
        .margin_top(8)
        .margin_left(10)
        .margin_right(18)
        .x_label_area_size(44)
        .y_label_area_size(78)
        .build_cartesian_2d(x.clone(), y.clone())?;
    chart
        .configure_mesh()
        .bold_line_style(RGBColor(0xe3, 0xe3, 0xe3))
        .x_desc("services (10 destinations each), log scale")
        .y_desc(ylabel)
        .axis_desc_style((FONT, 16))
        .label_style((FONT, 15))
        .x_label_formatter(&|p| x.label(*p))
        .y_label_formatter(&|p| y.label(*p))
        .draw()?;
    let mut legend_y = 12;
    for (name, pts) in series {
        let (colour, plain) = style(name);
        let line = colour.stroke_width(2);
        let at: Vec<(f64, f64)> = pts.iter().map(|&(s, v)| (x.at(s), y.at(v))).collect();
        if plain {
            chart.draw_series(DashedLineSeries::new(at.clone(), 7, 5, line))?;
            chart.draw_series(at.iter().map(|&p| {
                EmptyElement::at(p) + Rectangle::new([(-4, -4), (4, 4)], colour.filled())
            }))?;
        } else {
            chart.draw_series(LineSeries::new(at.clone(), line))?;
            chart.draw_series(at.iter().map(|&p| Circle::new(p, 4, colour.filled())))?;
        }
        // The legend, under the chart: a sample of the line, the name.
        let (lx, ly) = (90, legend_y);
        if plain {
            for dash in [0, 12, 24] {
                legend_area.draw(&PathElement::new(
                    [(lx + dash, ly), (lx + dash + 7, ly)],
                    line,
                ))?;
            }
        } else {
            legend_area.draw(&PathElement::new([(lx, ly), (lx + 36, ly)], line))?;
        }
        legend_area.draw(&Text::new(
            name.clone(),
            (lx + 44, ly - 7),
            (FONT, 16).into_font(),
        ))?;
        legend_y += 22;
    }
    Ok(())
}

/// The whole SVG of the points.
pub(crate) fn svg(
    points: &BTreeMap<String, BTreeMap<String, Series>>,
    caption: &str,
) -> Result<String, Failed> {
    let mut out = String::new();
    {
        let root = SVGBackend::with_string(&mut out, (W, H)).into_drawing_area();
        root.fill(&WHITE)?;
        let (panels, caption_area) = root.split_vertically(H - CAPTION_H);
        for (area, (id, title, ylabel, log_y)) in panels.split_evenly((1, 2)).iter().zip(PANELS) {
            if let Some(series) = points.get(id) {
                panel(area, (title, ylabel, log_y), series)?;
            }
        }
        let style = TextStyle::from((FONT, 15).into_font())
            .color(&RGBColor(0x44, 0x44, 0x44))
            .pos(Pos::new(HPos::Center, VPos::Center));
        caption_area.draw(&Text::new(
            caption.to_owned(),
            ((W / 2) as i32, (CAPTION_H / 2) as i32),
            style,
        ))?;
        root.present()?;
    }
    Ok(out)
}

/// `--plot POINTS OUT`: reads the points, writes the SVG.
pub(crate) fn run(points: &str, out: &str, caption: &str) -> Result<(), Failed> {
    let text = std::fs::read_to_string(points).map_err(|e| format!("{points}: {e}"))?;
    let parsed = parse(&text);
    if parsed.is_empty() {
        return Err(format!("{points}: no SCALE-POINT lines").into());
    }
    std::fs::write(out, svg(&parsed, caption)?).map_err(|e| format!("{out}: {e}"))?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    const POINTS: &str = "noise\n\
        SCALE-POINT|table|cold create, ours|10000|22488.000\n\
        SCALE-POINT|table|cold create, ours|1000|10097.000\n\
        SCALE-POINT|change|10 edits, plain client|1000|5.58\n\
        SCALE-POINT|change|10 edits, plain client|10000|5.83\n\
        SCALE-POINT|bad|line\n";

    #[test]
    fn points_are_read_by_panel_and_series_in_size_order() {
        let p = parse(POINTS);
        assert_eq!(
            p["table"]["cold create, ours"],
            [(1000.0, 10097.0), (10000.0, 22488.0)]
        );
        assert_eq!(p["change"]["10 edits, plain client"].len(), 2);
        assert_eq!(p.len(), 2);
    }

    #[test]
    fn the_svg_has_each_panel_series_and_tick() {
        let svg = svg(&parse(POINTS), "a <caption> & more").unwrap();
        assert!(svg.starts_with("<svg"), "{svg}");
        for text in [
            "Cost per destination of the table",
            "10 changed destinations (log scale)",
            "cold create, ours",
            "10 edits, plain client",
            ">\n1k\n<",
            ">\n10k\n<",
            "a &lt;caption&gt; &amp; more",
        ] {
            assert!(svg.contains(text), "{text:?} missing");
        }
        // A dot per point of ours (the plain client's are squares).
        assert_eq!(svg.matches("<circle").count(), 2);
    }

    #[test]
    fn a_file_without_points_is_refused_by_name() {
        let dir = std::env::temp_dir().join(format!("plot-test-{}", std::process::id()));
        std::fs::write(&dir, "nothing here\n").unwrap();
        let e = run(dir.to_str().unwrap(), "/nonexistent/out.svg", "").unwrap_err();
        assert!(e.to_string().contains("no SCALE-POINT lines"), "{e}");
        std::fs::remove_file(&dir).unwrap();
        let e = run("/nonexistent/points", "/nonexistent/out.svg", "").unwrap_err();
        assert!(e.to_string().starts_with("/nonexistent/points: "), "{e}");
    }
}
