"""The dashboard: ``pyprof-live serve LOGDIR`` and ``pyprof_live.serve(...)`` (see server.py)."""
