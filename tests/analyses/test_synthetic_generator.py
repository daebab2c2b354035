"""The generator's open choices (GeneratorConfig): each does what it says, and nothing else."""

import numpy as np
import pytest

from osustat.analyses.synthetic.generator import (
    SEGMENT_CONFIG,
    GeneratorConfig,
    generate_episode,
    generate_episodes,
    structural_statistics,
)


def entity_counts(eps):
    return np.array(
        [len(ep.trajectory.entity_names(i)) for ep in eps for i in range(ep.trajectory.n_steps)]
    )


class TestGeneratorConfig:
    def test_segment_layout_is_the_first_version(self):
        # reference values recorded from the first version's generator (commit de4ec28), seed 3
        ep = generate_episode("ep", np.random.default_rng(3), SEGMENT_CONFIG)
        assert ep.trajectory.n_steps == 269
        assert [q.evidence.tolist() for q in ep.queries] == [
            [167, 173, 178],
            [175, 177],
            [22, 23],
        ]
        assert float(ep.trajectory.embeddings[0, 0]) == pytest.approx(0.205784, abs=1e-6)

    def test_entities_per_step(self):
        one = entity_counts(generate_episodes(6, 0, GeneratorConfig(entities_per_step=1)))
        two = entity_counts(generate_episodes(6, 0, GeneratorConfig(entities_per_step=2)))
        assert one.max() == 1 and two.max() == 2
        # rate .5 per draw: ~P(>= 1 of 2 draws) = .75 on background steps
        assert 0.6 < (two >= 1).mean() < 0.9

    def test_entity_rate_zero_leaves_only_event_entities(self):
        eps = generate_episodes(4, 0, GeneratorConfig(entity_rate=0.0))
        for ep in eps:
            ev = {int(i) for q in ep.queries for i in q.evidence}
            for i in range(ep.trajectory.n_steps):
                assert bool(ep.trajectory.entity_names(i)) == (i in ev)

    def test_unique_event_entity_is_carried_by_evidence_only(self):
        for ep in generate_episodes(4, 1, GeneratorConfig(unique_event_entity=True)):
            tr = ep.trajectory
            for q in ep.queries:
                shared = set.intersection(*(set(tr.entity_names(i)) for i in q.evidence))
                (ent,) = [e for e in shared if "/event" in e]
                carriers = {i for i in range(tr.n_steps) if ent in tr.entity_names(i)}
                assert carriers == set(q.evidence.tolist())

    def test_related_steps_share_entity_and_action_before_the_query(self):
        cfg = GeneratorConfig(related_steps=3, unique_event_entity=True)
        for ep in generate_episodes(4, 2, cfg):
            tr = ep.trajectory
            for q in ep.queries:
                (ent,) = [
                    e
                    for e in set.intersection(*(set(tr.entity_names(i)) for i in q.evidence))
                    if "/event" in e
                ]
                others = [
                    i
                    for i in range(tr.n_steps)
                    if ent in tr.entity_names(i) and i not in q.evidence
                ]
                assert len(others) == 3 and max(others) < q.time

    def test_vocabulary_sizes(self):
        eps = generate_episodes(3, 0, GeneratorConfig(n_actions=2, n_templates=1))
        tools = {ep.trajectory.tool_of(i) for ep in eps for i in range(ep.trajectory.n_steps)}
        assert tools == {"act0(tpl0)", "act1(tpl0)"}
        # one template: identical signature = same action
        s = structural_statistics(eps)
        assert s["identical_signature_fraction"] == s["same_action_fraction"]

    @pytest.mark.parametrize(
        ("kwargs", "match"),
        [
            ({"layout": "diagonal"}, "`layout` must be one of"),
            ({"spacing": (5, 2)}, "`spacing` must be a pair"),
            ({"gap": (0, 4)}, "`gap` must be a pair"),
            ({"entity_rate": 1.5}, "`entity_rate` must be in"),
            ({"entities_per_step": 0}, "`entities_per_step` must be an integer >= 1"),
            ({"related_steps": -1}, "`related_steps` must be an integer >= 0"),
            ({"n_actions": True}, "`n_actions` must be an integer"),
            ({"unique_event_entity": 1}, "`unique_event_entity` must be a bool"),
            ({"events_per_episode": 0.0}, "`events_per_episode` must be in"),
        ],
    )
    def test_bad_config(self, kwargs, match):
        with pytest.raises(ValueError, match=match):
            GeneratorConfig(**kwargs)
