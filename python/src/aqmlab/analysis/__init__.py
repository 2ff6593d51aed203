"""Metrics from a run's record tables (docs/analysis.md, docs/mixes.md): `metrics` (Study A's
per-run figures), `mixes` (per-class figures of mixed traffic), `hurst` (burstiness),
`rthist` (response-time histograms), `directions` (which direction a Web study measures),
`intervals` (confidence intervals of means over repetitions), `dash` (video sessions' QoE)."""
