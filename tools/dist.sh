#!/usr/bin/env bash
# Release artifacts, called by `make dist` (which sets the variables below):
# for each platform, static binaries in dist/OS_ARCH/ and a tarball with
# them, README.md, DECISIONS.md, LICENSE, the docs README links
# (docs/*.md, and the images they show), the man pages, the shell
# completions, the systemd units and the monitoring files; a .deb for each
# linux platform (README.md, DECISIONS.md and docs/ in
# /usr/share/doc/queuectl/, so that the docs' links hold there too);
# dist/SHA256SUMS over the tarballs and packages.
#
# Reproducible: the same commit gives the same bytes. Go builds with
# -trimpath and -buildvcs=false (the commit is stamped with -X instead);
# every file's mtime is the commit's date (EPOCH, also SOURCE_DATE_EPOCH
# for dpkg-deb); tar entries are sorted, owned by 0:0, with fixed modes;
# gzip stores no name or time.
#
#   BINARIES   NAME=PACKAGE ..., e.g. "queuectl=. queuectl-full=./cmd/queuectl-full"
#   PLATFORMS  OS/ARCH ...
#   VERSION COMMIT DATE EPOCH   what to stamp; DIST  the output directory
set -euo pipefail
cd "$(dirname "$0")/.."
: "${BINARIES:?}" "${PLATFORMS:?}" "${VERSION:?}" "${COMMIT:?}" "${DATE:?}" "${EPOCH:?}" "${DIST:=dist}"
export SOURCE_DATE_EPOCH=$EPOCH TZ=UTC LC_ALL=C
umask 022
rm -rf "$DIST"
mkdir -p "$DIST/.work"
work=$(cd "$DIST/.work" && pwd)

ldflags="-s -w -X github.com/queuectl/queuectl/front.version=$VERSION -X github.com/queuectl/queuectl/front.commit=$COMMIT -X github.com/queuectl/queuectl/front.date=$DATE"
build() { # build OS ARCH DIR: every binary of BINARIES into DIR
  for b in $BINARIES; do
    CGO_ENABLED=0 GOOS=$1 GOARCH=$2 GOFLAGS=-buildvcs=false \
      go build -trimpath -tags urfave_cli_no_docs -ldflags "$ldflags" -o "$3/${b%%=*}" "${b#*=}"
  done
}

# The completions come from the binary itself, built for this machine (the
# platform's own when it is one of PLATFORMS: a link costs more than a
# compile here).
host=$(go env GOOS)_$(go env GOARCH)
hostbin=$work/$host
if [[ " $PLATFORMS " == *" ${host/_//} "* ]]; then hostbin=$DIST/$host; fi
build "${host%_*}" "${host#*_}" "$hostbin"
for shell in bash fish; do "$hostbin/queuectl" completion "$shell" > "$work/queuectl.$shell"; done

# stage DIR: what every tarball holds besides the binaries.
stage() {
  mkdir -p "$1/docs/images" "$1/man/man1" "$1/man/man5" "$1/completions" "$1/systemd" "$1/monitoring"
  cp README.md DECISIONS.md LICENSE "$1/"
  cp docs/*.md "$1/docs/"
  cp docs/images/*.png "$1/docs/images/"
  cp docs/man/*.1 "$1/man/man1/"
  cp docs/man/*.5 "$1/man/man5/"
  cp "$work/queuectl.bash" "$work/queuectl.fish" packaging/completions/_queuectl "$1/completions/"
  # A tarball's programs go where hand-installed programs go, /usr/local/bin
  # (the .deb puts them in /usr/bin): its units run them from there.
  for unit in packaging/systemd/*; do
    sed 's|=/usr/bin/queuectl |=/usr/local/bin/queuectl |' "$unit" > "$1/systemd/$(basename "$unit")"
  done
  cp serve/monitoring/queuectl-dashboard.json serve/monitoring/queuectl-alerts.yml "$1/monitoring/"
}

# normalize DIR BINDIR: the modes and the mtime of every file, so that only
# content differs between builds; the binaries in DIR/BINDIR executable.
normalize() {
  find "$1" -type d -exec chmod 0755 {} +
  find "$1" -type f -exec chmod 0644 {} +
  for b in $BINARIES; do chmod 0755 "$1/$2/${b%%=*}"; done
  find "$1" -exec touch -h -d "@$EPOCH" {} +
}

tarball() { # tarball DIR OUT
  tar --sort=name --owner=0 --group=0 --numeric-owner --format=gnu --mtime="@$EPOCH" \
    -C "$(dirname "$1")" -cf - "$(basename "$1")" | gzip -9 -n > "$2"
}

# debian BINDIR ARCH: the .deb of a linux platform, with dpkg-deb.
debian() {
  local root=$work/deb_$2 version
  version=$(tools/debversion.sh "$VERSION")
  mkdir -p "$root/DEBIAN" "$root/usr/bin" "$root/usr/share/man/man1" "$root/usr/share/man/man5" \
    "$root/usr/share/bash-completion/completions" "$root/usr/share/zsh/vendor-completions" \
    "$root/usr/share/fish/vendor_completions.d" "$root/usr/lib/systemd/user" "$root/usr/lib/systemd/system" \
    "$root/etc/default" "$root/usr/share/doc/queuectl/docs/images" "$root/usr/share/queuectl"
  cp "$1"/* "$root/usr/bin/"
  for page in docs/man/*.[15]; do
    gzip -9 -n < "$page" > "$root/usr/share/man/man${page##*.}/$(basename "$page").gz"
  done
  cp "$work/queuectl.bash" "$root/usr/share/bash-completion/completions/queuectl"
  cp packaging/completions/_queuectl "$root/usr/share/zsh/vendor-completions/"
  cp "$work/queuectl.fish" "$root/usr/share/fish/vendor_completions.d/"
  cp packaging/systemd/queuectl.service packaging/systemd/queuectl-serve.service "$root/usr/lib/systemd/user/"
  cp packaging/systemd/queuectl@.service "$root/usr/lib/systemd/system/"
  cp packaging/systemd/queuectl.default "$root/etc/default/queuectl"
  cp LICENSE "$root/usr/share/doc/queuectl/copyright"
  cp README.md DECISIONS.md "$root/usr/share/doc/queuectl/"
  cp docs/*.md "$root/usr/share/doc/queuectl/docs/"
  cp docs/images/*.png "$root/usr/share/doc/queuectl/docs/images/"
  cp serve/monitoring/queuectl-dashboard.json serve/monitoring/queuectl-alerts.yml "$root/usr/share/queuectl/"
  echo /etc/default/queuectl > "$root/DEBIAN/conffiles"
  cat > "$root/DEBIAN/control" <<CONTROL
Package: queuectl
Version: $version
Architecture: $2
Maintainer: The queuectl authors <queuectl@users.noreply.github.com>
Installed-Size: $(du -sk --exclude=DEBIAN "$root" | cut -f1)
Section: admin
Priority: optional
Homepage: https://github.com/queuectl/queuectl
Description: run shell jobs in the background, from a spool directory or the command line
 A job queue for one machine, or many sharing PostgreSQL: drop a JSON file
 into a spool directory or run queuectl enqueue; workers run each job with
 /bin/sh -c, keep its logs, retry failures with backoff and dead-letter the
 jobs that keep failing. Two static programs (queuectl and the
 queuectl-full it runs), man pages, the docs, shell completions, systemd
 units, and a Grafana dashboard and Prometheus rules.
CONTROL
  cp packaging/debian-reload "$root/DEBIAN/postinst"
  cp packaging/debian-reload "$root/DEBIAN/postrm"
  normalize "$root" usr/bin
  chmod 0755 "$root/DEBIAN/postinst" "$root/DEBIAN/postrm"
  dpkg-deb --root-owner-group -Zgzip -z9 --build "$root" "$DIST/queuectl_${version}_$2.deb" >/dev/null
}

for p in $PLATFORMS; do
  os=${p%/*} arch=${p#*/}
  name=queuectl_${VERSION#v}_${os}_${arch}
  [ -d "$DIST/${os}_${arch}" ] || build "$os" "$arch" "$DIST/${os}_${arch}"
  dir=$work/$name
  mkdir -p "$dir"
  cp "$DIST/${os}_${arch}"/* "$dir/"
  stage "$dir"
  normalize "$dir" .
  tarball "$dir" "$DIST/$name.tar.gz"
  if [ "$os" = linux ]; then
    debian "$DIST/${os}_${arch}" "$arch"
  fi
done

rm -rf "$work"
(cd "$DIST" && sha256sum -- *.tar.gz $(ls *.deb 2>/dev/null) > SHA256SUMS)
cat "$DIST/SHA256SUMS"
