"""Renderers, one shape for all (``renderer.py``: ``renderer(name).render(subject)`` / ``.write(subject, path)``):
a View's rows as text (aligned, CSV, space, tabulate's formats), an HTML table or a DataFrame; a Profile
as a Chrome trace or the dashboard's one-file page; a Run as its HTML report. ``cells`` makes the text
of composite values, ``units`` the human units. They format; the figures come from below."""
