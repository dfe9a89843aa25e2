"""Metrics of the learners of conicml (each topic in a private module, re-exported here)."""

from conicml.metrics._ranking import auc, mauc

__all__ = ["auc", "mauc"]
