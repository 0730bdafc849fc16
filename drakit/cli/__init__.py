"""The ``drakit`` command line: a thin typer shell, one module per verb (see main.py)."""
