#!/usr/bin/env bash
# debversion.sh VERSION: the Debian package version of a build's VERSION
# (git describe, as the Makefile makes it), so that dpkg and apt order
# builds as they were made:
#   v1.2.0            1.2.0
#   v1.2.0-rc.1       1.2.0~rc.1        a pre-release sorts before its release
#   v1.2.0-3-gabc123  1.2.0+3~gabc123   a commit after a tag sorts after it
#   v1.2.0-dirty      1.2.0+0+dirty     so does a modified tree, before the next commit
#   v1.2.0-rc.1-2-gabc123  1.2.0~rc.1+2~gabc123
#   v0.0.0-20261129070824-bbde7b36ef7f  0.0.0~20261129070824~bbde7b36ef7f  (no tag yet)
set -euo pipefail
v=${1#v}
suffix=""
if [[ $v == *-dirty ]]; then
  v=${v%-dirty} suffix=+dirty
fi
if [[ $v =~ ^(.+)-([0-9]+)-g([0-9a-f]+)$ ]]; then
  v=${BASH_REMATCH[1]} suffix="+${BASH_REMATCH[2]}~g${BASH_REMATCH[3]}$suffix"
elif [[ -n $suffix && $v =~ ^[0-9]+\.[0-9]+\.[0-9]+(-[0-9A-Za-z.]+)?$ ]]; then
  suffix=+0$suffix # on a tag: before its next commit's +1~g…
fi
echo "${v//-/\~}$suffix"
