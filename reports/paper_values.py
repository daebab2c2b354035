"""The paper's printed values, placed beside ours in the reports (reading only).

One place and one shape for every benchmark: ``PAPER[benchmark][table]`` is one printed table
(rows keyed by the labels the reports use, values as the paper prints them) or one printed
number. Nothing here is used to compute or to tune anything: reports read it, analyses never
see it.

Sources: synthetic -- Table 9 (Appendix B.2), Table 10 (Appendix B.4), Section 5.1, Figure 2's
caption, Section 6.4; τ-bench -- Tables 4, 5, 7, 11, 17 and Appendix C's marginals; ToolBench --
Section 6.1's Table 3, Section 6.5's Table 6, Appendix G (Tables 14-16, membership).
"""

from __future__ import annotations

from typing import Any

__all__ = ["PAPER"]

PAPER: dict[str, dict[str, Any]] = {
    "synthetic": {
        # Table 9: method -> {budget: (Hit@2, Recall)}; 197 episodes, 907 queries.
        "table9": {
            "No LT Memory": {
                64: (0.000, 0.000),
                128: (0.000, 0.000),
                256: (0.000, 0.000),
                512: (0.000, 0.000),
            },
            "Budget-Truncated Replay": {
                64: (0.000, 0.004),
                128: (0.000, 0.004),
                256: (0.000, 0.149),
                512: (0.008, 0.321),
            },
            "Sliding Window": {
                64: (0.000, 0.000),
                128: (0.000, 0.000),
                256: (0.000, 0.136),
                512: (0.005, 0.314),
            },
            "Periodic Summary": {
                64: (0.000, 0.003),
                128: (0.000, 0.041),
                256: (0.013, 0.093),
                512: (0.073, 0.221),
            },
            "Flat Vector": {
                64: (0.005, 0.051),
                128: (0.016, 0.088),
                256: (0.045, 0.156),
                512: (0.147, 0.284),
            },
            "Flat + MMR": {
                64: (0.005, 0.045),
                128: (0.022, 0.085),
                256: (0.052, 0.158),
                512: (0.152, 0.288),
            },
            "Coverage-Aware": {
                64: (0.006, 0.044),
                128: (0.014, 0.086),
                256: (0.049, 0.157),
                512: (0.147, 0.289),
            },
            "Disjoint Hierarchy": {
                64: (0.004, 0.047),
                128: (0.014, 0.084),
                256: (0.044, 0.150),
                512: (0.145, 0.282),
            },
            "Tree Abstraction": {
                64: (0.002, 0.055),
                128: (0.012, 0.093),
                256: (0.044, 0.157),
                512: (0.123, 0.275),
            },
            "OSU-Mem": {
                64: (0.010, 0.076),
                128: (0.027, 0.130),
                256: (0.084, 0.221),
                512: (0.222, 0.364),
            },
            "OSU-Mem + GF": {
                64: (0.010, 0.077),
                128: (0.029, 0.130),
                256: (0.088, 0.222),
                512: (0.225, 0.367),
            },
            "OSU-Mem (disjoint)": {
                64: (0.003, 0.047),
                128: (0.008, 0.075),
                256: (0.034, 0.138),
                512: (0.134, 0.277),
            },
            "OSU-Mem (sim only)": {
                64: (0.002, 0.037),
                128: (0.008, 0.065),
                256: (0.014, 0.110),
                512: (0.083, 0.214),
            },
            "OSU-Mem (no novelty)": {
                64: (0.010, 0.076),
                128: (0.027, 0.130),
                256: (0.083, 0.217),
                512: (0.209, 0.361),
            },
        },
        # Table 10: (metric, baseline) -> (delta, p as printed); B = 256, n = 197 episodes. The
        # last four rows are the ablation comparisons (the report's ablation section).
        "table10": {
            ("recall", "Flat Vector"): (0.0649, "<.001"),
            ("hit@2", "Flat Vector"): (0.0389, "<.001"),
            ("recall", "Flat + MMR"): (0.0635, "<.001"),
            ("hit@2", "Flat + MMR"): (0.0324, ".001"),
            ("recall", "Tree Abstraction"): (0.0645, "<.001"),
            ("hit@2", "Tree Abstraction"): (0.0403, "<.001"),
            ("recall", "Coverage-Aware"): (0.0645, "<.001"),
            ("hit@2", "Coverage-Aware"): (0.0347, "<.001"),
            ("recall", "Disjoint Hierarchy"): (0.0712, "<.001"),
            ("hit@2", "Disjoint Hierarchy"): (0.0397, "<.001"),
            ("recall", "OSU-Mem (disjoint)"): (0.0826, "<.001"),
            ("hit@2", "OSU-Mem (disjoint)"): (0.0502, "<.001"),
            ("recall", "OSU-Mem (no novelty)"): (0.0040, ".307"),
            ("hit@2", "OSU-Mem (no novelty)"): (0.0008, ".876"),
        },
        # Section 5.1 / Table 1 structural statistics.
        "structure": {
            "episodes": 200,
            "episodes_with_queries": 197,
            "queries": 907,
            "min_steps": 150,
            "max_steps": 296,
            "mean_evidence_per_query": 2.5,
            "e_plus_fraction": 1.0,
            "identical_signature_fraction": 0.393,
            "same_action_fraction": 0.834,
            "subgoal_shared_fraction": 1.0,
            "t_plus_e_plus_fraction": 0.393,
        },
        # Figure 2 caption: OSU-Mem near / far recall at B = 256.
        "near_far_osu_256": (0.196, 0.218),
        # Section 6.4: novelty ablation p-values at B = 256 (recall, hit@2).
        "novelty_p_256": (0.307, 0.876),
    },
    "tau-bench": {
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
    },
    "toolbench": {
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
    },
}
