#!/usr/bin/env bash
# readme_synopsis_test.sh NNTRAIN README — README's command synopsis (the fenced block under
# "## Command line", the one copy of it) and `nntrain SUB --help` name the same long flags,
# for every subcommand the top-level help lists. Fails naming each flag that help shows and
# the synopsis lacks, or that the synopsis shows and help does not. Flags help hides are not
# asked for; --help itself is left out. Both sides are read at test time, so a flag added,
# renamed or hidden in the code fails here until README follows.
set -euo pipefail
nntrain="${1:?usage: readme_synopsis_test.sh NNTRAIN README.md}"
readme="${2:?usage: readme_synopsis_test.sh NNTRAIN README.md}"
[[ -x "$nntrain" && -r "$readme" ]] || { echo "readme_synopsis: cannot run $nntrain or read $readme" >&2; exit 1; }

# The synopsis: the first fenced block after the "## Command line" heading. Each line that
# starts with "nntrain" opens an entry for the word after it ("[train]" -> train); indented
# lines continue it. Prints "SUB<TAB>--flag" for every long flag, "SUB<TAB>" for an entry.
synopsis_flags() {
  awk '
    /^## Command line/ { in_section = 1; next }
    in_section && /^## / && !in_block { exit }
    in_section && /^```/ { if (in_block) exit; in_block = 1; next }
    !in_block { next }
    /^nntrain[ \t]/ { sub_ = $2; gsub(/[\[\]]/, "", sub_); print sub_ "\t" }
    /^[ \t]/ || /^nntrain[ \t]/ {
      line = $0
      if (/^nntrain[ \t]/) sub(/^nntrain[ \t]+[^ \t]+/, "", line)
      while (match(line, /--[a-z][a-z0-9-]*/)) {
        print sub_ "\t" substr(line, RSTART, RLENGTH)
        line = substr(line, RSTART + RLENGTH)
      }
    }' "$readme" | sort -u
}

# Long flags of one subcommand's help: only option lines (two spaces, then "-x," or "--"),
# so flags quoted in a description (e.g. --slurm-arg=--gres=...) are not taken for options.
help_flags() {
  "$nntrain" "$1" --help | grep -E '^  (-[A-Za-z0-9],)?--[a-z]' |
    sed -E 's/^  (-[A-Za-z0-9],)?(--[a-z][a-z0-9-]*).*/\2/' | grep -vx -- '--help' | sort -u || true
}

# Subcommands from the top-level help's "Subcommands:" list.
subcommands() {
  "$nntrain" --help | awk '/^Subcommands:/ { on = 1; next } on && /^  [a-z]/ { print $1 }' | sort -u
}

syn="$(synopsis_flags)"
if [[ -z "$syn" ]]; then
  echo "readme_synopsis: no synopsis block found under '## Command line' in $readme" >&2
  exit 1
fi
subs="$(subcommands)"
if [[ -z "$subs" ]]; then
  echo "readme_synopsis: '$nntrain --help' lists no subcommands" >&2
  exit 1
fi

fail=0
syn_subs="$(cut -f1 <<<"$syn" | sort -u)"
for s in $syn_subs; do
  if ! grep -qx -- "$s" <<<"$subs"; then
    echo "readme_synopsis: README's synopsis has 'nntrain $s', which '$nntrain --help' does not list" >&2
    fail=1
  fi
done
for s in $subs; do
  if ! grep -qx -- "$s" <<<"$syn_subs"; then
    echo "readme_synopsis: subcommand '$s' (in --help) has no line in README's synopsis" >&2
    fail=1
    continue
  fi
  before=$fail; fail=0
  in_help="$(help_flags "$s")"
  in_syn="$(awk -F'\t' -v s="$s" '$1 == s && $2 != "" { print $2 }' <<<"$syn" | sort -u)"
  while read -r f; do
    [[ -z "$f" ]] && continue
    if ! grep -qx -- "$f" <<<"$in_syn"; then
      echo "readme_synopsis: '$s $f' is in '$s --help' but not in README's synopsis" >&2
      fail=1
    fi
  done <<<"$in_help"
  while read -r f; do
    [[ -z "$f" ]] && continue
    if ! grep -qx -- "$f" <<<"$in_help"; then
      echo "readme_synopsis: '$s $f' is in README's synopsis but not in '$s --help'" >&2
      fail=1
    fi
  done <<<"$in_syn"
  ((fail)) || echo "readme_synopsis: $s: $(wc -w <<<"$in_help") flags, help and synopsis agree"
  ((fail |= before)) || true
done
if ((fail)); then
  echo "readme_synopsis: FAILED: update README.md's '## Command line' block (or the help)" >&2
  exit 1
fi
echo "readme_synopsis: ok ($(wc -w <<<"$subs") subcommands)"
