#!/bin/sh
# The project's test: sh test.sh
got=$(sh calc.sh add 2 3)
if [ "$got" = 5 ]; then
  echo "ok: add 2 3 = 5"
else
  echo "FAIL: add 2 3 = $got, expected 5" >&2
  exit 1
fi
