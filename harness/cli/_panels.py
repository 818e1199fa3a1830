"""A command whose `--help` lists its parameters in sections, one per `rich_help_panel`.

typer draws panels only with rich markup, which harness's plain help leaves off; this draws them
as plain sections, in the order of each section's first parameter.
"""

from __future__ import annotations

from typing import Any

from typer.core import TyperCommand


class PanelCommand(TyperCommand):
    """Parameters without a panel go in `other_panel` (options) or "Arguments"."""

    other_panel = "Options"

    def format_options(self, ctx: Any, formatter: Any) -> None:
        sections: dict[str, list[tuple[str, str]]] = {}
        for param in self.get_params(ctx):
            row = param.get_help_record(ctx)
            if row is None:
                continue
            default = "Arguments" if param.param_type_name == "argument" else self.other_panel
            sections.setdefault(getattr(param, "rich_help_panel", None) or default, []).append(row)
        for title, rows in sections.items():
            with formatter.section(title):
                formatter.write_dl(rows)
