"""Packed sequences: same as torch.nn.utils.rnn.

Packing and unpacking are two index ops, each the other's backward (so both are differentiable to any order):
pack gathers the valid rows of a padded (T, B, *) or (B, T, *) batch into the packed (N, *) layout, in order of
timestep and, within a timestep, of decreasing sequence length; unpack scatters them back into a padded batch.
"""
from collections import namedtuple

import numpy as np

import ember

from ..._backend import XP
from ..._ops._dispatch import Op, dispatch, dispatch1
from ..._tensor import Tensor

__all__ = [
    "PackedSequence",
    "invert_permutation",
    "pack_padded_sequence",
    "pack_sequence",
    "pad_packed_sequence",
    "pad_sequence",
    "unpack_sequence",
    "unpad_sequence",
]


# ----- the gather / scatter pair -----

def _xp(a):
    return np if a.__class__ is np.ndarray else XP[a.__class__]


def _dev(idx, x):
    """Host index array idx on x's device."""
    return idx if x.__class__ is np.ndarray else XP[x.__class__].asarray(idx)


def _host(t):
    """A tensor's array on the host (index tensors may live on the device)."""
    d = t._data
    return d if d.__class__ is np.ndarray else XP[d.__class__].asnumpy(d)


def _gather_fwd(x, idx):
    return x.reshape((-1,) + x.shape[2:])[_dev(idx, x)]


def _gather_bwd(ctx, g):
    return dispatch1(_SCATTER, g, ctx.attrs[0], tuple(ctx.shapes[0]), 0.0)


def _scatter_fwd(d, idx, shape, value):
    out = _xp(d).full((shape[0] * shape[1],) + tuple(shape[2:]), value, dtype=d.dtype)
    out[_dev(idx, d)] = d
    return out.reshape(shape)


def _scatter_bwd(ctx, g):
    return dispatch1(_GATHER, g, ctx.attrs[0])


_GATHER = Op("pack_padded_sequence", _gather_fwd, _gather_bwd)
_SCATTER = Op("pad_packed_sequence", _scatter_fwd, _scatter_bwd)


def _rows(lengths, order, T, B, batch_first):
    """Flat (T*B or B*T) row index of each packed row: timestep-major, then by decreasing length."""
    t, j = np.nonzero(lengths[None, :] > np.arange(T)[:, None])
    b = j if order is None else order[j]
    return b * T + t if batch_first else t * B + b


def _long(a, device=None):
    if device is not None and device.type != "cpu":
        return ember.tensor(np.ascontiguousarray(a, dtype=np.int64), device=device)
    return Tensor._make(np.ascontiguousarray(a, dtype=np.int64))


# ----- PackedSequence -----

class PackedSequence(namedtuple("PackedSequence_", ["data", "batch_sizes", "sorted_indices", "unsorted_indices"])):
    """Same as `torch.nn.utils.rnn.PackedSequence`."""
    __slots__ = ()

    def __new__(cls, data, batch_sizes=None, sorted_indices=None, unsorted_indices=None):
        if unsorted_indices is None:
            unsorted_indices = invert_permutation(sorted_indices)
        if batch_sizes is None:
            if not (isinstance(data, (list, tuple)) and len(data) == 2):
                raise ValueError("PackedSequence needs batch_sizes, or data given as a (data, batch_sizes) pair")
            data, batch_sizes = data
        elif batch_sizes.device.type != "cpu":
            raise ValueError(
                "batch_sizes should always be on CPU. Instances of PackedSequence should never be created "
                "manually. They should be instantiated by functions like pack_sequence and "
                "pack_padded_sequences in nn.utils.rnn. https://pytorch.org/docs/stable/nn.html"
                "#torch.nn.utils.rnn.pack_sequence")
        return super().__new__(cls, data, batch_sizes, sorted_indices, unsorted_indices)

    def to(self, *args, **kwargs):
        """Same as `torch.nn.utils.rnn.PackedSequence.to`: moves/casts data; indices follow data's device."""
        data = self.data.to(*args, **kwargs)
        if data is self.data:
            return self
        kw = {k: v for k, v in kwargs.items() if k not in ("device", "dtype")}
        si = None if self.sorted_indices is None else self.sorted_indices.to(data.device, **kw)
        ui = None if self.unsorted_indices is None else self.unsorted_indices.to(data.device, **kw)
        return type(self)(data, self.batch_sizes, si, ui)

    def cuda(self, device=None, *args, **kwargs):
        return self.to("cuda" if device is None else device, *args, **kwargs)

    def cpu(self, *args, **kwargs):
        return self.to("cpu", *args, **kwargs)

    def pin_memory(self):
        return type(self)(self.data.pin_memory(), self.batch_sizes, self.sorted_indices, self.unsorted_indices)

    def double(self):
        return self.to(dtype=ember.double)

    def float(self):
        return self.to(dtype=ember.float)

    def half(self):
        return self.to(dtype=ember.half)

    def long(self):
        return self.to(dtype=ember.long)

    def int(self):
        return self.to(dtype=ember.int)

    def short(self):
        return self.to(dtype=ember.short)

    def char(self):
        return self.to(dtype=ember.int8)

    def byte(self):
        return self.to(dtype=ember.uint8)

    @property
    def is_cuda(self):
        return self.data.is_cuda

    def is_pinned(self):
        return self.data.is_pinned()


def invert_permutation(permutation):
    """Same as `torch.nn.utils.rnn.invert_permutation`."""
    if permutation is None:
        return None
    p = permutation._data
    out = _xp(p).empty_like(p)
    out[p] = _xp(p).arange(p.size, dtype=p.dtype)
    return Tensor._make(out)


# ----- packing -----

def _lengths_array(lengths):
    if isinstance(lengths, Tensor):
        return _host(lengths).astype(np.int64, copy=False).reshape(-1)
    return np.asarray([int(v) for v in lengths], dtype=np.int64)


def pack_padded_sequence(input, lengths, batch_first=False, enforce_sorted=True):
    """Same as `torch.nn.utils.rnn.pack_padded_sequence`."""
    lengths = _lengths_array(lengths)
    B = input.shape[0] if batch_first else input.shape[1]
    T = input.shape[1] if batch_first else input.shape[0]
    if enforce_sorted:
        order = None
    else:
        order = np.argsort(-lengths, kind="stable")
        lengths = lengths[order]
    if lengths.size != B:
        raise RuntimeError(f"Expected `len(lengths)` to be equal to batch_size, but got {lengths.size} "
                           f"(batch_size={B})")
    if lengths.size and lengths.min() <= 0:
        raise RuntimeError("Length of all samples has to be greater than 0, but found an element in 'lengths' "
                           "that is <= 0")
    if enforce_sorted and np.any(lengths[1:] > lengths[:-1]):
        raise RuntimeError(
            "`lengths` array must be sorted in decreasing order when `enforce_sorted` is True. You can pass "
            "`enforce_sorted=False` to pack_padded_sequence and/or pack_sequence to sidestep this requirement "
            "if you do not need ONNX exportability.")
    if lengths[0] > T:
        raise RuntimeError(f"pack_padded_sequence: a sequence length ({int(lengths[0])}) exceeds the padded "
                           f"length of the input ({T})")
    batch_sizes = (lengths[None, :] > np.arange(lengths[0])[:, None]).sum(1)
    data = dispatch1(_GATHER, input, _rows(lengths, order, T, B, batch_first))
    si = None if order is None else _long(order, input.device)  # on the data's device, as torch
    return PackedSequence(data, _long(batch_sizes), si, None)


def pad_packed_sequence(sequence, batch_first=False, padding_value=0.0, total_length=None):
    """Same as `torch.nn.utils.rnn.pad_packed_sequence`."""
    data, batch_sizes, si, ui = sequence
    bs = _host(batch_sizes).astype(np.int64, copy=False)
    T, B = bs.size, int(bs[0])
    if total_length is not None:
        if total_length < T:
            raise ValueError("Expected total_length to be at least the length of the longest sequence in input, "
                             f"but got total_length={total_length} and max sequence length being {T}")
        T = total_length
    lengths = (bs[None, :] > np.arange(B)[:, None]).sum(1)
    order = None if si is None else _host(si)
    shape = ((B, T) if batch_first else (T, B)) + tuple(data.shape[1:])
    padded = dispatch1(_SCATTER, data, _rows(lengths, order, T, B, batch_first), shape, padding_value)
    if ui is not None:
        lengths = lengths[_host(ui)]
    return padded, _long(lengths)


# ----- padding -----

def _pad_fwd(*args):
    *xs, batch_first, value, left = args
    T = max(x.shape[0] for x in xs)
    out = _xp(xs[0]).full((len(xs), T) + xs[0].shape[1:], value, dtype=xs[0].dtype)
    for i, x in enumerate(xs):
        if left:
            out[i, T - x.shape[0]:] = x
        else:
            out[i, :x.shape[0]] = x
    return out if batch_first else out.swapaxes(0, 1).copy()


def _pad_bwd(ctx, g):
    batch_first, _, left = ctx.attrs
    if not batch_first:
        g = g.transpose(0, 1)
    T = g.shape[1]
    return tuple(g[i, T - s[0]:] if left else g[i, :s[0]] for i, s in enumerate(ctx.shapes))


_PAD = Op("pad_sequence", _pad_fwd, _pad_bwd)


def pad_sequence(sequences, batch_first=False, padding_value=0.0, padding_side="right"):
    """Same as `torch.nn.utils.rnn.pad_sequence`."""
    if isinstance(sequences, Tensor):
        sequences = sequences.unbind(0)
    sequences = tuple(sequences)
    if padding_side not in ("left", "right"):
        raise RuntimeError(f"Expected padding_side to be one of left or right, but got {padding_side}.")
    if not sequences:
        raise RuntimeError("received an empty list of sequences")
    trailing = tuple(sequences[0].shape[1:])
    for s in sequences[1:]:
        st = tuple(s.shape[1:])
        if st != trailing:
            k = next((k for k, (u, v) in enumerate(zip(trailing, st)) if u != v), len(st))
            if len(st) != len(trailing):
                raise RuntimeError(f"pad_sequence: all sequences must have the same number of dimensions, got "
                                   f"{len(trailing) + 1} and {len(st) + 1}")
            raise RuntimeError(f"The size of tensor a ({trailing[k]}) must match the size of tensor b ({st[k]}) "
                               f"at non-singleton dimension {k + 1}")
    dt = sequences[0].dtype
    sequences = tuple(s if s.dtype == dt else s.to(dt) for s in sequences)
    return dispatch(_PAD, sequences, bool(batch_first), padding_value, padding_side == "left")


def unpad_sequence(padded_sequences, lengths, batch_first=False):
    """Same as `torch.nn.utils.rnn.unpad_sequence` (without torch's in-place transpose of the input)."""
    if not batch_first:
        padded_sequences = padded_sequences.transpose(0, 1)
    return [seq[:int(n)] for seq, n in zip(padded_sequences.unbind(0), _lengths_array(lengths))]


def pack_sequence(sequences, enforce_sorted=True):
    """Same as `torch.nn.utils.rnn.pack_sequence`."""
    lengths = [s.size(0) for s in sequences]
    return pack_padded_sequence(pad_sequence(sequences), lengths, enforce_sorted=enforce_sorted)


def unpack_sequence(packed_sequences):
    """Same as `torch.nn.utils.rnn.unpack_sequence`."""
    padded, lengths = pad_packed_sequence(packed_sequences, batch_first=True)
    return unpad_sequence(padded, lengths, batch_first=True)
