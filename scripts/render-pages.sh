#!/bin/sh
# Renders the demo's pages to PNG with headless Chromium (Debian's
# `chromium` package), on demand; nothing here runs in the tests.
#
#   scripts/render-pages.sh [OUT_DIR]      (default: target/pages)
#
# It builds the demo repository (`cargo run --release --example demo`),
# reviews its task 2 with a stand-in model (the `command` provider
# printing scripts/demo-answer.json: an approval resting on a quote the
# spec does not hold, with a major issue, which speed overrules), then
# writes review.html (`speed show --task-id 2 --format html`),
# offline.html (the demo's offline branch review) and stats.html, and a
# PNG of each. The README's picture is review.png, cropped:
#
#   scripts/render-pages.sh && cp target/pages/review.png docs/review-page.png
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
out=${1:-"$root/target/pages"}
mkdir -p "$out"
out=$(cd "$out" && pwd)
cd "$root"

# The demo exits 0 when its offline review requested changes, as it should.
cargo run --quiet --release --example demo >/dev/null 2>&1
demo="$root/target/speed-demo"
speed="$root/target/release/speed"

# A model that answers every review prompt with the canned verdict.
cat > "$out/speed.toml" <<TOML
[llm]
provider = "command"
command = ["sh", "-c", "cat >/dev/null; cat '$root/scripts/demo-answer.json'"]
[guardian]
enabled = false
TOML
"$speed" -C "$demo" --config "$out/speed.toml" review --task-id 2 --format html >/dev/null 2>&1 || true

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
# The flags that keep Chromium from reaching for the network at start.
for page in review offline stats; do
    "$browser" --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
        --disable-background-networking --disable-component-update --disable-sync \
        --user-data-dir="$profile" --hide-scrollbars --window-size=1000,1500 \
        --screenshot="$out/$page.png" "file://$out/$page.html" >/dev/null 2>&1
    echo "$out/$page.png"
done
