"""Renderers: a View's rows as text (aligned, CSV, space, tabulate's formats), an HTML table or a
DataFrame (``text``, ``html``, ``dataframe``; ``cells`` makes the text of composite values), and a
Profile as a Chrome trace or a self-contained HTML report. They format; the figures come from below."""
