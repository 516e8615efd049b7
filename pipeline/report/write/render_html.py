"""``report.html``: one self-contained page (tables, and plots embedded as base64 PNG)."""

from __future__ import annotations

import base64
import html  # kept over a template engine: one page, every value through html.escape

from pipeline.report.assemble.build import Report
from pipeline.report.write.baselines_table import baselines_section
from pipeline.report.write.bin_plots import bin_plot
from pipeline.report.write.bin_tables import all_sections as bin_sections
from pipeline.report.write.cost_tables import cost_sections
from pipeline.report.write.frontier_tables import frontier_sections
from pipeline.report.write.kv_tables import kv_sections
from pipeline.report.write.parity_questions import parity_questions_section
from pipeline.report.write.parity_tables import parity_sections
from pipeline.report.write.plots import (
    COLOURS,
    GREY,
    metric_plot,
    paired_plot,
    parity_position_plot,
    verdict_grid,
)
from pipeline.report.write.questions_html import banner_items, questions_section
from pipeline.report.write.render_md import METHOD, headline
from pipeline.report.write.section import Section
from pipeline.report.write.serving_tables import pareto_plot, serving_sections
from pipeline.report.write.speed_tables import speed_sections
from pipeline.report.write.tables import sections

STYLE = """
body { font-family: system-ui, sans-serif; margin: 1.5em; color: #212121; }
table { border-collapse: collapse; margin-bottom: 1.5em; font-size: 0.85em; }
th, td { border: 1px solid #ccc; padding: 3px 6px; text-align: left; vertical-align: top; }
th { background: #eee; }
.verdict { font-weight: bold; color: white; }
.banner { padding: 0.6em; font-weight: bold; color: white; }
.sim { background: #6a1b9a; padding: 0.5em; color: white; }
.banner ul { font-weight: normal; margin: 0.3em 0 0 0; }
img { max-width: 100%; border: 1px solid #ddd; margin: 0.5em 0 1.5em 0; }
.banner a, td.verdict a { color: white; }
pre { white-space: pre-wrap; max-width: 60em; background: #f6f6f6; padding: 0.3em; }
"""


WARNING = "#e65100"  # the warnings banner (orange: not a verdict colour)


def _img(png: bytes | None, alt: str) -> str:
    if png is None:
        return f"<p>No data for: {html.escape(alt)}.</p>"
    data = base64.b64encode(png).decode("ascii")
    return f'<img src="data:image/png;base64,{data}" alt="{html.escape(alt)}">'


def _cell(text: str, link: str = "", title: str = "") -> str:
    colour = COLOURS.get(text)
    shown = html.escape(text)
    if link:  # a verdict that links to the questions that changed (or a sequence to its question)
        shown = f'<a href="#{link}" title="{html.escape(title)}">{shown}</a>'
    if colour or text in ("MISSING", "FAILED", "ERROR", "NO BASELINE", "PLANNED"):
        return f'<td class="verdict" style="background:{colour or GREY}">{shown}</td>'
    return f"<td>{shown}</td>"


def _row(section: Section, index: int, row: list[str]) -> str:
    link, title = section.links.get(index, ""), section.link_title
    column = (
        section.headers.index(section.link_column) if section.link_column in section.headers else -1
    )
    cells = (_cell(c, link if i == column else "", title) for i, c in enumerate(row))
    return "<tr>" + "".join(cells) + "</tr>"


def _table(section: Section) -> str:
    head = "".join(f"<th>{html.escape(h)}</th>" for h in section.headers)
    body = "".join(_row(section, i, row) for i, row in enumerate(section.rows))
    intro = f"<p>{html.escape(section.intro)}</p>" if section.intro else ""
    return f"<h2>{html.escape(section.title)}</h2>{intro}<table><tr>{head}</tr>{body}</table>"


def _not_judged(report: Report) -> str:
    """The banner's list of what the report did not judge (empty when everything was)."""
    found = report.not_judged
    if not found:
        return ""
    items = "".join(f"<li>{html.escape(line)}</li>" for line in found)
    return f"<br>Not judged:<ul>{items}</ul>"


def render_html(report: Report) -> str:
    """The whole HTML page."""
    lines = headline(report)
    colour = COLOURS.get(report.verdict, GREY)
    banner = f"{html.escape(lines[0])}{banner_items(report)}{_not_judged(report)}"
    parts = [f'<div class="banner" id="verdict" style="background:{colour}">{banner}</div>']
    if report.warnings:  # under the verdict, before anything a reader might stop at
        items = "".join(f"<li>{html.escape(w)}</li>" for w in report.warnings)
        parts.append(
            f'<div class="banner" style="background:{WARNING}">{len(report.warnings)} '
            f"warning(s): read them before the verdict<ul>{items}</ul></div>"
        )
    rest = lines[1:]
    if report.simulated:
        parts.append(f'<p class="sim">{html.escape(rest[0])}</p>')
        rest = rest[1:]
    parts += [f"<p>{html.escape(line)}</p>" for line in rest]
    parts.append(f"<p>{html.escape(METHOD)}</p>")
    parts += [
        "<h2>Plots</h2>",
        _img(verdict_grid(report), "verdict grid"),
        _img(metric_plot(report, "accuracy"), "accuracy per variant"),
        _img(paired_plot(report), "paired accuracy change against the margin"),
        _img(metric_plot(report, "accept"), "accept length per variant"),
        _img(bin_plot(report), "accuracy and accept length change by context length"),
        _img(pareto_plot(report), "serving: throughput against per-user speed"),
    ]
    parity = parity_sections(report)
    if parity:  # the plot beside its tables
        parts += [_table(parity[0]), _img(parity_position_plot(report), "parity by position")]
        parts += [_table(s) for s in parity[1:]]
    tables = [
        *sections(report), *bin_sections(report), *speed_sections(report), *cost_sections(report),
        *frontier_sections(report), *kv_sections(report), *serving_sections(report),
        *baselines_section(report),
    ]  # fmt: skip
    parts += [_table(s) for s in tables]
    parts += [questions_section(report), parity_questions_section(report)]
    if report.ignored:
        items = "".join(f"<li>{html.escape(w)}</li>" for w in report.ignored)
        parts.append(f"<h2>Ignored folders</h2><ul>{items}</ul>")
    title = "mtp-eval sign-off report" + (" (SIMULATED)" if report.simulated else "")
    return (
        f'<!DOCTYPE html><html><head><meta charset="utf-8"><title>{title}</title>'
        f"<style>{STYLE}</style></head><body><h1>{title}</h1>{''.join(parts)}</body></html>\n"
    )
