"""One changed question's rows of the HTML view, from literal answers (pure)."""

from __future__ import annotations

from html.parser import HTMLParser

import pytest

from pipeline.report.write.changed_questions import Answer, ChangedQuestion, Question
from pipeline.report.write.question_cells import (
    FOLDED_OVER,
    answer_cell,
    gold_cell,
    question_cell,
    question_rows,
    shorten,
)

MARKUP = '<script>alert(1)</script></td></tr></table><img src=x onerror="x()"><!--'
TAGS = {"tr", "td", "div", "code", "ul", "ol", "li", "details", "summary", "pre", "b", "small",
        "br", "p"}  # fmt: skip


class Page(HTMLParser):
    """The tags and the text of a fragment, as a browser parses them."""

    def __init__(self, fragment: str) -> None:
        super().__init__()
        self.tags: list[str] = []
        self.text: list[str] = []
        self.comments: list[str] = []
        self.feed(fragment)
        self.close()

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append(tag)

    def handle_data(self, data: str) -> None:
        self.text.append(data)

    def handle_comment(self, data: str) -> None:
        self.comments.append(data)


def said(repeat: int, extracted: str | None, correct: bool, **kw: object) -> Answer:
    return Answer(repeat=repeat, extracted=extracted, correct=correct,
                  response=f"reply {repeat}", **kw)  # type: ignore[arg-type]  # fmt: skip


SHUFFLED = Question("Which?", ("right", "w1", "w2", "w3"), gold="right", permuted=True)


def changed(question: Question | None = SHUFFLED, **kw: object) -> ChangedQuestion:
    base = (said(0, "A", True, gold="A", permutation=(0, 1, 2, 3)),
            said(1, "C", True, gold="C", permutation=(1, 2, 0, 3)))  # fmt: skip
    cand = (said(0, "B", False, gold="A", permutation=(0, 1, 2, 3)),
            said(1, "C", True, gold="C", permutation=(1, 2, 0, 3)))  # fmt: skip
    return ChangedQuestion("q1", kw.get("gold", "right"), base, cand, question)  # type: ignore[arg-type]


def test_every_text_from_the_samples_stays_text() -> None:
    question = Question(MARKUP, (MARKUP, "w1"), gold=MARKUP, permuted=False)
    answers = (Answer(0, MARKUP, False, MARKUP, error_kind=MARKUP, gold=MARKUP,
                      reasoning=MARKUP),)  # fmt: skip
    rows = question_rows(ChangedQuestion(MARKUP, MARKUP, answers, answers, question))
    page = Page(f"<table>{rows}</table>")
    assert set(page.tags) <= TAGS | {"table"} and page.comments == []
    assert page.tags.count("tr") == 1 and page.tags.count("td") == 8  # nothing broke its cell
    assert sum(MARKUP in t for t in page.text) >= 8  # question, option, gold, answer, replies, id


def test_a_question_reads_one_row_per_repeat_with_both_sides() -> None:
    page = Page(f"<table>{question_rows(changed())}</table>")
    assert page.tags.count("tr") == 2 and page.tags.count("td") == 8 + 3
    text = "|".join(t.strip() for t in page.text if t.strip())
    # The letter each side said, the option it names in that repeat, and the mark.
    assert "A = right|✓" in text and "B = w1|✗" in text
    assert "C = right|✓" in text  # repeat 1 shows option 0 at C
    assert "gold A" in text and "gold C" in text  # shuffled: the right letter per repeat
    assert "right ✓" in text  # the right option marked in the list
    assert "1/2" in text and "2/2" in text and "-50.0 pts" in text


def test_one_letter_for_every_repeat_is_not_repeated() -> None:
    base = (said(0, "B", True, gold="B"), said(1, "B", True, gold="B"))
    cand = (said(0, "A", False, gold="B"), said(1, "B", True, gold="B"))
    fixed = Question("Capital?", ("Lyon", "Paris"), gold="Paris")
    rows = question_rows(ChangedQuestion("q", "B) Paris", base, cand, fixed))
    assert "gold B" not in rows and "B = Paris" in rows and "A = Lyon" in rows
    assert '<ol type="A"><li>Lyon</li><li class="gold">Paris ✓</li></ol>' in rows


def test_a_repeat_one_side_lacks_says_so() -> None:
    q = changed()
    rows = question_rows(ChangedQuestion("q", "right", q.baseline, q.candidate[:1], SHUFFLED))
    assert rows.count("<tr") == 2 and "(not asked)" in rows


@pytest.mark.parametrize(
    ("text", "folded"),
    [
        ("Short?", False),
        ("x" * FOLDED_OVER, False),
        ("x" * (FOLDED_OVER + 1), True),
        ("line\n" * (FOLDED_OVER // 5 + 1), True),
    ],
)
def test_a_long_question_is_folded_behind_its_start(text: str, folded: bool) -> None:
    cell = question_cell(changed(Question(text)))
    assert ("<details>" in cell) is folded
    if folded:
        summary = cell.split("<summary>", 1)[1].split("</summary>", 1)[0]
        assert summary.endswith("…") and len(summary) < 150 and "\n" not in summary
    assert '<div class="qid">id <code>q1</code></div>' in cell


def test_old_samples_show_the_id_only() -> None:
    cell = question_cell(changed(None))
    assert cell == '<div class="qid">id <code>q1</code></div>'
    rows = question_rows(changed(None))
    assert "<b>A</b> ✓" in rows and " = " not in rows  # the letters, no option to name


@pytest.mark.parametrize(
    ("gold", "cell"),
    [
        (None, ""),
        ("B) Paris", "B) Paris"),
        ("a <b> & c", "a &lt;b&gt; &amp; c"),
        ("step\n" * 40 + "#### 4", "<details>"),  # a worked solution: folded
    ],
)
def test_gold_cell(gold: str | None, cell: str) -> None:
    assert gold_cell(gold).startswith(cell)


def test_an_answer_says_why_it_is_not_one() -> None:
    truncated = Answer(0, None, False, None, finish_reason="length")
    assert "no answer</b> ✗ <small>(truncated)</small>" in answer_cell(None, truncated)
    aborted = Answer(0, None, False, None, error_kind="aborted")
    cell = answer_cell(None, aborted)
    assert "(aborted)" in cell and "<pre>(no response)</pre>" in cell
    thought = Answer(0, "4", True, "4", reasoning="think")
    assert "<p>reasoning:</p><pre>think</pre><p>reply:</p><pre>4</pre>" in answer_cell(
        None, thought
    )


@pytest.mark.parametrize(
    ("text", "limit", "shown"),
    [
        ("a  b\nc", 10, "a b c"),
        ("abcdef", 4, "abc…"),
        ("ab cd ef", 6, "ab cd…"),
        ("abc def", 5, "abc…"),
    ],
)
def test_shorten(text: str, limit: int, shown: str) -> None:
    assert shorten(text, limit) == shown
