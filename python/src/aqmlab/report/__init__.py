"""Figures and HTML reports (docs/report.md): `plots` (one run's figures), `study_plots`
(a study's figures), `study_layout` and `study_summary` (how a study's axes become panels and
tables), `html` (the report document) and `study_report` (`aqmlab report`)."""

from aqmlab.report.study_report import write_report

__all__ = ["write_report"]
