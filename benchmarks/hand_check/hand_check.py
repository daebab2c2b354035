"""Hand check of the claims audit (issue 26): a fixed sample of claims, numbers recomputed apart.

Three steps, each a subcommand; nothing here imports ``osustat`` (the claims file is read with
``tomllib``, the records with pandas, every statistic is a few lines of numpy/scipy written
from the rules of docs/audit.md), so the numbers do not share code with the audit they check:

    # three default runs (docs/audit.md, "Hand check"), their records in one file, the audit
    osustat reproduce synthetic --out SYN --jobs 2
    osustat reproduce tau-bench --out TAU --jobs 2
    osustat reproduce toolbench --out TB --jobs 2
    python benchmarks/hand_check/hand_check.py combine SYN TAU TB --out ALL.parquet
    osustat audit paper --records ALL.parquet --json --out AUDIT
    python benchmarks/hand_check/hand_check.py sample --audit AUDIT/audit.json
    python benchmarks/hand_check/hand_check.py numbers --records ALL.parquet
    python benchmarks/hand_check/hand_check.py agreement --audit AUDIT/audit.json

``sample`` draws the claims by the stated rule (below) into ``sample.csv``; ``numbers``
recomputes, for each sampled claim, the numbers its verdicts rest on (and the p of every
claim of its family, for the correction) into ``numbers.csv``; the verdicts themselves are
decided by hand from those numbers and written, with the reasoning, in ``claims.csv``;
``agreement`` compares ``claims.csv`` with the audit's verdicts and writes ``agreement.md``
and the block of docs/audit.md between its hand-check markers.

Sampling rule (fixed before any hand verdict): the population is the 148 claims of
``analyses/claims/paper.toml`` audited against the records of the three default runs; strata are the
audit's **strict** verdict; from each stratum ``min(size, 6)`` claims are drawn without
replacement with ``numpy.random.default_rng(26)`` (strata in alphabetical order, claims in
file order before the draw); if that gives fewer than 30, the rest are drawn from the
remaining claims with the same generator.
"""

from __future__ import annotations

import argparse
import json
import math
import re
import tomllib
from itertools import product
from pathlib import Path

import numpy as np
import pandas as pd
from scipy import stats

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
CLAIMS = ROOT / "analyses" / "claims" / "paper.toml"
SEED = 26
PER_STRATUM = 6
MINIMUM = 30
FLIPS = 20_000  # Monte Carlo sign vectors (exact enumeration up to 16 nonzero differences)
BOOT = 4_000
ALPHA = 0.05
CELLS = ("T+E+", "T+E-", "T-E+", "T-E-")


# -- claims ---------------------------------------------------------------------------------
def load_claims(path: Path = CLAIMS) -> dict[str, dict]:
    """Claims by id, each with the file's [defaults] filled in and its family's alpha."""
    raw = tomllib.loads(path.read_text(encoding="utf-8"))
    defaults = raw.get("defaults", {})
    families = raw.get("family", {})
    out = {}
    for item in raw["claim"]:
        c = {"kind": "difference", "unit": "query", "threshold": 0.0, "seeds": "average"}
        c.update(defaults)
        c.update(item)
        c["alpha"] = families.get(c["family"], {}).get("alpha", ALPHA)
        out[c["id"]] = c
    return out


def parse_p(value) -> tuple[str, float] | None:
    """A printed p as (relation, value): 0.022 -> ('=', .022), '<.001' -> ('<', .001)."""
    if value is None:
        return None
    if isinstance(value, int | float):
        return "=", float(value)
    m = re.fullmatch(r"\s*(<=|>=|<|>|=)?\s*([0-9.]+)\s*", str(value))
    assert m, value
    return m.group(1) or "=", float(m.group(2))


def paper_ns(c: dict) -> bool:
    """The printed p says "not significant" at the claim's alpha."""
    p = parse_p(c.get("reported_p"))
    if p is None:
        return False
    rel, v = p
    return v >= c["alpha"] if rel in (">", ">=") else rel == "=" and v > c["alpha"]


def claimed_magnitude(c: dict) -> float | None:
    """|claimed effect - threshold|: the printed effect, else the printed means' gap."""
    t = float(c.get("threshold", 0.0))
    if c.get("reported_effect") is not None:
        return abs(float(c["reported_effect"]) - t)
    if c.get("reported_means") is not None:
        a, b = c["reported_means"]
        return abs(a - b - t)
    return None  # a threshold alone claims no excess over itself (docs/audit.md)


# -- pairing ---------------------------------------------------------------------------------
def pair(rec: pd.DataFrame, c: dict, seed: int | None = None) -> pd.DataFrame | str:
    """Per-unit treatment and baseline values (seeds averaged per query), or why none."""
    sub = rec[rec["benchmark"] == c["benchmark"]]
    if sub.empty:
        return f"benchmark {c['benchmark']} absent"
    sub = sub[(sub["metric"] == c["metric"]) & (sub["budget"] == c["budget"])]
    for m in (c["treatment"], c["baseline"]):
        if not (sub["method"] == m).any():
            return f"method {m} / metric / budget absent"
    seed = c.get("seed") if seed is None else seed
    if seed is not None:
        sub = sub[sub["seed"] == seed]
    key = ["episode_id", "query_id"]
    side = {}
    for m in (c["treatment"], c["baseline"]):
        part = sub[sub["method"] == m]
        side[m] = part.groupby(key).agg(value=("value", "mean"), cell=("cell", "first"))
    t, b = side[c["treatment"]], side[c["baseline"]]
    assert t.index.equals(b.index.sort_values()) or set(t.index) == set(b.index)
    b = b.loc[t.index]
    df = pd.DataFrame({"t": t["value"], "b": b["value"], "cell": t["cell"]})
    df["episode"] = df.index.get_level_values("episode_id")
    if c["unit"] == "episode":
        df = df.groupby("episode").agg(t=("t", "mean"), b=("b", "mean"))
        df["episode"] = df.index
        df["cell"] = None
    cell = c.get("cell", "aggregate")
    if c["kind"] != "interaction" and cell != "aggregate":
        df = df[df["cell"] == cell]
    df = df.reset_index(drop=True)
    df["d"] = df["t"] - df["b"]
    return df


# -- tests written from their definitions ------------------------------------------------------
def _signs(m: int, rng: np.random.Generator) -> np.ndarray:
    if m <= 16:
        return np.array(list(product((-1.0, 1.0), repeat=m)))
    return rng.choice((-1.0, 1.0), size=(FLIPS, m))


def signflip(x: np.ndarray, rng: np.random.Generator, side: str = "two") -> float:
    """Sign-flip p of H0: mean(x) = 0 (zeros dropped: a flipped 0 is 0)."""
    x = np.asarray(x, float)
    x = x[x != 0]
    if x.size == 0:
        return 1.0
    s = _signs(x.size, rng)
    null = s @ x
    obs = x.sum()
    tol = 1e-9 * max(1.0, abs(obs))
    if side == "two":
        hits = np.abs(null) >= abs(obs) - tol
    elif side == "less":
        hits = null <= obs + tol
    else:
        hits = null >= obs - tol
    if x.size <= 16:
        return float(hits.mean())
    return float((hits.sum() + 1) / (FLIPS + 1))


def holm(p: list[float]) -> list[float]:
    order = np.argsort(p)
    m = len(p)
    adj = np.empty(m)
    run = 0.0
    for k, i in enumerate(order):
        run = max(run, min(1.0, (m - k) * p[i]))
        adj[i] = run
    return adj.tolist()


def held_by_holm(ps: list[float], k: int, alpha: float) -> float:
    """The largest p claim k could have had and still be rejected by Holm (the hand's own
    `holm`), the others' p as given: bisection."""
    ps = list(ps)
    lo, hi = 0.0, alpha
    for _ in range(50):
        ps[k] = mid = (lo + hi) / 2
        lo, hi = (mid, hi) if holm(ps)[k] <= alpha else (lo, mid)
    return lo


def cluster_ci(
    d: np.ndarray, clusters: np.ndarray, rng: np.random.Generator
) -> tuple[float, float]:
    """95% percentile interval of mean(d), resampling clusters (units when each is its own)."""
    codes, inv = np.unique(clusters, return_inverse=True)
    k = codes.size
    sums = np.bincount(inv, weights=d, minlength=k)
    sizes = np.bincount(inv, minlength=k).astype(float)
    draw = rng.integers(0, k, size=(BOOT, k))
    means = sums[draw].sum(axis=1) / sizes[draw].sum(axis=1)
    lo, hi = np.quantile(means, [0.025, 0.975])
    return float(lo), float(hi)


def mde_normal(d: np.ndarray, alpha: float) -> float:
    """(z_{1-alpha/2} + z_.8) sd / sqrt(n); infinite when 2^(1-n) > alpha (no test can reach)."""
    return mde_sd(float(d.std(ddof=1)), d.size, alpha)


def mde_sd(sd: float, n: int, alpha: float) -> float:
    """:func:`mde_normal` from the differences' sd and n."""
    if 2.0 ** (1 - n) > alpha:
        return math.inf
    z = stats.norm.ppf(1 - alpha / 2) + stats.norm.ppf(0.8)
    return float(z * sd / math.sqrt(n))


def tost(d: np.ndarray, margin: float, rng: np.random.Generator) -> float:
    """Two one-sided sign-flip tests at +-margin: max of the two p-values."""
    p_hi = signflip(d - margin, rng, side="less")  # H0 mean >= m, reject when the sum is low
    p_lo = signflip(d + margin, rng, side="greater")  # H0 mean <= -m
    return max(p_hi, p_lo)


def fieller(t: np.ndarray, b: np.ndarray) -> tuple[float, float]:
    """95% Fieller interval of mean(t)/mean(b) - 1 (queries independent)."""
    n = t.size
    mt, mb = t.mean(), b.mean()
    cov = np.cov(t, b, ddof=1) / n
    q = stats.t.ppf(0.975, n - 1) ** 2
    a = mb**2 - q * cov[1, 1]
    bb = -2 * (mt * mb - q * cov[0, 1])
    cc = mt**2 - q * cov[0, 0]
    disc = bb**2 - 4 * a * cc
    if a <= 0 or disc < 0:
        return -math.inf, math.inf
    r = (-bb - math.sqrt(disc)) / (2 * a), (-bb + math.sqrt(disc)) / (2 * a)
    return r[0] - 1, r[1] - 1


def interaction(d: np.ndarray, cells: np.ndarray, rng: np.random.Generator, kind: str) -> float:
    """Centered (the paper's) or studentized (Welch-type, shrunk variances) sign-flip p."""
    labels = [c for c in CELLS if (cells == c).any()]
    idx = np.array([labels.index(c) for c in cells])
    k = len(labels)
    n_c = np.bincount(idx, minlength=k).astype(float)

    def stat(x: np.ndarray) -> np.ndarray:  # rows of x: resamples
        x = np.atleast_2d(x)
        m_c = np.stack([x[:, idx == j].mean(axis=1) for j in range(k)], axis=1)
        if kind == "centered":
            m = x.mean(axis=1, keepdims=True)
            return (n_c * (m_c - m) ** 2).sum(axis=1)
        ss = np.stack([((x[:, idx == j] - m_c[:, [j]]) ** 2).sum(axis=1) for j in range(k)], 1)
        pooled = ss.sum(axis=1, keepdims=True) / max((n_c - 1).sum(), 1.0)
        v = (ss + pooled) / n_c
        w = n_c / v
        mw = (w * m_c).sum(axis=1, keepdims=True) / w.sum(axis=1, keepdims=True)
        return (w * (m_c - mw) ** 2).sum(axis=1)

    obs = stat(d)[0]
    if kind == "centered":
        means = np.array([d[idx == j].mean() for j in range(k)])
        resid = d - means[idx]
    else:
        ss = np.array([((d[idx == j] - d[idx == j].mean()) ** 2).sum() for j in range(k)])
        v = (ss + ss.sum() / max((n_c - 1).sum(), 1.0)) / n_c
        w = n_c / v
        means = np.array([d[idx == j].mean() for j in range(k)])
        resid = d - (w * means).sum() / w.sum()
    null = np.concatenate(
        [stat(rng.choice((-1.0, 1.0), size=(2_000, d.size)) * resid) for _ in range(FLIPS // 2_000)]
    )
    return float((np.sum(null >= obs * (1 - 1e-12)) + 1) / (null.size + 1))


# -- the numbers each verdict rests on ---------------------------------------------------------
def numbers(c: dict, rec: pd.DataFrame, rng: np.random.Generator) -> dict:
    row: dict = {"id": c["id"], "family": c["family"], "kind": c["kind"],
                 "benchmark": c["benchmark"], "metric": c["metric"], "budget": c["budget"],
                 "cell": c.get("cell", ""), "unit": c["unit"], "seeds": c["seeds"],
                 "reported_effect": c.get("reported_effect"), "reported_p": c.get("reported_p"),
                 "threshold": c.get("threshold", 0.0), "margin": c.get("margin")}  # fmt: skip
    df = pair(rec, c)
    if isinstance(df, str):
        return {**row, "missing": df}
    d = df["d"].to_numpy()
    if d.size < 2:
        return {**row, "missing": f"{d.size} unit(s) in the cell"}
    n_seeds = int(rec.loc[rec["benchmark"] == c["benchmark"], "seed"].nunique())
    row.update(n=d.size, mean_t=df["t"].mean(), mean_b=df["b"].mean(), effect=d.mean(),
               sd=d.std(ddof=1), n_seeds=n_seeds)  # fmt: skip
    if c["kind"] == "means":
        return row
    if c["kind"] == "interaction":
        cells = df["cell"].to_numpy()
        row["p_strict"] = interaction(d, cells, rng, "studentized")
        row["p_as_tested"] = interaction(d, cells, rng, "centered")
        return row
    thr = float(c.get("threshold", 0.0))
    if c["kind"] == "relative":
        x = df["t"].to_numpy() - (1 + thr) * df["b"].to_numpy()
        row["ratio"] = df["t"].mean() / df["b"].mean() - 1
        row["ci_low"], row["ci_high"] = fieller(df["t"].to_numpy(), df["b"].to_numpy())
    else:
        x = d - (0.0 if c["kind"] == "equivalence" else thr)
        clusters = df["episode"].to_numpy() if c["unit"] == "query" else np.arange(d.size)
        row["ci_low"], row["ci_high"] = cluster_ci(d, clusters, rng)
        row["mde"] = mde_normal(d, c["alpha"])
    row["p_test"] = signflip(x, rng)
    if c["kind"] == "equivalence":
        row["p_tost"] = tost(d, float(c["margin"]), rng)
    if c["kind"] == "difference" and c["seeds"] == "fisher" and row["n_seeds"] > 1:
        ps = []
        for s in sorted(rec.loc[rec["benchmark"] == c["benchmark"], "seed"].unique()):
            ds = pair(rec, c, seed=int(s))
            assert not isinstance(ds, str)
            ps.append(signflip(ds["d"].to_numpy() - thr, rng))
        row["p_seeds"] = " ".join(f"{p:.4g}" for p in ps)
        row["p_fisher"] = float(stats.combine_pvalues(ps, method="fisher").pvalue)
    return row


def strict_p(row: dict) -> float | None:
    if isinstance(row.get("missing"), str) or row["kind"] == "means":
        return None
    if row["kind"] == "interaction":
        return row["p_strict"]
    return row["p_tost"] if row["kind"] == "equivalence" else row["p_test"]


def cmd_numbers(args: argparse.Namespace) -> None:
    claims = load_claims()
    rec = pd.concat([pd.read_parquet(p) for p in args.records], ignore_index=True)
    sample = pd.read_csv(HERE / "sample.csv")["id"].tolist()
    fams = {claims[i]["family"] for i in sample}
    rng = np.random.default_rng(SEED)
    rows = [numbers(c, rec, rng) for c in claims.values() if c["family"] in fams]
    df = pd.DataFrame(rows)
    df["p_strict_holm"] = np.nan
    df["held_level"] = np.nan
    for _, g in df.groupby("family"):
        ps = [(i, strict_p(r)) for i, r in g.iterrows()]
        ps = [(i, p) for i, p in ps if p is not None and not math.isnan(p)]
        if ps:
            df.loc[[i for i, _ in ps], "p_strict_holm"] = holm([p for _, p in ps])
            df.loc[g.index, "family_m"] = len(ps)
            alpha = claims[g["id"].iloc[0]]["alpha"]
            for k, (i, _) in enumerate(ps):
                df.loc[i, "held_level"] = held_by_holm([p for _, p in ps], k, alpha)
    # the strict test at the level Holm held the claim to, the others' p as observed: the
    # MDE of that test (docs/audit.md, MDE)
    df["mde_strict"] = [
        mde_sd(r["sd"], int(r["n"]), r["held_level"])
        if pd.notna(r.get("mde")) and pd.notna(r["held_level"]) else np.nan
        for _, r in df.iterrows()
    ]  # fmt: skip
    df["in_sample"] = df["id"].isin(sample)
    df["magnitude"] = [claimed_magnitude(claims[i]) for i in df["id"]]
    df["paper_ns"] = [paper_ns(claims[i]) for i in df["id"]]
    df.to_csv(HERE / "numbers.csv", index=False, float_format="%.6g")
    print(f"wrote {HERE / 'numbers.csv'}: {len(df)} claims ({df['in_sample'].sum()} sampled)")


# -- sampling and agreement ----------------------------------------------------------------------
def _audit(path: str) -> pd.DataFrame:
    data = json.loads(Path(path).read_text(encoding="utf-8"))
    return pd.DataFrame(
        {"id": c["id"], "strict": c["strict"]["verdict"], "as_tested": c["as_tested"]["verdict"]}
        for c in data["claims"]
    )


def cmd_sample(args: argparse.Namespace) -> None:
    aud = _audit(args.audit)
    rng = np.random.default_rng(SEED)
    picked: list[str] = []
    for _, g in sorted(aud.groupby("strict"), key=lambda kv: kv[0]):
        ids = g["id"].tolist()
        picked += rng.choice(ids, size=min(len(ids), PER_STRATUM), replace=False).tolist()
    rest = [i for i in aud["id"] if i not in picked]
    if len(picked) < MINIMUM:
        picked += rng.choice(rest, size=MINIMUM - len(picked), replace=False).tolist()
    order = {i: k for k, i in enumerate(aud["id"])}
    out = aud[aud["id"].isin(picked)][["id", "strict"]].rename(columns={"strict": "stratum"})
    out = out.sort_values("id", key=lambda s: s.map(order))
    out.to_csv(HERE / "sample.csv", index=False)
    print(out["stratum"].value_counts().to_string())


def _table(hand: pd.Series, audit: pd.Series) -> list[str]:
    labels = sorted(set(hand) | set(audit))
    tab = pd.crosstab(audit, hand).reindex(index=labels, columns=labels, fill_value=0)
    lines = ["| audit \\ hand | " + " | ".join(labels) + " |", "|---" * (len(labels) + 1) + "|"]
    lines += [f"| {a} | " + " | ".join(str(tab.loc[a, h]) for h in labels) + " |" for a in labels]
    lines += ["", "| verdict | audit says | hand says | both | precision | recall |",
              "|---|---|---|---|---|---|"]  # fmt: skip
    for v in labels:
        a, h = int((audit == v).sum()), int((hand == v).sum())
        both = int(((audit == v) & (hand == v)).sum())
        prec = f"{both / a:.2f} (≥ {_lower(both, a):.2f})" if a else "–"
        rec = f"{both / h:.2f} (≥ {_lower(both, h):.2f})" if h else "–"
        lines.append(f"| {v} | {a} | {h} | {both} | {prec} | {rec} |")
    return lines


def _lower(k: int, n: int) -> float:
    """One-sided 95% Clopper-Pearson lower bound of a proportion k/n."""
    return float(stats.beta.ppf(0.05, k, n - k + 1)) if k else 0.0


def _close_calls() -> list[str]:
    """Sampled claims whose verdict rested on a narrow margin (where two honest
    implementations of the same rule could part): p within .01 of alpha, or the MDE
    within 10% of the claimed magnitude."""
    num = pd.read_csv(HERE / "numbers.csv")
    num = num[num["in_sample"]]
    out = []
    for _, r in num.iterrows():
        why = []
        for col, label in (("p_test", "p"), ("p_strict_holm", "Holm p"), ("p_fisher", "Fisher p")):
            v = r.get(col)
            if pd.notna(v) and abs(v - ALPHA) <= 0.01:
                why.append(f"{label} {v:.3f}")
        mag = r.get("magnitude")
        for col, label, p in (
            ("mde", "MDE", "p_test"),
            ("mde_strict", "strict MDE (held level)", "p_strict_holm"),
        ):
            mde = r.get(col)
            significant = r[p] <= ALPHA  # the MDE is unused where the test was significant
            if r["kind"] == "difference" and pd.notna(mde) and pd.notna(mag) and not significant:
                if abs(mde / mag - 1) <= 0.10:
                    why.append(f"{label} {mde:.4f} vs claimed {mag:.4f}")
        if why:
            out.append(f"- `{r['id']}`: " + "; ".join(why))
    return out or ["- none."]


def _mdes_beside(path: str, ids: list[str]) -> dict[str, str]:
    """For each claim of `ids`, the MDEs both sides compared, read from numbers.csv and the
    audit's JSON (generated, not typed), and the audit's part kept in audit_mdes.json."""
    data = {c["id"]: c for c in json.loads(Path(path).read_text(encoding="utf-8"))["claims"]}
    num = pd.read_csv(HERE / "numbers.csv").set_index("id")
    kept, out = {}, {}
    for i in ids:
        st = {k: data[i].get(k) or {} for k in ("as_tested", "strict")}
        kept[i] = {k: {f: v.get(f) for f in ("verdict", "mde", "mde_range", "mde_method",
                                               "mde_alpha")} for k, v in st.items()}  # fmt: skip

        def said(v: dict) -> str:
            mde = v.get("mde")
            if mde is None and v.get("mde_range"):
                lo, hi = v["mde_range"]
                mde_s = f"{lo:.4f}–{'∞' if hi is None else f'{hi:.4f}'}"
            else:
                mde_s = "none" if mde is None else f"{mde:.4f}"
            alpha = v.get("mde_alpha")
            return f"{mde_s} ({v.get('mde_method')}, α {alpha:.4g})" if alpha else mde_s

        r = num.loc[i]
        out[i] = (
            f"[MDE, hand (normal approximation): as tested {r['mde']:.4f}, strict "
            f"{r['mde_strict']:.4f}; audit: as tested {said(st['as_tested'])}, strict "
            f"{said(st['strict'])}; claimed {r['magnitude']:.4f}]"
        )
    (HERE / "audit_mdes.json").write_text(json.dumps(kept, indent=1) + "\n", encoding="utf-8")
    return out


def _numbers_agree(path: str) -> list[str]:
    """n, effect and the strict p of each sampled claim, hand vs audit."""
    data = {c["id"]: c for c in json.loads(Path(path).read_text(encoding="utf-8"))["claims"]}
    num = pd.read_csv(HERE / "numbers.csv")
    num = num[num["in_sample"]].set_index("id")
    n_same = eff_gap = 0.0
    z = []
    for i, r in num.iterrows():
        rec = data[i].get("recomputed", {})
        n_same += rec.get("n") == r["n"]
        eff_gap = max(eff_gap, abs(rec.get("effect", math.nan) - r["effect"]))
        mine, theirs = strict_p(r.to_dict() | {"id": i}), data[i]["strict"]["pvalue"]
        if mine is None or theirs is None or min(mine, theirs) < 1e-3 or mine == theirs:
            continue  # at a Monte Carlo floor, or identical (e.g. both exactly 1)
        pbar = (mine + theirs) / 2
        se = math.sqrt(pbar * (1 - pbar) * (1 / 10_000 + 1 / FLIPS))
        z.append((abs(mine - theirs) / se, i, mine, theirs))
    worst = sorted(z, reverse=True)[:3]
    return [
        f"Numbers: n equal for {int(n_same)} of {len(num)} claims; largest |effect| gap "
        f"{eff_gap:.1e}; strict p (hand 20,000 sign vectors, audit 10,000; {len(z)} claims "
        "with both p >= .001) differ by at most "
        + ", ".join(f"{zz:.1f} SE (`{i}`: {a:.4f} vs {b:.4f})" for zz, i, a, b in worst)
        + " — Monte Carlo error.",
        "",
    ]


def cmd_agreement(args: argparse.Namespace) -> None:
    aud = _audit(args.audit).set_index("id")
    hand = pd.read_csv(HERE / "claims.csv").set_index("id")
    aud = aud.loc[hand.index]
    L = [f"Hand check of {len(hand)} claims (`benchmarks/hand_check/`; generated by "
         "`hand_check.py agreement`, do not edit by hand). Precision: of the claims the audit "
         "gives a verdict, the share the hand check gives it too; recall: of the claims the "
         "hand check gives a verdict, the share the audit gives it too; in parentheses the "
         "one-sided 95% Clopper-Pearson lower bound. The sample is stratified on the audit's "
         "strict verdict (at most 6 per verdict), so recall is that of the sample, not of "
         "the 148 claims.", ""]  # fmt: skip
    L += _numbers_agree(args.audit)
    for std, col in (("strict", "strict"), ("as tested", "as_tested")):
        agree = int((aud[col] == hand[col]).sum())
        L += [f"**{std}**: the audit agrees with the hand verdict on {agree} of {len(hand)} "
              "claims (rows: the audit's verdict; columns: the hand verdict).", "",
              *_table(hand[col], aud[col]), ""]  # fmt: skip
    dis = hand[(aud["strict"] != hand["strict"]) | (aud["as_tested"] != hand["as_tested"])]
    L += ["Disagreements:", ""]
    if dis.empty:
        L.append("- none.")
    mdes = _mdes_beside(args.audit, list(dis.index))
    for i, r in dis.iterrows():
        L.append(
            f"- `{i}`: audit {aud.loc[i, 'strict']} / {aud.loc[i, 'as_tested']}, hand "
            f"{r['strict']} / {r['as_tested']} (strict / as tested). {r['disagreement']} "
            f"{mdes[i]}"
        )
    L += ["", "Close calls (the verdict rested on a narrow margin; the hand numbers use "
          "20,000 sign vectors and the normal-approximation MDE, the audit 10,000 and the "
          "empirical MDE):", "", *_close_calls()]  # fmt: skip
    text = "\n".join(L) + "\n"
    (HERE / "agreement.md").write_text(text, encoding="utf-8")
    doc = ROOT / "docs" / "audit.md"
    body = doc.read_text(encoding="utf-8")
    begin, end = "<!-- hand-check:begin -->", "<!-- hand-check:end -->"
    if begin in body:
        head, rest = body.split(begin)
        _, tail = rest.split(end)
        doc.write_text(f"{head}{begin}\n{text}{end}{tail}", encoding="utf-8")
    print(text)


def cmd_combine(args: argparse.Namespace) -> None:
    """The record-schema columns of several runs' records.parquet in one file."""
    cols = ["benchmark", "episode_id", "query_id", "method", "budget", "seed", "cell",
            "metric", "value"]  # fmt: skip
    parts = [pd.read_parquet(Path(d) / "records.parquet")[cols] for d in args.runs]
    out = pd.concat(parts, ignore_index=True)
    out["cell"] = out["cell"].astype(object).where(out["cell"].notna(), None)
    out.to_parquet(args.out)
    print(f"wrote {args.out}: {len(out):,} records of {sorted(out['benchmark'].unique())}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    c = sub.add_parser("combine")
    c.add_argument("runs", nargs="+")
    c.add_argument("--out", required=True)
    s = sub.add_parser("sample")
    s.add_argument("--audit", required=True)
    n = sub.add_parser("numbers")
    n.add_argument("--records", nargs="+", required=True)
    a = sub.add_parser("agreement")
    a.add_argument("--audit", required=True)
    args = ap.parse_args()
    cmds = {"combine": cmd_combine, "sample": cmd_sample, "numbers": cmd_numbers}
    {**cmds, "agreement": cmd_agreement}[args.cmd](args)


if __name__ == "__main__":
    main()
