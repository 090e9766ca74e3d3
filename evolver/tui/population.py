"""The population table: one row per candidate, sortable and filterable."""

from __future__ import annotations

import time
from collections.abc import Callable

from rich.text import Text
from textual.widgets import DataTable

from evolver.records.results import FAILED
from evolver.tui.model import Row, fmt_age, matches

COLUMNS = ("id", "status", "score", "vs parent", "vs seed", "op", "model", "island", "age")
# fixed widths: the table never measures 10,000 rows of cells to size its columns
WIDTHS = {"id": 6, "status": 13, "score": 10, "vs parent": 9, "vs seed": 8, "op": 6, "model": 12, "island": 6,
          "age": 7}
SORTS = ("score", "id", "status")
MAX_ROWS = 2000  # rows shown of the current sort and filter; the header counts them all
STATUS_STYLE = {"ok": "green", "pending": "yellow"}


def _ratio(value: float | None) -> Text:
    if value is None:
        return Text("")
    return Text(f"{value:.2f}x", style="green" if value > 1.0 else ("red" if value < 1.0 else ""))


def _sort_key(name: str) -> Callable[[Row], object]:
    if name == "score":
        return lambda r: (r.score is None, r.score or 0.0, r.id)
    if name == "status":
        return lambda r: (r.status, r.id)
    return lambda r: (-int(r.id) if r.id.isdigit() else 0, r.id)  # newest first


class PopulationTable(DataTable[Text]):
    def __init__(self, clock: Callable[[], float] = time.time, **kwargs: object) -> None:
        super().__init__(cursor_type="row", zebra_stripes=True, **kwargs)  # type: ignore[arg-type]
        self.clock = clock
        self.sort_by = "score"
        self.status_filter = "all"
        self._rows: dict[str, Row] = {}

    def on_mount(self) -> None:
        for name in COLUMNS:
            self.add_column(name, key=name, width=WIDTHS[name])

    def _cells(self, r: Row) -> tuple[Text, ...]:
        style = STATUS_STYLE.get(r.status, "red" if r.status in FAILED else "")
        return (Text(r.id), Text(r.status, style=style), Text(f"{r.score:.6g}" if r.score is not None else ""),
                _ratio(r.vs_parent), _ratio(r.vs_seed), Text(r.op), Text(r.model[:12]), Text(str(r.island)),
                Text(fmt_age(r.created, self.clock())))

    def load(self, rows: list[Row]) -> None:
        """Replace every row (first load, or a new sort or filter)."""
        self._rows = {r.id: r for r in rows}
        self.rebuild()

    def rebuild(self) -> None:
        keep = self.selected_id()
        self.clear()
        shown = sorted((r for r in self._rows.values() if matches(r, self.status_filter)),
                       key=_sort_key(self.sort_by))[:MAX_ROWS]
        for r in shown:
            self.add_row(*self._cells(r), key=r.id)
        if keep is not None:
            self.select(keep)

    def upsert(self, rows: list[Row]) -> None:
        """Update changed rows in place, add new ones that belong in the shown window, keep it sorted."""
        key = _sort_key(self.sort_by)
        resort = False
        for r in rows:
            old = self._rows.get(r.id)
            self._rows[r.id] = r
            shown = r.id in self.rows
            last = self._rows.get(str(self.ordered_rows[-1].key.value)) if self.row_count else None
            wanted = matches(r, self.status_filter) and (
                shown or self.row_count < MAX_ROWS or last is None or key(r) < key(last))
            if shown and wanted:
                for column, cell in zip(COLUMNS, self._cells(r)):
                    self.update_cell(r.id, column, cell)
                resort |= old is not None and key(old) != key(r)
            elif shown:
                self.remove_row(r.id)
            elif wanted:
                self.add_row(*self._cells(r), key=r.id)
                resort = True
        if resort:
            self._resort()
        while self.row_count > MAX_ROWS:
            self.remove_row(self.ordered_rows[-1].key)

    def _resort(self) -> None:
        order = sorted((self._rows[str(k.value)] for k in self.rows), key=_sort_key(self.sort_by))
        position = {r.id: i for i, r in enumerate(order)}
        self.sort("id", key=lambda cell: position[cell.plain])

    def selected_id(self) -> str | None:
        if self.row_count == 0:
            return None
        try:
            key = self.coordinate_to_cell_key(self.cursor_coordinate).row_key
        except Exception:  # the cursor is outside the table
            return None
        return str(key.value) if key.value is not None else None

    def select(self, cid: str, widen: bool = False) -> bool:
        """Put the cursor on `cid`; with `widen`, first bring it into the shown window (filter off,
        best-first) if it is not there."""
        if widen and cid not in self.rows and cid in self._rows:
            self.status_filter, self.sort_by = "all", "score"
            self.rebuild()
        if cid not in self.rows:
            return False
        self.move_cursor(row=self.get_row_index(cid))
        return True
