"""sigmoid computed with NumPy: the values and dtypes of scipy.special.expit, and no SciPy import for building a graph."""

import numpy as np


def test_sigmoid_is_expit_without_importing_scipy():
    """sigmoid's NumPy implementation gives expit's dtypes and values, and building a graph with it imports no SciPy."""
    import subprocess
    import sys

    import scipy.special

    from symlab.scalar.basic import _sigmoid

    rng = np.random.default_rng(0)
    for dtype in ("bool", "int8", "int16", "int64", "float16", "float32", "float64", "longdouble"):
        x = (rng.standard_normal(500) * 30).astype(dtype)
        got, want = _sigmoid(x), scipy.special.expit(x)  # float32: a subnormal where expit underflows to 0
        assert got.dtype == want.dtype, dtype
        np.testing.assert_allclose(got, want, rtol=3e-7 if dtype == "float32" else 1e-15, atol=1e-38, err_msg=dtype)
    edges = np.array([np.nan, -np.inf, np.inf, -0.0, 800.0, -800.0])
    np.testing.assert_array_equal(_sigmoid(edges), scipy.special.expit(edges))
    assert np.ndim(_sigmoid(0.5)) == 0 and _sigmoid(0.5) == scipy.special.expit(0.5)
    code = "import sys, symlab.tensor as st; st.sigmoid(st.dvector('x')); print('scipy' in sys.modules)"
    assert subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip() == "False"
