# queuectl's release artifacts and generated docs.
#
#   make dist                         binaries, tarballs, .debs and SHA256SUMS under dist/
#   make dist PLATFORMS=linux/amd64   the same for one platform
#   make docs                         man pages and docs/commands.md from the commands
#
# dist is reproducible: two runs on one commit give the same SHA256SUMS
# (tools/dist.sh says how). It needs git, tar, gzip and, for the .deb, dpkg-deb.

SHELL := bash
.SHELLFLAGS := -euo pipefail -c

# The binaries, NAME=PACKAGE each: a second binary is one more word.
BINARIES := queuectl=. queuectl-full=./cmd/queuectl-full
PLATFORMS ?= linux/amd64 linux/arm64 darwin/amd64 darwin/arm64
DIST ?= dist

# What the binaries say of themselves (queuectl version): the newest v* tag,
# else a Go pseudo-version of the commit; the commit; its date, which is
# also every packaged file's mtime.
EPOCH ?= $(shell git log -1 --format=%ct)
DATE ?= $(shell TZ=UTC git log -1 --format=%cd --date=format-local:%Y-%m-%dT%H:%M:%SZ)
COMMIT ?= $(shell git rev-parse HEAD)
# A build of a tree with uncommitted changes says so: -dirty.
VERSION ?= $(shell git describe --tags --match 'v[0-9]*' 2>/dev/null || \
	echo v0.0.0-$$(TZ=UTC git log -1 --format=%cd --date=format-local:%Y%m%d%H%M%S)-$$(git rev-parse --short=12 HEAD))$(shell \
	git status --porcelain --untracked-files=no | grep -q . && echo -dirty)

.PHONY: dist docs
dist:
	BINARIES='$(BINARIES)' PLATFORMS='$(PLATFORMS)' VERSION='$(VERSION)' COMMIT='$(COMMIT)' \
		DATE='$(DATE)' EPOCH='$(EPOCH)' DIST='$(DIST)' tools/dist.sh

docs:
	go run ./internal/gendocs
