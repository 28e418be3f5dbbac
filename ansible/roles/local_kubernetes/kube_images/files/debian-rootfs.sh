#!/bin/bash
# Build a Debian root filesystem tarball for the project's base image:
#   debian-rootfs.sh OUT.tar SUITE MIRROR SECURITY_MIRROR PACKAGE[,PACKAGE...]
# debootstrap --variant=minbase with the packages, then the suite's updates and
# security updates (apt-get upgrade in the chroot, /proc mounted in a private mount
# namespace so that nothing stays mounted), then slimmed like Debian's -slim images
# (no apt lists or .deb cache, no man pages, docs or translations; dpkg told to keep
# skipping them). Writes OUT.tar only when everything succeeded. Needs root.
# Progress: one line per phase on stdout; everything else goes to stderr.
set -euo pipefail

out=$1 suite=$2 mirror=$3 security_mirror=$4 packages=$5
work=$(mktemp -d "$(dirname "$out")/.rootfs.XXXXXX")
trap 'rm -rf "$work"' EXIT
root=$work/rootfs
phase() { echo "[$(date +%T)] $*"; }

phase "debootstrap $suite (minbase + $packages) from $mirror"
debootstrap --variant=minbase --include="$packages" "$suite" "$root" "$mirror" >&2

phase "updates and security updates"
cat >"$root/etc/apt/sources.list" <<SOURCES
deb $mirror $suite main
deb $mirror $suite-updates main
deb $security_mirror $suite-security main
SOURCES
cat >"$root/etc/dpkg/dpkg.cfg.d/kafka-patterns-slim" <<'DPKG'
# As in Debian's -slim images: no manual pages, documentation or translations.
path-exclude /usr/share/man/*
path-exclude /usr/share/info/*
path-exclude /usr/share/doc/*
path-include /usr/share/doc/*/copyright
path-exclude /usr/share/locale/*
path-include /usr/share/locale/locale.alias
DPKG
cat >"$root/etc/apt/apt.conf.d/kafka-patterns-no-recommends" <<'APT'
APT::Install-Recommends "false";
APT::Install-Suggests "false";
APT
unshare --mount --propagation private --fork -- /bin/bash -euo pipefail -c '
  root=$1
  mount -t proc proc "$root/proc"
  mount --rbind /dev "$root/dev"
  chroot "$root" apt-get -q update
  chroot "$root" env DEBIAN_FRONTEND=noninteractive apt-get -q -y -o Dpkg::Options::=--force-confold upgrade
  chroot "$root" apt-get -q clean
' rootfs-upgrade "$root" >&2

phase "slimming"
rm -rf "$root"/var/lib/apt/lists/* "$root"/var/cache/apt/*.bin "$root"/var/cache/debconf/*-old \
  "$root"/var/log/apt/* "$root"/var/log/dpkg.log "$root"/var/log/bootstrap.log \
  "$root"/usr/share/man/* "$root"/usr/share/info/*
find "$root/usr/share/doc" -mindepth 1 -not -name copyright -not -type d -delete
find "$root/usr/share/doc" -mindepth 1 -type d -empty -delete
find "$root/usr/share/locale" -mindepth 1 -maxdepth 1 -not -name locale.alias -exec rm -rf {} +
# The runtime provides these per container.
find "$root/dev" -mindepth 1 -delete
: >"$root/etc/resolv.conf"
echo localhost >"$root/etc/hostname"

phase "writing $(basename "$out") ($(du -sh "$root" | cut -f1))"
tar --numeric-owner --xattrs --xattrs-include='*' -C "$root" -cf "$work/rootfs.tar" .
mv "$work/rootfs.tar" "$out"
