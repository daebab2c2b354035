"""The paper's printed ToolBench values, placed beside ours in the report (reading only).

``PAPER[table]`` is one printed table (rows keyed by the labels the report uses, values as the
paper prints them) or one printed number. Nothing here is used to compute or to tune anything:
the report reads it, the analysis never sees it.

Sources: Section 6.1's Table 3, Section 6.5's Table 6, Appendix G (Tables 14-16,
membership).
"""

from __future__ import annotations

from typing import Any

__all__ = ["PAPER"]

PAPER: dict[str, Any] = {
    "table3": {  # method -> (hit@2, recall) per budget
        "Flat Vector": [(0.427, 0.686), (0.583, 0.792), (0.698, 0.863), (0.808, 0.917)],
        "Flat + MMR": [(0.228, 0.567), (0.420, 0.704), (0.560, 0.797), (0.733, 0.885)],
        "Disjoint Hierarchy": [(0.057, 0.311), (0.098, 0.381), (0.153, 0.482), (0.243, 0.594)],
        "coverage-overlap-beta0.12": [
            (0.430, 0.687),
            (0.588, 0.794),
            (0.702, 0.861),
            (0.792, 0.909),
        ],
        "coverage-disjoint-beta0.12": [
            (0.368, 0.659),
            (0.540, 0.757),
            (0.665, 0.840),
            (0.753, 0.894),
        ],
    },
    "table6": {  # recall gap pp, stars
        0.04: ["+.5", "+1.2**", "+.3", "+.2"],
        0.08: ["+1.3*", "+2.6***", "+.8", "+.9"],
        0.12: ["+2.7***", "+3.7***", "+2.1**", "+1.6*"],
        0.16: ["+4.2***", "+4.7***", "+4.0***", "+2.6***"],
        0.20: ["+5.1***", "+6.4***", "+5.4***", "+4.2***"],
    },
    "table15": {
        0.04: ["+1.2", "+.7", "+1.0", "+.5"],
        0.08: ["+2.7", "+2.7", "+2.0", "+2.2"],
        0.12: ["+6.2", "+4.8", "+3.7", "+3.8"],
        0.16: ["+8.3", "+8.0", "+6.7", "+6.8"],
        0.20: ["+9.7", "+10.8", "+10.8", "+9.3"],
    },
    "table16": {
        42: ["+2.2*", "+2.8**", "+1.3", "+2.5**"],
        123: ["+2.3*", "+3.5***", "+2.3**", "+1.2"],
        456: ["+3.7***", "+4.7***", "+2.7*", "+1.0"],
    },
    "table14": {
        "toolbench-nev2": ("4/12", "No (10/12)", "No", "+3.2"),
        "toolbench": ("9/12", "Yes (12/12)", "Yes", "+3.7"),
        "toolbench-nev4": ("9/12", "No (11/12)", "No", "+3.2"),
    },
    "membership": {"overlap": (2.16, 2, 0.0), "disjoint": (0.87, 1, 0.132)},
    "consistency": "57/60 (seed 42: 18/20, 123: 19/20, 456: 20/20)",
}
