"""sources.py: which code is the user's."""
from __future__ import annotations

from grad_magic.sources import Sources


def test_code_inductor_generated_is_torchs_not_the_users(monkeypatch, tmp_path):
    """torch.compile's inductor writes Python files to its cache: a traceback through compiled code must not
    name them as the user's frames."""
    assert not Sources().is_user("/tmp/torchinductor_root/ab/cabc123.py")
    monkeypatch.setenv("TORCHINDUCTOR_CACHE_DIR", str(tmp_path))
    assert not Sources().is_user(str(tmp_path / "xy" / "cxy.py"))
    assert Sources().is_user("/home/me/project/train.py")
