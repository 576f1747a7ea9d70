# Usage: gpu-binary-ptx.py IN.mlir OUT.ptx
# Writes the PTX text embedded in the first gpu.object of IN.mlir (a module
# compiled with format=isa) to OUT.ptx. MLIR prints the object as a string
# literal: backslash escapes are \\, \" and two hex digits.
import re
import sys

source = open(sys.argv[1], encoding="latin-1").read()
# Either `#gpu.object<TARGET, "..."` or, with properties, `assembly = "..."`.
literal = r'"((?:[^"\\]|\\.)*)"'
found = re.search(r'\bassembly = ' + literal, source) or re.search(
    r'#gpu\.object<#nvvm\.target<[^>]*>, ' + literal, source)
if not found:
    sys.exit(sys.argv[1] + ": no gpu.object holding PTX")
text, ptx, at = found.group(1), bytearray(), 0
while at < len(text):
    ch = text[at]
    if ch != "\\":
        ptx += ch.encode("latin-1")
        at += 1
    elif text[at + 1] in '"\\':
        ptx.append(ord(text[at + 1]))
        at += 2
    else:
        ptx.append(int(text[at + 1:at + 3], 16))
        at += 3
with open(sys.argv[2], "wb") as out:
    out.write(bytes(ptx))
