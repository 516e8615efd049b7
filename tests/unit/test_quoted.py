"""tests/helpers/quoted.py: a write-up quotes a row when one line carries its figures in order."""

from tests.helpers.quoted import figures, quotes, unquoted

ROW = "| 0.5.23 | bf16 | 10000 | 35.0% | GO | NO-GO | 1 x 16,384: 0.983 |"


def test_figures_and_verdicts_are_read_in_order():
    assert figures(ROW) == ["0.5.23", "16", "10000", "35.0%", "GO", "NO-GO", "1", "16,384", "0.983"]


def test_wording_and_layout_around_the_facts_are_free():
    reworded = "- **SGLang 0.5.23**, KV bf16, factor 10000 (35.0% skipped): GO, then NO-GO; "
    reworded += "1 x 16,384 at 0.983."
    assert quotes(reworded, ROW)


def test_a_changed_figure_a_changed_verdict_or_a_split_row_is_not_a_quote():
    assert not quotes(ROW.replace("0.983", "0.984"), ROW)
    assert not quotes(ROW.replace("NO-GO", "INCONCLUSIVE"), ROW)
    assert not quotes(ROW.replace("| GO |", "|\n| GO |"), ROW)  # the facts on two lines
    assert unquoted("nothing here", ["| kv | a | b |", "|---|---|", ROW]) == [ROW]  # header skipped
