import pytest

from pipeline.report.judge.check_kinds import KINDS
from pipeline.report.judge.check_numbers import NO_NUMBERS
from pipeline.report.judge.verdicts import (
    ERROR,
    FAIL,
    GO,
    INCONCLUSIVE,
    INFO,
    MISSING,
    NO_GO,
    NO_REFERENCE,
    OK,
    PASS,
    UNSUPPORTED,
    Check,
    exit_code,
    finalize,
    overall,
    worst,
)
from pipeline.stats.power import VarianceComponents
from tests.helpers.check_numbers import accuracy_numbers


def check(verdict, kind="status", p_go=None, p_nogo=None, level=None):
    numbers = accuracy_numbers() if kind == "accuracy_vs_baseline" else NO_NUMBERS
    c = Check("id", "label", "e", KINDS[kind], verdict, numbers=numbers)
    c.p_go, c.p_nogo, c.level = p_go, p_nogo, level
    return c


@pytest.mark.parametrize(
    ("verdicts", "code"),
    [
        ([OK, GO, PASS], 0),
        ([OK, UNSUPPORTED, NO_REFERENCE, INFO], 0),  # nothing to judge is not a failure
        ([GO, INCONCLUSIVE], 2),
        ([GO, MISSING], 2),
        ([PASS, ERROR], 2),
        ([GO, NO_GO, MISSING], 1),  # a NO-GO wins over undecided
        ([FAIL], 1),
        ([], 0),
    ],
)
def test_exit_code(verdicts, code):
    assert exit_code([check(v) for v in verdicts]) == code
    assert overall(code) == {0: "GO", 1: "NO-GO", 2: "UNDECIDED"}[code]


@pytest.mark.parametrize(
    ("verdicts", "expected"),
    [([OK, GO], GO), ([GO, INCONCLUSIVE, MISSING], MISSING), ([PASS, FAIL, MISSING], FAIL),
     ([OK, UNSUPPORTED], UNSUPPORTED), ([], OK)],
)  # fmt: skip
def test_worst(verdicts, expected):
    assert worst(verdicts) == expected


def test_finalize_reads_go_per_cell_and_holm_corrects_no_go_alarms():
    # A release is GO only if every cell is GO (intersection-union), so
    # GO p-values are read per cell at alpha; only NO-GO alarms are Holm-corrected.
    kind = "accuracy_vs_baseline"
    checks = [check(INCONCLUSIVE, kind, p, 0.99, 0.05) for p in (0.01, 0.02, 0.02, 0.04)]
    finalize(checks, 0.05, 0.8, "holm")
    assert [c.verdict for c in checks] == [GO, GO, GO, GO]
    assert [c.adjusted.p_go_adjusted for c in checks] == pytest.approx([0.01, 0.02, 0.02, 0.04])
    # NO-GO p-values 0.01, 0.02, 0.02, 0.04 -> Holm 0.04, 0.06, 0.06, 0.06.
    checks = [check(INCONCLUSIVE, kind, 0.99, p, 0.05) for p in (0.01, 0.02, 0.02, 0.04)]
    finalize(checks, 0.05, 0.8, "holm")
    assert [c.verdict for c in checks] == [NO_GO, INCONCLUSIVE, INCONCLUSIVE, INCONCLUSIVE]
    assert [c.adjusted.p_nogo_adjusted for c in checks] == pytest.approx([0.04, 0.06, 0.06, 0.06])
    finalize(checks, 0.05, 0.8, "none")
    assert [c.verdict for c in checks] == [NO_GO, NO_GO, NO_GO, NO_GO]


def test_reference_checks_say_pass_and_fail():
    checks = [check(INCONCLUSIVE, "accuracy_vs_reference", 0.001, 0.999, 0.05),
              check(INCONCLUSIVE, "accept_vs_reference", 0.999, 0.001, 0.05)]  # fmt: skip
    finalize(checks, 0.05, 0.8, "holm")
    assert [c.verdict for c in checks] == [PASS, FAIL]


def test_a_sequential_look_is_read_at_its_own_level():
    c = check(INCONCLUSIVE, "accuracy_vs_baseline", 0.03, 0.97, level=0.02)
    finalize([c], 0.05, 0.8, "holm")  # 0.03 > 0.02: not decided at this look
    assert c.verdict == INCONCLUSIVE
    assert c.adjusted.p_go_adjusted == pytest.approx(0.075)


def test_inconclusive_checks_get_extra_repeats():
    c = check(INCONCLUSIVE, "accuracy_vs_baseline", 0.2, 0.8, 0.05)
    c.components, c.distance = VarianceComponents(0.1, 0.0, 200), 0.02
    c.numbers = accuracy_numbers(repeats=4)
    finalize([c], 0.05, 0.8, "holm")
    assert c.adjusted.extra_repeats == 4  # 8 needed (see test_stats_power), 4 done
    c.components = VarianceComponents(0.1, 0.05, 200)
    finalize([c], 0.05, 0.8, "holm")
    assert c.adjusted.extra_repeats is None
