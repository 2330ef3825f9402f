"""sources.py: which code is the user's."""
from __future__ import annotations

import sys

from grad_magic import sources
from grad_magic.sources import Sources


def test_code_inductor_generated_is_torchs_not_the_users(monkeypatch, tmp_path):
    """torch.compile's inductor writes Python files to its cache: a traceback through compiled code must not
    name them as the user's frames."""
    assert not Sources().is_user("/tmp/torchinductor_root/ab/cabc123.py")
    monkeypatch.setenv("TORCHINDUCTOR_CACHE_DIR", str(tmp_path))
    assert not Sources().is_user(str(tmp_path / "xy" / "cxy.py"))
    assert Sources().is_user("/home/me/project/train.py")


def test_packages_installed_into_a_folder_on_the_path_are_not_the_users(monkeypatch, tmp_path):
    """`pip install --target DIR` with DIR on PYTHONPATH (as on a hosted GPU machine, where IPython sat there):
    IPython's own `run_code` frame under every cell must not pass for the user's code."""
    target, project = tmp_path / "site", tmp_path / "project"
    (target / "IPython" / "core").mkdir(parents=True)
    (target / "ipython-9.18.1.dist-info").mkdir()
    project.mkdir()
    monkeypatch.setattr(sys, "path", [str(target), str(project), *sys.path])
    monkeypatch.setattr(sources, "_LIBRARIES", sources._library_roots())
    assert not Sources().is_user(str(target / "IPython" / "core" / "interactiveshell.py"))
    assert Sources().is_user(str(project / "train.py"))  # NB: the user's folder on the path: no .dist-info
