#!/bin/bash
# For the next session (after session 46): on an H200, job56 (the seed as it ships against geqrf and the seed of
# c078b1f, five repeats, final; the climb's two steps with evolve try / add), about 5 minutes; then, in a second call,
# job25 (#35 pt 1 in full, about 480 s). On any GPU: job57 (the outer look-ahead on 40x352, 8x2048, 2x4096; 2 minutes).
# All: carry .whl and .devrun.
exec bash "$(dirname "$0")/job56.sh"
