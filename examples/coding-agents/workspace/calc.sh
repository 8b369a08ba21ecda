#!/bin/sh
# Usage: sh calc.sh add <a> <b>
case "$1" in
  add) echo $(($2 - $3)) ;;
  *) echo "unknown operation: $1" >&2; exit 2 ;;
esac
