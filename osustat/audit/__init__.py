"""Auditing significance claims against records (docs/audit.md).

:mod:`.claim` is the claim model, :mod:`.claims` reads and validates a claims file, :mod:`.run`
pairs the records and judges every claim (:func:`~osustat.audit.run.audit`), with phase 1
(recompute each claim's statistics) in :mod:`.measure`, phase 2 (the two standards' verdicts)
in :mod:`.verdicts`, and the result types in :mod:`.result`. The public entry points are
exported from :mod:`osustat` (``osustat.audit_claims``, ``osustat.load_claims``, ...).
"""
