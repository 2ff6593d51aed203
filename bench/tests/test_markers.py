"""The generated section is rewritten between its markers and nowhere else."""

from pathlib import Path

import pytest

from bench import markers
from bench.errors import BenchError
from bench.markers import BEGIN, END

PAGE = f"# Performance\n\nIntro, by hand.\n\n{BEGIN}\nold figures\n{END}\n\n## History\n"


def test_replaces_only_between_the_markers():
    new = markers.replace(PAGE, "new figures\n| a | b |\n")
    assert new == (
        f"# Performance\n\nIntro, by hand.\n\n{BEGIN}\nnew figures\n| a | b |\n{END}\n"
        "\n## History\n"
    )


def test_idempotent():
    once = markers.replace(PAGE, "figures")
    assert markers.replace(once, "figures") == once
    assert markers.replace(markers.replace(once, "other"), "figures") == once


@pytest.mark.parametrize(
    "page",
    [
        "no markers at all\n",
        f"{BEGIN}\nonly the beginning\n",
        f"only the end\n{END}\n",
        f"{BEGIN}\n{END}\n{BEGIN}\n{END}\n",
        f"{END}\nreversed\n{BEGIN}\n",
    ],
)
def test_refuses_without_exactly_one_pair_in_order(page):
    with pytest.raises(BenchError) as e:
        markers.replace(page, "figures")
    assert "\n" not in str(e.value)


def test_write_names_the_file_and_leaves_it_alone_when_refused(tmp_path: Path):
    page = tmp_path / "performance.md"
    page.write_text("no markers\n", encoding="utf-8")
    with pytest.raises(BenchError, match=r"performance\.md: expected one"):
        markers.write(page, "figures")
    with pytest.raises(BenchError, match=r"performance\.md: expected one"):
        markers.check(page)
    assert page.read_text(encoding="utf-8") == "no markers\n"


def test_write_reports_whether_it_changed_the_file(tmp_path: Path):
    page = tmp_path / "performance.md"
    page.write_text(PAGE, encoding="utf-8")
    assert markers.write(page, "figures") is True
    assert markers.write(page, "figures") is False


def test_the_performance_page_has_its_pair_of_markers():
    page = Path(__file__).resolve().parents[2] / "docs" / "performance.md"
    text = page.read_text(encoding="utf-8")
    assert markers.replace(text, "x").count(BEGIN) == 1
