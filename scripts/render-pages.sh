#!/bin/sh
# Renders the demo's pages to PNG with headless Chromium (Debian's
# `chromium` package), on demand; nothing here runs in the tests.
#
#   scripts/render-pages.sh [OUT_DIR]      (default: target/pages)
#
# It builds the demo repository (`cargo run --release --features demo --bin speed-demo`),
# reviews its task 2 with a stand-in model (the `command` provider
# printing scripts/demo-answer.json: an approval resting on a quote the
# spec does not hold, with a major issue, which speed overrules), then
# writes review.html (`speed show --task-id 2 --format html`),
# offline.html (the demo's offline branch review) and stats.html, and a
# PNG of the top of each. review-excerpt.png is the README's picture: the
# top of the review page above the place in its diff where the major
# issue sits (the page's own link to that finding, in a frame):
#
#   scripts/render-pages.sh && cp target/pages/review-excerpt.png docs/review-page.png
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
out=${1:-"$root/target/pages"}
mkdir -p "$out"
out=$(cd "$out" && pwd)
cd "$root"

# The demo exits 0 when its offline review requested changes, as it should.
cargo run --quiet --release --features demo --bin speed-demo >/dev/null 2>&1
demo="$root/target/speed-demo"
speed="$root/target/release/speed"

# A model that answers every review prompt with the canned verdict, in
# the demo's own configuration (HEAD is main there, so the working tree's
# file is main's); gone again after the review.
cat > "$demo/.speed/config.toml" <<TOML
[llm]
provider = "command"
command = ["sh", "-c", "cat >/dev/null; cat '$root/scripts/demo-answer.json'"]
[guardian]
enabled = false
TOML
"$speed" -C "$demo" review --task-id 2 >/dev/null 2>&1 || true
rm "$demo/.speed/config.toml"

"$speed" -C "$demo" show --task-id 2 --format html > "$out/review.html"
"$speed" -C "$demo" show --branch demo/late-fines --format html > "$out/offline.html"
"$speed" -C "$demo" stats --format html > "$out/stats.html"

browser=$(command -v chromium || command -v chromium-browser || true)
if [ -z "$browser" ]; then
    echo "no chromium on PATH: install Debian's chromium package (apt-get install chromium); the HTML pages are in $out" >&2
    exit 1
fi
profile=$(mktemp -d)
trap 'rm -rf "$profile"' EXIT
# Two frames of the review page: its top, and its diff at the finding.
cat > "$out/review-excerpt.html" <<HTML
<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"/><title>review excerpt</title></head>
<body style="margin:0">
<iframe src="review.html" width="1000" height="640" scrolling="no" style="border:0;display:block"></iframe>
<iframe src="review.html#review-1-finding-3" width="1000" height="520" scrolling="no"
        style="border:0;border-top:3px dashed #777;display:block"></iframe>
</body></html>
HTML
shoot() { # PAGE HEIGHT
    # The flags that keep Chromium from reaching for the network at start.
    "$browser" --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
        --disable-background-networking --disable-component-update --disable-sync \
        --user-data-dir="$profile" --hide-scrollbars --window-size="1000,$2" \
        --screenshot="$out/$1.png" "file://$out/$1.html" >/dev/null 2>&1
    echo "$out/$1.png"
}
shoot review 1500
shoot offline 1500
shoot stats 1500
shoot review-excerpt 1163
