"""A stand-in for CuPy on machines without it (tests/test_nvrtc_cache.py): only what the compile cache calls."""
__version__ = "stub"
