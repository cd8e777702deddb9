#!/usr/bin/env python3
"""Every ioctl code constant in abi/devices/*.h is named after the public driver name a reader
greps for: k + the name's last words in CamelCase (kSyncptIncr is NVHOST_IOCTL_CTRL_SYNCPT_INCR,
kSyncptWaitEx NVHOST_IOCTL_CTRL_SYNCPT_WAITEX), so `grep -ri ksyncptwaitex abi/` (the words
without underscores) finds it; a trailing V1 marks an older firmware's code of the same ioctl. The names come from docs/ioctls.md, the catalogue's own
reference (tests/unit/abi/docs_test.cc keeps it equal to the catalogue). Run by ctest
"ConstantNames": python3 tests/constant_names.py <source dir>."""
import glob
import os
import re
import sys

root = sys.argv[1] if len(sys.argv) > 1 else "."
names = {}  # code -> public names
row = re.compile(r"^\| `0x([0-9A-F]{8})`(?:, alias `0x([0-9A-F]{8})`)? \| (\w+) \|")
for line in open(os.path.join(root, "docs/ioctls.md")):
    m = row.match(line)
    if m:
        for code in (m.group(1), m.group(2)):
            if code:
                names.setdefault(int(code, 16), set()).add(m.group(3))

bad = checked = 0
const = re.compile(r"constexpr uint32_t k(\w+) = 0x([0-9A-Fa-f]+);")
for path in sorted(glob.glob(os.path.join(root, "abi/devices/*.h"))):
    for m in const.finditer(open(path).read()):
        camel, code = m.group(1), int(m.group(2), 16)
        want = (camel[:-2] if camel.endswith("V1") else camel).lower()
        # Codes whose size bits vary (Switchbrew's 0xC0??.... rows) match on magic and number.
        found = names.get(code) or {n for c, ns in names.items()
                                    if (c & 0xFFFF) == (code & 0xFFFF) for n in ns}
        if not found and code <= 0xFFFF:
            continue  # a small number no ioctl has (a size such as kPathMax), not a code
        checked += 1
        if not any(want in ("".join(n.lower().split("_")[i:]) for i in range(len(n.split("_"))))
                   for n in found):
            bad += 1
            print(f"{os.path.relpath(path, root)}: k{camel} (0x{code:08X}) is not named after "
                  f"{sorted(found) or 'any catalogued ioctl'}")
print(f"constant names: {checked} ioctl code constants checked, {bad} not named after their ioctl")
sys.exit(1 if bad else 0)
