"""ADVERSARY BEHAVIOURS, for testing the protocol only (the Python mirror of
contracts/test/actors/).

Cheating solvers, lazy and griefing verifiers, built as subclasses and hooks of the production
node classes; no production class carries an adversary flag. The demo and the tests spawn them
from here (``veritrain adversary ...``, a testing-only CLI group).

Run: not a script; ``from adversary.training import skip_step``.
"""
