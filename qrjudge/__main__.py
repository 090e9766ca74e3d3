"""`python -m qrjudge --kernel-dir DIR [--mode quick|full|final]`: the QR judge's supervisor (supervisor.py)."""

import sys

from qrjudge.supervisor import main

sys.exit(main())
