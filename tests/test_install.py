"""Install without surprises (issue 21): a clone on sys.path, no torch for the demo."""

import importlib.metadata
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _editable_pth() -> str | None:
    files = importlib.metadata.distribution("osustat").files or []
    pth = [f for f in files if f.name.startswith("__editable__") and f.name.endswith(".pth")]
    return pth[0].read_text() if pth else None


def test_clone_folder_on_sys_path_does_not_shadow_the_install(tmp_path):
    """`python -m osustat` from the folder holding a clone named osustat (issue 21)."""
    pth = _editable_pth()
    if pth is not None and "import " in pth:
        pytest.skip(
            "osustat is installed editable in setuptools' lenient (finder) mode, which a folder "
            "named osustat on sys.path shadows; `make` installs it in strict mode"
        )
    (tmp_path / "osustat").symlink_to(ROOT, target_is_directory=True)
    for args in (
        ["-m", "osustat", "--version"],
        ["-c", "import osustat, osustat.retrieval.osumem; print('osustat', osustat.__version__)"],
    ):
        proc = subprocess.run(
            [sys.executable, *args], cwd=tmp_path, capture_output=True, text=True, check=False
        )
        assert proc.returncode == 0, proc.stderr
        assert proc.stdout.strip().startswith("osustat 0.")


def test_source_checkout_finds_the_mapped_subpackages():
    """From the repository root, osustat.retrieval is the repository's retrieval/ folder."""
    code = "import osustat.retrieval.osumem as m, osustat.reports.cellwise as r; print(m.__file__)"
    proc = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=False
    )
    assert proc.returncode == 0, proc.stderr
    assert Path(proc.stdout.strip()).resolve() == ROOT / "retrieval" / "osumem.py"


BLOCKER = """
import sys
tried = []
class Block:
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in {"torch", "sentence_transformers", "transformers"}:
            tried.append(name)
            raise ImportError(f"blocked {name}")
sys.meta_path.insert(0, Block())
from osustat.cli.main import main
rc = main(["reproduce", "synthetic", "--out", sys.argv[1], "--episodes", "3",
           "--resamples", "100", "--no-progress"])
assert not tried, tried
sys.exit(rc)
"""


def test_demo_never_imports_torch(tmp_path):
    """`make demo` installs no torch: the synthetic pipeline must never try to import it."""
    proc = subprocess.run(
        [sys.executable, "-c", BLOCKER, str(tmp_path / "out")],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert (tmp_path / "out" / "report.md").exists()


def test_makefile_demo_target_installs_no_extra():
    text = (ROOT / "Makefile").read_text()
    demo = text.split("\ndemo:", 1)[1].split("\n\n", 1)[0]
    base = text.split("\n$(BASE):", 1)[1].split("\n\n", 1)[0]
    assert "$(BASE)" in demo.splitlines()[0] and "$(FULL)" not in demo
    assert "torch" not in base and "[" not in base and "editable_mode=strict" in text
