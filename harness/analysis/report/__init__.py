"""The report: results objects, the document model rendered to Markdown and HTML, the figures, and
the writer of `report/`."""
