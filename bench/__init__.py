"""`make bench` (`python3 -m bench`): the project's performance figures measured side by side
for this tree and a reference commit, and written into docs/performance.md.

Standard library only, so that it runs from a fresh clone with nothing but python3, cargo and
git: the modules are the case table (`cases`), the builds (`build`), one measured child
process (`child`), the benchmark's printed lines (`output`), the statistics (`stats`), the
measurement of a case (`measure`), the derived ratios (`ratios`), the machine (`machine`), the
Markdown (`report`), the page's markers (`markers`) and the command line (`cli`)."""
