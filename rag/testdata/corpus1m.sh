#!/bin/sh
# corpus1m.sh DIR: download the modules listed in corpus1m.txt (the 1M-chunk
# benchmark corpus, shared by the embedded index's and the team index's
# benchmarks) into the Go module cache, and hard-link each under
# DIR/MODULE@VERSION (one tree to index; the module cache stays as it is).
# Needs the Go module proxy; checksums are not looked up (the checksum
# database does not answer for every module here): it is benchmark data,
# never built or run. About 5 GB of downloads the first time.
set -eu
DIR=${1:?usage: corpus1m.sh DIR}
LIST=$(dirname "$0")/corpus1m.txt
mkdir -p "$DIR"
EMPTY=$(mktemp -d)
trap 'rm -rf "$EMPTY"' EXIT
grep -v '^#' "$LIST" | while read -r mv; do
	[ -n "$mv" ] || continue
	dst="$DIR/$mv"
	[ -e "$dst" ] && continue
	src=$(cd "$EMPTY" && GOFLAGS=-mod=mod GOSUMDB=off go mod download -json "$mv" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",*$/\1/p')
	if [ -z "$src" ]; then
		echo "corpus1m: $mv did not download" >&2
		continue
	fi
	mkdir -p "$(dirname "$dst")"
	cp -al "$src" "$dst.tmp" && mv "$dst.tmp" "$dst"
done
echo "$DIR"
