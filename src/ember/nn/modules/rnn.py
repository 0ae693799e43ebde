"""Recurrent layers: RNN, LSTM, GRU and their cells.

The layers run one fused op per layer and direction (NOTE [ Fused RNN kernels ] in nn/_functional/rnn.py);
the cells are composed of ember ops, so they support higher-order gradients (NOTE [ RNN double backward ]).
"""
import math
import numbers
import warnings

import ember

from .. import init
from .._functional.activation import relu
from .._functional.dropout import dropout as _dropout
from .._functional.linear import linear
from .._functional.rnn import rnn_layer
from ..parameter import Parameter
from ..utils.rnn import PackedSequence
from .module import Module

__all__ = ["GRU", "LSTM", "RNN", "GRUCell", "LSTMCell", "RNNBase", "RNNCell", "RNNCellBase"]

_GATES = {"LSTM": 4, "GRU": 3, "RNN_TANH": 1, "RNN_RELU": 1}


def _check_args(mode, input_size, hidden_size, num_layers, bias, batch_first, dropout, proj_size):
    if not isinstance(dropout, numbers.Number) or not 0 <= dropout <= 1 or isinstance(dropout, bool):
        raise ValueError("dropout should be a number in range [0, 1] representing the probability of an element "
                         "being zeroed")
    if dropout > 0 and num_layers == 1:
        warnings.warn("dropout option adds dropout after all but last recurrent layer, so non-zero dropout expects "
                      f"num_layers greater than 1, but got dropout={dropout} and num_layers={num_layers}",
                      stacklevel=4)
    if not isinstance(bias, bool):
        raise TypeError(f"bias should be of type bool, got: {type(bias).__name__}")
    if not isinstance(batch_first, bool):
        raise TypeError(f"batch_first should be of type bool, got: {type(batch_first).__name__}")
    if not isinstance(input_size, int):
        raise TypeError(f"input_size should be of type int, got: {type(input_size).__name__}")
    if input_size <= 0:
        raise ValueError("input_size must be greater than zero")
    if not isinstance(hidden_size, int):
        raise TypeError(f"hidden_size should be of type int, got: {type(hidden_size).__name__}")
    if hidden_size <= 0:
        raise ValueError("hidden_size must be greater than zero")
    if num_layers <= 0:
        raise ValueError("num_layers must be greater than zero")
    if proj_size < 0:
        raise ValueError("proj_size should be a positive integer or zero to disable projections")
    if proj_size >= hidden_size:
        raise ValueError("proj_size has to be smaller than hidden_size")
    if mode not in _GATES:
        raise ValueError("Unrecognized RNN mode: " + mode)


class RNNBase(Module):
    """Same as `torch.nn.RNNBase`; `flatten_parameters` is a no-op (there is no cuDNN weight buffer)."""
    __constants__ = ("mode", "input_size", "hidden_size", "num_layers", "bias", "batch_first", "dropout",
                     "bidirectional", "proj_size")

    def __init__(self, mode, input_size, hidden_size, num_layers=1, bias=True, batch_first=False, dropout=0.0,
                 bidirectional=False, proj_size=0, device=None, dtype=None):
        super().__init__()
        self.mode = mode
        self.input_size = input_size
        self.hidden_size = hidden_size
        self.num_layers = num_layers
        self.bias = bias
        self.batch_first = batch_first
        self.dropout = float(dropout)
        self.bidirectional = bidirectional
        self.proj_size = proj_size
        _check_args(mode, input_size, hidden_size, num_layers, bias, batch_first, dropout, proj_size)
        gate_size = _GATES[mode] * hidden_size
        num_directions = 2 if bidirectional else 1
        real_hidden_size = proj_size if proj_size > 0 else hidden_size
        self._flat_weights_names = []
        self._all_weights = []
        for layer in range(num_layers):
            for direction in range(num_directions):
                layer_input_size = input_size if layer == 0 else real_hidden_size * num_directions
                suffix = "_reverse" if direction == 1 else ""
                shapes = [("weight_ih", (gate_size, layer_input_size)), ("weight_hh", (gate_size, real_hidden_size))]
                if bias:
                    shapes += [("bias_ih", (gate_size,)), ("bias_hh", (gate_size,))]
                if proj_size > 0:
                    shapes.append(("weight_hr", (proj_size, hidden_size)))
                names = []
                for base, shape in shapes:
                    name = f"{base}_l{layer}{suffix}"
                    setattr(self, name, Parameter(ember.empty(shape, device=device, dtype=dtype)))
                    names.append(name)
                self._flat_weights_names.extend(names)
                self._all_weights.append(names)
        self.reset_parameters()

    @property
    def _flat_weights(self):
        return [getattr(self, n, None) for n in self._flat_weights_names]

    @property
    def all_weights(self):
        return [[getattr(self, n) for n in names] for names in self._all_weights]

    def flatten_parameters(self):
        """Same as `torch.nn.RNNBase.flatten_parameters`: a no-op on ember (weights are used where they are)."""

    def reset_parameters(self):
        stdv = 1.0 / math.sqrt(self.hidden_size) if self.hidden_size > 0 else 0
        for weight in self.parameters():
            init.uniform_(weight, -stdv, stdv)

    def extra_repr(self):
        s = "{input_size}, {hidden_size}"
        if self.proj_size != 0:
            s += ", proj_size={proj_size}"
        if self.num_layers != 1:
            s += ", num_layers={num_layers}"
        if self.bias is not True:
            s += ", bias={bias}"
        if self.batch_first is not False:
            s += ", batch_first={batch_first}"
        if self.dropout != 0:
            s += ", dropout={dropout}"
        if self.bidirectional is not False:
            s += ", bidirectional={bidirectional}"
        return s.format(**self.__dict__)

    # ----- argument checks (torch's messages) -----

    def check_input(self, input, batch_sizes):
        wdt = self._flat_weights[0].dtype
        if input.dtype != wdt:
            raise ValueError(f"RNN input dtype ({input.dtype}) does not match weight dtype ({wdt}). Convert input: "
                             f"input.to({wdt}), or convert model: model.to({input.dtype})")
        expected_input_dim = 2 if batch_sizes is not None else 3
        if input.dim() != expected_input_dim:
            raise RuntimeError(f"input must have {expected_input_dim} dimensions, got {input.dim()}")
        if self.input_size != input.size(-1):
            raise RuntimeError(f"input.size(-1) must be equal to input_size. Expected {self.input_size}, "
                               f"got {input.size(-1)}")

    def get_expected_hidden_size(self, input, batch_sizes):
        if batch_sizes is not None:
            mini_batch = int(batch_sizes[0])
        else:
            mini_batch = input.size(0) if self.batch_first else input.size(1)
        num_directions = 2 if self.bidirectional else 1
        size = self.proj_size if self.proj_size > 0 else self.hidden_size
        return (self.num_layers * num_directions, mini_batch, size)

    def check_hidden_size(self, hx, expected_hidden_size, msg="Expected hidden size {}, got {}"):
        if tuple(hx.size()) != expected_hidden_size:
            raise RuntimeError(msg.format(expected_hidden_size, list(hx.size())))

    def check_forward_args(self, input, hidden, batch_sizes):
        self.check_input(input, batch_sizes)
        self.check_hidden_size(hidden, self.get_expected_hidden_size(input, batch_sizes))

    def permute_hidden(self, hx, permutation):
        if permutation is None:
            return hx
        return hx.index_select(1, permutation)

    # ----- the shared forward -----

    def _zeros(self, x, B, size):
        return ember.zeros(self.num_layers * (2 if self.bidirectional else 1), B, size, dtype=x.dtype,
                           device=x.device)

    def _prepare(self, input, hx, lstm):
        """Unpack / unsqueeze the input and hidden state: (x, hx, batch_sizes, packed, batched)."""
        if isinstance(input, PackedSequence):
            x, batch_sizes, sorted_indices, _ = input
            if hx is not None:
                hx = self.permute_hidden(hx, sorted_indices)
            return x, hx, batch_sizes, True, True
        if input.dim() not in (2, 3):
            tail = "" if lstm or self.mode == "GRU" else " tensor"
            name = "RNN" if self.mode.startswith("RNN") else self.mode
            raise ValueError(f"{name}: Expected input to be 2D or 3D, got {input.dim()}D{tail} instead")
        batched = input.dim() == 3
        if not batched:
            input = input.unsqueeze(0 if self.batch_first else 1)
        if hx is not None:
            want = 3 if batched else 2
            kind = "batched 3-D" if batched else "unbatched 2-D"
            if lstm:
                if hx[0].dim() != want or hx[1].dim() != want:
                    raise RuntimeError(f"For {kind} input, hx and cx should also be {want}-D but got "
                                       f"({hx[0].dim()}-D, {hx[1].dim()}-D) tensors")
                if not batched:
                    hx = (hx[0].unsqueeze(1), hx[1].unsqueeze(1))
            else:
                if hx.dim() != want:
                    raise RuntimeError(f"For {kind} input, hx should also be {want}-D but got {hx.dim()}-D tensor")
                if not batched:
                    hx = hx.unsqueeze(1)
        return input, hx, None, False, batched

    def _forward(self, input, hx):
        lstm = self.mode == "LSTM"
        x, hx, batch_sizes, packed, batched = self._prepare(input, hx, lstm)
        if batch_sizes is not None:
            B = int(batch_sizes[0])
        else:
            B = x.size(0) if self.batch_first else x.size(1)
        H = self.proj_size if self.proj_size > 0 else self.hidden_size
        if hx is None:
            hx = (self._zeros(x, B, H), self._zeros(x, B, self.hidden_size)) if lstm else self._zeros(x, B, H)
        self.check_input(x, batch_sizes)
        if lstm:
            self.check_hidden_size(hx[0], self.get_expected_hidden_size(x, batch_sizes),
                                   "Expected hidden[0] size {}, got {}")
            expected_c = self.get_expected_hidden_size(x, batch_sizes)[:2] + (self.hidden_size,)
            self.check_hidden_size(hx[1], expected_c, "Expected hidden[1] size {}, got {}")
            h0, c0 = hx
        else:
            self.check_hidden_size(hx, self.get_expected_hidden_size(x, batch_sizes))
            h0, c0 = hx, None
        for h in (h0, c0):
            if h is not None and h.dtype != x.dtype:
                raise RuntimeError(f"RNN hidden state dtype ({h.dtype}) does not match input dtype ({x.dtype})")
        bs = None
        if packed:
            bs = tuple(batch_sizes._data.tolist())
        else:
            if x.size(1 if self.batch_first else 0) == 0:
                raise RuntimeError("Expected sequence length to be larger than 0 in RNN")
            if self.batch_first:
                x = x.transpose(0, 1)
        y, h_n, c_n = self._run(x, h0, c0, bs)
        hidden = (h_n, c_n) if lstm else h_n
        if packed:
            _, batch_sizes, sorted_indices, unsorted_indices = input
            hidden = self.permute_hidden(hidden, unsorted_indices)
            return PackedSequence(y, batch_sizes, sorted_indices, unsorted_indices), hidden
        if self.batch_first:
            y = y.transpose(0, 1)
        if not batched:
            y = y.squeeze(0 if self.batch_first else 1)
            hidden = (h_n.squeeze(1), c_n.squeeze(1)) if lstm else h_n.squeeze(1)
        return y, hidden

    def _run(self, x, h0, c0, batch_sizes):
        """All layers and directions: (output, h_n, c_n or None)."""
        mode = self.mode
        D = 2 if self.bidirectional else 1
        hs, cs = h0.unbind(0), (c0.unbind(0) if c0 is not None else None)
        h_out, c_out = [], []
        inp = x
        for layer in range(self.num_layers):
            outs = []
            for k in range(layer * D, layer * D + D):
                w = [getattr(self, n) for n in self._all_weights[k]]
                b_ih, b_hh = (w[2], w[3]) if self.bias else (None, None)
                w_hr = w[-1] if self.proj_size > 0 else None
                r = rnn_layer(mode, inp, hs[k], None if cs is None else cs[k], w[0], w[1], b_ih, b_hh, w_hr,
                              batch_sizes, k % D == 1)
                outs.append(r[0])
                h_out.append(r[1])
                if cs is not None:
                    c_out.append(r[2])
            inp = outs[0] if D == 1 else ember.cat(outs, -1)
            if self.dropout and self.training and layer < self.num_layers - 1:
                inp = _dropout(inp, self.dropout, True)
        return inp, ember.stack(h_out, 0), (ember.stack(c_out, 0) if cs is not None else None)


class RNN(RNNBase):
    """Same as `torch.nn.RNN`."""

    def __init__(self, *args, **kwargs):
        if "proj_size" in kwargs:
            raise ValueError("proj_size argument is only supported for LSTM, not RNN or GRU")
        if len(args) > 3:
            self.nonlinearity = args[3]
            args = args[:3] + args[4:]
        else:
            self.nonlinearity = kwargs.pop("nonlinearity", "tanh")
        if self.nonlinearity == "tanh":
            mode = "RNN_TANH"
        elif self.nonlinearity == "relu":
            mode = "RNN_RELU"
        else:
            raise ValueError(f"Unknown nonlinearity '{self.nonlinearity}'. Select from 'tanh' or 'relu'.")
        super().__init__(mode, *args, **kwargs)

    def forward(self, input, hx=None):
        return self._forward(input, hx)


class LSTM(RNNBase):
    """Same as `torch.nn.LSTM`."""

    def __init__(self, *args, **kwargs):
        super().__init__("LSTM", *args, **kwargs)

    def get_expected_cell_size(self, input, batch_sizes):
        return self.get_expected_hidden_size(input, batch_sizes)[:2] + (self.hidden_size,)

    def check_forward_args(self, input, hidden, batch_sizes):
        self.check_input(input, batch_sizes)
        self.check_hidden_size(hidden[0], self.get_expected_hidden_size(input, batch_sizes),
                               "Expected hidden[0] size {}, got {}")
        self.check_hidden_size(hidden[1], self.get_expected_cell_size(input, batch_sizes),
                               "Expected hidden[1] size {}, got {}")

    def permute_hidden(self, hx, permutation):
        if permutation is None:
            return hx
        return hx[0].index_select(1, permutation), hx[1].index_select(1, permutation)

    def forward(self, input, hx=None):
        return self._forward(input, hx)


class GRU(RNNBase):
    """Same as `torch.nn.GRU`."""

    def __init__(self, *args, **kwargs):
        if "proj_size" in kwargs:
            raise ValueError("proj_size argument is only supported for LSTM, not RNN or GRU")
        super().__init__("GRU", *args, **kwargs)

    def forward(self, input, hx=None):
        return self._forward(input, hx)


# ----- cells -----

class RNNCellBase(Module):
    """Same as `torch.nn.RNNCellBase`."""
    __constants__ = ("input_size", "hidden_size", "bias")

    def __init__(self, input_size, hidden_size, bias, num_chunks, device=None, dtype=None):
        super().__init__()
        self.input_size = input_size
        self.hidden_size = hidden_size
        self.bias = bias
        self.weight_ih = Parameter(ember.empty((num_chunks * hidden_size, input_size), device=device, dtype=dtype))
        self.weight_hh = Parameter(ember.empty((num_chunks * hidden_size, hidden_size), device=device, dtype=dtype))
        if bias:
            self.bias_ih = Parameter(ember.empty(num_chunks * hidden_size, device=device, dtype=dtype))
            self.bias_hh = Parameter(ember.empty(num_chunks * hidden_size, device=device, dtype=dtype))
        else:
            self.register_parameter("bias_ih", None)
            self.register_parameter("bias_hh", None)
        self.reset_parameters()

    def extra_repr(self):
        s = "{input_size}, {hidden_size}"
        if "bias" in self.__dict__ and self.bias is not True:
            s += ", bias={bias}"
        if "nonlinearity" in self.__dict__ and self.nonlinearity != "tanh":
            s += ", nonlinearity={nonlinearity}"
        return s.format(**self.__dict__)

    def reset_parameters(self):
        stdv = 1.0 / math.sqrt(self.hidden_size) if self.hidden_size > 0 else 0
        for weight in self.parameters():
            init.uniform_(weight, -stdv, stdv)

    def _check(self, input, hiddens):
        # torch's check_rnn_cell_forward_input / _hidden messages
        if input.size(1) != self.input_size:
            raise RuntimeError(f"input has inconsistent input_size: got {input.size(1)} expected {self.input_size}")
        for k, h in enumerate(hiddens):
            if h.size(0) != input.size(0):
                raise RuntimeError(f"Input batch size {input.size(0)} doesn't match hidden{k} batch size "
                                   f"{h.size(0)}")
            if h.size(1) != self.hidden_size:
                raise RuntimeError(f"hidden{k} has inconsistent hidden_size: got {h.size(1)}, expected "
                                   f"{self.hidden_size}")

    def _input(self, input, hx, name):
        if input.dim() not in (1, 2):
            raise ValueError(f"{name}: Expected input to be 1D or 2D, got {input.dim()}D instead")
        if hx is not None and hx.dim() not in (1, 2):
            raise ValueError(f"{name}: Expected hidden to be 1D or 2D, got {hx.dim()}D instead")
        batched = input.dim() == 2
        if not batched:
            input = input.unsqueeze(0)
        if hx is None:
            hx = ember.zeros(input.size(0), self.hidden_size, dtype=input.dtype, device=input.device)
        elif not batched:
            hx = hx.unsqueeze(0)
        self._check(input, (hx,))
        return input, hx, batched


class RNNCell(RNNCellBase):
    """Same as `torch.nn.RNNCell`."""
    __constants__ = ("input_size", "hidden_size", "bias", "nonlinearity")

    def __init__(self, input_size, hidden_size, bias=True, nonlinearity="tanh", device=None, dtype=None):
        super().__init__(input_size, hidden_size, bias, num_chunks=1, device=device, dtype=dtype)
        self.nonlinearity = nonlinearity

    def forward(self, input, hx=None):
        input, hx, batched = self._input(input, hx, "RNNCell")
        pre = linear(input, self.weight_ih, self.bias_ih) + linear(hx, self.weight_hh, self.bias_hh)
        if self.nonlinearity == "tanh":
            ret = pre.tanh()
        elif self.nonlinearity == "relu":
            ret = relu(pre)
        else:
            raise RuntimeError(f"Unknown nonlinearity: {self.nonlinearity}")
        return ret if batched else ret.squeeze(0)


class LSTMCell(RNNCellBase):
    """Same as `torch.nn.LSTMCell`."""

    def __init__(self, input_size, hidden_size, bias=True, device=None, dtype=None):
        super().__init__(input_size, hidden_size, bias, num_chunks=4, device=device, dtype=dtype)

    def forward(self, input, hx=None):
        if input.dim() not in (1, 2):
            raise ValueError(f"LSTMCell: Expected input to be 1D or 2D, got {input.dim()}D instead")
        if hx is not None:
            for idx, value in enumerate(hx):
                if value.dim() not in (1, 2):
                    raise ValueError(f"LSTMCell: Expected hx[{idx}] to be 1D or 2D, got {value.dim()}D instead")
        batched = input.dim() == 2
        if not batched:
            input = input.unsqueeze(0)
        if hx is None:
            zeros = ember.zeros(input.size(0), self.hidden_size, dtype=input.dtype, device=input.device)
            hx = (zeros, zeros)
        elif not batched:
            hx = (hx[0].unsqueeze(0), hx[1].unsqueeze(0))
        h, c = hx
        self._check(input, (h, c))
        gates = linear(input, self.weight_ih, self.bias_ih) + linear(h, self.weight_hh, self.bias_hh)
        i, f, g, o = gates.chunk(4, 1)
        c1 = f.sigmoid() * c + i.sigmoid() * g.tanh()
        h1 = o.sigmoid() * c1.tanh()
        return (h1, c1) if batched else (h1.squeeze(0), c1.squeeze(0))


class GRUCell(RNNCellBase):
    """Same as `torch.nn.GRUCell`."""

    def __init__(self, input_size, hidden_size, bias=True, device=None, dtype=None):
        super().__init__(input_size, hidden_size, bias, num_chunks=3, device=device, dtype=dtype)

    def forward(self, input, hx=None):
        input, hx, batched = self._input(input, hx, "GRUCell")
        i_r, i_z, i_n = linear(input, self.weight_ih, self.bias_ih).chunk(3, 1)
        h_r, h_z, h_n = linear(hx, self.weight_hh, self.bias_hh).chunk(3, 1)
        r = (i_r + h_r).sigmoid()
        z = (i_z + h_z).sigmoid()
        n = (i_n + r * h_n).tanh()
        ret = n + z * (hx - n)
        return ret if batched else ret.squeeze(0)
