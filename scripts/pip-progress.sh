#!/usr/bin/env bash
# A filter for pip's output (scripts/setup.sh): a line per package as pip reaches it, with the seconds
# since the start and the size of each download, so a fresh install (a few minutes: torch alone is
# ~200 MB) never sits silent (docs/quickstart.md). pip's errors go to stderr, untouched.
set -uo pipefail
set -f  # package names are never globbed
n=0
SECONDS=0
while IFS= read -r line; do
  case $line in
    "Collecting "*)
      n=$((n + 1)); name=${line#Collecting }; name=${name%% *}
      printf '   %4ds  [%d] %s\n' "$SECONDS" "$n" "$name" ;;
    *"Downloading "*"B)")
      size=${line##*(}; printf '   %4ds        downloading %s\n' "$SECONDS" "${size%)}" ;;
    "Installing collected packages: "*)
      names=${line#Installing collected packages: }; commas=${names//[^,]/}
      printf '   %4ds  installing %d packages (unpacking the large wheels takes a while)\n' "$SECONDS" $((${#commas} + 1)) ;;
    "Successfully installed "*)
      names=${line#Successfully installed }; set -- $names
      printf '   %4ds  installed %d packages\n' "$SECONDS" "$#" ;;
  esac
done
