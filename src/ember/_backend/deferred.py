"""Checks of GPU values that are reported at the next synchronization instead of making the host wait for them."""
import os

import numpy as np

# NOTE [ Deferred device checks ]
# On the CPU a check such as "every target is a valid class" reads the array for free. On the GPU that read makes
# the host wait for every kernel queued before it, so the host can never run ahead of the device: on an H200 one
# such read in cross_entropy took 0.6 ms of a 3.2 ms training step. torch checks inside its kernels and reports
# the failure at the next synchronization. ember does the same with array ops: an op computes, on the device, a
# small record [code if the check failed else 0, offending value] and queues it here; the op itself continues on
# safe inputs (indices clipped into range), so nothing reads or writes out of bounds meanwhile. The host reads the
# queued records, in one transfer per stream, at the next synchronization (.item(), .cpu(), .tolist(), .numpy(),
# printing, ember.cuda.synchronize(), Stream.synchronize()) and raises the first failed check with the exception
# and message the CPU raises at once. CUDA_LAUNCH_BLOCKING=1 (torch's debugging switch) makes every check raise at
# once. Codes index (exception class, message) pairs, so a long run without synchronizing folds its records into
# one per stream instead of keeping them all.

BLOCKING = [os.environ.get("CUDA_LAUNCH_BLOCKING", "0") not in ("", "0")]
_FOLD_AT = 256  # records kept per stream before they are folded into one

_pending = {}  # (device id, stream pointer) -> [array module, stream, [records]]
CAPTURING = [None]  # while a CUDA graph is captured: the list its checks go to (NOTE [ CUDA graphs ])
_codes = {}  # (exception class, message template) -> code (> 0)
_messages = [None]  # code -> (exception class, message template)


def code(exc, template):
    """The number that stands for exc(template) in a record."""
    key = (exc, template)
    c = _codes.get(key)
    if c is None:
        c = _codes[key] = len(_messages)
        _messages.append(key)
    return c


def defer(xp, failed, value, exc, template):
    """Raises exc(template.format(value)) at the next synchronization when the 0-dim device boolean `failed` is
    True; `value` is a 0-dim device integer (or None)."""
    flag = failed.astype(np.int64) * code(exc, template)
    submit(xp, xp.stack((flag, flag if value is None else value.astype(np.int64, copy=False))))


def submit(xp, rec):
    """Queues a record computed on the device: int64 [code(exc, template) if the check failed else 0, value]."""
    if CAPTURING[0] is not None:  # computed by each replay of the graph, which queues it then
        CAPTURING[0].append(rec)
        return
    if BLOCKING[0]:
        _raise_first(rec.reshape(1, 2).get())
        return
    _queue(xp, rec)


def requeue(xp, recs):
    """Queues the check records of a replayed CUDA graph, as one snapshot of this replay's values."""
    _queue(xp, recs[0].copy() if len(recs) == 1 else _first_failed(xp.stack(recs)))


def _queue(xp, rec):
    stream = xp.cuda.get_current_stream()
    key = (rec.device.id, stream.ptr)
    entry = _pending.get(key)
    if entry is None:
        entry = _pending[key] = [xp, stream, []]
    recs = entry[2]
    recs.append(rec)
    if len(recs) >= _FOLD_AT:
        entry[2] = [_first_failed(xp.stack(recs))]


def _first_failed(recs):
    """The first row of recs (k, 2) whose check failed (row 0 when none did), on the device."""
    return recs[(recs[:, 0] != 0).argmax()]


def check_range(xp, idx, lo, hi, exc, template, valid=None):
    """idx clipped into [lo, hi); the first element outside it (ignoring those where `valid` is False) is reported
    as exc(template.format(element)) at the next synchronization."""
    if idx.size == 0:
        return idx
    bad = (idx < lo) | (idx >= hi)
    if valid is not None:
        bad &= valid
    flat = bad.reshape(-1)
    first = flat.argmax()
    defer(xp, flat[first], idx.reshape(-1)[first], exc, template)
    return xp.clip(idx, lo, max(hi - 1, lo))


def fail_if_any(xp, bad, exc, message):
    """Reports exc(message) at the next synchronization if any element of the device boolean array `bad` is True."""
    defer(xp, bad.any(), None, exc, message.replace("{", "{{").replace("}", "}}"))


def synchronize(device=None, stream=None):
    """Reads the queued checks (all, or those of one device index or one stream pointer), one transfer per stream,
    and raises the first that failed."""
    if not _pending:
        return
    keys = [k for k in _pending if (device is None or k[0] == device) and (stream is None or k[1] == stream)]
    hosts = []
    for xp, s, recs in [_pending.pop(k) for k in keys]:
        with xp.cuda.Device(recs[0].device.id), s:
            hosts.append((recs[0] if len(recs) == 1 else xp.stack(recs)).reshape(-1, 2).get())
    for host in hosts:
        _raise_first(host)


def discard():
    """Forgets every queued check, unread (for a device module that is being replaced)."""
    _pending.clear()


def _raise_first(host):
    failed = host[:, 0].nonzero()[0]
    if failed.size:
        code, value = (int(v) for v in host[failed[0]])
        exc, template = _messages[code]
        raise exc(template.format(value))
