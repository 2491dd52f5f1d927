#!/bin/sh
# fetch.sh DIR: makes DIR/NAME, the local copy of each vault a query file
# here names, at the commit its questions were written against (a shallow
# fetch of that one commit). An existing DIR/NAME is left as it is, so
# that DIR may also point at copies made another way.
#
#   sh testdata/realvaults/fetch.sh /tmp/vaults
#   go run . realvault -vaults /tmp/vaults
set -eu
dir=${1:?usage: fetch.sh DIR}
here=$(dirname "$0")
mkdir -p "$dir"
for f in "$here"/*.json; do
	name=$(sed -n 's/^  "name": "\(.*\)",$/\1/p' "$f" | head -n 1)
	repo=$(sed -n 's/^  "repo": "\(.*\)",$/\1/p' "$f" | head -n 1)
	commit=$(sed -n 's/^  "commit": "\(.*\)",$/\1/p' "$f" | head -n 1)
	if [ -d "$dir/$name" ]; then
		echo "$name: $dir/$name exists, kept"
		continue
	fi
	echo "$name: $repo @ $commit"
	git init -q "$dir/$name"
	git -C "$dir/$name" fetch -q --depth 1 "https://github.com/$repo.git" "$commit"
	git -C "$dir/$name" -c advice.detachedHead=false checkout -q FETCH_HEAD
done
