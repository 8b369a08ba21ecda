#!/bin/sh
# A tiny file-editing agent: "<verb> <file> [text...]" with verbs write, append and remove.
set -eu
set -- $1
verb="$1"
file="$2"
shift 2
case "$verb" in
  write) printf '%s\n' "$*" > "$file"; echo "wrote $file" ;;
  append) printf '%s\n' "$*" >> "$file"; echo "appended to $file" ;;
  remove) rm -f "$file"; echo "removed $file" ;;
  *) echo "unknown verb: $verb" >&2; exit 2 ;;
esac
