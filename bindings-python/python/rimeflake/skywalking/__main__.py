"""Run a Python program with rimeflake's IDs in the SkyWalking agent, without changing its code.

    python -m rimeflake.skywalking app.py [args...]
    python -m rimeflake.skywalking -m package.module [args...]
    sw-python run python -m rimeflake.skywalking app.py [args...]

calls ``rimeflake.skywalking.install_skywalking()``, then runs the program as ``python app.py`` or
``python -m package.module`` would (``sys.argv``, ``sys.path[0]``, ``__name__ == "__main__"``).
The agent's own switches (``sw-python run``, the ``SW_AGENT_*`` variables) are unchanged.

The agent offers no hook of its own for this (its plugins are the modules inside its own
``skywalking.plugins`` package), so the switch is on the command line, in the open, rather
than in a ``.pth`` or ``sitecustomize`` file that runs on every start of the interpreter.
"""

from __future__ import annotations

import os
import runpy
import sys
from typing import Optional

from . import SkyWalkingAgentError, install_skywalking

USAGE = "usage: python -m rimeflake.skywalking (SCRIPT | -m MODULE) [ARGS...]"


def main(argv: Optional[list[str]] = None) -> None:
    """Install the patch, then run the script or module named in ``argv`` (``sys.argv[1:]``)."""
    args = sys.argv[1:] if argv is None else argv
    if not args or args[0] in ("-h", "--help"):
        print((__doc__ or USAGE) if args else USAGE, file=sys.stdout if args else sys.stderr)
        raise SystemExit(0 if args else 2)
    if args[0] == "-m" and len(args) < 2:
        print(f"{USAGE}\nrimeflake.skywalking: -m needs a module name", file=sys.stderr)
        raise SystemExit(2)
    try:
        install_skywalking()
    except SkyWalkingAgentError as e:
        print(f"rimeflake.skywalking: {e}", file=sys.stderr)
        raise SystemExit(1) from e
    if args[0] == "-m":
        sys.argv = args[1:]
        runpy.run_module(args[1], run_name="__main__", alter_sys=True)
    else:
        sys.argv = list(args)
        # As `python app.py` does: the script's own directory first on the path.
        sys.path[0] = os.path.dirname(os.path.abspath(args[0]))
        runpy.run_path(args[0], run_name="__main__")


if __name__ == "__main__":
    main()
