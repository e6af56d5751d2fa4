"""Renderers: turn views (rows) into text, CSV, HTML, Chrome traces. Nothing here computes data."""
