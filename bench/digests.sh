#!/usr/bin/env bash
# Digests of the benchmark scenarios: one hash per table column and per summary field for each
# of eight short runs that together cover the studies' historic models (BSD and ns-2 TCP,
# Reno/NewReno/SACK, ECN; Mah users, Study B's browsers, PackMime 1.0/1.1, bulk, FTP, UDP;
# drop-tail, RED, gentle RED, ARED, PI, CoDel), and of eight that cover today's (issue 34: the
# Linux presets CUBIC, BBR, DCTCP and Prague with RACK-TLP, PRR, pacing and AccECN; Web users
# with CUBIC; FQ-CoDel, CAKE, FQ-PIE, DualPI2, Linux PIE). A change that must leave outcomes
# bit for bit as they were is checked by running this before and after it and comparing:
#
#   bench/digests.sh > /tmp/before.txt      # on the old commit
#   bench/digests.sh > /tmp/after.txt       # on the new one
#   python3 bench/compare_digests.py /tmp/before.txt /tmp/after.txt
#
# Columns or fields that exist only in the new file are listed as additions; any difference in
# one that both have fails the comparison. Needs `make bootstrap` (for `aqmlab validate`).
#
# The hash is XXH64 of an explicit byte encoding of the values (`Digest` in
# crates/aqmlab/benches/throughput.rs): the same on every Rust toolchain, so a reference file
# stays comparable after an upgrade. Files made before it (std's DefaultHasher) are not
# comparable with files made after it, nor are files made before issue 37's stop, whose
# column hashes included each drained batch's length (a row made at the end of the run then
# changed the hash by moving from the last drain to `finish`).
set -euo pipefail
cd "$(dirname "$0")/.."
AQMLAB=${AQMLAB:-.venv/bin/aqmlab}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# name | seconds | scenario file | --set overrides (space separated, no spaces inside) |
# TCP preset of the built-in scenario (no file)
scenarios=(
  "greedy|30||"
  "packmime_two_way|60|bench/packmime_http11_weigle.toml|"
  "study_b_full|60|bench/study_b_full.toml|"
  "mah_red|300|examples/web/mah.toml|queue={kind=\"red\",limit=480,min_th=30,max_th=90,max_p=0.05,wait=false} traffic[0]={kind=\"mah\",users=1500,client_side=\"left\",max_parallel=4}"
  "packmime_ared_ecn_sack|120|examples/web/packmime.toml|queue={kind=\"ared\",limit=370} tcp.recovery=sack tcp.ecn=true"
  "study_d_mix_gentle|120|examples/mixes/study_d_mix.toml|queue={kind=\"red\",limit=200,min_th=30,max_th=130,max_p=0.1,gentle=true}"
  "pi_bulk|60|examples/queues/pi.toml|"
  "codel_bulk|60|examples/queues/codel.toml|"
  "greedy_cubic|30|||linux-cubic"
  "greedy_bbr|30|||linux-bbr"
  "web_100m_cubic|20|bench/web_100m_cubic.toml|"
  "dualpi2_prague|30|examples/queues/dualpi2.toml|tcp={preset=\"linux-prague\"}"
  "fq_codel_dctcp|30|examples/queues/fq_codel.toml|tcp={preset=\"linux-dctcp\"} queue={kind=\"fq_codel\",ce_threshold_ms=1.0}"
  "cake_cubic|30|examples/queues/cake.toml|tcp={preset=\"linux-cubic\"}"
  "fq_pie_bbr|30|examples/queues/fq_pie.toml|tcp={preset=\"linux-bbr\"}"
  "pie_linux_reno|30|examples/queues/pie.toml|tcp={preset=\"linux-reno\"}"
)

cargo build --release --quiet -p aqmlab --benches 2>/dev/null || true
for entry in "${scenarios[@]}"; do
  IFS='|' read -r name seconds file sets preset <<<"$entry"
  env_scenario=()
  if [ -n "$preset" ]; then
    env_scenario=(AQMLAB_BENCH_TCP="$preset")
  fi
  if [ -n "$file" ]; then
    args=()
    for s in $sets; do args+=(--set "$s"); done
    "$AQMLAB" validate "$file" --print "${args[@]}" > "$tmp/$name.json"
    env_scenario=(AQMLAB_BENCH_SCENARIO="$tmp/$name.json")
  fi
  env "${env_scenario[@]}" AQMLAB_BENCH_SECONDS="$seconds" AQMLAB_BENCH_DIGEST=columns \
    cargo bench --quiet -p aqmlab --bench throughput 2>/dev/null \
    | awk -v n="$name" '/^column digest/ {print n, $3, $4} /^records digest/ {print n, "ALL", $3}'
done
