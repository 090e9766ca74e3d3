"""The Textual app: layout, keys, and the polling loop.

All git work happens in thread workers that post typed messages back; widgets never call git. The poll is a
timer that re-arms itself after each finished refresh, so refreshes never overlap; a refresh lists the refs
(one cheap call) and reads notes and commits only when refs changed (`RunReader`).
"""

from __future__ import annotations

import subprocess
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from textual import on, work
from textual.app import App, ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.message import Message
from textual.widgets import DataTable, Footer

from evolver.records.candidates import Candidate, Snapshot
from evolver.records.reader import ALL_RUNS, MergedReader, RunReader, legend, run_letters
from evolver.records.refs import REPLIES_REF, RUN_REF
from evolver.records.store import Store, StoreError
from evolver.search.funnel import funnel
from evolver.search.funnel import lines as funnel_lines
from evolver.search.population import ancestry
from evolver.search.summary import Header, Summary
from evolver.tui import model
from evolver.tui.detail import DetailPane
from evolver.tui.header import RunHeader
from evolver.tui.lineage import LineageTree
from evolver.tui.population import SORTS, PopulationTable
from evolver.tui.progress import ProgressPane


@dataclass
class Refreshed(Message):
    """A refresh's result, computed in the worker thread: an immutable view for the UI thread to apply."""

    snapshot: Snapshot | None
    changed: set[str]
    note: str = ""
    by_commit: dict[str, Candidate] | None = None
    rows: list[model.Row] | None = None  # every row on the first load, the changed ones after
    header: Header | None = None
    series: list[float] | None = None
    outcomes: dict[str, int] | None = None
    funnel: list[str] | None = None  # what became of each operator's children (evolver/search/funnel.py)


HELP = ("arrows or mouse: select a candidate   s: sort   f: filter by status   b: jump to best\n"
        "d / v / l / a: its diff, result, log, the LLM's replies   w: check it out into a worktree\n"
        "u: the funnel, what became of each operator's children (replies, applied, compiled, correct, faster)\n"
        "r: refresh now   n: the problem's next run (yours and those `evolve pull` brought), then all as one\n"
        "q: quit (an engine started with --tui stops gracefully; resume with evolve start)\n"
        "x: quit and leave that engine running")


@dataclass
class DetailLoaded(Message):
    cid: str
    diff: str
    message: str
    replies: list[dict[str, Any]]


class EvolveApp(App[None]):
    CSS_PATH = "evolve.tcss"
    TITLE = "evolve"
    BINDINGS = [
        Binding("q", "quit", "Quit"),
        Binding("s", "cycle_sort", "Sort"),
        Binding("f", "cycle_filter", "Filter"),
        Binding("b", "jump_best", "Best"),
        Binding("d", "show_tab('tab-diff')", "Diff"),
        Binding("v", "show_tab('tab-result')", "Result"),
        Binding("l", "show_tab('tab-log')", "Log"),
        Binding("a", "show_tab('tab-reply')", "Reply"),
        Binding("u", "show_tab('tab-funnel')", "Funnel"),
        Binding("question_mark", "help", "Help"),
        Binding("x", "detach", "Quit, engine on", show=False),
        Binding("w", "worktree", "Worktree"),
        Binding("r", "refresh_now", "Refresh"),
        Binding("n", "next_run", "Next run", show=False),  # in the `?` help
    ]

    def __init__(self, store: Store, run: str | None = None, poll_s: float = 2.0,
                 clock: Callable[[], float] = time.time,
                 winner: Callable[[Snapshot], Candidate | None] | None = None,
                 engine: subprocess.Popen[bytes] | None = None, engine_log: Path | None = None,
                 min_gain: float = 0.0) -> None:
        super().__init__()
        self.min_gain = min_gain  # the run's rule for taking the lead, for the funnel's "new best"
        self.store = store
        self.engine, self.engine_log = engine, engine_log  # `evolve start --tui`: the engine's process
        self.engine_state = ""  # said in the header once the engine has ended
        self.detached = False  # quit with `x`: the engine goes on
        self.winner = winner  # the run's best as `evolve start` and `evolve status` name it (views.run_winner)
        self.run_name = run
        self.poll_s = poll_s
        self.clock = clock
        self.reader: RunReader | MergedReader | None = None
        self.snapshot: Snapshot | None = None
        self.kernel_dir = ""
        self.refreshes = 0
        self._details: dict[str, tuple[str, str, list[dict[str, Any]]]] = {}
        self._loaded = False
        self._loaded_in_worker = False
        self._refreshing = False
        self.by_commit: dict[str, Candidate] = {}
        self.seeds = model.SeedIndex()
        self.summary = Summary()  # touched by the refresh worker only

    def compose(self) -> ComposeResult:
        yield RunHeader("reading git ...")
        with Horizontal(id="main"):
            yield PopulationTable(clock=self.clock)
            with Vertical(id="side"):
                tree = LineageTree()
                tree.border_title = "lineage"
                yield tree
                yield ProgressPane()
        yield DetailPane()
        yield Footer()

    def on_mount(self) -> None:
        self.query_one(PopulationTable).focus()
        self.poll()

    # -- polling ------------------------------------------------------------------------------------------
    def poll(self) -> None:
        self.check_engine()
        if not self._refreshing:
            self._refreshing = True
            self.refresh_worker()

    @work(thread=True, exclusive=True, group="refresh")
    def refresh_worker(self) -> None:
        try:
            if self.reader is None and self.run_name == ALL_RUNS:
                self.reader = MergedReader(self.store, self.store.runs(self.kernel_dir or None))
            if self.reader is None:
                runs = self.store.runs()
                run = self.run_name or (runs[-1] if runs else None)
                if run is None or run not in runs:
                    note = (f"no run {run!r} in this repository" if run else "no evolve run in this repository yet") \
                        + " (`evolve start` begins one); watching for it ..."
                    self.post_message(Refreshed(None, set(), note))
                    return
                meta = self.store.get_meta(RUN_REF.format(run=run)) or {}
                self.kernel_dir = str(meta.get("kernel_dir", ""))
                self.reader = RunReader(self.store, run)
            changed = self.reader.refresh()
            live = self.reader.snapshot
            snap = Snapshot(run=live.run, candidates=dict(live.candidates), best_commit=live.best_commit,
                            malformed_notes=live.malformed_notes, bad_lines=dict(live.bad_lines))
            first = not self._loaded_in_worker
            self._loaded_in_worker = True
            if not changed and not first:
                self.post_message(Refreshed(snap, changed))
                return
            by_commit = self.reader.by_commit()
            header, series, outcomes = self.summary.update(snap, None if first else changed, self.clock(), by_commit,
                                                           self.winner)
            self.post_message(Refreshed(
                snap, changed, by_commit=by_commit,
                rows=model.rows(snap, None if first else changed, by_commit, self.seeds),
                header=header if snap.candidates else None, series=series, outcomes=outcomes,
                funnel=funnel_lines(funnel(snap.candidates.values(), by_commit, self.min_gain))))
        except StoreError as exc:
            self.post_message(Refreshed(None, set(), f"git: {exc}"))

    @on(Refreshed)
    def apply_refresh(self, event: Refreshed) -> None:
        if not self.is_running:  # a worker's result after shutdown began: its widgets may be gone already
            return
        header = self.query_one(RunHeader)
        table = self.query_one(PopulationTable)
        try:
            if event.snapshot is None:
                header.message(event.note)
                return
            self.snapshot = snap = event.snapshot
            if event.by_commit is not None:
                self.by_commit = event.by_commit
            if event.rows is not None:
                if not self._loaded:
                    table.load(event.rows)
                    self._loaded = True
                    if not self.action_jump_best() and table.row_count:
                        table.move_cursor(row=0)
                else:
                    table.upsert(event.rows)
            if event.header is not None:
                header.show(event.header, self.engine_state)
            elif not snap.candidates:
                header.message(f"run {snap.run}: no candidates yet; watching ...")
            if event.funnel is not None:
                self.query_one(DetailPane).show_funnel(event.funnel)
            if event.series is not None and event.outcomes is not None:
                self.query_one(ProgressPane).show(event.series, event.outcomes)
                self.show_selected()
        finally:
            self.refreshes += 1
            self._refreshing = False
            self.set_timer(self.poll_s, self.poll)  # re-armed only now: refreshes never overlap

    # -- selection ----------------------------------------------------------------------------------------
    @on(DataTable.RowHighlighted)
    def row_highlighted(self, event: DataTable.RowHighlighted) -> None:
        self.show_selected()

    def show_selected(self) -> None:
        if self.snapshot is None:
            return
        cid = self.query_one(PopulationTable).selected_id()
        candidate = self.snapshot.candidates.get(cid or "")
        if candidate is None:
            return
        self.query_one(LineageTree).show(ancestry(candidate, self.by_commit))
        if cid in self._details:
            diff, message, replies = self._details[cid]
            self.query_one(DetailPane).show(candidate, diff, message,
                                            self.snapshot.bad_lines.get(candidate.commit, 0), replies)
        else:
            self.load_detail(candidate.id, candidate.commit, candidate.parents[0] if candidate.parents else None)

    @work(thread=True, exclusive=True, group="detail")
    def load_detail(self, cid: str, commit: str, parent: str | None) -> None:
        try:
            diff = self.store.diff(parent, commit, self.kernel_dir or ".") if parent else ""
            message = self.store.message(commit)
            replies = self.store.note_lines(commit, REPLIES_REF)
        except StoreError as exc:
            diff, message, replies = "", f"(git: {exc})", []
        self.post_message(DetailLoaded(cid, diff, message, replies))

    @on(DetailLoaded)
    def detail_loaded(self, event: DetailLoaded) -> None:
        self._details[event.cid] = (event.diff, event.message, event.replies)
        if self.is_running and self.query_one(PopulationTable).selected_id() == event.cid:  # (as apply_refresh)
            self.show_selected()

    def check_engine(self) -> None:
        """Once the engine of `evolve start --tui` has ended: how (its last words, from its log) in a
        notification and in the header."""
        if self.engine is None or self.engine_state or self.engine.poll() is None:
            return
        code = self.engine.returncode
        last = engine_last_words(self.engine_log)
        if code in (0, 130):
            self.engine_state = "engine finished"
            self.notify(last or "the engine finished", title="engine finished", timeout=30)
        else:
            self.engine_state = f"engine stopped (exit {code})"
            self.notify(last or f"exit code {code}", title=self.engine_state, severity="error", timeout=60)

    def action_detach(self) -> None:
        """Quit, leaving the engine of `evolve start --tui` running."""
        self.detached = True
        self.exit()

    # -- actions ------------------------------------------------------------------------------------------
    def action_help(self) -> None:
        self.notify(HELP, title="keys", timeout=12)

    def action_cycle_sort(self) -> None:
        table = self.query_one(PopulationTable)
        table.sort_by = SORTS[(SORTS.index(table.sort_by) + 1) % len(SORTS)]
        table.rebuild()
        self.notify(f"sorted by {table.sort_by}", timeout=2)

    @on(DataTable.HeaderSelected)
    def header_clicked(self, event: DataTable.HeaderSelected) -> None:
        table = self.query_one(PopulationTable)
        name = str(event.column_key.value)
        if name in SORTS:
            table.sort_by = name
            table.rebuild()

    def action_cycle_filter(self) -> None:
        table = self.query_one(PopulationTable)
        table.status_filter = model.FILTERS[(model.FILTERS.index(table.status_filter) + 1) % len(model.FILTERS)]
        table.rebuild()
        self.notify(f"showing {table.status_filter} ({table.row_count})", timeout=2)

    def action_jump_best(self) -> bool:
        snap = self.snapshot
        best = self.by_commit.get(snap.best_commit or "") if snap else None
        if best is None:
            return False
        return self.query_one(PopulationTable).select(best.id, widen=True)

    def action_show_tab(self, tab: str) -> None:
        self.query_one(DetailPane).activate(tab)

    def action_next_run(self) -> None:
        """The problem's next run: this clone's earlier ones and those pulled from others (`evolve pull`)."""
        if self.reader is None or self._refreshing:
            return  # (a refresh reads the run in a worker: switch between refreshes)
        runs = self.store.runs(self.kernel_dir or None)
        if len(runs) < 2:
            self.notify("this problem has no other run")
            return
        views = [*runs, ALL_RUNS]  # each run, then all of them as one population
        here = self.reader.snapshot.run
        self.run_name = views[(views.index(here) + 1) % len(views)] if here in views else runs[-1]
        self.reader, self.snapshot, self.by_commit = None, None, {}
        self._loaded = self._loaded_in_worker = False
        self._details.clear()
        self.seeds, self.summary = model.SeedIndex(), Summary()
        if self.run_name == ALL_RUNS:
            self.notify("all runs of the problem as one population; ids are a letter per run and the id: "
                        + legend(run_letters(runs)), timeout=8)
        else:
            self.notify(f"run {self.run_name}", timeout=3)
        self.poll()

    def action_refresh_now(self) -> None:
        self.poll()

    def action_worktree(self) -> None:
        cid = self.query_one(PopulationTable).selected_id()
        if self.snapshot is None or cid not in self.snapshot.candidates:
            return
        self.add_worktree(self.snapshot.candidates[cid].commit, cid)

    @work(thread=True, group="worktree")
    def add_worktree(self, commit: str, cid: str) -> None:
        path = Path(self.store.git_dir) / "evolve" / "worktrees" / f"{self.snapshot.run if self.snapshot else 'run'}-{cid}"
        try:
            if not path.exists():
                self.store.add_worktree(commit, path)
            self.call_from_thread(self.notify, f"{cid} checked out in {path}", timeout=8)
        except StoreError as exc:
            self.call_from_thread(self.notify, f"worktree failed: {exc}", severity="error")


def engine_last_words(log: Path | None) -> str:
    """The engine's error line if it printed one, else its last line."""
    try:
        lines = [line for line in (log.read_text(errors="replace") if log else "").splitlines() if line.strip()]
    except OSError:
        return ""
    errors = [line for line in lines if line.startswith("evolve: error:") or "Traceback" in line]
    return (errors or lines or [""])[-1][:300]


def run_tui(store: Store, run: str | None = None, poll_s: float = 2.0,
            winner: Callable[[Snapshot], Candidate | None] | None = None,
            engine: subprocess.Popen[bytes] | None = None, engine_log: Path | None = None,
            min_gain: float = 0.0) -> EvolveApp:
    app = EvolveApp(store, run, poll_s, winner=winner, engine=engine, engine_log=engine_log, min_gain=min_gain)
    app.run()
    return app
