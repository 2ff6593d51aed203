"""The HTML document builder: escaping, tables, embedded figures, atomic write."""

import base64
import re

import polars as pl
from matplotlib.figure import Figure

from aqmlab.report.html import HtmlDocument, format_cell


def test_cells():
    assert format_cell(None) == "–"
    assert format_cell(float("nan")) == "–"
    assert format_cell(1.23456) == "1.235"
    assert format_cell(2.5e-7) == "2.5e-07"
    assert format_cell(12) == "12"
    assert format_cell("a<b") == "a<b"  # escaped by the table, not here


def test_document(tmp_path):
    doc = HtmlDocument("T <1>", figure_dir=tmp_path / "figs")
    doc.heading("Part & whole")
    doc.paragraph("x < y")
    doc.table(pl.DataFrame({"scheme": ["DT", "RED"], "median_s": [0.25, None]}), caption="c")
    doc.table([{"a": 1, "b": "z"}, {"a": 2, "c": 3.0}])
    fig = Figure()
    fig.add_subplot().plot([0, 1], [0, 1])
    assert doc.figure(fig, "cdf 90%") == "cdf_90"
    assert doc.figure(fig, "cdf 90%") == "cdf_90_2"
    doc.code("[queue]\nkind = 'red'", summary="scenario")
    out = doc.write(tmp_path / "r" / "report.html")
    text = out.read_text()
    assert "T &lt;1&gt;" in text and "x &lt; y" in text and "Part &amp; whole" in text
    assert '<th class="text">scheme</th>' in text and ">–<" in text
    assert '<th class="num">c</th>' in text  # columns from every row
    imgs = re.findall(r'src="data:image/png;base64,([^"]+)"', text)
    assert len(imgs) == 2 and base64.b64decode(imgs[0])[:8] == b"\x89PNG\r\n\x1a\n"
    assert "http" not in text  # nothing fetched from anywhere
    assert sorted(p.name for p in (tmp_path / "figs").iterdir()) == [
        "cdf_90.png",
        "cdf_90.svg",
        "cdf_90_2.png",
        "cdf_90_2.svg",
    ]
    assert not list((tmp_path / "r").glob(".*tmp"))


def test_alignment_can_be_chosen_per_column():
    doc = HtmlDocument("t")
    doc.table([{"scheme": "RED", "median (s)": "0.46 ± 0.03"}], align={"median (s)": "num"})
    text = doc.render()
    assert '<th class="text">scheme</th><th class="num">median (s)</th>' in text
    assert '<td class="text">RED</td><td class="num">0.46 ± 0.03</td>' in text


def test_the_same_figure_gives_the_same_files(tmp_path):
    fig = Figure()
    fig.add_subplot().plot([0, 1, 2], [0, 1, 4], label="x")
    fig.axes[0].legend()
    for d in ("a", "b"):
        HtmlDocument("t", figure_dir=tmp_path / d).figure(fig, "curve")
    for name in ("curve.png", "curve.svg"):
        assert (tmp_path / "a" / name).read_bytes() == (tmp_path / "b" / name).read_bytes()
    assert b"<dc:date>" not in (tmp_path / "a" / "curve.svg").read_bytes()


def test_the_page_is_rendered_from_the_package_templates_escaping_every_text():
    from aqmlab.report import html as htmldoc

    assert {"document.html.j2", "report.css"} <= set(htmldoc.TEMPLATES.list_templates())
    doc = HtmlDocument('T"><script>x</script>')
    doc.heading("<h3>")
    doc.bullets(["<li>one</li>", "a & b"])
    doc.code("</pre><script>", summary="<summary>")
    doc.table([{"<th>": "<td>", "n": 1.5}], caption="</caption>")
    fig = Figure()
    fig.add_subplot().plot([0, 1], [0, 1])
    doc.figure(fig, "f", caption='"quoted" <b>bold</b>')
    text = doc.render()
    assert "<script>" not in text and "<b>" not in text and "<h3>" not in text
    assert "<title>T&#34;&gt;&lt;script&gt;x&lt;/script&gt;</title>" in text
    assert "<ul><li>&lt;li&gt;one&lt;/li&gt;</li><li>a &amp; b</li></ul>" in text
    assert "<details><summary>&lt;summary&gt;</summary><pre>&lt;/pre&gt;" in text
    assert '<th class="text">&lt;th&gt;</th><th class="num">n</th>' in text
    assert 'alt="&#34;quoted&#34; &lt;b&gt;bold&lt;/b&gt;"' in text
    assert "<figcaption>&#34;quoted&#34; &lt;b&gt;bold&lt;/b&gt;</figcaption>" in text
    # The style sheet is inlined: the page stays one self-contained file.
    assert "border-collapse: collapse" in text and "<link" not in text


def test_jinja2_is_a_declared_dependency():
    import tomllib
    from pathlib import Path

    meta = tomllib.loads((Path(__file__).parents[1] / "pyproject.toml").read_text())
    assert "jinja2>=3.1" in meta["project"]["dependencies"]
