# expect: ok |
# The judge's known open door (docs/QR_CONTRACT.md, "Times"), expected to pass until it is closed; on the CPU,
# tests/test_judge_cpu.py says what it gets.
# A torch extension built at import walks the interpreter's frames through Python's C API (no name the scan reads)
# to the runner's `call`, and restarts its timer once the honest work is queued: on a GPU the start event is recorded
# again behind that work, on the CPU the start time is read again; and the start of the runner's own wall clock
# around the call, a local of that frame, is moved too (without it an H100's wall check caught it: run72). On a GPU it
# first waits for its work: restarted behind queued work, the runner's wall clock still saw the work run (40x352:
# 1489-1585 us of wall against 1 us of events, rejected by the wall check on an H100 in run75 and run76; this version
# is `ok` on an H100 in run78). The runner reports next to nothing; only the judge's own clock sees the difference, and
# within its slack (3 ms a call on a GPU) it passes. On the CPU it gains nothing: the score there is the judge's clock.
import torch
from torch.utils.cpp_extension import load_inline

from base import custom_kernel as honest

SOURCE = r"""
#include <torch/extension.h>
#include <frameobject.h>
// The runner's `call` frame: its `timer` restarted, and its `began` (the start of its own wall clock) read again.
static void set_local(PyFrameObject *frame, const char *name, PyObject *value) {
  PyObject *locals = PyFrame_GetLocals(frame);  // from 3.13 a proxy that writes through
  PyMapping_SetItemString(locals, name, value);
#if PY_VERSION_HEX < 0x030D0000
  PyFrame_LocalsToFast(frame, 0);
#endif
  Py_DECREF(locals);
}
bool restart() {
  PyObject *clock = PyImport_ImportModule("time");
  PyFrameObject *frame = PyEval_GetFrame();
  Py_XINCREF(frame);
  while (frame) {
    PyObject *locals = PyFrame_GetLocals(frame);
    PyObject *timer = locals ? PyMapping_GetItemString(locals, "timer") : nullptr;
    Py_XDECREF(locals);
    if (timer && PyObject_HasAttrString(timer, "begin")) {
      PyObject *begin = PyObject_GetAttrString(timer, "begin");
      PyObject *now = PyObject_CallMethod(clock, "perf_counter", nullptr);
      if (PyFloat_Check(begin))  // the CPU self-test's host clock
        PyObject_SetAttrString(timer, "begin", now);
      else  // a CUDA event: recorded again, behind the work queued so far
        Py_XDECREF(PyObject_CallMethod(begin, "record", nullptr));
      set_local(frame, "began", now);
      Py_XDECREF(now); Py_XDECREF(begin); Py_DECREF(timer); Py_DECREF(frame); Py_DECREF(clock);
      return true;
    }
    PyErr_Clear();
    Py_XDECREF(timer);
    PyFrameObject *back = PyFrame_GetBack(frame);
    Py_DECREF(frame);
    frame = back;
  }
  Py_DECREF(clock);
  return false;
}
"""
module = load_inline("restart_ext", cpp_sources=SOURCE, functions=["restart"], verbose=False)


def custom_kernel(A):
    out = honest(A)
    if A.shape[-1] <= 352:  # the small shapes, whose lie stays within the judge's slack
        if A.is_cuda:
            torch.cuda.synchronize()  # the work done before the clocks restart: neither sees it
        module.restart()
    return out
