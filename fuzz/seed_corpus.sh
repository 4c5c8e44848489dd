#!/bin/sh
# Copies the regression inputs into fuzz/corpus/parse (ignored by git).
set -eu
here=$(cd "$(dirname "$0")" && pwd)
data="$here/../crates/bvhkit/tests/data"
mkdir -p "$here/corpus/parse"
for f in "$data"/quirks/*.bvh "$data"/hostile/*.bvh; do
    cp "$f" "$here/corpus/parse/$(basename "$(dirname "$f")")_$(basename "$f")"
done
echo "seeded $(ls "$here/corpus/parse" | wc -l) inputs into $here/corpus/parse"
