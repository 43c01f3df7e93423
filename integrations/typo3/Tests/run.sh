#!/bin/bash
# Runs the tests of the Waymark TYPO3 extension against a TYPO3 installation made by setup.sh
# (/work/shared/typo3/setup.sh DIR): installs this extension from its checkout (composer path repository,
# offline), runs extension:setup, serves DIR with `php -S` on a free port with WAYMARK_BRIDGE_SECRET set, and
# runs Tests/Unit/*.php, Tests/Functional/FileCacheTest.php (for which it puts the page cache on TYPO3's file
# backend through config/system/additional.php and restarts the server; restored afterwards, also on exit) and
# Tests/Functional/BridgeTest.php. Prints PASS/FAIL lines; exits non-zero on failure.
# Usage: Tests/run.sh DIR        Env: EDITOR_PASSWORD (Editor-Pass-2026!), KEEP_SERVER=1 (leave the server running)
set -uo pipefail
EXT=$(cd "$(dirname "$0")/.." && pwd)
DIR=${1:?usage: Tests/run.sh DIR (a TYPO3 installation made by setup.sh)}
DIR=$(cd "$DIR" && pwd) || exit 2
[ -x "$DIR/vendor/bin/typo3" ] && [ -f "$DIR/boot.php" ] || { echo "FAIL $DIR is not a setup.sh installation (vendor/bin/typo3, boot.php)"; exit 2; }
export COMPOSER_DISABLE_NETWORK=1 COMPOSER_ALLOW_SUPERUSER=1 TYPO3_CONTEXT=${TYPO3_CONTEXT:-Development}
LOG=$(mktemp /tmp/waymark-t3-tests.XXXXXX)
T0=$(date +%s)
fail() { echo "FAIL $1 (log: $LOG)"; tail -n 15 "$LOG"; exit 1; }

# 1. install the extension (idempotent)
cd "$DIR"
# config/system/additional.php as it was before this run (the file-backend check writes its own for a while)
ADD=$DIR/config/system/additional.php
ADD_ORIG=$DIR/config/system/additional.php.waymark-test-orig
ADD_MARK='// waymark Tests/run.sh: page cache on the file backend (removed again by the runner)'
restore_additional() {
  grep -qF "$ADD_MARK" "$ADD" 2>/dev/null || return 0          # not ours: nothing to restore
  if [ -f "$ADD_ORIG" ]; then mv -f "$ADD_ORIG" "$ADD"; else rm -f "$ADD"; fi
}
restore_additional   # an earlier run that was interrupted during the file-backend check
composer config repositories.waymark path "$EXT" >>"$LOG" 2>&1 || fail "composer config"
if ! composer show waymark/typo3-waymark >/dev/null 2>&1; then
  composer require -n waymark/typo3-waymark:@dev >>"$LOG" 2>&1 || fail "composer require waymark/typo3-waymark"
else
  composer dump-autoload -n >>"$LOG" 2>&1 || fail "composer dump-autoload"
fi
php vendor/bin/typo3 extension:setup -n >>"$LOG" 2>&1 || fail "typo3 extension:setup"
php vendor/bin/typo3 cache:flush >>"$LOG" 2>&1 || fail "typo3 cache:flush"
php vendor/bin/typo3 extension:list 2>/dev/null | grep -q ' waymark ' && echo "PASS extension installed and set up ($(php vendor/bin/typo3 extension:list 2>/dev/null | grep ' waymark ' | tr -s ' |' ' '))" \
  || fail "waymark is not in extension:list"
php -r 'require "boot.php"; $c = \TYPO3\CMS\Core\Utility\GeneralUtility::makeInstance(\TYPO3\CMS\Core\Database\ConnectionPool::class)->getConnectionByName("Default");
  foreach (["tx_waymark_applied", "tx_waymark_nonce"] as $t) { if (!$c->createSchemaManager()->tablesExist([$t])) { echo "missing $t\n"; exit(1); } }' >>"$LOG" 2>&1 \
  && echo "PASS tables tx_waymark_applied and tx_waymark_nonce exist" || fail "extension tables missing"

# the extension configuration the module needs (set before serving: PHP's opcache may keep an older settings.php)
php -r 'require "boot.php"; \TYPO3\CMS\Core\Utility\GeneralUtility::makeInstance(\TYPO3\CMS\Core\Configuration\ExtensionConfiguration::class)
  ->set("waymark", ["waymarkUrl" => "https://waymark.example.org", "secret" => ""]);' >>"$LOG" 2>&1 || fail "setting the extension configuration"

# 2. serve it
PORT=$(php -r '$s = stream_socket_server("tcp://127.0.0.1:0"); echo substr(strrchr(stream_socket_get_name($s, false), ":"), 1);')
SECRET="waymark-test-secret-$(head -c 16 /dev/urandom | od -An -tx1 | tr -d ' \n')"
SERVER=
# stops the main server: its whole process group (the PHP_CLI_SERVER_WORKERS survive a kill of the master alone)
stop_server() {
  [ -n "$SERVER" ] || return 0
  kill -- -"$SERVER" 2>/dev/null; wait "$SERVER" 2>/dev/null
  for _ in $(seq 1 50); do kill -0 -- -"$SERVER" 2>/dev/null || break; sleep 0.1; done
  SERVER=
}
# (re)starts the main server on PORT, so that TYPO3 reads config/system/*.php afresh (new processes, no opcache)
start_server() {
  stop_server
  WAYMARK_BRIDGE_SECRET=$SECRET PHP_CLI_SERVER_WORKERS=4 setsid php -S "127.0.0.1:$PORT" -t public >>"$LOG.server" 2>&1 &
  SERVER=$!
  for _ in $(seq 1 50); do curl -s -o /dev/null "http://127.0.0.1:$PORT/" && break; sleep 0.1; done
}
stop() {
  restore_additional
  [ -n "${KEEP_SERVER:-}" ] && { echo "server left running: http://127.0.0.1:$PORT (process group $SERVER)"; return; }
  stop_server
}
trap stop EXIT
trap 'exit 130' INT TERM
start_server

# 3. the tests
RC=0
for t in "$EXT"/Tests/Unit/*.php; do
  [ -f "$t" ] || continue
  php "$t" || RC=1
done
# the page cache on TYPO3's file backend: additional.php (keeping the installation's own one), flush, restart,
# Tests/Functional/FileCacheTest.php; then additional.php exactly as before, flush, restart (database backend again)
ADD_SUM=$( [ -f "$ADD" ] && sha256sum <"$ADD" || echo none)
rm -f "$ADD_ORIG"
if [ -f "$ADD" ]; then cp -p "$ADD" "$ADD_ORIG" || fail "keeping a copy of $ADD"; fi
{
  echo '<?php'
  echo "$ADD_MARK"
  if [ -f "$ADD_ORIG" ]; then echo "require __DIR__ . '/additional.php.waymark-test-orig';"; fi
  echo "\$GLOBALS['TYPO3_CONF_VARS']['SYS']['caching']['cacheConfigurations']['pages']['backend'] = \\TYPO3\\CMS\\Core\\Cache\\Backend\\FileBackend::class;"
  echo "\$GLOBALS['TYPO3_CONF_VARS']['SYS']['caching']['cacheConfigurations']['pages']['options'] = [];"
} >"$ADD.waymark-test-new" && mv -f "$ADD.waymark-test-new" "$ADD" || fail "writing $ADD"
php vendor/bin/typo3 cache:flush >>"$LOG" 2>&1 || fail "typo3 cache:flush (file backend)"
start_server
T3_ROOT=$DIR BASE="http://127.0.0.1:$PORT" SECRET=$SECRET php "$EXT/Tests/Functional/FileCacheTest.php" || RC=1
php vendor/bin/typo3 cache:flush >>"$LOG" 2>&1 || fail "typo3 cache:flush (file backend, before restoring)"
restore_additional
if [ "$( [ -f "$ADD" ] && sha256sum <"$ADD" || echo none)" = "$ADD_SUM" ] && [ ! -e "$ADD_ORIG" ]; then
  echo "PASS config/system/additional.php as before the check ($( [ "$ADD_SUM" = none ] && echo 'none, removed' || echo 'restored, same sha256'))"
else echo "FAIL config/system/additional.php not as before the check"; RC=1; fi
php vendor/bin/typo3 cache:flush >>"$LOG" 2>&1 || fail "typo3 cache:flush (database backend)"
start_server
php -r 'require "boot.php"; $b = \TYPO3\CMS\Core\Utility\GeneralUtility::makeInstance(\TYPO3\CMS\Core\Cache\CacheManager::class)->getCache("pages")->getBackend();
  echo get_class($b), "\n"; exit($b instanceof \TYPO3\CMS\Core\Cache\Backend\Typo3DatabaseBackend ? 0 : 1);' >>"$LOG" 2>&1 \
  && echo "PASS page cache back on the database backend for the other checks" || { echo "FAIL page cache not back on the database backend"; RC=1; }

# without a secret: every bridge request answers 503 not_configured (a second server without the variable)
PORT2=$(php -r '$s = stream_socket_server("tcp://127.0.0.1:0"); echo substr(strrchr(stream_socket_get_name($s, false), ":"), 1);')
env -u WAYMARK_BRIDGE_SECRET setsid php -S "127.0.0.1:$PORT2" -t public >>"$LOG.server" 2>&1 &
S2=$!
for _ in $(seq 1 50); do curl -s -o /dev/null "http://127.0.0.1:$PORT2/" && break; sleep 0.1; done
OUT=$(curl -s -w ' %{http_code}' -X POST -d '{}' "http://127.0.0.1:$PORT2/waymark-bridge/v1/ping")
kill -- -"$S2" 2>/dev/null; wait "$S2" 2>/dev/null
if [ "$OUT" = '{"error":"not_configured"} 503' ]; then echo "PASS no secret configured → 503 not_configured"; else echo "FAIL no secret configured → 503 not_configured — got: $OUT"; RC=1; fi

# TYPO3 under a sub-path: serve DIR itself, so that TYPO3 is /public/index.php (site path /public/)
PORT3=$(php -r '$s = stream_socket_server("tcp://127.0.0.1:0"); echo substr(strrchr(stream_socket_get_name($s, false), ":"), 1);')
WAYMARK_BRIDGE_SECRET=$SECRET setsid php -S "127.0.0.1:$PORT3" -t . >>"$LOG.server" 2>&1 &
S3=$!
trap 'stop; kill -- -"$S3" 2>/dev/null' EXIT
for _ in $(seq 1 50); do curl -s -o /dev/null "http://127.0.0.1:$PORT3/public/" && break; sleep 0.1; done

BASE_SUBPATH="http://127.0.0.1:$PORT3/public" T3_ROOT=$DIR BASE="http://127.0.0.1:$PORT" SECRET=$SECRET EDITOR_PASSWORD=${EDITOR_PASSWORD:-Editor-Pass-2026!} \
  php "$EXT/Tests/Functional/BridgeTest.php" || RC=1
if grep -q 'PHP \(Fatal\|Warning\)' "$LOG.server" 2>/dev/null; then echo "FAIL PHP errors in the server log ($LOG.server)"; grep 'PHP \(Fatal\|Warning\)' "$LOG.server" | head -5; RC=1; fi
echo "==== $( [ $RC = 0 ] && echo PASSED || echo FAILED ) in $(( $(date +%s) - T0 )) s ($DIR, $(php -r 'require "'"$DIR"'/vendor/autoload.php"; echo (new \TYPO3\CMS\Core\Information\Typo3Version())->getVersion();' 2>/dev/null), log: $LOG)"
exit $RC
