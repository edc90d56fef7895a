"""Exceptions of the SDK's compiled modules, defined here, in plain Python: a class compiled by
mypyc may derive only from a few built-in exceptions, and these keep their usual bases.

>>> issubclass(SamplingError, RuntimeError)
True
"""

from __future__ import annotations


class SamplingError(RuntimeError):
    """No assignment of the unseen cards fits what the view shows (raised by
    :meth:`bots_sdk.sampling.Simulation.sample`; importable from there too).

    >>> str(SamplingError("no deal fits"))
    'no deal fits'
    """
