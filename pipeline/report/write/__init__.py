"""The report's outputs: report.md, report.html, junit.xml, summary.json, cells.csv, MLflow runs.

Each table is built once as rows (``section.Section``) and rendered by Markdown and HTML alike.
"""
