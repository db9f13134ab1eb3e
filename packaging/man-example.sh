#!/bin/sh
# man-example.sh - the end of testflame.yml(5): the annotated example of
# docs/config.md (its first yaml block, every key with what it does) as
# the page's EXAMPLE, in roff, and SEE ALSO.
#
#   packaging/man-example.sh docs/config.md
set -eu
printf '.SH EXAMPLE\nEvery key, with what it does:\n.PP\n.EX\n'
awk '/^```yaml$/ { on = 1; next } on && /^```$/ { exit } on { print }' "$1" |
	sed -e 's/\\/\\e/g' -e 's/-/\\-/g' -e "s/^\\([.']\\)/\\\\\\&\\1/"
printf '.EE\n.SH SEE ALSO\n\\fBtestflame\\fR(1), \\fBtestflame\\-run\\fR(1)\n'
