"""heatwave's receivers files from Python (h5py and NumPy).

    import heatwave_traces                      # scripts/ on sys.path
    t = heatwave_traces.read("receivers.h5")
    t.traces[i]      # receiver i's trace, t.time and t.step its samples' times and steps
    t.positions[i]   # where receiver i is
    t.config         # the run's resolved config (a dict; None where the file has none)

A file of format "heatwave receivers 2" holds /traces [capacity, receivers]
with room for every sample of the run; /samples says how many rows are the
run's (a run stopped early leaves the rest unused: /time NaN, /step -1).
The earlier format 1 holds /traces [receivers, samples], every one the run's.
A file that is not a receivers file raises TracesError with a one-line reason.
"""
from dataclasses import dataclass

import numpy as np


class TracesError(Exception):
    pass


@dataclass
class Traces:
    traces: np.ndarray     # [receivers, samples]
    time: np.ndarray
    step: np.ndarray
    positions: np.ndarray  # [receivers, dims]
    field: str
    config: dict | None


def read(path):
    import h5py

    try:
        f = h5py.File(path, "r")
    except OSError as e:
        raise TracesError(f"{path}: cannot open it as an HDF5 file ({e.strerror or e})") from None
    with f:
        missing = [name for name in ("traces", "time", "step", "positions") if name not in f]
        if missing:
            kind = f.attrs.get("kind", b"")
            kind = kind.decode() if isinstance(kind, bytes) else str(kind)
            what = f"a heatwave {kind} file" if kind else "an HDF5 file"
            raise TracesError(f"{path}: {what}, not a receivers file (no dataset {', '.join(missing)})")
        if "samples" in f:  # format 2
            n = int(f["samples"][0])
            traces = f["traces"][:n, :].T
        else:
            n = f["time"].shape[0]
            traces = f["traces"][()]
        field = f.attrs.get("field", b"u")
        config = None
        if "config" in f.attrs:
            import yaml

            text = f.attrs["config"]
            config = yaml.safe_load(text.decode() if isinstance(text, bytes) else text)
        return Traces(np.ascontiguousarray(traces), f["time"][:n], f["step"][:n], f["positions"][()],
                      field.decode() if isinstance(field, bytes) else str(field), config)
