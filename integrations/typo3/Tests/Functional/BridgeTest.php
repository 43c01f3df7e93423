<?php
// End-to-end checks of the bridge against a running TYPO3 (see ../run.sh): the HTTP side speaks the contract
// (docs/typo3-bridge.md) like Waymark, the PHP side (DIR/boot.php) reads what TYPO3 made of it.
// Env: T3_ROOT (the installation), BASE (http://127.0.0.1:PORT), SECRET, EDITOR_PASSWORD.
declare(strict_types=1);

require __DIR__ . '/../lib.php';
$T3_ROOT = getenv('T3_ROOT') ?: exit("T3_ROOT missing\n");
require $T3_ROOT . '/boot.php';

use TYPO3\CMS\Backend\History\RecordHistory;
use TYPO3\CMS\Backend\Utility\BackendUtility;
use TYPO3\CMS\Core\Cache\CacheManager;
use TYPO3\CMS\Core\Configuration\ExtensionConfiguration;
use TYPO3\CMS\Core\Database\ConnectionPool;
use TYPO3\CMS\Core\Information\Typo3Version;
use TYPO3\CMS\Core\Session\SessionManager;
use TYPO3\CMS\Core\Utility\GeneralUtility;

$base = rtrim(getenv('BASE') ?: exit("BASE missing\n"), '/');
$secret = getenv('SECRET') ?: exit("SECRET missing\n");
$editorPassword = getenv('EDITOR_PASSWORD') ?: 'Editor-Pass-2026!';
$b = new Bridge($base, $secret);
$pool = GeneralUtility::makeInstance(ConnectionPool::class);
$db = $pool->getConnectionByName(ConnectionPool::DEFAULT_CONNECTION_NAME);
$EDITOR = (int)$db->select(['uid'], 'be_users', ['username' => 'editor', 'deleted' => 0])->fetchOne();
$GROUP = (int)$db->select(['uid'], 'be_groups', ['title' => 'Editor', 'deleted' => 0])->fetchOne();
$run = substr(bin2hex(random_bytes(4)), 0, 8);   // makes keys and values unique per run (the runner may be repeated)
$count = fn(string $table, array $where = []) => (int)$db->count('*', $table, $where);
$asAdmin = function (array $data, array $cmd = []) {
    t3_as_user(1);
    $dh = t3_dh($data, $cmd);
    if ($dh->errorLog) {
        throw new RuntimeException('admin DataHandler: ' . implode('; ', $dh->errorLog));
    }
    return $dh;
};
$rec = fn(string $t, int $uid) => BackendUtility::getRecord($t, $uid);
// a clean starting point when the runner is repeated: editor live, group as seeded, page 3 not locked
$db->update('be_users', ['workspace_id' => 0], ['uid' => $EDITOR]);
$asAdmin(['be_groups' => [$GROUP => ['workspace_perms' => 1]], 'pages' => [3 => ['editlock' => 0]]]);
$seededLanguages = (string)$db->select(['allowed_languages'], 'be_groups', ['uid' => $GROUP])->fetchOne();
if ($seededLanguages === '0') {
    $seededLanguages = '0,1';   // an earlier run stopped before restoring it: setup.sh seeds 0,1
    $asAdmin(['be_groups' => [$GROUP => ['allowed_languages' => $seededLanguages]]]);
}

echo "== signatures\n";
[$s, $j, $raw, $head] = $b->call('ping');
check('ping signed: 200 ok', $s === 200 && ($j['ok'] ?? null) === true, $raw);
check('ping: typo3 version ' . (new Typo3Version())->getVersion(), ($j['typo3'] ?? null) === (new Typo3Version())->getVersion(), $raw);
check('ping: extension version and workspaces', is_string($j['extension'] ?? null) && $j['extension'] !== '' && ($j['workspaces'] ?? null) === true, $raw);
check('ping: Content-Type application/json', (bool)preg_match('#^content-type: application/json#mi', $head), $head);
[$s, $j] = $b->call('ping', [], ['unsigned' => true]);
check('unsigned → 401 bad_signature', $s === 401 && ($j['error'] ?? '') === 'bad_signature', [$s, $j]);
[$s, $j] = $b->call('ping', [], ['secret' => str_repeat('x', 40)]);
check('wrong secret → 401 bad_signature', $s === 401 && ($j['error'] ?? '') === 'bad_signature', [$s, $j]);
[$s, $j] = $b->call('ping', [], ['signature' => 'v1=' . str_repeat('0', 64)]);
check('wrong signature → 401 bad_signature', $s === 401 && ($j['error'] ?? '') === 'bad_signature', [$s, $j]);
[$s, $j] = $b->call('ping', [], ['time' => time() - 90]);
check('stale (90 s old) → 401 stale_request', $s === 401 && ($j['error'] ?? '') === 'stale_request', [$s, $j]);
[$s, $j] = $b->call('ping', [], ['time' => time() + 90]);
check('stale (90 s ahead) → 401 stale_request', $s === 401 && ($j['error'] ?? '') === 'stale_request', [$s, $j]);
$nonce = bin2hex(random_bytes(16));
[$s1] = $b->call('ping', [], ['nonce' => $nonce]);
[$s, $j] = $b->call('ping', [], ['nonce' => $nonce]);
check('replayed nonce → 401 replayed', $s1 === 200 && $s === 401 && ($j['error'] ?? '') === 'replayed', [$s1, $s, $j]);
check('nonce stored in tx_waymark_nonce', $count('tx_waymark_nonce', ['nonce' => $nonce]) === 1);
[$s, $j] = Bridge::http('POST', $base . '/waymark-bridge/v1/nope', '{}');
check('unknown bridge path → 404', $s === 404 && ($j['error'] ?? '') === 'not_found', [$s, $j]);
[$s, $j, $raw] = Bridge::http('GET', $base . '/about-us');
check('other paths pass on to TYPO3 (frontend /about-us)', $s === 200 && str_contains($raw, 'About'), $s);

$sub = getenv('BASE_SUBPATH');
if ($sub) {
    [$s, $j, $raw] = (new Bridge($sub, $secret))->call('ping');
    check('TYPO3 under a sub-path (' . parse_url($sub, PHP_URL_PATH) . '/): signed ping with the sub-path in PATH → 200', $s === 200 && ($j['ok'] ?? null) === true, [$s, $raw]);
}

echo "== bad requests\n";
[$s, $j] = $b->call('apply', ['user' => $EDITOR, 'table' => 'no_such_table', 'uid' => 2, 'key' => "k-$run-0", 'fields' => ['x' => ['old' => '', 'new' => '']]]);
check('unknown table → 400 bad_request', $s === 400 && ($j['error'] ?? '') === 'bad_request', [$s, $j]);
[$s, $j] = $b->call('apply', ['user' => $EDITOR, 'table' => 'pages', 'uid' => 2, 'key' => "k-$run-0", 'fields' => ['no_such_column' => ['old' => '', 'new' => '']]]);
check('unknown column → 400 bad_request', $s === 400 && ($j['error'] ?? '') === 'bad_request', [$s, $j]);
[$s, $j] = $b->call('apply', ['user' => $EDITOR, 'table' => 'pages', 'uid' => 2, 'key' => "k-$run-0", 'fields' => ['description' => 'x']]);
check('field not {old,new} → 400 bad_request', $s === 400 && ($j['error'] ?? '') === 'bad_request', [$s, $j]);
[$s, $j] = $b->call('apply', '[1,2]');
check('body not an object → 400 bad_request', $s === 400 && ($j['error'] ?? '') === 'bad_request', [$s, $j]);
[$s, $j] = $b->call('apply', ['user' => $EDITOR, 'table' => 'pages', 'uid' => 99999, 'key' => "k-$run-0", 'fields' => ['description' => ['old' => '', 'new' => 'x']]]);
check('missing record → 404 unknown_record', $s === 404 && ($j['error'] ?? '') === 'unknown_record', [$s, $j]);

echo "== apply as editor, live\n";
[$s, $j] = $b->call('target', ['user' => $EDITOR]);
check('target: live', $s === 200 && ($j['workspace'] ?? null) === ['id' => 0, 'title' => 'Live'], [$s, $j]);
$before = $rec('pages', 2);
$new = "Waymark description $run";
// the frontend page is cached (page cache tag pageId_2) before the change; page TSconfig of the root page
// (TCEMAIN.clearCacheCmd = 4) makes TYPO3 clear the cache of page 4 (/contact) on changes below it, too
$asAdmin(['pages' => [1 => ['TSconfig' => 'TCEMAIN.clearCacheCmd = 4']]]);
Bridge::http('GET', "$base/contact");
Bridge::http('GET', "$base/about-us");
[, , $fe1] = Bridge::http('GET', "$base/about-us");
$pagesCache = GeneralUtility::makeInstance(CacheManager::class)->getCache('pages');
$contactCached = $pagesCache->getBackend()->findIdentifiersByTag('pageId_4') !== [];
check('frontend /about-us is in the page cache before the change', $pagesCache->getBackend()->findIdentifiersByTag('pageId_2') !== [] && !str_contains($fe1, $new));
$key = "waymark-test-$run-pages-2";
$historyBefore = $count('sys_history');
[$s, $j, $raw] = $b->call('apply', ['user' => $EDITOR, 'table' => 'pages', 'uid' => 2, 'key' => $key,
    'fields' => ['description' => ['old' => (string)$before['description'], 'new' => $new]]]);
check('apply pages:2 description → 200 applied, live', $s === 200 && ($j['status'] ?? '') === 'applied' && ($j['workspace'] ?? null) === ['id' => 0, 'title' => 'Live']
    && ($j['record'] ?? null) === ['table' => 'pages', 'uid' => 2, 'versionUid' => 0], $raw);
check('answer: old and new as TYPO3 stored it', ($j['fields']['description'] ?? null) === ['old' => (string)$before['description'], 'new' => $new], $raw);
check('BackendUtility::getRecord reads it back', ($rec('pages', 2)['description'] ?? null) === $new, $rec('pages', 2)['description'] ?? null);
$log = GeneralUtility::makeInstance(RecordHistory::class, 'pages:2')->getChangeLog();
$newest = reset($log) ?: [];
check('RecordHistory: newest change by the editor', (int)($newest['userid'] ?? 0) === $EDITOR && ($newest['newRecord']['description'] ?? null) === $new
    && ($newest['oldRecord']['description'] ?? null) === (string)$before['description'], $newest);
$logRow = $db->select(['*'], 'sys_log', ['tablename' => 'pages', 'recuid' => 2], [], ['uid' => 'DESC'], 1)->fetchAssociative() ?: [];
$logData = json_decode((string)($logRow['log_data'] ?? ''), true) ?: [];
check('sys_log row by the editor, with the history link the log module needs', (int)($logRow['userid'] ?? 0) === $EDITOR && (int)($logRow['action'] ?? 0) === 2
    && isset($logData['history']) && $count('sys_history', ['uid' => (int)$logData['history'], 'recuid' => 2, 'tablename' => 'pages', 'userid' => $EDITOR]) === 1, $logRow);
check('page cache of page 2 cleared by DataHandler after the commit', $pagesCache->getBackend()->findIdentifiersByTag('pageId_2') === []);
check('TSconfig TCEMAIN.clearCacheCmd = 4: page cache of page 4 cleared too', $contactCached && $pagesCache->getBackend()->findIdentifiersByTag('pageId_4') === []);
[, , $fe2] = Bridge::http('GET', "$base/about-us");
check('frontend /about-us shows the new description', str_contains($fe2, $new), substr(strip_tags($fe2), 0, 300));
check('one sys_history row written', $count('sys_history') === $historyBefore + 1, $count('sys_history') - $historyBefore);
check('key stored in tx_waymark_applied', $count('tx_waymark_applied', ['idempotency_key' => $key]) === 1);

$historyBefore = $count('sys_history');
[$s, $j2, $raw] = $b->call('apply', ['user' => $EDITOR, 'table' => 'pages', 'uid' => 2, 'key' => $key,
    'fields' => ['description' => ['old' => (string)$before['description'], 'new' => $new]]]);
check('same key again → 200 already_applied with the stored result', $s === 200 && ($j2['status'] ?? '') === 'already_applied'
    && ($j2['fields'] ?? null) === ($j['fields'] ?? 1) && ($j2['record'] ?? null) === ($j['record'] ?? 1), $raw);
check('…and nothing new in sys_history', $count('sys_history') === $historyBefore, $count('sys_history') - $historyBefore);

$historyBefore = $count('sys_history');
[$s, $j, $raw] = $b->call('apply', ['user' => $EDITOR, 'table' => 'pages', 'uid' => 2, 'key' => "$key-conflict",
    'fields' => ['description' => ['old' => 'not what is stored', 'new' => 'conflicting value']]]);
check('old ≠ current → 409 conflict with field and current', $s === 409 && ($j['error'] ?? '') === 'conflict' && ($j['field'] ?? '') === 'description' && ($j['current'] ?? '') === $new, $raw);
check('…nothing written (record, sys_history, tx_waymark_applied)', ($rec('pages', 2)['description'] ?? '') === $new && $count('sys_history') === $historyBefore
    && $count('tx_waymark_applied', ['idempotency_key' => "$key-conflict"]) === 0);

$asAdmin(['pages' => [1 => ['TSconfig' => '']]]);

echo "== soft references: remove the link from tt_content 5\n";
$ce = $rec('tt_content', 5);
$body = (string)$ce['bodytext'];
$withoutLink = preg_replace('#<a [^>]*href="t3://page[^"]*"[^>]*>(.*?)</a>#s', '$1', $body);
if ($withoutLink === $body) {
    // repeated run: put a link back first (as admin) so that there is one to remove
    $asAdmin(['tt_content' => [5 => ['bodytext' => $body . '<p><a href="t3://page?uid=2">About</a></p>']]]);
    $ce = $rec('tt_content', 5);
    $body = (string)$ce['bodytext'];
    $withoutLink = preg_replace('#<a [^>]*href="t3://page[^"]*"[^>]*>(.*?)</a>#s', '$1', $body);
}
$softBefore = $count('sys_refindex', ['tablename' => 'tt_content', 'recuid' => 5, 'ref_table' => 'pages', 'field' => 'bodytext']);
[$s, $j, $raw] = $b->call('apply', ['user' => $EDITOR, 'table' => 'tt_content', 'uid' => 5, 'key' => "waymark-test-$run-ce-5",
    'fields' => ['bodytext' => ['old' => $body, 'new' => $withoutLink]]]);
check('apply tt_content:5 bodytext without the t3://page link → 200', $s === 200 && ($j['status'] ?? '') === 'applied', $raw);
$softAfter = $count('sys_refindex', ['tablename' => 'tt_content', 'recuid' => 5, 'ref_table' => 'pages', 'field' => 'bodytext']);
check('sys_refindex: the page reference of the link is gone', $softBefore > 0 && $softAfter === 0, [$softBefore, $softAfter]);
exec('cd ' . escapeshellarg($T3_ROOT) . ' && php vendor/bin/typo3 referenceindex:update --check 2>&1', $out, $rc);
$out = implode("\n", $out);
check('referenceindex:update --check is clean', str_contains($out, 'Index Integrity was perfect'), $out);

echo "== refusals\n";
$asAdmin(['pages' => [3 => ['title' => 'Services']]]);
[$s, $j, $raw] = $b->call('apply', ['user' => $EDITOR, 'table' => 'pages', 'uid' => 3, 'key' => "waymark-test-$run-title",
    'fields' => ['title' => ['old' => 'Services', 'new' => str_repeat('Ü', 300)]]]);
$title = (string)($rec('pages', 3)['title'] ?? '');
check('over-long pages.title → cut by TYPO3 (max) or refused, never an SQL error',
    ($s === 200 && $title === str_repeat('Ü', 255) && ($j['fields']['title']['new'] ?? '') === $title) || ($s === 422 && $title === 'Services'), [$s, $raw, mb_strlen($title)]);
$asAdmin(['pages' => [3 => ['title' => 'Services']]]);

// the Editor group may edit text elements only; tt_content 4 becomes an HTML element (as admin)
$originalAllowDeny = (string)$db->select(['explicit_allowdeny'], 'be_groups', ['uid' => $GROUP])->fetchOne();
$asAdmin(['be_groups' => [$GROUP => ['explicit_allowdeny' => 'tt_content:CType:text']]]);
$asAdmin(['tt_content' => [4 => ['CType' => 'html']]]);
$ce4 = $rec('tt_content', 4);
$historyBefore = $count('sys_history');
$sysLogBefore = $count('sys_log');
[$s, $j, $raw] = $b->call('apply', ['user' => $EDITOR, 'table' => 'tt_content', 'uid' => 4, 'key' => "waymark-test-$run-html",
    'fields' => ['header' => ['old' => (string)$ce4['header'], 'new' => 'Not allowed ' . $run]]]);
check('CType the editor may not edit → 422 refused with TYPO3\'s reason', $s === 422 && ($j['error'] ?? '') === 'refused' && trim((string)($j['reason'] ?? '')) !== '', $raw);
echo "     reason: " . ($j['reason'] ?? '') . "\n";
check('…nothing written (record, sys_history, key)', ($rec('tt_content', 4)['header'] ?? '') === (string)$ce4['header'] && $count('sys_history') === $historyBefore
    && $count('tx_waymark_applied', ['idempotency_key' => "waymark-test-$run-html"]) === 0);
check('…rolled back: even DataHandler\'s sys_log entry of the refusal is gone', $count('sys_log') === $sysLogBefore, $count('sys_log') - $sysLogBefore);
$asAdmin(['be_groups' => [$GROUP => ['explicit_allowdeny' => $originalAllowDeny]]]);

// a column the group may not edit (exclude field without permission): DataHandler skips it silently; the bridge refuses
[$s, $j, $raw] = $b->call('apply', ['user' => $EDITOR, 'table' => 'pages', 'uid' => 2, 'key' => "waymark-test-$run-excl",
    'fields' => ['tsconfig_includes' => ['old' => (string)($rec('pages', 2)['tsconfig_includes'] ?? ''), 'new' => 'EXT:x/y.tsconfig']]]);
check('exclude field without permission → 422 refused', $s === 422 && ($j['error'] ?? '') === 'refused', $raw);

echo "== a locked page (editlock) and its content\n";
// as admin through DataHandler: page 3 locked; its text element tt_content 4 (on pid 3) a text element the group may edit
$asAdmin(['tt_content' => [4 => ['CType' => 'text']]]);
$asAdmin(['pages' => [3 => ['editlock' => 1]]]);
$unlocked = false;
register_shutdown_function(function () use (&$unlocked, $asAdmin) {   // also when a check throws
    if (!$unlocked) {
        $asAdmin(['pages' => [3 => ['editlock' => 0]]]);
    }
});
check('page 3 locked (pages.editlock = 1, DataHandler as admin)', (int)($rec('pages', 3)['editlock'] ?? 0) === 1);
$refusedNothingWritten = function (string $table, int $uid, string $column, string $key, callable $write) use ($rec, $count, $db): array {
    $row = $rec($table, $uid);
    $historyBefore = $count('sys_history');
    $recordHistoryBefore = $count('sys_history', ['tablename' => $table, 'recuid' => $uid]);
    $sysLogBefore = $count('sys_log');
    [$s, $j, $raw] = $write($row);
    $after = $rec($table, $uid);
    $nothing = ($after[$column] ?? null) === ($row[$column] ?? null) && (int)($after['tstamp'] ?? 0) === (int)($row['tstamp'] ?? 0)
        && $count('sys_history') === $historyBefore && $count('sys_history', ['tablename' => $table, 'recuid' => $uid]) === $recordHistoryBefore
        && $count('sys_log') === $sysLogBefore && $count('tx_waymark_applied', ['idempotency_key' => $key]) === 0;
    return [$s, $j, $raw, $nothing, $row];
};
$key = "waymark-test-$run-locked-page";
[$s, $j, $raw, $nothing, $p3] = $refusedNothingWritten('pages', 3, 'description', $key, fn(array $row) => $b->call('apply', ['user' => $EDITOR,
    'table' => 'pages', 'uid' => 3, 'key' => $key, 'fields' => ['description' => ['old' => (string)$row['description'], 'new' => "Locked page $run"]]]));
check('apply as editor on the locked pages:3 → 422 refused with TYPO3\'s reason', $s === 422 && ($j['error'] ?? '') === 'refused'
    && str_contains((string)($j['reason'] ?? ''), 'Attempt to modify record pages:3 without permission or non-existing page'), $raw);
echo "     reason: " . ($j['reason'] ?? '') . "\n";
check('…nothing written (record and tstamp unchanged, no sys_history row, no sys_log row, no key)', $nothing);
$key = "waymark-test-$run-locked-ce";
[$s, $j, $raw, $nothing, $ce4] = $refusedNothingWritten('tt_content', 4, 'header', $key, fn(array $row) => $b->call('apply', ['user' => $EDITOR,
    'table' => 'tt_content', 'uid' => 4, 'key' => $key, 'fields' => ['header' => ['old' => (string)$row['header'], 'new' => "Locked content $run"]]]));
// DataHandler: a page with editlock denies its content to non-admins (hasPagePermission: content-edit needs editlock = 0)
check('apply as editor on tt_content:4 (on the locked page 3) → 422 refused with TYPO3\'s reason', $s === 422 && ($j['error'] ?? '') === 'refused'
    && str_contains((string)($j['reason'] ?? ''), 'Attempt to modify record tt_content:4 without permission or non-existing page'), $raw);
echo "     reason: " . ($j['reason'] ?? '') . "\n";
check('…nothing written (record and tstamp unchanged, no sys_history row, no sys_log row, no key)', $nothing);
// an administrator may change a locked page
$adminValue = "Admin on the locked page $run";
[$s, $j, $raw] = $b->call('apply', ['user' => 1, 'table' => 'pages', 'uid' => 3, 'key' => "waymark-test-$run-locked-admin",
    'fields' => ['description' => ['old' => (string)$p3['description'], 'new' => $adminValue]]]);
$log = GeneralUtility::makeInstance(RecordHistory::class, 'pages:3')->getChangeLog();
$newest = reset($log) ?: [];
check('apply as admin on the locked pages:3 → 200 applied (sys_history by the admin), page still locked', $s === 200 && ($j['status'] ?? '') === 'applied'
    && ($rec('pages', 3)['description'] ?? null) === $adminValue && (int)($newest['userid'] ?? 0) === 1 && (int)($rec('pages', 3)['editlock'] ?? 0) === 1, $raw);
$asAdmin(['pages' => [3 => ['editlock' => 0, 'description' => (string)$p3['description']]]]);
$unlocked = true;
[$s, $j, $raw] = $b->call('apply', ['user' => $EDITOR, 'table' => 'tt_content', 'uid' => 4, 'key' => "waymark-test-$run-unlocked-ce",
    'fields' => ['header' => ['old' => (string)$ce4['header'], 'new' => "Unlocked content $run"]]]);
check('unlocked again: the same change of tt_content:4 by the editor → 200 applied (the lock was the reason)', (int)($rec('pages', 3)['editlock'] ?? 1) === 0
    && $s === 200 && ($j['status'] ?? '') === 'applied' && ($rec('tt_content', 4)['header'] ?? null) === "Unlocked content $run", $raw);

echo "== a language the editor may not edit\n";
// the Editor group: default language only (seeded 0,1); tt_content 6 is the German (sys_language_uid 1) translation of 2
$asAdmin(['be_groups' => [$GROUP => ['allowed_languages' => '0']]]);
$languagesRestored = false;
register_shutdown_function(function () use (&$languagesRestored, $asAdmin, $GROUP, $seededLanguages) {
    if (!$languagesRestored) {
        $asAdmin(['be_groups' => [$GROUP => ['allowed_languages' => $seededLanguages]]]);
    }
});
check('Editor group: allowed_languages = 0 (DataHandler as admin)', (string)$db->select(['allowed_languages'], 'be_groups', ['uid' => $GROUP])->fetchOne() === '0');
$key = "waymark-test-$run-lang-ce";
[$s, $j, $raw, $nothing, $ce6] = $refusedNothingWritten('tt_content', 6, 'header', $key, fn(array $row) => $b->call('apply', ['user' => $EDITOR,
    'table' => 'tt_content', 'uid' => 6, 'key' => $key, 'fields' => ['header' => ['old' => (string)$row['header'], 'new' => "Nicht erlaubt $run"]]]));
check('apply as editor on the German tt_content:6 → 422 refused with TYPO3\'s reason', (int)($ce6['sys_language_uid'] ?? 0) === 1 && $s === 422
    && ($j['error'] ?? '') === 'refused' && str_contains((string)($j['reason'] ?? ''), 'Attempt to modify record tt_content:6 failed with: ERROR: Language was not allowed.'), $raw);
echo "     reason: " . ($j['reason'] ?? '') . "\n";
check('…nothing written (record and tstamp unchanged, no sys_history row, no sys_log row, no key)', $nothing);
$key = "waymark-test-$run-lang-page";
[$s, $j, $raw, $nothing, $p6] = $refusedNothingWritten('pages', 6, 'description', $key, fn(array $row) => $b->call('apply', ['user' => $EDITOR,
    'table' => 'pages', 'uid' => 6, 'key' => $key, 'fields' => ['description' => ['old' => (string)$row['description'], 'new' => "Nicht erlaubt $run"]]]));
check('apply as editor on the German page pages:6 → 422 refused with TYPO3\'s reason', (int)($p6['sys_language_uid'] ?? 0) === 1 && $s === 422
    && ($j['error'] ?? '') === 'refused' && str_contains((string)($j['reason'] ?? ''), 'Attempt to modify record pages:6 failed with: ERROR: Language was not allowed.'), $raw);
echo "     reason: " . ($j['reason'] ?? '') . "\n";
check('…nothing written (record and tstamp unchanged, no sys_history row, no sys_log row, no key)', $nothing);
$asAdmin(['be_groups' => [$GROUP => ['allowed_languages' => $seededLanguages]]]);
$languagesRestored = true;
[$s, $j, $raw] = $b->call('apply', ['user' => $EDITOR, 'table' => 'tt_content', 'uid' => 6, 'key' => "waymark-test-$run-lang-ok",
    'fields' => ['header' => ['old' => (string)$ce6['header'], 'new' => "Team $run"]]]);
check('allowed_languages restored (' . $seededLanguages . '): the same change of tt_content:6 by the editor → 200 applied', $s === 200
    && ($j['status'] ?? '') === 'applied' && ($rec('tt_content', 6)['header'] ?? null) === "Team $run", $raw);

echo "== draft workspace\n";
$wsId = (int)$db->select(['uid'], 'sys_workspace', ['title' => 'Redaktion', 'deleted' => 0])->fetchOne();
if ($wsId === 0) {
    $dh = $asAdmin(['sys_workspace' => ['NEW1' => ['pid' => 0, 'title' => 'Redaktion', 'members' => 'be_users_' . $EDITOR]]]);
    $wsId = (int)$dh->substNEWwithIDs['NEW1'];
}
check('sys_workspace "Redaktion" with the editor as member (DataHandler as admin)', $wsId > 0);
$db->update('be_users', ['workspace_id' => $wsId], ['uid' => $EDITOR]);
[$s, $j] = $b->call('target', ['user' => $EDITOR]);
check('target: Redaktion', $s === 200 && ($j['workspace'] ?? null) === ['id' => $wsId, 'title' => 'Redaktion'], [$s, $j]);
$live = $rec('pages', 3);
$shown = BackendUtility::getWorkspaceVersionOfRecord($wsId, 'pages', 3, '*') ?: $live;
$wsValue = "Draft description $run";
[$s, $j, $raw] = $b->call('apply', ['user' => $EDITOR, 'table' => 'pages', 'uid' => 3, 'key' => "waymark-test-$run-ws",
    'fields' => ['description' => ['old' => (string)$shown['description'], 'new' => $wsValue]]]);
$version = BackendUtility::getWorkspaceVersionOfRecord($wsId, 'pages', 3, '*') ?: [];
check('apply in the draft workspace → 200 with workspace id/title', $s === 200 && ($j['workspace'] ?? null) === ['id' => $wsId, 'title' => 'Redaktion'], $raw);
check('record.versionUid = the t3ver_oid-linked workspace version', ($j['record']['versionUid'] ?? 0) > 0 && (int)($version['uid'] ?? -1) === $j['record']['versionUid']
    && (int)$version['t3ver_oid'] === 3 && (int)$version['t3ver_wsid'] === $wsId && $version['description'] === $wsValue, [$raw, $version['uid'] ?? null]);
check('live row unchanged', ($rec('pages', 3)['description'] ?? null) === $live['description']);
[$s, $j2, $raw] = $b->call('apply', ['user' => $EDITOR, 'table' => 'pages', 'uid' => 3, 'key' => "waymark-test-$run-ws2",
    'fields' => ['description' => ['old' => $wsValue, 'new' => "$wsValue (2)"]]]);
check('second change: old compared with the workspace version, same version updated', $s === 200 && ($j2['record']['versionUid'] ?? 0) === ($j['record']['versionUid'] ?? -1), $raw);
[$s, $j3, $raw] = $b->call('target', ['user' => $EDITOR, 'record' => ['table' => 'pages', 'uid' => 3, 'columns' => ['description', 'title']]]);
check('target with a record → its values as she sees them in her workspace (the draft over live)', $s === 200
    && ($j3['current'] ?? null) === ['description' => "$wsValue (2)", 'title' => (string)$live['title']], $raw);
[$s, $j3, $raw] = $b->call('target', ['user' => $EDITOR, 'record' => ['table' => 'pages', 'uid' => 3, 'columns' => ['no_such_column']]]);
check('target with an unknown column → 400 bad_request', $s === 400 && ($j3['error'] ?? '') === 'bad_request', $raw);
[$s, $j3, $raw] = $b->call('target', ['user' => $EDITOR, 'record' => ['table' => 'pages', 'uid' => 999999, 'columns' => ['title']]]);
check('target with a record she cannot see → current null', $s === 200 && array_key_exists('current', $j3) && $j3['current'] === null, $raw);

// her only allowed workspace is the draft workspace: TYPO3 puts her there even with workspace_id 0
$db->update('be_users', ['workspace_id' => 0], ['uid' => $EDITOR]);
$asAdmin(['be_groups' => [$GROUP => ['workspace_perms' => 0]]]);
[$s, $j] = $b->call('target', ['user' => $EDITOR]);
check('user without live access → target is her draft workspace', $s === 200 && ($j['workspace']['id'] ?? null) === $wsId, [$s, $j]);
$asAdmin(['be_groups' => [$GROUP => ['workspace_perms' => 1]]]);
$db->update('be_users', ['workspace_id' => 0], ['uid' => $EDITOR]);

echo "== sessions and the module\n";
$jar = tempnam(sys_get_temp_dir(), 'wm-cookies');
[$s, , $html] = Bridge::http('GET', "$base/typo3/login", null, [], $jar);
preg_match('/name="__RequestToken" value="([^"]+)"/', $html, $m);
[$s, , , $head] = Bridge::http('POST', "$base/typo3/login?loginProvider=1433416747",
    http_build_query(['login_status' => 'login', 'username' => 'editor', 'userident' => $editorPassword, '__RequestToken' => $m[1] ?? '']),
    ['Content-Type: application/x-www-form-urlencoded'], $jar);
check('editor logs in over HTTP', $s === 303 && str_contains($head, '/typo3/main'), [$s, $head]);
preg_match('/\sbe_typo_user\s+(\S+)\s*$/m', (string)file_get_contents($jar), $cm);
$jwt = $cm[1] ?? '';
$parts = explode('.', $jwt);
$payload = json_decode((string)base64_decode(strtr($parts[1] ?? '', '-_', '+/')), true);
$sessionBackend = GeneralUtility::makeInstance(SessionManager::class)->getSessionBackend('BE');
$hashed = $sessionBackend->hash((string)($payload['identifier'] ?? ''));
check('the hashed id is what be_sessions stores', $count('be_sessions', ['ses_id' => $hashed, 'ses_userid' => $EDITOR]) === 1);
[$s, $j] = $b->call('session', ['user' => $EDITOR, 'session' => $hashed]);
check('session: active for the logged-in editor', $s === 200 && ($j ?? null) === ['active' => true], [$s, $j]);
[$s, $j] = $b->call('session', ['user' => 1, 'session' => $hashed]);
check('session: not active for another user', $s === 200 && ($j['active'] ?? null) === false, [$s, $j]);
[$s, $j] = $b->call('session', ['user' => $EDITOR, 'session' => (string)($payload['identifier'] ?? '')]);
check('session: the cookie identifier itself is not accepted', $s === 200 && ($j['active'] ?? null) === false, [$s, $j]);

// the module: Waymark URL configured, module allowed for the group
// (run.sh configured waymarkUrl https://waymark.example.org before starting the server)
$mods = (string)$db->select(['groupMods'], 'be_groups', ['uid' => $GROUP])->fetchOne();
if (!in_array('web_waymark', explode(',', $mods), true)) {
    $asAdmin(['be_groups' => [$GROUP => ['groupMods' => trim($mods . ',web_waymark', ',')]]]);
}
$referer = ["Referer: $base/typo3/main"];   // else TYPO3 answers with its referrer-refresh page
[$s, , $main] = Bridge::http('GET', "$base" . (preg_match('#Location: (\S+)#i', $head, $lm) ? parse_url($lm[1], PHP_URL_PATH) . '?' . parse_url($lm[1], PHP_URL_QUERY) : '/typo3/main'), null, $referer, $jar);
preg_match('#/typo3/module/web/layout\?token=[0-9a-f]+#', html_entity_decode($main), $lay);
preg_match('#/typo3/module/web/waymark\?token=[0-9a-f]+#', html_entity_decode($main), $wm);
check('backend main page links the Waymark module for the editor', isset($wm[0]), $s);
if (isset($lay[0])) {
    // language 1 shown: ?language=1 in TYPO3 13.4, ?languages[]=1 in 14 (each version ignores the other's)
    [$s, , $page] = Bridge::http('GET', $base . $lay[0] . '&id=2&language=1&languages%5B%5D=1', null, $referer, $jar);
    $page = html_entity_decode($page);
    check('page module shows the Waymark button (page 2, language 1)', (bool)preg_match('#/typo3/module/web/waymark\?token=[0-9a-f]+&id=2&language=1#', $page), $s);
}
if (isset($wm[0])) {
    [$s, , $page] = Bridge::http('GET', $base . $wm[0] . '&id=2&language=1&noredirect=1', null, $referer, $jar);
    preg_match('#data-waymark-enter="([^"]+)"#', $page, $em);
    $url = html_entity_decode($em[1] ?? '');
    check('module renders the sign-in URL <waymarkUrl>/typo3/enter?ticket=…', str_starts_with($url, 'https://waymark.example.org/typo3/enter?ticket='), [$s, substr($page, 0, 300)]);
    $ticket = rawurldecode(substr($url, strlen('https://waymark.example.org/typo3/enter?ticket=')));
    [$p64, $mac] = array_pad(explode('.', $ticket, 2), 2, '');
    check('ticket: HMAC-SHA256(secret, "waymark-ticket\n" payload) verifies', hash_equals(hash_hmac('sha256', "waymark-ticket\n" . $p64, $secret), $mac) && !str_contains($p64, '='));
    $tp = json_decode((string)base64_decode(strtr($p64, '-_', '+/')), true) ?: [];
    check('ticket payload: v, user, username, session (hashed), page, language, iat/exp, nonce',
        ($tp['v'] ?? 0) === 1 && ($tp['user'] ?? 0) === $EDITOR && ($tp['username'] ?? '') === 'editor' && ($tp['session'] ?? '') === $hashed
        && ($tp['page'] ?? -1) === 2 && ($tp['language'] ?? -1) === 1 && ($tp['exp'] ?? 0) === ($tp['iat'] ?? -1) + 60
        && abs(($tp['iat'] ?? 0) - time()) < 30 && preg_match('/^[0-9a-f]{32}$/', (string)($tp['nonce'] ?? '')) === 1, $tp);
}

preg_match('#"logoutUrl":"([^"]+)"#', $main, $lo);
check('backend main page has the logout URL', isset($lo[1]));
Bridge::http('GET', $base . stripslashes($lo[1] ?? '/typo3/logout'), null, $referer, $jar);
[$s, $j] = $b->call('session', ['user' => $EDITOR, 'session' => $hashed]);
check('session: not active after logout', $s === 200 && ($j['active'] ?? null) === false, [$s, $j]);
@unlink($jar);

// sessions ended by TYPO3: a disabled user; a password change (DataHandler's DestroySessionHook)
$login = function () use ($base, $editorPassword, $sessionBackend): string {
    $jar = tempnam(sys_get_temp_dir(), 'wm-cookies');
    [, , $html] = Bridge::http('GET', "$base/typo3/login", null, [], $jar);
    preg_match('/name="__RequestToken" value="([^"]+)"/', $html, $m);
    Bridge::http('POST', "$base/typo3/login?loginProvider=1433416747", http_build_query(['login_status' => 'login', 'username' => 'editor',
        'userident' => $editorPassword, '__RequestToken' => $m[1] ?? '']), ['Content-Type: application/x-www-form-urlencoded'], $jar);
    preg_match('/\sbe_typo_user\s+(\S+)\s*$/m', (string)file_get_contents($jar), $cm);
    @unlink($jar);
    $payload = json_decode((string)base64_decode(strtr(explode('.', $cm[1] ?? '..')[1] ?? '', '-_', '+/')), true);
    return $sessionBackend->hash((string)($payload['identifier'] ?? ''));
};
$hashed = $login();
[$s, $j] = $b->call('session', ['user' => $EDITOR, 'session' => $hashed]);
check('session: active after a new login', ($j['active'] ?? null) === true, [$s, $j]);
$asAdmin(['be_users' => [$EDITOR => ['disable' => 1]]]);
[$s, $j] = $b->call('session', ['user' => $EDITOR, 'session' => $hashed]);
check('session: not active while the user is disabled', ($j['active'] ?? null) === false, [$s, $j]);
[$s, $j] = $b->call('target', ['user' => $EDITOR]);
check('target/apply for a disabled user → 422 refused', $s === 422 && ($j['error'] ?? '') === 'refused', [$s, $j]);
$asAdmin(['be_users' => [$EDITOR => ['disable' => 0]]]);
[$s, $j] = $b->call('session', ['user' => $EDITOR, 'session' => $hashed]);
check('session: active again when re-enabled', ($j['active'] ?? null) === true, [$s, $j]);
$asAdmin(['be_users' => [$EDITOR => ['password' => $editorPassword]]]);
[$s, $j] = $b->call('session', ['user' => $EDITOR, 'session' => $hashed]);
check('session: not active after a password change', ($j['active'] ?? null) === false, [$s, $j]);

done();
