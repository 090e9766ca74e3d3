"""For bench/compile_probe.py on a machine without a GPU (EVOLVE_PROBE_ARCH=90, this directory on PYTHONPATH): CuPy
asks the device which architecture NVRTC should build for; every process of the probe (the judge's compile server
and its workers too) is told instead, when it imports CuPy's compiler."""

import os

if os.environ.get("EVOLVE_PROBE_ARCH"):
    import importlib.abc
    import importlib.machinery
    import sys

    class _GivenArch(importlib.abc.MetaPathFinder):
        def find_spec(self, name, path, target=None):
            if name != "cupy.cuda.compiler":
                return None
            spec = importlib.machinery.PathFinder.find_spec(name, path)
            if spec is None or spec.loader is None:
                return spec
            run = spec.loader.exec_module

            def exec_module(module):
                run(module)
                arch = os.environ["EVOLVE_PROBE_ARCH"]
                module._get_arch_for_options_for_nvrtc = lambda _: (f"-arch=sm_{arch}", "cubin")

            spec.loader.exec_module = exec_module
            return spec

    sys.meta_path.insert(0, _GivenArch())
