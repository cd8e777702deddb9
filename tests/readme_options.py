#!/usr/bin/env python3
"""ctest "CliReadmeOptions": README.md's options tables are what `nvsentry help --markdown` prints.

The tables sit between the two marker lines below; the command line's table
(sentry/cmd/cli_table.cc) is their source. With --write, replaces README.md's copy.

  tests/readme_options.py [--write] NVSENTRY README.md
"""
import difflib
import subprocess
import sys

BEGIN = "<!-- BEGIN nvsentry help --markdown -->\n"
END = "<!-- END nvsentry help --markdown -->\n"


def main(argv):
    write = "--write" in argv
    args = [a for a in argv[1:] if a != "--write"]
    if len(args) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    nvsentry, readme = args
    printed = subprocess.run([nvsentry, "help", "--markdown"], check=True, capture_output=True,
                             text=True).stdout
    text = open(readme, encoding="utf-8").read()
    begin, end = text.find(BEGIN), text.find(END)
    if begin < 0 or end < begin:
        print(f"{readme}: no lines {BEGIN.strip()!r} ... {END.strip()!r}", file=sys.stderr)
        return 1
    ours = text[begin + len(BEGIN):end]
    if ours == printed:
        print(f"{readme}: the options tables are `nvsentry help --markdown`'s")
        return 0
    if write:
        with open(readme, "w", encoding="utf-8") as f:
            f.write(text[:begin + len(BEGIN)] + printed + text[end:])
        print(f"{readme}: options tables replaced")
        return 0
    sys.stdout.writelines(difflib.unified_diff(ours.splitlines(True), printed.splitlines(True),
                                               "README.md", "nvsentry help --markdown"))
    print(f"{readme}'s options tables differ from `nvsentry help --markdown`; replace them with "
          f"tests/readme_options.py --write {nvsentry} {readme}")
    return 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
