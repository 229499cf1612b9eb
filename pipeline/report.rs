//! The funnel as a self-contained HTML page (`status --report FILE.html`): for the
//! whole store and for each repository, an SVG chart drawn here (one stacked bar per
//! stage: passed, then each drop reason) with the numbers beside it, and a table.
//! No scripts, no external assets: the file can be mailed or attached to a release.

use std::collections::BTreeMap;
use std::fmt::Write;

use crate::model::drop_reason::most_frequent_first;
use crate::store::{FunnelReport, StageFunnel};

const PASSED_COLOR: &str = "#2e9e5b";
/// Colors for drop reasons, assigned in order of total frequency.
const REASON_COLORS: [&str; 10] =
    ["#d9534f", "#f0ad4e", "#8e6cc1", "#5bc0de", "#c7793a", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf", "#9c9ede"];

const LABEL_WIDTH: f64 = 90.0;
const BAR_WIDTH: f64 = 520.0;
const NUMBERS_WIDTH: f64 = 260.0;
const ROW_HEIGHT: f64 = 34.0;
const BAR_HEIGHT: f64 = 22.0;

/// Renders the page. `generated_at` is printed in the header.
pub fn render_html(report: &FunnelReport, generated_at: &str) -> String {
    let colors = reason_colors(report);
    let mut html = String::new();
    let _ = write!(
        html,
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>swe-harvest funnel</title>\n<style>\n\
         body {{ font-family: system-ui, sans-serif; margin: 2rem; color: #222; max-width: 960px; }}\n\
         h1 {{ font-size: 1.5rem; margin-bottom: 0.2rem; }} h2 {{ font-size: 1.15rem; margin-top: 2rem; }}\n\
         .meta {{ color: #666; margin-top: 0; }}\n\
         table {{ border-collapse: collapse; margin-top: 0.5rem; font-size: 0.9rem; }}\n\
         th, td {{ border-bottom: 1px solid #ddd; padding: 0.25rem 0.6rem; text-align: right; }}\n\
         th:first-child, th:last-child, td:first-child, td.reasons {{ text-align: left; }}\n\
         .legend span {{ display: inline-block; margin-right: 1rem; font-size: 0.85rem; }}\n\
         .swatch {{ display: inline-block; width: 0.8rem; height: 0.8rem; margin-right: 0.3rem; vertical-align: -1px; }}\n\
         </style>\n</head>\n<body>\n<h1>swe-harvest funnel</h1>\n<p class=\"meta\">{} repositories &middot; generated {}</p>\n",
        report.repositories.len(),
        escape(generated_at)
    );
    if report.repositories.is_empty() {
        html.push_str("<p>The store holds no stage results yet.</p>\n</body>\n</html>\n");
        return html;
    }
    html.push_str(&legend(&colors));
    html.push_str("<h2>All repositories</h2>\n");
    html.push_str(&chart(&report.total, &colors, "All repositories"));
    html.push_str(&table(&report.total));
    for repository in &report.repositories {
        let _ = writeln!(html, "<h2 id=\"{0}\">{0}</h2>", escape(&repository.repo));
        html.push_str(&chart(&repository.stages, &colors, &repository.repo));
        html.push_str(&table(&repository.stages));
    }
    html.push_str("</body>\n</html>\n");
    html
}

fn reason_colors(report: &FunnelReport) -> Vec<(String, &'static str)> {
    let mut totals: BTreeMap<&str, u64> = BTreeMap::new();
    for stage in &report.total {
        for (reason, count) in &stage.reasons {
            *totals.entry(reason).or_default() += count;
        }
    }
    most_frequent_first(totals)
        .into_iter()
        .enumerate()
        .map(|(index, (reason, _))| (reason.to_string(), REASON_COLORS[index % REASON_COLORS.len()]))
        .collect()
}

fn color_of<'a>(colors: &'a [(String, &'static str)], reason: &str) -> &'a str {
    colors.iter().find(|(name, _)| name == reason).map_or("#999", |(_, color)| color)
}

fn legend(colors: &[(String, &'static str)]) -> String {
    let mut html = String::from("<p class=\"legend\">");
    let _ = write!(html, "<span><i class=\"swatch\" style=\"background:{PASSED_COLOR}\"></i>passed</span>");
    for (reason, color) in colors {
        let _ = write!(
            html,
            "<span><i class=\"swatch\" style=\"background:{color}\"></i>dropped: {}</span>",
            escape(reason)
        );
    }
    html.push_str("</p>\n");
    html
}

/// One stacked bar per stage, widths relative to the largest `entered`.
fn chart(stages: &[StageFunnel], colors: &[(String, &'static str)], title: &str) -> String {
    let largest = stages.iter().map(|stage| stage.entered).max().unwrap_or(0).max(1) as f64;
    let width = LABEL_WIDTH + BAR_WIDTH + NUMBERS_WIDTH;
    let height = ROW_HEIGHT * stages.len() as f64 + 8.0;
    let mut svg = String::new();
    let _ = writeln!(
        svg,
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{width}\" height=\"{height}\" viewBox=\"0 0 {width} {height}\" \
         role=\"img\" aria-label=\"funnel of {}\" font-family=\"system-ui, sans-serif\" font-size=\"13\">",
        escape(title)
    );
    for (index, stage) in stages.iter().enumerate() {
        let y = 4.0 + ROW_HEIGHT * index as f64;
        let text_y = y + BAR_HEIGHT / 2.0 + 4.5;
        let _ = writeln!(svg, "<text x=\"0\" y=\"{text_y}\">{}</text>", stage.stage);
        let _ = writeln!(
            svg,
            "<rect x=\"{LABEL_WIDTH}\" y=\"{y}\" width=\"{BAR_WIDTH}\" height=\"{BAR_HEIGHT}\" fill=\"#f1f1f1\"/>"
        );
        let mut x = LABEL_WIDTH;
        let mut segments: Vec<(String, u64, &str)> = vec![("passed".into(), stage.passed, PASSED_COLOR)];
        for (reason, count) in most_frequent_first(&stage.reasons) {
            segments.push((format!("dropped: {reason}"), *count, color_of(colors, reason)));
        }
        for (label, count, color) in segments {
            if count == 0 {
                continue;
            }
            let segment = BAR_WIDTH * count as f64 / largest;
            let _ = writeln!(
                svg,
                "<rect x=\"{x:.1}\" y=\"{y}\" width=\"{segment:.1}\" height=\"{BAR_HEIGHT}\" fill=\"{color}\">\
                 <title>{} {}: {count}</title></rect>",
                stage.stage,
                escape(&label)
            );
            x += segment;
        }
        let _ = writeln!(
            svg,
            "<text x=\"{}\" y=\"{text_y}\">{} in &#183; {} passed &#183; {} dropped</text>",
            LABEL_WIDTH + BAR_WIDTH + 10.0,
            stage.entered,
            stage.passed,
            stage.dropped
        );
    }
    svg.push_str("</svg>\n");
    svg
}

fn table(stages: &[StageFunnel]) -> String {
    let mut html = String::from(
        "<table>\n<tr><th>stage</th><th>entered</th><th>passed</th><th>dropped</th><th>drop reasons</th></tr>\n",
    );
    for stage in stages {
        let reasons = escape(&stage.reasons_and_flags());
        let _ = writeln!(
            html,
            "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td class=\"reasons\">{}</td></tr>",
            stage.stage, stage.entered, stage.passed, stage.dropped, reasons
        );
    }
    html.push_str("</table>\n");
    html
}

fn escape(text: &str) -> String {
    text.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;").replace('"', "&quot;")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Stage;
    use crate::store::RepositoryFunnel;

    fn stage(stage: Stage, passed: u64, reasons: &[(&str, u64)]) -> StageFunnel {
        let dropped = reasons.iter().map(|(_, count)| count).sum::<u64>();
        StageFunnel {
            stage,
            entered: passed + dropped,
            passed,
            dropped,
            reasons: reasons.iter().map(|(reason, count)| (reason.to_string(), *count)).collect(),
            flags: Default::default(),
        }
    }

    #[test]
    fn bars_are_proportional_and_numbers_stand_beside_them() {
        let stages =
            vec![stage(Stage::Crawl, 80, &[("not_merged", 20)]), stage(Stage::Extract, 20, &[("no_test_change", 60)])];
        let report = FunnelReport {
            repositories: vec![RepositoryFunnel { repo: "a/<b>".into(), stages: stages.clone() }],
            total: stages,
        };
        let html = render_html(&report, "2026-01-01T00:00:00Z");
        // crawl: 80 of 100 entered -> 416 px of 520; extract's 60 drops -> 312 px.
        assert!(html.contains("width=\"416.0\" height=\"22\" fill=\"#2e9e5b\""), "{html}");
        assert!(html.contains("width=\"312.0\" height=\"22\" fill=\"#d9534f\""), "{html}");
        assert!(html.contains("100 in &#183; 80 passed &#183; 20 dropped"));
        assert!(html.contains("no_test_change 60"));
        assert!(html.contains("a/&lt;b&gt;") && !html.contains("a/<b>"), "names are escaped");
    }

    #[test]
    fn an_empty_store_says_so() {
        let html = render_html(&FunnelReport::default(), "now");
        assert!(html.contains("no stage results yet"));
    }
}
