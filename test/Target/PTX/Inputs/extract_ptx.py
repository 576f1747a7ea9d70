# Writes the PTX held by the gpu.binary of an MLIR file (format=isa) to a
# file, undoing MLIR's string escapes (\\, \", \XX hex).
import re
import sys

text = open(sys.argv[1], encoding="latin-1").read()
match = re.search(r'(?:assembly|bin|isa) = "(.*?)(?<!\\)"', text, re.S) or \
    re.search(r'#gpu\.object<#nvvm\.target<[^>]*>, "(.*?)(?<!\\)">', text, re.S)
if not match:
    sys.exit("no gpu.object with PTX in " + sys.argv[1])
body, out, i = match.group(1), bytearray(), 0
while i < len(body):
    if body[i] == "\\":
        if body[i + 1] in '\\"':
            out.append(ord(body[i + 1]))
            i += 2
        else:
            out.append(int(body[i + 1:i + 3], 16))
            i += 3
    else:
        out += body[i].encode("latin-1")
        i += 1
open(sys.argv[2], "wb").write(bytes(out))
