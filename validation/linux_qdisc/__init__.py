"""Linux queue disciplines against the kernel's own code (see kernel.py and compare.py)."""
