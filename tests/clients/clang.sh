# Sourced by the tinygrad scripts: sets $cc to a clang for tinygrad's CPU device (its CC, a
# clang or versioned clang-NN on PATH, else Debian's clang, installed).
cc=${CC:-}
if [ -z "$cc" ]; then
  for c in clang clang-19 clang-18 clang-17 clang-16 clang-15 clang-14; do
    if command -v "$c" >/dev/null 2>&1; then cc=$c; break; fi
  done
fi
if [ -z "$cc" ]; then
  echo "no clang found; installing Debian's clang" >&2
  apt-get update -qq >/dev/null && apt-get install -y -qq clang >/dev/null
  cc=clang
fi
