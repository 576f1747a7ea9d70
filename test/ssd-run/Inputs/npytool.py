"""Edits .npy files and case.json in place to build malformed cases for the
ssd-run tests, in plain Python (no numpy).

  npytool.py bad-magic FILE              spoil the magic string
  npytool.py truncate FILE N             drop the last N bytes
  npytool.py fortran FILE                mark the array fortran_order
  npytool.py retype FILE DESCR           change the dtype, keep the bytes
  npytool.py zeros FILE DESCR D0,D1,...  write a zero array of that shape
  npytool.py set FILE FLAT VALUE         set element FLAT (C order)
  npytool.py json FILE KEY JSON          set case.json KEY to a JSON value
  npytool.py json-del FILE KEY           remove KEY from case.json
  npytool.py text FILE TEXT              overwrite FILE with TEXT
"""
import ast
import json
import struct
import sys

FORMATS = {"<f4": "f", "<f8": "d", "<i4": "i", "<i8": "q", "<f2": "e"}


def read(path):
    with open(path, "rb") as f:
        data = f.read()
    assert data[:6] == b"\x93NUMPY", path + ": not an .npy file"
    if data[6] == 1:
        (hlen,) = struct.unpack("<H", data[8:10])
        start = 10
    else:
        (hlen,) = struct.unpack("<I", data[8:12])
        start = 12
    header = ast.literal_eval(data[start:start + hlen].decode("latin1"))
    return header, data[start + hlen:]


def write(path, header, body):
    text = "{'descr': '%s', 'fortran_order': %s, 'shape': %s, }" % (
        header["descr"], header["fortran_order"], repr(tuple(header["shape"])))
    pad = (64 - (10 + len(text) + 1) % 64) % 64
    text = text + " " * pad + "\n"
    with open(path, "wb") as f:
        f.write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(text)))
        f.write(text.encode("latin1") + body)


def main(argv):
    cmd, path = argv[1], argv[2]
    if cmd == "bad-magic":
        data = bytearray(open(path, "rb").read())
        data[1:6] = b"NUMPX"
        open(path, "wb").write(bytes(data))
    elif cmd == "truncate":
        data = open(path, "rb").read()
        open(path, "wb").write(data[: len(data) - int(argv[3])])
    elif cmd == "fortran":
        header, body = read(path)
        header["fortran_order"] = True
        write(path, header, body)
    elif cmd == "retype":
        header, body = read(path)
        header["descr"] = argv[3]
        write(path, header, body)
    elif cmd == "zeros":
        descr = argv[3]
        shape = tuple(int(d) for d in argv[4].split(",") if d)
        count = 1
        for d in shape:
            count *= d
        body = struct.pack("<%d%s" % (count, FORMATS[descr]), *([0] * count))
        write(path, {"descr": descr, "fortran_order": False, "shape": shape}, body)
    elif cmd == "set":
        header, body = read(path)
        fmt = "<" + FORMATS[header["descr"]]
        size = struct.calcsize(fmt)
        flat = int(argv[3])
        value = float(argv[4]) if fmt[1] in "efd" else int(argv[4])
        body = body[: flat * size] + struct.pack(fmt, value) + body[(flat + 1) * size:]
        write(path, header, body)
    elif cmd == "json":
        doc = json.load(open(path))
        doc[argv[3]] = json.loads(argv[4])
        json.dump(doc, open(path, "w"), indent=1)
    elif cmd == "json-del":
        doc = json.load(open(path))
        del doc[argv[3]]
        json.dump(doc, open(path, "w"), indent=1)
    elif cmd == "text":
        open(path, "w").write(argv[3])
    else:
        sys.exit("npytool.py: unknown command " + cmd)


if __name__ == "__main__":
    main(sys.argv)
