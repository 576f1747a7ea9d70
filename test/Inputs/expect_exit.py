"""Runs a command, forwards its stdout then its stderr, and fails unless it
exits with the expected status:  expect_exit.py STATUS CMD [ARGS...]"""
import subprocess
import sys

expected = int(sys.argv[1])
proc = subprocess.run(sys.argv[2:], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
sys.stdout.write(proc.stdout.decode(errors="replace"))
sys.stdout.write(proc.stderr.decode(errors="replace"))
if proc.returncode != expected:
    sys.stdout.write("expect_exit.py: exit status %d, expected %d\n"
                     % (proc.returncode, expected))
    sys.exit(1)
