"""The disk cache no one can poison: private directories, a per-user secret, signed entries.

Each scenario that loads from the cache runs in fresh processes, with ``SYMLAB_CACHE_DIR`` and
``SYMLAB_SECRET_FILE`` in a temporary folder: a planted pickle is never unpickled, a changed,
truncated, added or removed file is a miss with its reason, a directory others can write to or
another user owns is refused, an entry of other versions is not loaded, and two processes
compiling the same graph at once leave an entry a third one loads.
"""

from __future__ import annotations

import json
import os
import pickle
import re
import shutil
import stat
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from symlab.compile.numba import cache, cache_entry, cache_secret

pytestmark = pytest.mark.numba

SCRIPT = r"""
import json, os, sys, time, warnings
warnings.simplefilter("always")
caught = []
warnings.showwarning = lambda message, category, *args, **kwargs: caught.append(f"{category.__name__}: {message}")
import numpy as np
import symlab, symlab.tensor as st
from symlab.compile.numba import cache
exec(os.environ.get("TEST_PATCH", ""))
x, y = st.dvectors("x", "y")
a, b = np.linspace(0, 1, 6), np.linspace(1, 2, 6)
graphs = {  # separate kernel modules; a parallel kernel inside the graph module
    "kernels": ((st.exp(x) * y).sum() * 0.5 + st.dot(x, y), lambda a, b: (np.exp(a) * b).sum() * 0.5 + a @ b),
    "fused": (st.exp(-x ** 2) * st.sin(y) + st.log1p(x * x) * 0.5,
              lambda a, b: np.exp(-a ** 2) * np.sin(b) + np.log1p(a * a) * 0.5),
}
barrier = os.environ.get("TEST_BARRIER")  # processes started together compile together: each waits for all
if barrier:
    open(os.path.join(barrier, str(os.getpid())), "w").close()
    while len(os.listdir(barrier)) < int(os.environ["TEST_PARTIES"]):
        time.sleep(0.001)
report = {}
for name in os.environ.get("TEST_GRAPHS", "kernels").split(","):
    out, reference = graphs[name]
    f = symlab.function([x, y], out)
    info = f._runner.compile_info
    ok = bool(np.allclose(f(a, b), reference(a, b), rtol=1e-13))
    fn = f._runner.generated.steps[0].function
    misses = sum(fn.stats.cache_misses.values())
    # Another layout: Numba adds an overload to the entry on this first call (signed again by symlab).
    ok = ok and bool(np.allclose(f(a[::2], b[::2]), reference(a[::2], b[::2]), rtol=1e-13))
    report[name] = {"hit": info.cache_hit, "reason": info.miss_reason, "ok": ok, "path": info.module_path,
                    "strided_compiled": sum(fn.stats.cache_misses.values()) - misses}
print("RESULT " + json.dumps({"graphs": report, "warnings": caught}))
"""

VM_SCRIPT = r"""
import json
import numpy as np
import symlab, symlab.tensor as st
from symlab.compile.numba import elemwise_vm
elemwise_vm.VM_MIN_OPS = 1
x, y = st.dvectors("x", "y")
f = symlab.function([x, y], st.tanh(st.exp(x) * y) - st.cos(y))
info = f._runner.compile_info
value = f(np.arange(3.0), np.ones(3))
ok = bool(np.allclose(value, np.tanh(np.exp(np.arange(3.0))) - np.cos(1.0), rtol=1e-14))
print("RESULT " + json.dumps({"hit": info.cache_hit, "reason": info.miss_reason, "vm": info.vm_nodes, "ok": ok}))
"""


class Payload:
    """A pickle that creates ``marker`` when it is unpickled (what an attacker would plant)."""

    def __init__(self, marker: Path) -> None:
        self.marker = str(marker)

    def __reduce__(self):
        return (open, (self.marker, "w"))


def environment(root: Path) -> dict[str, str]:
    env = dict(os.environ, SYMLAB_CACHE_DIR=str(root / "cache"), SYMLAB_SECRET_FILE=str(root / "config" / "secret"))
    env["SYMLAB_BACKGROUND_COMPILE"] = "0"
    env.pop("NUMBA_CACHE_DIR", None)
    return env


def parse(stdout: str, stderr: str) -> dict:
    lines = [s for s in stdout.splitlines() if s.startswith("RESULT ")]
    assert lines, stderr[-3000:]
    return json.loads(lines[-1][len("RESULT ") :])


def run(root: Path, graphs: str = "kernels", patch: str = "", script: str = SCRIPT) -> dict:
    """Run ``script`` in a fresh process on the cache in ``root``; its RESULT line (one graph's, if one)."""
    env = dict(environment(root), TEST_GRAPHS=graphs, TEST_PATCH=patch)
    done = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    got = parse(done.stdout, done.stderr)
    if script is SCRIPT and "," not in graphs:
        got = {**got["graphs"][graphs], "warnings": got["warnings"]}
    return got


def files_of(folder: Path) -> dict[str, tuple[int, int]]:
    """Every file under ``folder``: relative path -> (size, mtime_ns)."""
    return {str(p.relative_to(folder)): (p.stat().st_size, p.stat().st_mtime_ns) for p in folder.rglob("*") if p.is_file()}


@pytest.fixture(scope="module")
def template(tmp_path_factory) -> Path:
    """A complete cache (both graphs, both layouts) and its secret, built once; tests work on copies."""
    root = tmp_path_factory.mktemp("template")
    first = run(root, graphs="kernels,fused")["graphs"]
    assert all(g["hit"] is False and g["ok"] for g in first.values()), first
    return root


@pytest.fixture
def warm(template: Path, tmp_path: Path) -> Path:
    """A private copy of the complete cache and its secret (modes kept)."""
    shutil.copytree(template / "cache", tmp_path / "cache", copy_function=shutil.copy2)
    shutil.copytree(template / "config", tmp_path / "config", copy_function=shutil.copy2)
    return tmp_path


def graph_entry(result: dict) -> Path:
    return Path(result["path"]).parent


# -- hits, and what symlab creates --------------------------------------------------------------------------------------
def test_a_copied_warm_cache_hits_and_the_added_layout_was_signed(warm):
    """Loading verifies and passes; the overload Numba added on a first strided call was signed: it loads too."""
    for graphs in ("kernels", "fused"):
        got = run(warm, graphs)
        assert got["hit"] is True and got["reason"] is None and got["ok"], got
        assert got["strided_compiled"] == 0, got  # the other layout's machine code came from the cache
        assert not got["warnings"]


def test_modes_of_the_secret_and_the_directories(tmp_path):
    """The secret is created 0o600, the cache directory, its parents symlab made, entries and __pycache__ 0o700."""
    root = tmp_path / "deep" / "er"
    got = run(root)
    assert got["ok"] and got["hit"] is False
    secret = root / "config" / "secret"
    assert stat.S_IMODE(secret.stat().st_mode) == 0o600
    assert len(bytes.fromhex(secret.read_text().strip())) == 32
    entry = graph_entry(got)
    for folder in (tmp_path / "deep", root, root / "config", root / "cache", entry, entry / "__pycache__"):
        assert stat.S_IMODE(folder.stat().st_mode) == 0o700, folder
    assert (entry / cache.SIGNATURE_FILE).is_file()


# -- a planted pickle ---------------------------------------------------------------------------------------------------
def plant(folder: Path, pattern: str, marker: Path) -> int:
    """Replace every file matching ``pattern`` under ``folder`` by pickles that create ``marker``; how many.

    Laid out as Numba's index (two pickles: the version, then the stamp and overloads), so it is well formed.
    """
    planted = 0
    for path in folder.rglob(pattern):
        path.write_bytes(pickle.dumps(Payload(marker)) + pickle.dumps((Payload(marker), {})))
        planted += 1
    return planted


def test_the_payload_really_runs_when_unpickled(tmp_path):
    """The test's payload is live: unpickling it creates the marker (so its absence below means something)."""
    marker = tmp_path / "ran"
    pickle.loads(pickle.dumps(Payload(marker)))
    assert marker.exists()


def test_a_pickle_planted_in_an_index_is_never_unpickled(warm):
    marker = warm / "payload-ran"
    assert plant(warm / "cache", "*.nbi", marker) >= 4  # every index: the graph's and the kernels'
    got = run(warm)
    assert not marker.exists(), "the planted pickle was unpickled"
    assert got["ok"] and got["hit"] is False
    assert got["reason"].startswith(cache.SIGNATURE_MISMATCH) and ".nbi changed" in got["reason"], got["reason"]
    again = run(warm)  # rebuilt, signed: a hit, and still nothing ran
    assert again["hit"] is True and again["ok"] and not marker.exists()


def test_a_pickle_planted_with_a_forged_signature_file_is_never_unpickled(warm):
    """Rewriting the signature file does not help without the user's key."""
    marker = warm / "payload-ran"
    first = run(warm)
    entry = graph_entry(first)
    plant(entry, "*.nbi", marker)
    signature = json.loads((entry / cache.SIGNATURE_FILE).read_text())
    forger = bytes(32)  # the attacker's own key
    import hashlib
    import hmac

    for rel in signature["files"]:
        data = (entry / rel).read_bytes()
        message = b"symlab-cache-file\0" + entry.name.encode() + b"\0" + rel.encode() + b"\0" + data
        signature["files"][rel] = hmac.new(forger, message, hashlib.sha256).hexdigest()
    signature["mac"] = cache_entry.manifest_mac(forger, signature)
    (entry / cache.SIGNATURE_FILE).write_text(json.dumps(signature))
    got = run(warm)
    assert not marker.exists()
    assert got["ok"] and got["hit"] is False
    assert "not signed with this user's key" in got["reason"], got["reason"]


def test_a_pickle_planted_in_the_register_machine_entry_is_never_unpickled(tmp_path):
    first = run(tmp_path, script=VM_SCRIPT)
    assert first["vm"] == 1 and first["ok"] and first["hit"] is False
    assert run(tmp_path, script=VM_SCRIPT)["hit"] is True
    marker = tmp_path / "payload-ran"
    assert plant(tmp_path / "cache", "*.nbi", marker)
    got = run(tmp_path, script=VM_SCRIPT)
    assert not marker.exists(), "the planted pickle was unpickled"
    assert got["ok"] and got["hit"] is False and cache.SIGNATURE_MISMATCH in got["reason"], got
    assert run(tmp_path, script=VM_SCRIPT)["hit"] is True


# -- damaged entries ----------------------------------------------------------------------------------------------------
def damage(entry: Path, how: str) -> str:
    """Damage the graph entry ``entry`` in one way; the name of the file concerned."""
    pycache = entry / "__pycache__"
    data = sorted(pycache.glob("*graph_fn*.nbc"))[0]
    if how == "changed":  # same size, one byte of the machine code blob different
        raw = bytearray(data.read_bytes())
        raw[len(raw) // 2] ^= 0xFF
        data.write_bytes(bytes(raw))
        return data.name
    if how == "truncated":
        data.write_bytes(data.read_bytes()[: data.stat().st_size // 2])
        return data.name
    if how == "added":
        extra = pycache / (data.name.replace(".1.nbc", ".7.nbc"))
        shutil.copy(data, extra)
        return extra.name
    if how == "removed":
        data.unlink()
        return data.name
    raise AssertionError(how)


@pytest.mark.parametrize(
    ("how", "says"),
    [
        ("changed", "changed since symlab signed it"),
        ("truncated", "is unreadable"),
        ("added", "is not signed (added)"),
        ("removed", "is missing"),
    ],
)
def test_a_damaged_entry_is_a_miss_with_its_reason_and_is_rebuilt(warm, how, says):
    entry = graph_entry(run(warm))
    name = damage(entry, how)
    got = run(warm)
    assert got["ok"] and got["hit"] is False
    assert cache.SIGNATURE_MISMATCH in got["reason"] and name in got["reason"] and says in got["reason"], got["reason"]
    if how == "truncated":
        assert got["reason"].startswith(cache.CORRUPTED)
    if how == "added":
        assert not (entry / "__pycache__" / name).exists()  # removed with the rest, never loaded
    again = run(warm)
    assert again["hit"] is True and again["ok"] and again["reason"] is None


# -- refused directories ------------------------------------------------------------------------------------------------
def where(warm: Path, which: str, entry: Path) -> Path:
    return {"root": warm / "cache", "entry": entry, "pycache": entry / "__pycache__"}[which]


@pytest.mark.parametrize("which", ["root", "entry", "pycache"])
def test_a_directory_others_can_write_is_refused(warm, which):
    """Group/other-writable: a warning naming it, results computed in memory, nothing read from it or written."""
    entry = graph_entry(run(warm))
    marker = warm / "payload-ran"
    plant(entry, "*graph_fn*.nbi", marker)  # whatever lies there must not even be looked at
    folder = where(warm, which, entry)
    folder.chmod(0o777)
    before = files_of(warm / "cache")
    got = run(warm)
    assert got["ok"] and got["hit"] is False and got["strided_compiled"] == 1
    assert got["reason"].startswith(cache.REFUSED), got["reason"]
    assert not marker.exists()
    assert files_of(warm / "cache") == before  # nothing written either
    warning = [w for w in got["warnings"] if w.startswith("CacheSecurityWarning")]
    assert len(warning) == 1 and str(folder) in warning[0], got["warnings"]
    assert "group or others can write" in warning[0] and "mode 0o700" in warning[0] and "0o777" in warning[0]


def test_the_parallel_graph_compiles_in_memory_when_refused(warm):
    (warm / "cache").chmod(0o757)
    got = run(warm, "fused")
    assert got["ok"] and got["hit"] is False and got["reason"].startswith(cache.REFUSED)


#: A uid that is not the test's.
OTHER_UID = 54321


@pytest.mark.parametrize("which", ["root", "entry"])
def test_a_directory_another_user_owns_is_refused(warm, which):
    probe = warm / "probe"
    probe.mkdir()
    try:
        os.chown(probe, OTHER_UID, -1)
    except PermissionError:
        pytest.skip(f"giving a directory to another user (os.chown) needs root; this test runs as uid {os.geteuid()}")
    entry = graph_entry(run(warm))
    folder = where(warm, which, entry)
    os.chown(folder, OTHER_UID, -1)
    marker = warm / "payload-ran"
    plant(entry, "*graph_fn*.nbi", marker)
    got = run(warm)
    assert got["ok"] and got["hit"] is False and got["reason"].startswith(cache.REFUSED), got
    assert not marker.exists()
    warning = [w for w in got["warnings"] if w.startswith("CacheSecurityWarning")]
    assert len(warning) == 1 and str(folder) in warning[0] and f"owned by uid {OTHER_UID}" in warning[0], got["warnings"]


def test_a_secret_others_can_read_is_refused(warm):
    secret = warm / "config" / "secret"
    secret.chmod(0o644)
    got = run(warm)
    assert got["ok"] and got["hit"] is False and got["reason"].startswith(cache.REFUSED)
    assert any(str(secret) in w and "mode 0o600" in w for w in got["warnings"]), got["warnings"]


# -- other versions -----------------------------------------------------------------------------------------------------
OTHER = "numba 0.0; numpy 0.0; python (3, 0, 0); symlab 0.0 (simulated other version)"


def test_an_entry_of_another_version_is_not_loaded(tmp_path):
    """Another environment compiles under another key; an entry signed elsewhere found under this key is rebuilt."""
    other_key = run(tmp_path, patch=f"from symlab.compile.numba import environment\nenvironment._ENV = {OTHER!r}")
    assert other_key["ok"] and other_key["hit"] is False
    ours = run(tmp_path)
    assert ours["hit"] is False and ours["reason"].startswith("new key"), ours  # the other entry is not ours
    assert graph_entry(ours) != graph_entry(other_key)
    # An entry under this key, written by another version (a key that lacked what changed): signed with its
    # environment, which is checked.
    shutil.rmtree(tmp_path / "cache")
    same_key = (
        "import hashlib\n"
        "from symlab.compile.numba import environment\n"
        "ours = environment.current_environment()\n"
        "cache.cache_key = lambda source: hashlib.sha256(f'{ours}\\n{source}'.encode()).hexdigest()[:24]\n"
        f"environment.current_environment = lambda: {OTHER!r}\n"
    )
    signed_elsewhere = run(tmp_path, patch=same_key)
    assert signed_elsewhere["ok"] and graph_entry(signed_elsewhere) == graph_entry(ours)  # the same key
    got = run(tmp_path)
    assert got["ok"] and got["hit"] is False and got["reason"].startswith(cache.OTHER_ENVIRONMENT), got["reason"]
    assert run(tmp_path)["hit"] is True


# -- concurrency --------------------------------------------------------------------------------------------------------
def test_two_processes_compiling_the_same_graph_at_once(tmp_path):
    """Both correct; the entry they leave is whole and signed (one secret between them): a third process hits."""
    (tmp_path / "barrier").mkdir()
    env = dict(environment(tmp_path), TEST_GRAPHS="kernels,fused", TEST_BARRIER=str(tmp_path / "barrier"), TEST_PARTIES="2")
    both = [
        subprocess.Popen([sys.executable, "-c", SCRIPT], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        for _ in range(2)
    ]
    results = []
    for p in both:
        out, err = p.communicate(timeout=600)
        assert p.returncode == 0, err[-3000:]
        results.append(parse(out, err))
    for got in results:
        assert all(g["ok"] for g in got["graphs"].values()) and not got["warnings"], got
    third = run(tmp_path, "kernels,fused")
    assert all(g["hit"] is True and g["ok"] and g["strided_compiled"] == 0 for g in third["graphs"].values()), third


# -- in this process: the secret, the signature ------------------------------------------------------------------------
def test_the_secret_is_made_once_and_refused_when_not_private(tmp_path, monkeypatch):
    path = tmp_path / "conf" / "symlab" / "cache_secret"
    monkeypatch.setenv("SYMLAB_SECRET_FILE", str(path))
    monkeypatch.setattr(cache_secret, "_SECRETS", {})
    key = cache.secret_key(tmp_path / "cache")
    assert len(key) == 32 and stat.S_IMODE(path.stat().st_mode) == 0o600
    assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700
    monkeypatch.setattr(cache_secret, "_SECRETS", {})
    assert cache.secret_key(tmp_path / "cache") == key  # read back, not made again
    path.chmod(0o640)
    monkeypatch.setattr(cache_secret, "_SECRETS", {})
    with pytest.raises(cache.CacheRefused, match=r"cache_secret: expected a file owned by .* \(mode 0o600\), found mode"):
        cache.secret_key(tmp_path / "cache")


def test_the_secret_is_refused_inside_the_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("SYMLAB_SECRET_FILE", str(tmp_path / "cache" / "secret"))
    with pytest.raises(cache.CacheRefused, match="expected a file outside the cache directory"):
        cache.secret_key(tmp_path / "cache")


def test_racing_creators_of_the_secret_end_with_one_key(tmp_path, tmp_path_factory):
    """Processes creating the secret at the same moment all read the same key."""
    path = tmp_path / "secret"
    barrier = tmp_path_factory.mktemp("barrier")  # each process, once imported, waits for the four
    code = (
        "import os, sys, time\n"
        "from symlab.compile.numba import cache\n"
        "open(os.path.join(sys.argv[1], str(os.getpid())), 'w').close()\n"
        "while len(os.listdir(sys.argv[1])) < 4: pass\n"
        "print(cache.secret_key(cache.Path(sys.argv[2])).hex())\n"
    )
    env = dict(os.environ, SYMLAB_SECRET_FILE=str(path))
    procs = [
        subprocess.Popen([sys.executable, "-c", code, str(barrier), str(tmp_path / "cache")], env=env, stdout=subprocess.PIPE, text=True)
        for _ in range(4)
    ]
    keys = {p.communicate(timeout=120)[0].strip() for p in procs}
    assert len(keys) == 1 and keys == {path.read_text().strip()}
    assert not [p for p in tmp_path.iterdir() if p.name != "secret"]  # no temporary file left


def test_verify_names_each_problem(tmp_path, monkeypatch):
    """Without Numba: an entry's files signed, then changed, added, removed; each reason names the file."""
    monkeypatch.setenv("SYMLAB_SECRET_FILE", str(tmp_path / "secret"))
    root = tmp_path / "cache"
    entry = cache.prepare_entry("x = 1\n", directory=root)
    assert entry.miss_reason == cache.NEW_KEY and entry.disk
    (entry.pycache / "m.nbc").write_bytes(pickle.dumps((1, b"code")))
    with cache.entry_lock(entry.folder):
        cache.sign_entry(entry)
    assert cache.verify_entry(entry) is None
    (entry.pycache / "m.nbc").write_bytes(pickle.dumps((2, b"code")))
    assert cache.verify_entry(entry) == f"{cache.SIGNATURE_MISMATCH}: __pycache__/m.nbc changed since symlab signed it"
    (entry.pycache / "m.nbc").write_bytes(b"\x80\x05garbage")
    assert cache.verify_entry(entry).startswith(f"{cache.CORRUPTED}: __pycache__/m.nbc is unreadable")
    (entry.pycache / "m.nbc").unlink()
    assert cache.verify_entry(entry) == f"{cache.SIGNATURE_MISMATCH}: __pycache__/m.nbc is missing"
    (entry.pycache / "m.nbc").write_bytes(pickle.dumps((1, b"code")))
    assert cache.verify_entry(entry) is None  # the same bytes again
    (entry.folder / "extra.py").write_text("print('hi')\n")
    assert cache.verify_entry(entry) == f"{cache.SIGNATURE_MISMATCH}: extra.py is not signed (added)"
    (entry.folder / "extra.py").unlink()
    (entry.pycache / "link.nbi").symlink_to(entry.pycache / "m.nbc")
    assert cache.verify_entry(entry) == f"{cache.SIGNATURE_MISMATCH}: __pycache__/link.nbi is not a regular file (added)"
    again = cache.prepare_entry("x = 1\n", directory=root)  # rebuilt: only the module is left, signed
    assert again.miss_reason.startswith(cache.SIGNATURE_MISMATCH)
    assert sorted(p.name for p in again.folder.rglob("*")) == ["__pycache__", again.module_path.name, cache.SIGNATURE_FILE]
    assert cache.verify_entry(again) is None


def test_a_refused_cache_compiles_in_memory_in_this_process(tmp_path, monkeypatch):
    """prepare_entry refuses a world-writable directory with a warning; the module runs with no file at all."""
    monkeypatch.setenv("SYMLAB_SECRET_FILE", str(tmp_path / "secret"))
    root = tmp_path / "cache"
    root.mkdir()
    root.chmod(0o777)
    source = "import numba\n\n@numba.njit(cache=True)\ndef graph_fn(a):\n    return a + 1\n"
    with pytest.warns(cache.CacheSecurityWarning, match=re.escape(f"refusing the disk cache directory {root}: ") + ".*found mode"):
        entry = cache.prepare_entry(source, directory=root)
    assert not entry.disk and entry.miss_reason.startswith(cache.REFUSED)
    module = cache.import_entry(entry, fresh=True, name="symlab_test_in_memory")
    assert module.graph_fn(np.float64(1.0)) == 2.0
    assert list(root.iterdir()) == []
