"""The benchmark's printed lines are read into the right numbers, new lines included."""

from bench.output import Figure, parse

# A real run's output (AQMLAB_BENCH_SECONDS=2 AQMLAB_BENCH_DIGEST=1), with a line a later
# binary may add and one the benchmark prints when /proc is missing.
PRINTED = """\
scenario: bench-100-flows-100mbps, 2 s
wall time                 0.003 s
bottleneck packets        13100
bottleneck packets/wall-s 4.181 M
events/wall-s             13.196 M
simulated s/wall-s        638.35
utilization (data dir.)   0.4634
loss rate (data dir.)     0.10320
peak packets in flight    1835
connections opened        100
exchanges recorded        0
peak resident memory      5.0 MiB
memory per open connection 1,234.5 B
records digest            53bf89cbd4d3b862
column digest bottleneck.bytes 0123456789abcdef
"""


def test_scenario_line_gives_name_and_seconds():
    out = parse(PRINTED)
    assert out.scenario == "bench-100-flows-100mbps"
    assert out.seconds == 2.0


def test_figures_with_units_and_millions():
    out = parse(PRINTED)
    assert out.figures["wall time"] == Figure(0.003, "s")
    assert out.value("bottleneck packets") == 13100
    # The label fills its column: one space only before the value.
    assert out.figures["bottleneck packets/wall-s"] == Figure(4.181e6, "")
    assert out.value("events/wall-s") == 13.196e6
    assert out.value("loss rate (data dir.)") == 0.1032
    assert out.figures["peak resident memory"] == Figure(5.0, "MiB")
    assert out.value("exchanges recorded") == 0


def test_an_unknown_line_is_passed_on():
    assert parse(PRINTED).figures["memory per open connection"] == Figure(1234.5, "B")


def test_digests_and_unreadable_lines_are_not_figures():
    out = parse(PRINTED + "peak resident memory      (unknown: no /proc/self/status)\n")
    assert not any("digest" in label for label in out.figures)
    # The unreadable line leaves the earlier reading alone.
    assert out.value("peak resident memory") == 5.0
    assert parse("").figures == {}
    assert parse("").value("wall time") is None
