#!/usr/bin/env bash
# Makes the two real TYPO3 13.4 installations the tests beside TYPO3 need — TYPO3's own installer on MariaDB
# and on PostgreSQL (../shared/typo3/setup.sh, offline) — installs the Waymark extension into each and runs
# its own tests there (integrations/typo3/Tests/run.sh). Prints the two folders as shell assignments:
#   eval "$(.ci/typo3.sh)"   →   WAYMARK_TEST_TYPO3_MARIADB=… WAYMARK_TEST_TYPO3_POSTGRES=…
# Any failure: the step's log and exit 1.
set -euo pipefail
cd "$(dirname "$0")/.."
shared=""
for d in "${WAYMARK_SHARED:-}" ../shared /work/shared; do
  if [ -n "$d" ] && [ -x "$d/typo3/setup.sh" ]; then shared=$(cd "$d" && pwd); break; fi
done
[ -n "$shared" ] || { echo "typo3.sh: no ../shared/typo3/setup.sh (set WAYMARK_SHARED)" >&2; exit 1; }
# setup.sh as shipped, with two changes: it finds its tarball in $shared/typo3 from a copy, and its check of
# PHP's extensions does not stop grep early (`grep -q` under pipefail fails the check at random by SIGPIPE).
work=$(mktemp -d /tmp/waymark-typo3-ci.XXXXXX)
run=$(echo "${work##*.}" | tr 'A-Z' 'a-z')
sed -e "s|^HERE=.*|HERE=$shared/typo3|" -e 's/php -m | grep -qix "$ext"/php -m | grep -ix "$ext" >\/dev\/null/' \
  "$shared/typo3/setup.sh" > "$work/setup.sh"
chmod +x "$work/setup.sh"
for driver in mysqli postgres; do
  dir="$work/$driver"
  log="$work/$driver.log"
  # A database of this run's own (setup.sh drops and creates it): another run beside keeps its own.
  if ! DRIVER=$driver DB="waymark_ci_${driver}_${run}" PORT=8080 "$work/setup.sh" "$dir" >"$log" 2>&1; then
    echo "typo3.sh: setup.sh ($driver) failed:" >&2; tail -n 20 "$log" >&2; exit 1
  fi
  if ! integrations/typo3/Tests/run.sh "$dir" >>"$log" 2>&1; then
    echo "typo3.sh: the extension's tests failed on $driver:" >&2; grep -E '^(FAIL|====)' "$log" >&2 || tail -n 30 "$log" >&2; exit 1
  fi
  grep -E '^====' "$log" >&2
done
echo "WAYMARK_TEST_TYPO3_MARIADB=$work/mysqli WAYMARK_TEST_TYPO3_POSTGRES=$work/postgres"
