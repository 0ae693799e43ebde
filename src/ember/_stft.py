"""Short-time Fourier transform: torch.stft / torch.istft, composed of differentiable ops (pad, unfold,
ember.fft), so gradients and double gradients come from those ops' own formulas."""
import importlib
import warnings

from ._tensor import Tensor

__all__ = ["istft", "stft"]

_MODS = {}


def _mod(name):
    """ember.fft / ember.nn.functional, loaded on first use (both are heavy imports)."""
    m = _MODS.get(name)
    if m is None:
        m = _MODS[name] = importlib.import_module(name)
    return m


def _check(cond, name, input, msg):
    if not cond:
        raise RuntimeError(f"{name}(Tensor{list(input.shape)}) : {msg}")


def _padded_window(window, win_length, n_fft, input, name):
    """The window (ones when None) zero-padded on both sides to n_fft, as torch centers it."""
    import ember
    if window is None:
        if win_length == n_fft:
            return None
        window = ember.ones(win_length, dtype=input.real.dtype if input.is_complex() else input.dtype)
    _check(window.dim() == 1 and window.shape[0] == win_length, name, input,
           f"expected a 1D window tensor of size equal to win_length={win_length}, but got window with size "
           f"{list(window.shape)}")
    left = (n_fft - win_length) // 2
    if left or win_length < n_fft:
        window = ember.cat([window.new_zeros(left), window, window.new_zeros(n_fft - win_length - left)])
    return window


def _lengths(n_fft, hop_length, win_length):
    return (n_fft // 4 if hop_length is None else hop_length), (n_fft if win_length is None else win_length)


def stft(input, n_fft, hop_length=None, win_length=None, window=None, center=True, pad_mode="reflect",
         normalized=False, onesided=None, return_complex=None, align_to_window=None):
    """Same as `torch.stft` (align_to_window=True is not supported)."""
    if align_to_window:
        raise NotImplementedError("stft: align_to_window=True is not supported")
    complex_in = input.is_complex() or (window is not None and window.is_complex())
    if return_complex is None:
        if not complex_in:
            raise RuntimeError("stft requires the return_complex parameter be given for real inputs, and will "
                               "further require that return_complex=True in a future PyTorch release.")
        return_complex = True
    if window is None:
        warnings.warn("A window was not provided. A rectangular window will be applied,which is known to cause "
                      "spectral leakage. Other windows such as torch.hann_window or torch.hamming_window are "
                      "recommended to reduce spectral leakage.To suppress this warning and use a rectangular "
                      "window, explicitly set `window=torch.ones(n_fft, device=<device>)`.", UserWarning,
                      stacklevel=2)
    hop_length, win_length = _lengths(n_fft, hop_length, win_length)
    _check(input.dim() in (1, 2), "stft", input, "expected a 1D or 2D tensor")
    batched = input.dim() == 2
    x = input if batched else input.unsqueeze(0)
    if center:
        x = _mod("ember.nn.functional").pad(x.unsqueeze(1), [n_fft // 2, n_fft // 2], mode=pad_mode).squeeze(1)
    length = x.shape[-1]
    _check(0 < n_fft <= length, "stft", input, f"expected 0 < n_fft < {length}, but got n_fft={n_fft}")
    _check(hop_length > 0, "stft", input, f"expected hop_length > 0, but got hop_length={hop_length}")
    _check(0 < win_length <= n_fft, "stft", input,
           f"expected 0 < win_length <= n_fft, but got win_length={win_length}")
    window = _padded_window(window, win_length, n_fft, input, "stft")
    frames = x.unfold(-1, n_fft, hop_length)  # (batch, n_frames, n_fft)
    if window is not None:
        frames = frames * window
    if onesided is None:
        onesided = not complex_in
    elif onesided and complex_in:
        raise RuntimeError("Cannot have onesided output if window or input is complex")
    fft = _mod("ember.fft")
    norm = "ortho" if normalized else "backward"
    spec = (fft.rfft(frames, n_fft, -1, norm) if onesided else fft.fft(frames, n_fft, -1, norm)).transpose(-1, -2)
    if not batched:
        spec = spec.squeeze(0)
    if return_complex:
        return spec
    warnings.warn("stft with return_complex=False is deprecated. In a future pytorch release, stft will return "
                  "complex tensors for all inputs, and return_complex=False will raise an error.\nNote: you can "
                  "still call torch.view_as_real on the complex output to recover the old return format.",
                  UserWarning, stacklevel=2)
    import ember
    return ember.view_as_real(spec)


def istft(input, n_fft, hop_length=None, win_length=None, window=None, center=True, normalized=False,
          onesided=None, length=None, return_complex=False):
    """Same as `torch.istft`."""
    import ember
    if not input.is_complex():
        raise RuntimeError("istft requires a complex-valued input tensor matching the output from stft with "
                           "return_complex=True.")
    hop_length, win_length = _lengths(n_fft, hop_length, win_length)
    _check(input.dim() in (2, 3), "istft", input, f"expected a tensor with 2 or 3 dimensions of complex dtype, "
                                                  f"but got {input.dim()}")
    batched = input.dim() == 3
    spec = input if batched else input.unsqueeze(0)
    n_freq, n_frames = spec.shape[-2], spec.shape[-1]
    _check(0 < win_length <= n_fft, "istft", input,
           f"expected 0 < win_length <= n_fft, but got win_length={win_length}")
    _check(hop_length > 0 and hop_length <= win_length, "istft", input,
           "expected 0 < hop_length <= win_length")
    if onesided is None:
        onesided = n_freq != n_fft
    if onesided:
        _check(n_freq == n_fft // 2 + 1, "istft", input, "expected the frequency dimension (3rd to the last) of "
               f"the input tensor to match n_fft / 2 + 1 when onesided=True, but got {n_freq}")
    else:
        _check(n_freq == n_fft, "istft", input, "expected the frequency dimension (3rd to the last) of the input "
               f"tensor to match n_fft when onesided=False, but got {n_freq}")
    if window is None:
        warnings.warn("A window was not provided. A rectangular window will be applied.Please provide the same "
                      "window used by stft to make the inversion lossless.To suppress this warning and use a "
                      "rectangular window, explicitly set `window=torch.ones(n_fft, device=<device>)`.",
                      UserWarning, stacklevel=2)
        window = ember.ones(win_length, dtype=ember.empty(0, dtype=input.dtype).real.dtype)
    window = _padded_window(window, win_length, n_fft, input, "istft")
    if return_complex and onesided:
        raise RuntimeError("Cannot have onesided output if window or input is complex")
    fft = _mod("ember.fft")
    norm = "ortho" if normalized else "backward"
    spec = spec.transpose(-1, -2)  # (batch, n_frames, n_freq)
    if onesided or not return_complex:  # a real result reads only the non-negative bins, as torch
        frames = fft.irfft(spec[..., :n_fft // 2 + 1], n_fft, -1, norm)
    else:
        frames = fft.ifft(spec, n_fft, -1, norm)
    frames = frames * window
    y, envelope = _overlap_add(frames, window, n_frames, n_fft, hop_length)
    start = n_fft // 2 if center else 0
    end = y.shape[-1] - (n_fft // 2 if center else 0) if length is None else start + length
    end = min(end, y.shape[-1])
    y, envelope = y[:, start:end], envelope[start:end]
    small = envelope.abs() < 1e-11
    if bool(small.any()):
        raise RuntimeError(f"istft(Tensor{list(input.shape)}) window overlap add min: {envelope.abs().min().item()}")
    y = y / envelope
    if length is not None and y.shape[-1] < length:
        warnings.warn("The length of signal is shorter than the length parameter. Result is being padded with "
                      "zeros in the tail. Please check your center and hop_length settings.", UserWarning,
                      stacklevel=2)
        y = ember.cat([y, y.new_zeros(y.shape[0], length - y.shape[-1])], -1)
    return y if batched else y.squeeze(0)


def _overlap_add(frames, window, n_frames, n_fft, hop_length):
    """Sums the frames (batch, n_frames, n_fft) at their hop offsets; returns (signal, window-squared envelope)."""
    import ember
    total = n_fft + hop_length * (n_frames - 1)
    idx = (ember.arange(n_frames).unsqueeze(1) * hop_length + ember.arange(n_fft)).reshape(-1)
    y = frames.new_zeros(frames.shape[0], total).index_add(1, idx, frames.reshape(frames.shape[0], -1))
    w2 = (window * window).expand(n_frames, n_fft).reshape(-1)
    envelope = w2.new_zeros(total).index_add(0, idx, w2)
    return y, envelope


Tensor.stft = stft
Tensor.istft = istft
