"""The paper's printed τ-bench values, placed beside ours in the report (reading only).

``PAPER[table]`` is one printed table (rows keyed by the labels the report uses, values as the
paper prints them) or one printed number. Nothing here is used to compute or to tune anything:
the report reads it, the analysis never sees it.

Sources: Tables 4, 5, 7, 11, 17 and Appendix C's marginals.
"""

from __future__ import annotations

from typing import Any

__all__ = ["PAPER"]

PAPER: dict[str, Any] = {
    "table4": {
        "T+E+": (56, 0.179, 0.080, 0.089),
        "T+E-": (96, -0.031, -0.047, 0.073),
        "T-E+": (44, 0.159, 0.000, -0.068),
        "T-E-": (132, -0.129, -0.157, -0.083),
        "Aggregate": (328, -0.010, -0.063, -0.006),
    },
    "table5": {
        "T+E+": (0.161, 0.232, 0.179, 0.161),
        "T+E-": (0.094, 0.125, -0.031, -0.146),
        "T-E+": (0.045, 0.114, 0.159, 0.227),
        "T-E-": (0.008, -0.023, -0.129, -0.364),
    },
    "interaction_hit": {64: 0.308, 128: 0.081, 256: 0.002, 512: 0.558},
    "p_star": {64: 0.0, 128: 0.0, 256: 0.211, 512: 0.543},
    "pi_tool": {64: 0.0, 128: 0.0, 256: 0.490, 512: 0.704},
    "oracle_256": 0.052,
    "marginals": {
        "entity": (0.150, 0.0, 0.695),
        "tool": (0.139, 0.0, 0.537),
        "subgoal": (0.557, 0.467, None),
        "all_three": 0.143,
    },
    "table11": {
        "Budget-Truncated Replay": (0.003, 0.035, 0.005, 0.049, 0.081, 0.091, 0.163, 0.178),
        "Sliding Window": (0.000, 0.026, 0.000, 0.044, 0.079, 0.090, 0.161, 0.177),
        "Periodic Summary": (0.003, 0.034, 0.026, 0.053, 0.188, 0.127, 0.347, 0.219),
        "Flat Vector": (0.051, 0.076, 0.141, 0.122, 0.328, 0.203, 0.574, 0.318),
        "Flat + MMR": (0.037, 0.079, 0.172, 0.134, 0.347, 0.201, 0.646, 0.335),
        "Coverage-Aware": (0.032, 0.076, 0.171, 0.136, 0.333, 0.201, 0.673, 0.366),
        "Disjoint Hierarchy": (0.099, 0.080, 0.181, 0.123, 0.281, 0.180, 0.465, 0.271),
        "Tree Abstraction": (0.081, 0.086, 0.130, 0.123, 0.193, 0.133, 0.316, 0.203),
        "OSU-Mem": (0.125, 0.085, 0.250, 0.145, 0.435, 0.241, 0.676, 0.384),
        "OSU-Mem (disjoint)": (0.109, 0.061, 0.150, 0.093, 0.387, 0.209, 0.520, 0.288),
        "OSU-Mem (no novelty)": (0.125, 0.085, 0.250, 0.145, 0.419, 0.233, 0.680, 0.386),
    },
    "weak_256": (0.143, 0.094),
    # Table 7 (GPT-4o-mini, hard recall means; Δ OSU − Flat with 95% CI): cell -> (n, hard OSU,
    # hard Flat, hard none, soft Δ, soft CI, hard Δ, hard CI); the aggregate row prints no CI.
    "table7": {
        "T+E+": (107, 0.230, 0.166, 0.008, 0.005, (-0.017, 0.027), 0.064, (0.008, 0.121)),
        "T+E-": (131, 0.169, 0.146, 0.000, 0.019, (-0.001, 0.039), 0.023, (-0.030, 0.075)),
        "T-E+": (44, 0.252, 0.213, 0.008, 0.016, (-0.018, 0.051), 0.039, (-0.039, 0.123)),
        "T-E-": (132, 0.074, 0.066, 0.000, 0.000, (-0.016, 0.017), 0.008, (-0.026, 0.041)),
        "aggregate": (414, 0.164, 0.133, 0.003, 0.009, None, 0.031, None),
    },
}
