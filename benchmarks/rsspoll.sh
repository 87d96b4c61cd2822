#!/usr/bin/env bash
# rsspoll.sh LABEL CMD...: runs CMD and prints its peak RssAnon, RssFile and
# VmHWM (MiB), read from /proc every 5 ms. RssFile is the binary's mapped
# text, which differs from build to build: compare RssAnon.
label=$1; shift
"$@" > /dev/null 2>&1 & pid=$!; ma=0; mf=0; mh=0
while kill -0 $pid 2>/dev/null; do
  read a f h < <(awk '/RssAnon/{a=$2} /RssFile/{f=$2} /VmHWM/{h=$2} END{print a+0, f+0, h+0}' /proc/$pid/status 2>/dev/null)
  [ "${a:-0}" -gt "$ma" ] && ma=$a; [ "${f:-0}" -gt "$mf" ] && mf=$f; [ "${h:-0}" -gt "$mh" ] && mh=$h
  sleep 0.005
done
echo "$label anon_MB=$((ma/1024)) file_MB=$((mf/1024)) hwm_MB=$((mh/1024))"
