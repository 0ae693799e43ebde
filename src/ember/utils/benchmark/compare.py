"""Compare: measurements as a table per label, rows by sub-label (or statement), columns by description."""
from .common import select_unit, trim_sigfig


class Compare:
    """Same as `torch.utils.benchmark.Compare`."""

    def __init__(self, results):
        self._results = []
        self._trim = False
        self._colorize = False
        self._highlight = False
        self.extend_results(results)

    def extend_results(self, results):
        for r in results:
            if not hasattr(r, "task_spec"):
                raise ValueError(f"Expected an instance of `Measurement`, got {type(r)} instead.")
        self._results.extend(results)

    def trim_significant_figures(self):
        self._trim = True

    def colorize(self, rowwise=False):
        self._colorize = True

    def highlight_warnings(self):
        self._highlight = True

    def print(self):
        print(str(self))

    def __str__(self):
        labels = list(dict.fromkeys(r.label for r in self._results))
        return "\n".join(self._table([r for r in self._results if r.label == label]) for label in labels)

    def _table(self, results):
        unit, scale = select_unit(min(r.median for r in results))
        columns = list(dict.fromkeys(r.description for r in results))
        threads = sorted(dict.fromkeys(r.num_threads for r in results))
        rows = {}  # (threads, row name) -> {column: text}
        for r in results:
            value = r.median / scale
            text = f"{trim_sigfig(value, r.significant_figures) if self._trim else value:.1f}"
            if self._highlight and r.has_warnings:
                text += " (! {:.0f}%)".format(r.iqr / r.median * 100)
            rows.setdefault((r.num_threads, r.as_row_name), {})[r.description] = text
        names = [name for _, name in rows]
        name_width = max(len(n) for n in names) + 4
        widths = [max(len(str(c or "")), *(len(row.get(c, "")) for row in rows.values())) + 2 for c in columns]
        header = " " * name_width + "|" + "|".join(f"{str(c or ''):^{w}}" for c, w in zip(columns, widths))
        lines = [header]
        for n in threads:
            lines.append(f"{n} threads: ".ljust(len(header), "-"))
            for (t, name), row in rows.items():
                if t == n:
                    lines.append(f"{name:>{name_width - 2}}  |" + "|".join(f"{row.get(c, ''):^{w}}"
                                                                             for c, w in zip(columns, widths)))
        title = f" {results[0].label or ''} "
        lines.insert(0, "[" + title.center(len(header) - 2, "-") + "]")
        names = {"ns": "nanoseconds", "us": "microseconds", "ms": "milliseconds", "s": "seconds"}
        lines.append(f"\nTimes are in {names[unit]} ({unit}).\n")
        return "\n".join(lines)
