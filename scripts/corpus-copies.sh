# Sourced by the scaling scripts: corpus_copies CORPUS DIR TIMES fills DIR
# with TIMES copies of every well-formed corpus file (malformed_* left out),
# named r<i>_<name>, an input folder of realistic files of many sizes.
corpus_copies() {
  local corpus=$1 dir=$2 times=$3 i f
  mkdir -p "$dir"
  for i in $(seq "$times"); do
    for f in "$corpus"/*.bvh; do
      case $(basename "$f") in malformed_*) continue ;; esac
      cp "$f" "$dir/r${i}_$(basename "$f")"
    done
  done
}
