"""symlab.formats.to_dask / dask_compute: the same values as the compiled function, on Dask's schedulers."""

import dask.threaded as threaded
import numpy as np
import pytest
from formats_corpus import compiled_corpus, corpus

import symlab
import symlab.tensor as T
from symlab.formats import dask_compute, index, to_dask
from symlab.formats.dask import KernelTask, PerformTask
from symlab.graph import FunctionGraph

CORPUS = sorted(corpus())


def assert_same(got, want):
    assert type(got) is type(want)
    if isinstance(want, dict):
        assert got.keys() == want.keys()
        got, want = list(got.values()), list(want.values())
    if not isinstance(want, list):
        got, want = [got], [want]
    assert len(got) == len(want)
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=1e-12)
        assert np.asarray(g).dtype == np.asarray(w).dtype


@pytest.mark.parametrize("name", CORPUS)
def test_threaded_scheduler_gives_the_compiled_values(name):
    f, values = compiled_corpus()[name]
    copies = [v.copy() for v in values]
    assert_same(dask_compute(f, *values, scheduler=threaded.get), f(*values))
    assert_same(dask_compute(f, *values), f(*values))  # threaded is the default
    for v, c in zip(values, copies):  # inplace nodes copied what they overwrite
        np.testing.assert_array_equal(v, c)


def test_the_task_graph_is_in_dasks_standard_form():
    x = T.dvector("x")
    first, second = T.split(x, [1, 2])
    dsk, input_keys, output_keys = to_dask(FunctionGraph([x], [T.exp(second).sum(), first, x]))
    assert input_keys == ("x",)
    assert output_keys == ("sum-2", "split-0.0", "x")
    assert all(isinstance(k, str) for k in dsk)
    assert dsk["split-0.0"] == (index, "split-0", 0)
    fn, *args = dsk["split-0"]
    assert isinstance(fn, PerformTask) and args == ["x", "constant-0", "constant-1"]
    assert dsk["sum-2"][1:] == ("elemwise-1",)
    dsk = dict(dsk, x=np.arange(3.0))
    got = threaded.get(dsk, list(output_keys))
    np.testing.assert_allclose(got[0], np.exp([1.0, 2.0]).sum())
    np.testing.assert_array_equal(got[1], [0.0])


def test_tasks_use_the_linkers_kernels_when_it_offers_them():
    calls = []

    class Linker:
        def node_callable(self, node):
            if node.op != T.exp:
                return None  # no kernel: perform

            def kernel(value):
                calls.append(node.op)
                return (np.exp(value),)

            return kernel

    x = T.dvector("x")
    fg = FunctionGraph([x], [T.exp(x) * 2.0])
    dsk, ins, outs = to_dask(fg, linker=Linker())
    kinds = sorted(type(v[0]).__name__ for v in dsk.values() if isinstance(v, tuple))
    assert kinds == ["KernelTask", "PerformTask", "PerformTask"]
    got = threaded.get(dict(dsk, x=np.array([0.0, 1.0])), list(outs))
    np.testing.assert_allclose(got[0], 2 * np.exp([0.0, 1.0]))
    assert calls == [T.exp]


def test_a_kernel_must_return_one_value_per_output():
    x = T.dvector("x")
    task = KernelTask(lambda v: v, T.exp(x).owner)
    with pytest.raises(TypeError, match=r"the kernel of Elemwise\{exp,no_inplace\} must return a tuple of 1 output values"):
        task(np.ones(2))


@pytest.mark.filterwarnings("ignore:.*has no Numba kernel")
def test_default_mode_functions_and_fgraphs():
    x, y = T.dvectors("x", "y")
    f = symlab.function([x, y], {"s": (x * y).sum(), "e": T.exp(x) + y})
    assert_same(dask_compute(f, [1.0, 2.0], [3.0, 4.0], scheduler="sync"), f([1.0, 2.0], [3.0, 4.0]))
    fg = FunctionGraph([x, y], [x - y])
    assert dask_compute(fg, [1.0, 2.0], [3.0, 5.0])[0].tolist() == [-2.0, -3.0]


def test_shared_variables_and_refusals():
    x = T.dvector("x")
    w = symlab.shared(np.array([1.0, 2.0]), name="w")
    f = symlab.function([x], x * w, mode="NUMPY")
    assert dask_compute(f, [3.0, 4.0]).tolist() == [3.0, 8.0]
    g = symlab.function([x], x.sum(), updates={w: w + 1.0}, mode="NUMPY")
    with pytest.raises(ValueError, match="has updates of w"):
        dask_compute(g, [1.0, 2.0])
    with pytest.raises(TypeError, match="takes 1 input values, received 2"):
        dask_compute(f, [1.0], [2.0])
    with pytest.raises(TypeError, match="bad value for input 0"):
        dask_compute(f, "not numbers")
    with pytest.raises(ValueError, match="unknown scheduler 'gpu'"):
        dask_compute(f, [1.0, 2.0], scheduler="gpu")


# -- dask.distributed on loopback -------------------------------------------------------------------------


@pytest.fixture(scope="module")
def client():
    import distributed

    # processes=False keeps it fast; protocol="tcp" so that host= applies (the in-process protocol has no host)
    cluster = distributed.LocalCluster(
        n_workers=1, processes=False, host="127.0.0.1", protocol="tcp", dashboard_address=None
    )
    client = distributed.Client(cluster)
    yield client
    client.close()
    cluster.close()


@pytest.mark.parametrize("name", CORPUS)
def test_distributed_scheduler_gives_the_compiled_values(client, name):
    f, values = compiled_corpus()[name]
    assert_same(dask_compute(f, *values, scheduler=client), f(*values))


@pytest.mark.numba
def test_numba_functions_run_their_compiled_kernels_on_dask():
    x = T.dvector("x")
    f = symlab.function([x], [T.exp(x) * 2.0 + x, x.sum()], mode="NUMBA")
    graph = to_dask(f)
    kinds = {type(task[0]) for task in graph.dsk.values() if isinstance(task, tuple) and callable(task[0])}
    assert KernelTask in kinds and PerformTask not in kinds
    value = np.arange(4.0)
    assert_same(dask_compute(f, value, scheduler=threaded.get), f(value))
