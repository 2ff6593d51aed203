from aqmlab._core import version as __core_version__  # noqa: F401
