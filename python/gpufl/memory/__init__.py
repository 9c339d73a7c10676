"""GPU memory: where it went, what leaks, and why it ran out.

The framework layer of memory (PyTorch's caching allocator) recorded into
the running gpufl session (``_torch_source``, through ``_record``).
"""
