#!/bin/sh
# Regenerates cobra.bundle from a clone of github.com/spf13/cobra:
#
#   memcore/anchor/testdata/cobra/make.sh /path/to/cobra.git
#
# The bundle holds six commits, one snapshot of cobra's tree each (images
# left out), tagged by era: the trees before and after three stretches of
# cobra's history with renames and deletions.
set -eu
src=${1:?usage: make.sh <path to a clone of github.com/spf13/cobra>}
out=$(cd "$(dirname "$0")" && pwd)/cobra.bundle
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export GIT_CONFIG_NOSYSTEM=1 GIT_CONFIG_GLOBAL=/dev/null
export GIT_AUTHOR_NAME=forgemem GIT_AUTHOR_EMAIL=forgemem@example.invalid
export GIT_COMMITTER_NAME=forgemem GIT_COMMITTER_EMAIL=forgemem@example.invalid
export GIT_AUTHOR_DATE=2025-01-01T00:00:00Z GIT_COMMITTER_DATE=2025-01-01T00:00:00Z
git init -q -b main "$work"
cd "$work"
for spec in era1-old:b3f29e9^ era1-new:b3f29e9 era2-old:b312f0a^ era2-new:5b2b9e9 era3-old:40b5bc1^ era3-new:40b5bc1; do
	tag=${spec%%:*}
	rev=${spec#*:}
	git rm -rq --ignore-unmatch .
	git --git-dir="$src" archive "$rev" | tar -x --exclude='*.png' --exclude='*.gif' --exclude='*.jpg' --exclude='*.svg'
	git add -A
	git commit -qm "spf13/cobra at $(git --git-dir="$src" rev-parse "$rev")"
	git tag "$tag"
done
git bundle create "$out" --all
