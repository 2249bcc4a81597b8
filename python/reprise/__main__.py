"""`reprise ...` and `python -m reprise ...`: exec the C command, which keeps
this process's pid (a stats file's %p names the program it runs)."""

import os
import sys

from reprise import command


def main():
    exe = command()
    try:
        os.execv(exe, ["reprise"] + sys.argv[1:])
    except OSError as e:
        sys.stderr.write("reprise: cannot run %s: %s\n" % (exe, e.strerror))
        return 127


if __name__ == "__main__":
    sys.exit(main())
