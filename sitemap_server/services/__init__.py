"""The write path: every change to content goes through these functions.

The admin API, the bulk import and ``seed-demo`` all call them, so a rule about what may be
stored lives in one place. They never commit; the caller's transaction does (``pyramid_tm``
for requests, ``transaction.manager`` for commands).
"""
