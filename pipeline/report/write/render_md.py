"""``report.md``: the verdict, the method in two paragraphs, and the tables."""

from __future__ import annotations

from pipeline.report.assemble.build import Report
from pipeline.report.assemble.gate import NOTHING_JUDGED, judged
from pipeline.report.write.baselines_table import baselines_line, baselines_section
from pipeline.report.write.bin_tables import all_sections as bin_sections
from pipeline.report.write.cost_tables import cost_sections
from pipeline.report.write.frontier_tables import frontier_sections
from pipeline.report.write.kv_tables import kv_sections
from pipeline.report.write.parity_tables import parity_sections
from pipeline.report.write.section import Section
from pipeline.report.write.serving_tables import serving_sections
from pipeline.report.write.speed_tables import speed_sections
from pipeline.report.write.tables import sections

EXIT_MEANING = {
    0: "every check is GO / PASS",
    1: "at least one NO-GO / FAIL",
    2: "something is undecided, failed or missing",
}


def headline(report: Report) -> list[str]:
    """Verdict, simulated warning, inputs, policy, what was not judged (shared with the HTML)."""
    tol = report.tolerance
    code = report.exit_code
    meaning = EXIT_MEANING[code]
    if code == 2 and not judged(report.checks):
        meaning = f"{NOTHING_JUDGED}: no check compared a cell with a baseline, reference or band"
    lines = [f"Verdict: {report.verdict} (exit code {code}: {meaning})"]
    if report.simulated:
        lines.append(
            "SIMULATED: results come from the simulated SGLang server; they exercise the "
            "pipeline and measure no GPU."
        )
    lines += [
        f"Inputs: {', '.join(report.inputs)}; generated {report.generated_at}.",
        f"Policy: {tol.path} (baseline {tol.baseline}, one-sided alpha {tol.alpha}, "
        f"multiplicity {tol.multiplicity}, reference variance {tol.reference_variance}).",
    ]
    if report.not_judged:
        lines.append(f"Not judged: {'; '.join(report.not_judged)}.")
    if report.baselines:
        lines.append(baselines_line(report))
    if report.warnings:
        lines.append(f"Warnings: {len(report.warnings)}, listed under Warnings; read them first.")
    if report.ignored:
        lines.append(
            f"Ignored: {len(report.ignored)} folder(s) that are not jobs of their sweep's "
            "multirun.yaml (an earlier sweep's cells); not judged, listed under Ignored folders."
        )
    return lines


METHOD = (
    "Method. Against the baseline variant each candidate is paired with it on answered requests "
    "only (an errored request is no answer, on either side; a truncated one is a wrong answer; "
    "each side's error and truncation rates are shown beside the verdict), by (question, repeat) "
    "when the repeat indices line up, else by question (and the check says so): the "
    "per-question mean difference, its spread across questions (the standard error clustered by "
    "question) and Student t bounds. GO when the one-sided upper bound of the drop is within the "
    "margin, NO-GO when the lower bound is beyond it, else INCONCLUSIVE with the reason and the "
    "repeats that would likely decide it. Baseline questions without an answered pair are taken "
    "at their worst (GO) and best (NO-GO), so missing answers never make a verdict easier; fewer "
    "than two paired questions or a non-finite standard error decide nothing. The release is GO "
    "only if every candidate is GO (an intersection-union test: each GO is read at alpha, no "
    "correction needed); NO-GO alarms are Holm-corrected across the cells of this report, per "
    "check. A candidate the sequential rule stopped is read with the evidence its looks used: "
    "under the default anytime design, the paired check at the looks whose repeats double, "
    "each read at its share of alpha (NO-GO's mostly at the plan's last look, broken prompts' "
    "once at 8 repeats; cells written before, at every look; shares summing to at most 1 over "
    "every look: valid wherever the run stopped or if it is extended; the question, not the "
    "repeat, is the unit: greedy copies count once); a cell stopped under the older "
    "group-sequential design, through its stagewise p-values (<= alpha "
    "exactly when its look stopped it). A reference check it had too few repeats "
    "to decide is shown as INFO, in words. Broken prompts: questions the baseline gets right "
    "in most repeats and the candidate in none, counted against the mirror pattern in an "
    "exact sign test over questions (each question once, so copied repeats are not evidence); "
    "a break is a FAIL, naming the questions. The two NO-GO checks share a cell's alpha: a "
    "fifth to broken prompts, "
    "the rest to the mean test (Bonferroni; cells written before, as they ran). Accept length "
    "is the token-weighted ratio sum(completion tokens) / "
    "sum(verify steps), compared on the log scale with a delta-method SE clustered by question. "
    "Against a reference the run's repeat-to-repeat uncertainty is combined with the "
    "reference's own standard error; PASS / "
    "FAIL / INCONCLUSIVE follow the same rule. Validated by benchmarks/signoff_simulation.py."
)


def _escape(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def table(section: Section) -> list[str]:
    """A Markdown pipe table (with its title and intro)."""
    lines = [f"## {section.title}", ""]
    if section.intro:
        lines += [section.intro, ""]
    lines.append("| " + " | ".join(section.headers) + " |")
    lines.append("|" + "---|" * len(section.headers))
    lines += ["| " + " | ".join(_escape(c) for c in row) + " |" for row in section.rows]
    return [*lines, ""]


def render_md(report: Report) -> str:
    """The whole Markdown report."""
    title = "# mtp-eval sign-off report" + (" (SIMULATED)" if report.simulated else "")
    lines = [title, ""]
    for i, line in enumerate(headline(report)):
        lines += [
            f"**{line}**"
            if i == 0 or line.startswith(("SIMULATED", "Warnings:", "Not judged:"))
            else line,
            "",
        ]
    lines += [METHOD, ""]
    speed = [*speed_sections(report), *cost_sections(report), *frontier_sections(report),
             *kv_sections(report), *serving_sections(report)]  # fmt: skip
    parity = parity_sections(report)
    sections_all = [*sections(report), *bin_sections(report), *parity, *speed]
    for section in [*sections_all, *baselines_section(report)]:
        lines += table(section)
    if report.ignored:
        lines += ["## Ignored folders", "", *(f"- {w}" for w in report.ignored), ""]
    if report.warnings:
        lines += ["## Warnings", "", *(f"- {w}" for w in report.warnings), ""]
    return "\n".join(lines)
