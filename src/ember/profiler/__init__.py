"""Same as `torch.profiler`: per-op timings at ember's dispatch point, summary tables and Chrome traces.

Every op is recorded as aten::<op name> (its kernel's host time), every backward node the engine runs as
"autograd::engine::evaluate_function: <node>", and record_function ranges around them. Nothing is added to an
op's path while no profiler records: see NOTE [ Profiling at no cost ] in ember/autograd/profiler.py.
"""
from ..autograd.profiler import record_function
from ..autograd.profiler_util import DeviceType
from .profiler import (ProfilerAction, ProfilerActivity, profile, schedule, supported_activities,
                       tensorboard_trace_handler)

__all__ = ["profile", "schedule", "supported_activities", "tensorboard_trace_handler", "ProfilerAction",
           "ProfilerActivity", "DeviceType", "record_function"]
