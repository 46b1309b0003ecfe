//! `--svg DIR`: each group's table as a horizontal bar chart, one SVG file
//! per group (`DIR/gemm.svg`, `DIR/math.svg`, ...).
//!
//! A group fills a [`Chart`] next to the text it prints: one row per line of
//! its table (the case), one value per peer, and the ratio the row is labelled
//! with. [`write`] renders it with `plotters`' SVG backend: one cluster of
//! bars per row, one bar per peer that has a value there (a missing value is
//! no bar, not a bar of zero), tessera's peers in one fixed warm colour (its
//! headline peer the strongest, its other variants lighter tints), every other
//! peer in a colour of its own, a legend, the unit on the axis, each cluster's
//! ratio at the end of its longest bar, and a title naming the group and the
//! host.
//!
//! The file is written to a temporary name in the directory and renamed into
//! place, so an interrupted or failed write never leaves a truncated chart.
//! [`prepare_dir`] creates the directory and proves it writable before any
//! benchmark runs.

use crate::harness::{GroupResult, Stat};
use plotters::coord::ranged1d::{DefaultFormatting, KeyPointHint, Ranged};
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};
use std::io::Write as _;
use std::path::{Path, PathBuf};
use tessera::Tier;

/// One group's table, as the data of a bar chart.
#[derive(Clone, Debug, PartialEq)]
pub struct Chart {
    /// The group's name: the file's stem and the title's first word.
    pub name: String,
    /// What the group measures, in one line (sizes, threads, how counted).
    pub about: String,
    /// The unit of every value, as the table has it ("GFLOP/s", "ns/element").
    pub unit: String,
    /// True when a smaller value is faster (times per call or per element).
    pub lower_is_better: bool,
    /// Every peer, in legend order; the first whose name starts with
    /// `tessera` gets tessera's strongest colour.
    pub peers: Vec<String>,
    /// One row per table line: its label and one value per peer (None: no
    /// value, drawn as no bar).
    pub rows: Vec<(String, Vec<Option<f64>>)>,
    /// The ratio each row is labelled with (one per row; None: no label).
    pub ratio: Vec<Option<f64>>,
    /// What the ratio is ("tessera ÷ the fastest peer"), shown under the title.
    pub ratio_note: String,
    /// The ratio at and above which a label is green (below: red): 1, or
    /// the project's target where the table states one.
    pub target: f64,
}

/// Whether a peer is one of tessera's (`tessera`, `tessera avx2`, ...).
pub fn is_tessera(peer: &str) -> bool {
    peer == "tessera" || peer.starts_with("tessera ")
}

/// A value worth a bar: finite and not negative.
fn clean(v: Option<f64>) -> Option<f64> {
    v.filter(|x| x.is_finite() && *x >= 0.0)
}

impl Chart {
    /// An empty chart of group `name`.
    pub fn new(name: &str, about: impl Into<String>, unit: &str) -> Chart {
        Chart {
            name: name.to_string(),
            about: about.into(),
            unit: unit.to_string(),
            lower_is_better: false,
            peers: Vec::new(),
            rows: Vec::new(),
            ratio: Vec::new(),
            ratio_note: String::new(),
            target: 1.0,
        }
    }

    /// The same chart, a smaller value being faster.
    pub fn lower_is_better(mut self) -> Chart {
        self.lower_is_better = true;
        self
    }

    /// The same chart, its ratio described by `note`.
    pub fn ratio_note(mut self, note: impl Into<String>) -> Chart {
        self.ratio_note = note.into();
        self
    }

    /// The same chart, its labels green from `target` up.
    pub fn target(mut self, target: f64) -> Chart {
        self.target = target;
        self
    }

    /// The index of `peer`, appended to the legend (and every row) if new.
    pub fn peer(&mut self, peer: &str) -> usize {
        if let Some(p) = self.peers.iter().position(|q| q == peer) {
            return p;
        }
        self.peers.push(peer.to_string());
        for (_, values) in &mut self.rows {
            values.push(None);
        }
        self.peers.len() - 1
    }

    /// Appends a row: `cells` are `(peer, value)` pairs in any order (a peer
    /// not seen before joins the legend; a peer left out has no value in this
    /// row; a non-finite or negative value counts as none).
    pub fn add_row(
        &mut self,
        label: impl Into<String>,
        cells: &[(&str, Option<f64>)],
        ratio: Option<f64>,
    ) {
        let idx: Vec<usize> = cells.iter().map(|(p, _)| self.peer(p)).collect();
        let mut values = vec![None; self.peers.len()];
        for (&i, &(_, v)) in idx.iter().zip(cells) {
            values[i] = clean(v);
        }
        self.rows.push((label.into(), values));
        self.ratio.push(clean(ratio));
    }

    /// The value of `peer` in row `row`.
    #[cfg(test)]
    pub fn value(&self, row: usize, peer: &str) -> Option<f64> {
        let p = self.peers.iter().position(|q| q == peer)?;
        self.rows.get(row)?.1.get(p).copied().flatten()
    }

    /// Row `row`'s best tessera peer over its fastest other peer, as a speed
    /// ratio (above 1: tessera faster, whichever way the unit runs).
    pub fn tessera_ratio(&self, row: usize) -> Option<f64> {
        let values = &self.rows.get(row)?.1;
        let fastest = |want_tessera: bool| {
            self.peers
                .iter()
                .zip(values)
                .filter(|(p, _)| is_tessera(p) == want_tessera)
                .filter_map(|(_, v)| *v)
                .reduce(|a, b| {
                    if self.lower_is_better {
                        a.min(b)
                    } else {
                        a.max(b)
                    }
                })
        };
        let (t, o) = (fastest(true)?, fastest(false)?);
        speed_ratio(t, o, self.lower_is_better)
    }

    /// Fills every row's ratio with [`Chart::tessera_ratio`].
    pub fn with_tessera_ratios(mut self) -> Chart {
        self.ratio = (0..self.rows.len())
            .map(|r| self.tessera_ratio(r))
            .collect();
        self
    }

    /// The file the chart is written to: the name with every character other
    /// than ASCII letters, digits, `-`, `_` and `.` as `-`, then `.svg`.
    pub fn file_name(&self) -> String {
        let stem: String = self
            .name
            .chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.') {
                    c
                } else {
                    '-'
                }
            })
            .collect();
        format!("{stem}.svg")
    }
}

/// `a` over `b` as a speed ratio: `a / b` for rates, `b / a` for times.
pub fn speed_ratio(a: f64, b: f64, lower_is_better: bool) -> Option<f64> {
    let r = if lower_is_better { b / a } else { a / b };
    r.is_finite().then_some(r)
}

/// The harness groups' results (bandwidth, elementwise-f32/…, casts/…,
/// reduce/…) as one chart per family (the name before `/`): a row per
/// group (the part after `/`), a bar per peer's GB/s under `stat`, a failed
/// peer as no bar, and each row labelled with tessera's best one-thread peer
/// over the fastest peer that is neither tessera's nor the group's bandwidth
/// reference (memcpy, a plain read).
pub fn harness_charts(results: &[GroupResult], stat: Stat, about: &str) -> Vec<Chart> {
    let mut charts: Vec<Chart> = Vec::new();
    for g in results {
        let (family, row) = match g.name.split_once('/') {
            Some((f, r)) => (f, r),
            None => (g.name.as_str(), g.name.as_str()),
        };
        let k = match charts.iter().position(|c| c.name == family) {
            Some(k) => k,
            None => {
                charts.push(
                    Chart::new(family, about, "GB/s").ratio_note(
                        "tessera's best tier ÷ the fastest other peer, not the bandwidth reference (above 1: tessera faster)",
                    ),
                );
                charts.len() - 1
            }
        };
        // tessera's peers first: its tiers best first, then its other
        // one-thread peers, then those on more threads; the others after
        // them in table order.
        let mut ordered: Vec<_> = g.cases.iter().collect();
        ordered.sort_by_key(|c| {
            if !is_tessera(&c.name) {
                return (1, 0, 0);
            }
            let tier = Tier::ALL
                .iter()
                .position(|t| c.name.split(' ').nth(1) == Some(t.name()))
                .map_or(Tier::ALL.len(), |p| Tier::ALL.len() - 1 - p);
            (0, usize::from(c.name.ends_with(" threads")), tier)
        });
        let cells: Vec<(&str, Option<f64>)> = ordered
            .iter()
            .map(|c| {
                let v = if c.error.is_none() {
                    c.gbps(stat)
                } else {
                    None
                };
                (c.name.as_str(), v)
            })
            .collect();
        let best = |want_tessera: bool| {
            cells
                .iter()
                .filter(|(p, _)| {
                    is_tessera(p) == want_tessera
                        && !p.ends_with(" threads")
                        && g.reference.as_deref() != Some(*p)
                })
                .filter_map(|c| c.1)
                .reduce(f64::max)
        };
        let ratio = best(true)
            .zip(best(false))
            .and_then(|(t, o)| speed_ratio(t, o, false));
        charts[k].add_row(row, &cells, ratio);
    }
    charts
}

/// Creates `dir` if it is missing and proves it writable (a probe file
/// written and removed), so that a bad `--svg` is refused before any
/// benchmark runs. The error is one line naming the directory.
pub fn prepare_dir(dir: &Path) -> Result<(), String> {
    let shown = dir.display();
    if dir.as_os_str().is_empty() {
        return Err("--svg needs a directory".to_string());
    }
    if let Ok(m) = std::fs::metadata(dir) {
        if !m.is_dir() {
            return Err(format!("--svg {shown}: not a directory"));
        }
    }
    std::fs::create_dir_all(dir)
        .map_err(|e| format!("--svg {shown}: cannot create the directory: {e}"))?;
    let probe = dir.join(format!(".tessera-bench-probe-{}", std::process::id()));
    let wrote = std::fs::File::create(&probe).and_then(|mut f| f.write_all(b"probe"));
    let removed = std::fs::remove_file(&probe);
    wrote.map_err(|e| format!("--svg {shown}: cannot write there: {e}"))?;
    removed.map_err(|e| format!("--svg {shown}: cannot remove a file there: {e}"))
}

/// Renders `chart` and writes it to `dir` under [`Chart::file_name`] through
/// a temporary file in the same directory renamed into place; `host` names
/// the machine in the title. The path written, or a one-line error (the
/// temporary file removed).
pub fn write(dir: &Path, chart: &Chart, host: &str) -> Result<PathBuf, String> {
    let path = dir.join(chart.file_name());
    let svg = render(chart, host).map_err(|e| format!("--svg {}: {e}", path.display()))?;
    let tmp = dir.join(format!(".{}.{}.tmp", chart.file_name(), std::process::id()));
    let written = std::fs::File::create(&tmp)
        .and_then(|mut f| {
            f.write_all(svg.as_bytes())?;
            f.sync_all()
        })
        .and_then(|()| std::fs::rename(&tmp, &path));
    if let Err(e) = written {
        let _ = std::fs::remove_file(&tmp);
        return Err(format!("--svg: writing {}: {e}", path.display()));
    }
    Ok(path)
}

/// tessera's colours, all warm: the headline peer's vermilion, then other
/// warm tones for its other variants (tiers, thread counts, ways).
const TESSERA: [RGBColor; 6] = [
    RGBColor(0xD9, 0x48, 0x0F),
    RGBColor(0xF5, 0x9F, 0x00),
    RGBColor(0xF4, 0xA5, 0x82),
    RGBColor(0xA6, 0x36, 0x03),
    RGBColor(0xFF, 0xD4, 0x3B),
    RGBColor(0xFB, 0xDC, 0xC4),
];

/// The other peers' colours, cool and muted, in legend order.
const PEERS: [RGBColor; 9] = [
    RGBColor(0x3B, 0x6E, 0xA8),
    RGBColor(0x4E, 0x9A, 0x5B),
    RGBColor(0x7F, 0x6A, 0xB0),
    RGBColor(0x80, 0x80, 0x80),
    RGBColor(0x3F, 0xA3, 0xB8),
    RGBColor(0x8C, 0x6D, 0x52),
    RGBColor(0x1F, 0x3B, 0x5C),
    RGBColor(0xA8, 0xB5, 0x3A),
    RGBColor(0xB0, 0x5A, 0x8C),
];

/// The colour of every peer of `chart`, in its legend order.
pub fn colours(chart: &Chart) -> Vec<RGBColor> {
    let (mut t, mut o) = (0, 0);
    chart
        .peers
        .iter()
        .map(|p| {
            if is_tessera(p) {
                t += 1;
                TESSERA[(t - 1).min(TESSERA.len() - 1)]
            } else {
                o += 1;
                PEERS[(o - 1) % PEERS.len()]
            }
        })
        .collect()
}

/// A ratio as its label: `×1.23`.
pub fn ratio_label(r: f64) -> String {
    format!("×{r:.2}")
}

/// The title's first line.
pub fn title(chart: &Chart) -> String {
    if chart.about.is_empty() {
        chart.name.clone()
    } else {
        format!("{}: {}", chart.name, chart.about)
    }
}

/// Pixels a line of `px`-pixel sans-serif text takes, about.
fn text_w(s: &str, px: f64) -> f64 {
    s.chars().count() as f64 * px * 0.58
}

/// Sans-serif text of `px` pixels in colour `c` (plotters writes a font
/// size of `size / 1.24`: hence the factor).
fn plain(px: f64, c: RGBColor) -> TextStyle<'static> {
    ("sans-serif", px * 1.24).into_font().color(&c)
}

/// As [`plain`], bold.
fn bold(px: f64, c: RGBColor) -> TextStyle<'static> {
    ("sans-serif", px * 1.24)
        .into_font()
        .style(FontStyle::Bold)
        .color(&c)
}

/// The row axis: pixels from the bottom of the plot, ticks (and labels) at
/// the rows' centres only.
struct RowAxis {
    /// The plot's height.
    height: f64,
    /// Each row's centre.
    centres: Vec<f64>,
}

impl Ranged for RowAxis {
    type FormatOption = DefaultFormatting;
    type ValueType = f64;

    fn map(&self, v: &f64, limit: (i32, i32)) -> i32 {
        let frac = v / self.height;
        limit.0 + ((limit.1 - limit.0) as f64 * frac).round() as i32
    }

    fn key_points<H: KeyPointHint>(&self, hint: H) -> Vec<f64> {
        if hint.weight().allow_light_points() {
            Vec::new()
        } else {
            self.centres.clone()
        }
    }

    fn range(&self) -> std::ops::Range<f64> {
        0.0..self.height
    }
}

// Layout, in pixels.
const BAR: f64 = 11.0;
const GAP: f64 = 12.0;
const PAD: f64 = 16.0;
const LEGEND_LINE: f64 = 20.0;
const LABEL_PX: f64 = 13.0;

/// The chart as an SVG document.
pub fn render(chart: &Chart, host: &str) -> Result<String, String> {
    let err = |e: &dyn std::fmt::Display| format!("drawing the chart: {e}");
    let title = title(chart);
    let host_line = format!("host: {host}");
    let better = if chart.lower_is_better {
        "lower is better"
    } else {
        "higher is better"
    };
    let note_line = if chart.ratio_note.is_empty() || chart.ratio.iter().all(Option::is_none) {
        format!("{} ({better})", chart.unit)
    } else {
        format!("{} ({better}); label: {}", chart.unit, chart.ratio_note)
    };
    let colours = colours(chart);
    let n = chart.rows.len();

    // Widths: the header's lines and the row labels decide.
    let label_w = chart
        .rows
        .iter()
        .map(|(l, _)| text_w(l, LABEL_PX))
        .fold(60.0, f64::max)
        + 18.0;
    let width = [
        text_w(&title, 18.0) * 1.08,
        text_w(&host_line, 13.0),
        text_w(&note_line, 13.0),
        label_w + 560.0,
    ]
    .into_iter()
    .fold(960.0, f64::max)
        + 2.0 * PAD;
    // The legend, laid out in lines.
    let mut legend: Vec<(f64, f64, usize)> = Vec::new();
    let (mut x, mut line) = (PAD, 0.0);
    for (p, name) in chart.peers.iter().enumerate() {
        let w = 18.0 + text_w(name, LABEL_PX) + 22.0;
        if x + w > width - PAD && x > PAD {
            x = PAD;
            line += 1.0;
        }
        legend.push((x, line, p));
        x += w;
    }
    let legend_top = 84.0;
    let header_h = legend_top + (line + 1.0) * LEGEND_LINE + 8.0;
    // Each row as tall as its bars (missing values take no room).
    let heights: Vec<f64> = chart
        .rows
        .iter()
        .map(|(_, v)| v.iter().flatten().count().max(1) as f64 * BAR + GAP)
        .collect();
    let plot_h: f64 = heights.iter().sum::<f64>().max(BAR + GAP);
    let top_axis = if n > 12 { 44.0 } else { 0.0 };
    let height = header_h + top_axis + plot_h + 52.0;

    let xmax = chart
        .rows
        .iter()
        .flat_map(|(_, v)| v.iter().flatten())
        .fold(0.0f64, |a, &b| a.max(b));
    // Room right of the longest bar for its ratio label.
    let xmax = if xmax > 0.0 { xmax * 1.13 } else { 1.0 };
    // Rows top to bottom: row r spans [lo[r], lo[r] + heights[r]) counted
    // from the bottom of the plot.
    let mut lo = vec![0.0; n];
    let mut acc = plot_h;
    for r in 0..n {
        acc -= heights[r];
        lo[r] = acc;
    }
    let centres: Vec<f64> = (0..n).map(|r| lo[r] + heights[r] / 2.0).collect();

    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (width.ceil() as u32, height.ceil() as u32))
            .into_drawing_area();
        root.fill(&WHITE).map_err(|e| err(&e))?;
        let (header, body) = root.split_vertically(header_h.round() as u32);
        let grey = RGBColor(0x44, 0x44, 0x44);
        header
            .draw(&Text::new(
                title.clone(),
                (PAD as i32, 14),
                bold(18.0, BLACK),
            ))
            .map_err(|e| err(&e))?;
        header
            .draw(&Text::new(
                host_line.clone(),
                (PAD as i32, 40),
                plain(13.0, grey),
            ))
            .map_err(|e| err(&e))?;
        header
            .draw(&Text::new(
                note_line.clone(),
                (PAD as i32, 60),
                plain(13.0, grey),
            ))
            .map_err(|e| err(&e))?;
        for &(x, line, p) in &legend {
            let y = (legend_top + line * LEGEND_LINE) as i32;
            let x = x as i32;
            header
                .draw(&Rectangle::new(
                    [(x, y), (x + 13, y + 13)],
                    colours[p].filled(),
                ))
                .map_err(|e| err(&e))?;
            header
                .draw(&Text::new(
                    chart.peers[p].clone(),
                    (x + 18, y),
                    plain(LABEL_PX, BLACK),
                ))
                .map_err(|e| err(&e))?;
        }

        let labels: Vec<String> = chart.rows.iter().map(|(l, _)| l.clone()).collect();
        let label_of = |y: &f64| -> String {
            centres
                .iter()
                .position(|c| (c - y).abs() < 0.5)
                .map(|r| labels[r].clone())
                .unwrap_or_default()
        };
        let mut builder = ChartBuilder::on(&body);
        builder
            .margin_left(PAD as u32)
            .margin_right(PAD as u32 + 8)
            .margin_top(4)
            .x_label_area_size(44)
            .y_label_area_size(label_w.round() as u32);
        if top_axis > 0.0 {
            builder.set_label_area_size(LabelAreaPosition::Top, top_axis as u32);
        }
        let mut cc = builder
            .build_cartesian_2d(
                0.0..xmax,
                RowAxis {
                    height: plot_h,
                    centres: centres.clone(),
                },
            )
            .map_err(|e| err(&e))?;
        cc.configure_mesh()
            .disable_y_mesh()
            .light_line_style(WHITE)
            .bold_line_style(RGBColor(0xE4, 0xE4, 0xE4))
            .y_label_formatter(&label_of)
            .y_label_style(plain(LABEL_PX, BLACK))
            .x_label_style(plain(12.0, grey))
            .x_desc(format!("{} ({better})", chart.unit))
            .axis_desc_style(plain(13.0, BLACK))
            .draw()
            .map_err(|e| err(&e))?;
        for (r, (_, values)) in chart.rows.iter().enumerate() {
            let mut top = lo[r] + heights[r] - GAP / 2.0;
            for (p, v) in values.iter().enumerate() {
                let Some(v) = *v else { continue };
                cc.draw_series(std::iter::once(Rectangle::new(
                    [(0.0, top), (v, top - BAR + 1.0)],
                    colours[p].filled(),
                )))
                .map_err(|e| err(&e))?;
                top -= BAR;
            }
            if let Some(q) = chart.ratio.get(r).copied().flatten() {
                let end = values.iter().flatten().fold(0.0f64, |a, &b| a.max(b));
                let c = if q >= chart.target {
                    RGBColor(0x1B, 0x7A, 0x3A)
                } else {
                    RGBColor(0xB0, 0x2A, 0x1E)
                };
                let style = bold(12.0, c).pos(Pos::new(HPos::Left, VPos::Center));
                cc.draw_series(std::iter::once(
                    EmptyElement::at((end, centres[r])) + Text::new(ratio_label(q), (5, 0), style),
                ))
                .map_err(|e| err(&e))?;
            }
        }
        root.present().map_err(|e| err(&e))?;
    }
    Ok(svg)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A made-up chart: two tessera peers, three others (one with XML's
    /// special characters in its name), missing values in two rows and a row
    /// with no ratio.
    fn made_up() -> Chart {
        let mut c = Chart::new("demo", "made-up products, 1 thread", "GFLOP/s")
            .ratio_note("tessera ÷ the fastest peer");
        c.add_row(
            "f32 1024³ 1 thr",
            &[
                ("tessera", Some(91.5)),
                ("tessera 2thr", Some(170.25)),
                ("gemm", Some(80.0)),
                ("a<b & \"c\"", Some(100.0)),
                ("mkl", Some(120.0)),
            ],
            Some(91.5 / 120.0),
        );
        c.add_row(
            "f64 64³ 1 thr",
            &[("tessera", Some(20.0)), ("gemm", None), ("mkl", Some(10.0))],
            Some(2.0),
        );
        c.add_row(
            "f64 2048³ 2 thr",
            &[("tessera", None), ("gemm", Some(f64::NAN))],
            None,
        );
        c
    }

    /// Every `<text>` element's content.
    fn texts(doc: &roxmltree::Document) -> Vec<String> {
        doc.descendants()
            .filter(|n| n.has_tag_name("text"))
            .map(|n| n.text().unwrap_or("").trim().to_string())
            .collect()
    }

    /// The `<rect>` elements filled with `c`.
    fn rects_of(doc: &roxmltree::Document, c: RGBColor) -> usize {
        let want = format!("#{:02X}{:02X}{:02X}", c.0, c.1, c.2);
        doc.descendants()
            .filter(|n| n.has_tag_name("rect") && n.attribute("fill") == Some(want.as_str()))
            .count()
    }

    #[test]
    fn chart_rows_and_peers() {
        let c = made_up();
        assert_eq!(c.peers.len(), 5);
        assert!(c.rows.iter().all(|(_, v)| v.len() == c.peers.len()));
        // A peer left out, None or NaN: no value.
        assert_eq!(c.value(1, "tessera 2thr"), None);
        assert_eq!(c.value(1, "gemm"), None);
        assert_eq!(c.value(2, "gemm"), None);
        assert_eq!(c.value(0, "mkl"), Some(120.0));
        // tessera's best (2thr) over the fastest other peer (mkl).
        assert_eq!(c.tessera_ratio(0), Some(170.25 / 120.0));
        assert_eq!(c.tessera_ratio(2), None);
        let t = c.clone().lower_is_better();
        assert_eq!(t.tessera_ratio(1), Some(10.0 / 20.0));
        assert_eq!(Chart::new("math:all", "", "x").file_name(), "math-all.svg");
        assert_eq!(Chart::new("gemm", "", "x").file_name(), "gemm.svg");
    }

    #[test]
    fn svg_is_well_formed_with_title_legend_and_ratios() {
        let c = made_up();
        let host = "Some CPU @ 3 GHz; tiers scalar, avx2";
        let svg = render(&c, host).expect("renders");
        let doc = roxmltree::Document::parse(&svg).expect("well-formed XML");
        assert!(doc.root_element().has_tag_name("svg"));
        let t = texts(&doc);
        assert!(t.contains(&title(&c)), "title missing: {t:?}");
        assert!(t.iter().any(|s| s.contains(host)), "host missing: {t:?}");
        assert!(t.iter().any(|s| s.contains(&c.unit)), "unit missing");
        for p in &c.peers {
            assert!(t.contains(p), "legend lacks {p:?}: {t:?}");
        }
        for (l, _) in &c.rows {
            assert!(t.contains(l), "row label {l:?} missing");
        }
        // The ratio labels: one per row that has a ratio, each the row's
        // ratio to two decimals.
        let mut got: Vec<f64> = t
            .iter()
            .filter_map(|s| s.strip_prefix('×'))
            .map(|s| s.parse().expect("a number after ×"))
            .collect();
        let mut want: Vec<f64> = c.ratio.iter().flatten().copied().collect();
        got.sort_by(f64::total_cmp);
        want.sort_by(f64::total_cmp);
        assert_eq!(got.len(), want.len(), "{got:?} vs {want:?}");
        for (g, w) in got.iter().zip(&want) {
            assert!((g - w).abs() <= 0.005, "{got:?} vs {want:?}");
        }
    }

    #[test]
    fn missing_values_are_no_bar() {
        let c = made_up();
        let doc_text = render(&c, "host").expect("renders");
        let doc = roxmltree::Document::parse(&doc_text).expect("well-formed XML");
        let colours = colours(&c);
        // Every colour distinct, tessera's headline first.
        for (i, a) in colours.iter().enumerate() {
            assert!(colours[i + 1..].iter().all(|b| b != a));
        }
        assert_eq!(colours[0], TESSERA[0]);
        for (p, peer) in c.peers.iter().enumerate() {
            let bars = (0..c.rows.len())
                .filter(|&r| c.value(r, peer).is_some())
                .count();
            // One rectangle per value, plus the legend's swatch.
            assert_eq!(rects_of(&doc, colours[p]), bars + 1, "peer {peer}");
        }
    }

    #[test]
    fn a_chart_of_no_values_still_renders() {
        let mut c = Chart::new("empty", "", "GB/s");
        c.add_row("nothing", &[("tessera", None)], None);
        let svg = render(&c, "host").expect("renders");
        assert!(roxmltree::Document::parse(&svg).is_ok());
    }

    #[test]
    fn written_through_a_temporary_file() {
        let dir = std::env::temp_dir().join(format!("tessera-chart-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let sub = dir.join("a/b");
        prepare_dir(&sub).expect("created");
        let c = made_up();
        let path = write(&sub, &c, "host").expect("written");
        assert_eq!(path, sub.join("demo.svg"));
        let svg = std::fs::read_to_string(&path).expect("read back");
        assert!(roxmltree::Document::parse(&svg).is_ok());
        let names: Vec<_> = std::fs::read_dir(&sub)
            .expect("listed")
            .map(|e| e.expect("entry").file_name())
            .collect();
        assert_eq!(names, [std::ffi::OsString::from("demo.svg")]);
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn an_unwritable_dir_is_refused_and_nothing_written() {
        let dir = std::env::temp_dir().join(format!("tessera-chart-bad-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("made");
        let file = dir.join("plain-file");
        std::fs::write(&file, b"keep").expect("written");
        // A path under a regular file, and the regular file itself.
        for bad in [file.join("charts"), file.clone()] {
            let e = prepare_dir(&bad).expect_err("refused");
            assert!(e.starts_with("--svg ") && !e.contains('\n'), "{e}");
            assert!(e.contains(&bad.display().to_string()), "{e}");
        }
        assert_eq!(std::fs::read(&file).expect("read"), b"keep");
        let names: Vec<_> = std::fs::read_dir(&dir)
            .expect("listed")
            .map(|e| e.expect("entry").file_name())
            .collect();
        assert_eq!(names, [std::ffi::OsString::from("plain-file")]);
        assert!(write(&file.join("charts"), &made_up(), "host").is_err());
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn harness_results_become_one_chart_per_family() {
        use crate::harness::CaseResult;
        let case = |name: &str, s: Option<f64>, error: Option<&str>| CaseResult {
            name: name.into(),
            bytes: 1_000_000_000,
            inner: 1,
            samples: s.into_iter().collect(),
            error: error.map(String::from),
        };
        let group = |name: &str, cases: Vec<CaseResult>| GroupResult {
            name: name.into(),
            note: String::new(),
            baseline: "plain loop".into(),
            reference: Some("memcpy".into()),
            cases,
            ratios: Vec::new(),
        };
        let results = vec![
            group(
                "elementwise-f32/add",
                vec![
                    case("tessera scalar", Some(1.0), None),
                    case("tessera avx2", Some(0.25), None),
                    case("plain loop", Some(0.5), None),
                    case("memcpy", Some(0.125), None),
                ],
            ),
            group(
                "elementwise-f32/mul",
                vec![
                    case("tessera scalar", Some(1.0), None),
                    case("tessera avx2", None, Some("differs")),
                    case("plain loop", Some(0.5), None),
                ],
            ),
            group("bandwidth", vec![case("memcpy", Some(0.1), None)]),
        ];
        let charts = harness_charts(&results, Stat::Best, "1 MiB");
        assert_eq!(charts.len(), 2);
        let e = &charts[0];
        assert_eq!(e.name, "elementwise-f32");
        assert_eq!(e.rows[0].0, "add");
        assert_eq!(e.rows[1].0, "mul");
        // The best tier leads the legend.
        assert_eq!(e.peers[0], "tessera avx2");
        assert_eq!(e.value(0, "tessera avx2"), Some(4.0));
        // A failed peer: no bar; memcpy is not in the mul group: no bar.
        assert_eq!(e.value(1, "tessera avx2"), None);
        assert_eq!(e.value(1, "memcpy"), None);
        // tessera avx2 (4 GB/s) over the plain loop (2), not memcpy (8).
        assert_eq!(e.ratio[0], Some(2.0));
        assert_eq!(e.ratio[1], Some(0.5));
        assert_eq!(charts[1].name, "bandwidth");
        assert_eq!(charts[1].ratio, [None]);
    }
}
