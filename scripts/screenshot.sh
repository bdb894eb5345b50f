#!/usr/bin/env bash
# Renders an HTML page or an SVG figure (e.g. from `warpscope explain --format html|svg`) to
# a PNG with headless Chromium, to look at what the renderers draw.
#
#   scripts/screenshot.sh IN.html|IN.svg OUT.png [WIDTHxHEIGHT]
#
# The window defaults to 1280x2000 for HTML; for SVG it defaults to the figure's own size
# (its width/height attributes). Needs `chromium` (Debian: apt-get install -y chromium).
set -euo pipefail

if [[ $# -lt 2 || $# -gt 3 ]]; then
    echo "usage: $0 IN.html|IN.svg OUT.png [WIDTHxHEIGHT]" >&2
    exit 2
fi
in=$1
out=$2
size=${3:-}

[[ -f $in ]] || { echo "$0: no such file: $in" >&2; exit 1; }
browser=$(command -v chromium || command -v chromium-browser || command -v google-chrome || true)
if [[ -z $browser ]]; then
    echo "$0: chromium not found (Debian: sudo apt-get install -y chromium)" >&2
    exit 1
fi

if [[ -z $size ]]; then
    size=1280x2000
    if [[ $in == *.svg ]]; then
        # The root element's width and height, rounded up.
        w=$(grep -o -m1 '<svg[^>]*' "$in" | grep -o ' width="[0-9.]*"' | head -1 | grep -o '[0-9.]*' || true)
        h=$(grep -o -m1 '<svg[^>]*' "$in" | grep -o ' height="[0-9.]*"' | head -1 | grep -o '[0-9.]*' || true)
        if [[ -n $w && -n $h ]]; then
            size=$(awk -v w="$w" -v h="$h" 'BEGIN { printf "%dx%d", w + 0.999, h + 0.999 }')
        fi
    fi
fi
if [[ ! $size =~ ^([0-9]+)x([0-9]+)$ ]]; then
    echo "$0: size must be WIDTHxHEIGHT, got '$size'" >&2
    exit 2
fi
w=${BASH_REMATCH[1]}
h=${BASH_REMATCH[2]}

abs_in=$(realpath "$in")
abs_out=$(realpath -m "$out")
profile=$(mktemp -d)
trap 'rm -rf "$profile"' EXIT

# An SVG is wrapped in a page with no margin so that the screenshot starts at its corner.
target=$abs_in
if [[ $in == *.svg ]]; then
    target=$profile/page.html
    {
        echo '<!DOCTYPE html><html><head><meta charset="utf-8"><style>html,body{margin:0;padding:0;background:#fff}</style></head><body>'
        cat "$abs_in"
        echo '</body></html>'
    } >"$target"
fi

"$browser" --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
    --disable-background-networking --disable-component-update --disable-sync \
    --hide-scrollbars --user-data-dir="$profile" --screenshot="$abs_out" \
    --window-size="$w,$h" "file://$target" >/dev/null 2>&1 || true

if [[ ! -s $abs_out ]]; then
    echo "$0: chromium wrote no screenshot to $abs_out" >&2
    exit 1
fi
echo "$abs_out (${w}x${h})"
