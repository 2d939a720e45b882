"""Theano's ``tensor.signal`` namespace: ``pool`` (``pool_2d``)."""
