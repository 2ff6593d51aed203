"""The Linux testbed: bulk TCP flows through a dumbbell in network namespaces (htb + pfifo
bottleneck, a user-space delay line for the RTTs), measured as aqmlab measures the same
scenario, and compared with it. `python -m validation.linux --help`; README.md."""
