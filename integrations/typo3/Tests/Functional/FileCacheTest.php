<?php
// The page cache on TYPO3's file backend (FileBackend, entries and their tags as files under var/cache/data/pages/),
// as agencies often configure it: run.sh writes config/system/additional.php, flushes the caches and restarts the
// server, then runs this script; afterwards it restores additional.php and serves on the database backend again.
// A change through the bridge must clear the page's entries there as well, and the frontend must show the new value.
// Env: T3_ROOT (the installation), BASE (http://127.0.0.1:PORT), SECRET.
declare(strict_types=1);

require __DIR__ . '/../lib.php';
$T3_ROOT = getenv('T3_ROOT') ?: exit("T3_ROOT missing\n");
require $T3_ROOT . '/boot.php';

use TYPO3\CMS\Backend\Utility\BackendUtility;
use TYPO3\CMS\Core\Cache\Backend\FileBackend;
use TYPO3\CMS\Core\Cache\CacheManager;
use TYPO3\CMS\Core\Database\ConnectionPool;
use TYPO3\CMS\Core\Utility\GeneralUtility;

$base = rtrim(getenv('BASE') ?: exit("BASE missing\n"), '/');
$b = new Bridge($base, getenv('SECRET') ?: exit("SECRET missing\n"));
$db = GeneralUtility::makeInstance(ConnectionPool::class)->getConnectionByName(ConnectionPool::DEFAULT_CONNECTION_NAME);
$EDITOR = (int)$db->select(['uid'], 'be_users', ['username' => 'editor', 'deleted' => 0])->fetchOne();
$GROUP = (int)$db->select(['uid'], 'be_groups', ['title' => 'Editor', 'deleted' => 0])->fetchOne();
$run = bin2hex(random_bytes(4));
// a clean starting point when the runner is repeated (or an earlier run stopped half-way): editor live
$db->update('be_users', ['workspace_id' => 0], ['uid' => $EDITOR]);
t3_as_user(1);
$dh = t3_dh(['be_groups' => [$GROUP => ['workspace_perms' => 1]], 'pages' => [1 => ['TSconfig' => '']]]);
if ($dh->errorLog) {
    throw new RuntimeException('admin DataHandler: ' . implode('; ', $dh->errorLog));
}

echo "== page cache on the file backend\n";
$pagesCache = GeneralUtility::makeInstance(CacheManager::class)->getCache('pages');
$backend = $pagesCache->getBackend();
check('config/system/additional.php puts the page cache on TYPO3\'s FileBackend (getCache(\'pages\')->getBackend())', $backend instanceof FileBackend, get_class($backend));
if (!$backend instanceof FileBackend) {
    done();
}
$dir = $T3_ROOT . '/var/cache/data/pages/';
$dbRows = (int)$db->count('*', 'cache_pages', []);
Bridge::http('GET', "$base/services/web-development");
Bridge::http('GET', "$base/about-us");
[$s, , $fe1] = Bridge::http('GET', "$base/about-us");
$ids = $backend->findIdentifiersByTag('pageId_2');
check('frontend /about-us rendered and cached: findIdentifiersByTag(\'pageId_2\') is not empty', $s === 200 && $ids !== [], [$s, $ids]);
check('…as files under var/cache/data/pages/ (not in the table cache_pages)', $ids !== [] && array_filter($ids, fn($id) => is_file($dir . $id)) === $ids
    && (int)$db->count('*', 'cache_pages', []) === $dbRows, [$ids, glob($dir . '*')]);
$unrelated = $backend->findIdentifiersByTag('pageId_5');
check('/services/web-development (page 5, child of a sibling) is cached too', $unrelated !== [], $unrelated);

$before = BackendUtility::getRecord('pages', 2);
$new = "File cache description $run";
check('the cached /about-us does not show the new value yet', !str_contains($fe1, $new));
[$s, $j, $raw] = $b->call('apply', ['user' => $EDITOR, 'table' => 'pages', 'uid' => 2, 'key' => "waymark-test-$run-filecache",
    'fields' => ['description' => ['old' => (string)$before['description'], 'new' => $new]]]);
check('apply pages:2 description as the editor → 200 applied, live', $s === 200 && ($j['status'] ?? '') === 'applied'
    && ($j['workspace']['id'] ?? null) === 0 && ($j['fields']['description']['new'] ?? null) === $new, $raw);
check('BackendUtility::getRecord reads it back', (BackendUtility::getRecord('pages', 2)['description'] ?? null) === $new);
$left = $backend->findIdentifiersByTag('pageId_2');
check('the entries tagged pageId_2 are gone from the file backend (findIdentifiersByTag, and their files)', $left === []
    && array_filter($ids, fn($id) => is_file($dir . $id) || $backend->has($id)) === [], [$left, $ids]);
check('…while page 5 stays cached (DataHandler flushed by tag, not the whole cache)', array_filter($unrelated, fn($id) => $backend->has($id)) === $unrelated);
[$s, , $fe2] = Bridge::http('GET', "$base/about-us");
check('frontend /about-us shows the new description', $s === 200 && str_contains($fe2, $new), substr(strip_tags($fe2), 0, 300));
check('…and is cached again on the file backend', $backend->findIdentifiersByTag('pageId_2') !== []);

done();
