"""torch.device, dtypes and a Tensor that holds a block of the fake
allocator (_allocator.py) for as long as it lives, as a CUDA tensor holds
its memory."""


class _Device:
    def __init__(self, type_or_spec, index=None):
        if isinstance(type_or_spec, _Device):
            type_or_spec, index = type_or_spec.type, type_or_spec.index
        if index is None and isinstance(type_or_spec, str) and ":" in type_or_spec:
            type_or_spec, idx = type_or_spec.split(":", 1)
            index = int(idx)
        if not isinstance(type_or_spec, str) or type_or_spec not in ("cuda", "cpu", "mps", "meta", "xla"):
            raise RuntimeError("Expected one of cpu, cuda, mps, ... device type at start of device string: %s"
                               % (type_or_spec,))
        self.type, self.index = type_or_spec, index

    def __str__(self):
        return self.type if self.index is None else "%s:%d" % (self.type, self.index)

    def __repr__(self):
        return "device(type=%r%s)" % (self.type, "" if self.index is None else ", index=%d" % self.index)

    def __eq__(self, other):
        return isinstance(other, _Device) and (self.type, self.index) == (other.type, other.index)

    def __hash__(self):
        return hash((self.type, self.index))


device = _Device


class dtype:
    def __init__(self, name, itemsize):
        self.name, self.itemsize = name, itemsize

    def __repr__(self):
        return "torch." + self.name


float32, float16, uint8, int64 = dtype("float32", 4), dtype("float16", 2), dtype("uint8", 1), dtype("int64", 8)


class Tensor:
    def __init__(self, numel, dt, dev, state):
        self.dtype, self.device = dt, dev
        self._numel = numel
        self._block = None
        self.is_cuda = dev.type == "cuda"
        if self.is_cuda:
            self._block = state.malloc(numel * dt.itemsize, dev)[:2]

    def numel(self):
        return self._numel

    def element_size(self):
        return self.dtype.itemsize

    @property
    def nbytes(self):
        return self._numel * self.dtype.itemsize

    def release(self):
        if self._block is not None:
            dev, address = self._block
            self._block = None
            _state.free(dev, address)

    def __del__(self):
        self.release()


_state = None  # set by the package


def _numel(size):
    n = 1
    for s in size:
        for x in (s if isinstance(s, (tuple, list)) else (s,)):
            n *= int(x)
    return n


def empty(*size, dtype=None, device=None, **kw):
    dev = _Device("cpu") if device is None else _Device("cuda", device) if isinstance(device, int) else \
        _Device(device)
    if dev.type == "cuda" and dev.index is None:
        dev = _Device("cuda", _state.current)
    return Tensor(_numel(size), dtype or float32, dev, _state)


zeros = ones = randn = empty
