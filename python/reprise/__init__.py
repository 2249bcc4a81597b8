"""reprise: run an unmodified CUDA program with the launch sequences it
repeats replayed as CUDA graphs.

This package holds the C build (bin/reprise, lib/libreprise.so); the
``reprise`` command on PATH and ``python -m reprise`` run bin/reprise.
"""

import os

__all__ = ["command", "library"]

_HERE = os.path.dirname(os.path.abspath(__file__))


def command():
    """The path of the reprise command this package installed."""
    return os.path.join(_HERE, "bin", "reprise")


def library():
    """The path of libreprise.so (for LD_PRELOAD by hand)."""
    for libdir in ("lib", "lib64"):
        path = os.path.join(_HERE, libdir, "libreprise.so")
        if os.path.exists(path):
            return path
    return os.path.join(_HERE, "lib", "libreprise.so")
