#!/bin/sh
# Copies every bundled PTX file into the fuzz corpora (run from fuzz/).
set -e
for t in parse_check compile hot_launch; do
  mkdir -p corpus/$t
  find ../tests ../examples -name '*.ptx' | while read -r f; do
    cp "$f" "corpus/$t/$(echo "$f" | sed 's|^\.\./||; s|/|_|g')"
  done
done
