"""`aqmlab tune`: a search of a queue's parameters for the best objective over a scenario's
runs (docs/tune.md). Modules: `tunefile` (the TOML format and its checks), `objective`
(metrics of a run, the objective and its constraints), `evaluate` (runs through the study
machinery, or any function a test gives), `search` (TPE, successive halving, finalists,
baselines, held-out seeds), `intervals` (plain and paired intervals over seeds), `report`
(report.html) and `driver` (the command: output directory, resume, tune.json)."""
