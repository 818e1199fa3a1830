"""Figures as PNG (matplotlib, Agg backend): the seed's Figure 4.2 (scaling) and 4.1 (heatmap)."""

from __future__ import annotations

import math
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from harness.geometry.attention import softmax

if TYPE_CHECKING:
    from harness.geometry.heatmap import SentenceAttention
    from harness.geometry.seeds import ScalingResult

DPI = 150


def _pyplot() -> Any:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def scaling_figure(result: ScalingResult, out: Path) -> Path:
    """Score and weight distributions before and after 1/sqrt(d_k), one colour per d_k."""
    plt = _pyplot()
    fig, axes = plt.subplots(2, 2, figsize=(11, 8), constrained_layout=True)
    colours = plt.cm.viridis(np.linspace(0.1, 0.85, len(result.dims)))
    ranks = np.arange(1, result.keys + 1)
    for d, colour in zip(result.dims, colours, strict=True):
        raw, scaled = result.scores[d], result.scores[d] / math.sqrt(d)
        for ax, s in ((axes[0, 0], raw), (axes[0, 1], scaled)):
            ax.hist(
                s.ravel(),
                bins=60,
                density=True,
                histtype="step",
                lw=1.6,
                color=colour,
                label=f"d_k = {d} (sd {s.std():.1f})",
            )
        for ax, s, h in (
            (axes[1, 0], raw, result.raw_mean[d]),
            (axes[1, 1], scaled, result.scaled_mean[d]),
        ):
            top = -np.sort(-softmax(s), axis=-1).mean(axis=0)
            ax.plot(
                ranks,
                top,
                marker="o",
                ms=3,
                color=colour,
                label=f"d_k = {d} (entropy {h:.2f} bits)",
            )
    axes[0, 0].set_title("Scores q·k without scaling")
    axes[0, 1].set_title("Scores q·k / √d_k")
    axes[1, 0].set_title("Softmax weights without scaling")
    axes[1, 1].set_title("Softmax weights with 1/√d_k")
    for ax in axes[0]:
        ax.set(xlabel="score", ylabel="density")
    for ax in axes[1]:
        ax.set(
            xlabel="key rank (largest weight first)",
            ylabel="mean weight",
            yscale="log",
            ylim=(1e-6, 1.5),
        )
        ax.axhline(1 / result.keys, color="grey", ls=":", lw=1, label="uniform 1/keys")
    for ax in axes.ravel():
        ax.legend(fontsize=8)
        ax.grid(alpha=0.3)
    fig.suptitle(
        f"Why divide by √d_k: {result.keys} random keys, {result.trials} trials "
        f"(seed {result.seed})",
        fontsize=13,
    )
    return _save(fig, out)


def heatmap_figure(
    att: SentenceAttention, out: Path, *, layer: int, heads: tuple[int, int]
) -> Path:
    """Mean over heads (top left), per-head weight distributions (top right), two heads below."""
    plt = _pyplot()
    w = att.weights[layer]  # (heads, S, S)
    n = len(att.tokens)
    size = max(9.0, min(18.0, 5.0 + 0.35 * n))
    fig, axes = plt.subplots(2, 2, figsize=(size, size * 0.9), constrained_layout=True)
    _matrix(fig, axes[0, 0], w.mean(axis=0), att.tokens, f"Layer {layer}: mean over heads")
    entropy = att.head_entropy(layer)
    lower = np.tril_indices(n)
    axes[0, 1].boxplot([w[h][lower] for h in range(w.shape[0])], showfliers=False)
    axes[0, 1].set_xticks(
        range(1, w.shape[0] + 1),
        [f"{h}\n{entropy[h]:.1f} b" for h in range(w.shape[0])],
        fontsize=8,
    )
    axes[0, 1].set(
        title=f"Layer {layer}: weights per head (visible keys)",
        xlabel="head (mean entropy, bits)",
        ylabel="attention weight",
    )
    axes[0, 1].grid(alpha=0.3)
    names = dict(
        zip(att.contrasting_heads(layer), (" (most focused)", " (most diffuse)"), strict=True)
    )
    for ax, head in zip(axes[1], heads, strict=True):
        tag = names.get(head, "")
        _matrix(
            fig,
            ax,
            w[head],
            att.tokens,
            f"Layer {layer}, head {head}{tag}: {entropy[head]:.2f} bits",
        )
    fig.suptitle(f"{att.model}: attention over “{_short(att.sentence)}”", fontsize=13)
    return _save(fig, out)


def _matrix(fig: Any, ax: Any, matrix: np.ndarray, tokens: list[str], title: str) -> None:
    image = ax.imshow(matrix, cmap="viridis", vmin=0.0, vmax=max(float(matrix.max()), 1e-9))
    font = max(5.0, min(9.0, 240.0 / max(len(tokens), 1)))
    ticks = range(len(tokens))
    ax.set_xticks(ticks, tokens, rotation=90, fontsize=font)
    ax.set_yticks(ticks, tokens, fontsize=font)
    ax.set(title=title, xlabel="key (attended token)", ylabel="query token")
    fig.colorbar(image, ax=ax, shrink=0.8, label="weight")


def _short(text: str, limit: int = 70) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _save(fig: Any, out: Path) -> Path:
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(out, dpi=DPI)
    _pyplot().close(fig)
    return out
