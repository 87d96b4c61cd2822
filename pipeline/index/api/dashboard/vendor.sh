#!/usr/bin/env sh
# Copies the dashboard's charting library (uPlot, MIT) from npm into
# vendor/, which go:embed serves at /assets/: run after changing its
# version in package.json (npm install updates package-lock.json). The
# build itself (go build) needs no npm and loads nothing from a CDN.
set -eu
cd "$(dirname "$0")"
npm ci --ignore-scripts --no-audit --no-fund
mkdir -p vendor
cp node_modules/uplot/dist/uPlot.iife.min.js vendor/uplot.min.js
cp node_modules/uplot/dist/uPlot.min.css vendor/uplot.min.css
cp node_modules/uplot/LICENSE vendor/uplot.LICENSE
rm -rf node_modules
