<?php

declare(strict_types=1);

namespace Waymark\Typo3Waymark\Bridge;

use Doctrine\DBAL\Exception\UniqueConstraintViolationException;
use TYPO3\CMS\Backend\Utility\BackendUtility;
use TYPO3\CMS\Core\Authentication\BackendUserAuthentication;
use TYPO3\CMS\Core\Core\Bootstrap;
use TYPO3\CMS\Core\Database\Connection;
use TYPO3\CMS\Core\Database\ConnectionPool;
use TYPO3\CMS\Core\Schema\Capability\TcaSchemaCapability;
use TYPO3\CMS\Core\Schema\TcaSchemaFactory;
use TYPO3\CMS\Core\Utility\GeneralUtility;
use TYPO3\CMS\Core\Versioning\VersionState;
use Waymark\Typo3Waymark\DataHandling\BridgeDataHandler;

/**
 * POST /waymark-bridge/v1/apply (docs/typo3-bridge.md): one record, its changed columns, through DataHandler as
 * the backend user, at most once per key, in one transaction of TYPO3's default connection.
 */
final class ApplyService
{
    public const APPLIED_TABLE = 'tx_waymark_applied';

    public function __construct(
        private readonly ConnectionPool $connectionPool,
        private readonly BackendUserLoader $userLoader,
        private readonly TcaSchemaFactory $tcaSchemaFactory,
    ) {}

    /** @return array{0:int,1:array} HTTP status and JSON answer */
    public function apply(array $body): array
    {
        // --- shape
        $user = $body['user'] ?? null;
        $table = $body['table'] ?? null;
        $uid = $body['uid'] ?? null;
        $key = $body['key'] ?? null;
        $fields = $body['fields'] ?? null;
        if (!is_int($user) || $user <= 0) {
            return self::badRequest('user must be a positive integer');
        }
        if (!is_string($table) || $table === '') {
            return self::badRequest('table must be a string');
        }
        if (!is_int($uid) || $uid <= 0) {
            return self::badRequest('uid must be a positive integer');
        }
        if (!is_string($key) || $key === '' || mb_strlen($key) > 200 || strlen($key) > 800) {
            return self::badRequest('key must be a string of 1 to 200 characters');
        }
        if (!is_array($fields) || $fields === [] || array_is_list($fields)) {
            return self::badRequest('fields must be a non-empty object');
        }
        $tca = $GLOBALS['TCA'][$table] ?? null;
        if (!is_array($tca) || !is_array($tca['columns'] ?? null)) {
            return self::badRequest('unknown table "' . $table . '"');
        }
        $changes = [];
        foreach ($fields as $column => $change) {
            $column = (string)$column;
            if (!isset($tca['columns'][$column]) || !is_array($tca['columns'][$column])) {
                return self::badRequest('unknown column "' . $column . '" of table "' . $table . '"');
            }
            if (!is_array($change) || !array_key_exists('old', $change) || !array_key_exists('new', $change)
                || !self::isScalarOrNull($change['old']) || !self::isScalarOrNull($change['new'])
                || count($change) !== 2
            ) {
                return self::badRequest('fields.' . $column . ' must be {"old":…,"new":…} with string, number or null values');
            }
            $changes[$column] = ['old' => self::str($change['old']), 'new' => self::str($change['new'])];
        }

        // --- the user as TYPO3 initializes her
        $beUser = $this->userLoader->load($user);
        if ($beUser === null) {
            return [422, ['error' => 'refused', 'reason' => 'backend user ' . $user . ' does not exist, is disabled, deleted, outside its start/end time, or may not log in']];
        }
        $this->userLoader->become($beUser);
        try {
            // ext_tables.php of all extensions, as the frontend does for a logged-in backend user
            Bootstrap::loadExtTables();
            return $this->applyAsUser($beUser, $table, $uid, $key, $changes);
        } finally {
            $this->userLoader->restore();
        }
    }

    /**
     * The values of $columns of record $uid of $table as $beUser sees them in the workspace TYPO3 puts her in
     * (her draft overlaid on live), for the card's "current" value: what apply compares `old` with. Null when she
     * does not see the record there (unknown, a version row, deleted in her workspace, or in another workspace).
     *
     * @param list<string> $columns
     * @return array<string,string>|null
     */
    public function current(BackendUserAuthentication $beUser, string $table, int $uid, array $columns): ?array
    {
        $record = $this->recordInWorkspace($table, $uid, (int)$beUser->workspace);
        if ($record === null) {
            return null;
        }
        $current = [];
        foreach ($columns as $column) {
            $current[$column] = self::str($record[$column] ?? null);
        }
        return $current;
    }

    private function applyAsUser(BackendUserAuthentication $beUser, string $table, int $uid, string $key, array $changes): array
    {
        $connection = $this->connectionPool->getConnectionByName(ConnectionPool::DEFAULT_CONNECTION_NAME);
        $workspace = BackendUserLoader::workspaceOf($beUser);
        $dataHandler = null;
        $connection->beginTransaction();
        try {
            // 1. idempotency
            $stored = $this->storedResult($connection, $key);
            if ($stored !== null) {
                $connection->rollBack();
                return [200, ['status' => 'already_applied'] + $stored];
            }

            // 2. the record as she sees it in her workspace; its rows stay locked until the commit, so that a
            // concurrent change cannot slip in between the comparison with `old` and DataHandler's write
            $this->lockRows($connection, $table, $uid, (int)$beUser->workspace);
            $record = $this->recordInWorkspace($table, $uid, (int)$beUser->workspace);
            if ($record === null) {
                $connection->rollBack();
                return [404, ['error' => 'unknown_record']];
            }
            foreach ($changes as $column => $change) {
                $current = self::str($record[$column] ?? null);
                if ($current !== $change['old']) {
                    $connection->rollBack();
                    return [409, ['error' => 'conflict', 'field' => $column, 'current' => $current]];
                }
            }
            // columns DataHandler would silently skip for this user (exclude fields without permission)
            foreach (array_keys($changes) as $column) {
                $reason = $this->columnNotEditable($beUser, $table, $column);
                if ($reason !== null) {
                    $connection->rollBack();
                    return [422, ['error' => 'refused', 'reason' => $reason]];
                }
            }

            // 3. DataHandler as that user
            $data = [$table => [$uid => array_map(static fn(array $c): string => $c['new'], $changes)]];
            /** @var BridgeDataHandler $dataHandler */
            $dataHandler = GeneralUtility::makeInstance(BridgeDataHandler::class);
            $dataHandler->start($data, [], $beUser);
            $dataHandler->process_datamap();
            if ($dataHandler->errorLog !== []) {
                $connection->rollBack();
                $dataHandler->discardDeferredCacheClearing();
                return [422, ['error' => 'refused', 'reason' => implode('; ', array_map('strval', $dataHandler->errorLog))]];
            }

            $versionUid = 0;
            if ((int)$beUser->workspace > 0 && $this->isWorkspaceAware($table)) {
                $version = BackendUtility::getWorkspaceVersionOfRecord((int)$beUser->workspace, $table, $uid, 'uid');
                $versionUid = is_array($version) ? (int)$version['uid'] : 0;
            }
            $after = $this->recordInWorkspace($table, $uid, (int)$beUser->workspace) ?? [];
            $resultFields = [];
            foreach ($changes as $column => $change) {
                $stored = self::str($after[$column] ?? null);
                // DataHandler skips some changes without an errorLog entry (e.g. a read-only column)
                if ($stored === $change['old'] && $change['new'] !== $change['old'] && trim($change['new']) !== $change['old']) {
                    $connection->rollBack();
                    $dataHandler->discardDeferredCacheClearing();
                    return [422, ['error' => 'refused', 'reason' => 'TYPO3 did not change column "' . $column . '" of ' . $table . ':' . $uid . ' for this user (read-only or not editable)']];
                }
                $resultFields[$column] = ['old' => $change['old'], 'new' => $stored];
            }
            $result = [
                'workspace' => $workspace,
                'record' => ['table' => $table, 'uid' => $uid, 'versionUid' => $versionUid],
                'fields' => $resultFields,
            ];

            // 4. the key and the result
            try {
                $connection->insert(self::APPLIED_TABLE, [
                    'idempotency_key' => $key,
                    'result' => json_encode($result, JSON_THROW_ON_ERROR | JSON_UNESCAPED_UNICODE | JSON_UNESCAPED_SLASHES),
                    'crdate' => time(),
                ]);
            } catch (UniqueConstraintViolationException) {
                // the same key was applied concurrently: ours is void
                $connection->rollBack();
                $dataHandler->discardDeferredCacheClearing();
                $stored = $this->storedResult($connection, $key);
                return $stored !== null ? [200, ['status' => 'already_applied'] + $stored] : [409, ['error' => 'conflict', 'field' => '', 'current' => '']];
            }
            $connection->commit();
        } catch (\Throwable $e) {
            if ($connection->isTransactionActive()) {
                $connection->rollBack();
            }
            $dataHandler?->discardDeferredCacheClearing();
            throw $e;
        }
        // after the commit: the cache clearing DataHandler registered, as TYPO3 configures it
        $dataHandler->runDeferredCacheClearing();
        return [200, ['status' => 'applied'] + $result];
    }

    private function lockRows(Connection $connection, string $table, int $uid, int $workspace): void
    {
        if ($this->connectionPool->getConnectionForTable($table) !== $connection) {
            return;   // the table lives on another connection: no lock inside this transaction
        }
        $qb = $connection->createQueryBuilder();
        $qb->getRestrictions()->removeAll();
        $qb->select('uid')->from($table)->where($qb->expr()->eq('uid', $qb->createNamedParameter($uid, Connection::PARAM_INT)));
        if ($workspace > 0 && $this->isWorkspaceAware($table)) {
            $qb->orWhere($qb->expr()->and(
                $qb->expr()->eq('t3ver_oid', $qb->createNamedParameter($uid, Connection::PARAM_INT)),
                $qb->expr()->eq('t3ver_wsid', $qb->createNamedParameter($workspace, Connection::PARAM_INT))
            ));
        }
        $qb->getConcreteQueryBuilder()->forUpdate();
        $qb->executeQuery()->fetchAllAssociative();
    }

    private function storedResult(Connection $connection, string $key): ?array
    {
        $row = $connection->select(['result'], self::APPLIED_TABLE, ['idempotency_key' => $key])->fetchAssociative();
        if (!is_array($row)) {
            return null;
        }
        $result = json_decode((string)$row['result'], true);
        return is_array($result) ? $result : [];
    }

    /** The record as the user sees it: her workspace version when there is one, else live; null when missing or deleted. */
    private function recordInWorkspace(string $table, int $uid, int $workspace): ?array
    {
        $row = BackendUtility::getRecord($table, $uid);
        if (!is_array($row)) {
            return null;
        }
        if ($this->isWorkspaceAware($table)) {
            // a version row is not addressed directly, nor a record that only exists in another workspace
            if ((int)($row['t3ver_oid'] ?? 0) > 0) {
                return null;
            }
            $rowWorkspace = (int)($row['t3ver_wsid'] ?? 0);
            if ($rowWorkspace !== 0 && $rowWorkspace !== $workspace) {
                return null;
            }
            if ($workspace > 0) {
                BackendUtility::workspaceOL($table, $row, $workspace);
                if (!is_array($row) || VersionState::tryFrom((int)($row['t3ver_state'] ?? 0)) === VersionState::DELETE_PLACEHOLDER) {
                    return null;
                }
            }
        }
        return $row;
    }

    /**
     * Whether $table has workspace versions (TCA ctrl.versioningWS), asked as TYPO3 13.4 and 14 ask it themselves:
     * the TCA schema's Workspace capability (BackendUtility::isTableWorkspaceEnabled() is deprecated in 14).
     */
    private function isWorkspaceAware(string $table): bool
    {
        return $this->tcaSchemaFactory->has($table)
            && $this->tcaSchemaFactory->get($table)->hasCapability(TcaSchemaCapability::Workspace);
    }

    /** Why DataHandler would skip $column for this user without telling (its exclude-field check), or null. */
    private function columnNotEditable(BackendUserAuthentication $beUser, string $table, string $column): ?string
    {
        if ($beUser->isAdmin()) {
            return null;
        }
        $config = $GLOBALS['TCA'][$table]['columns'][$column] ?? [];
        if (($config['displayCond'] ?? null) === 'HIDE_FOR_NON_ADMINS') {
            return 'column "' . $column . '" of table "' . $table . '" is for administrators only';
        }
        if (!empty($config['exclude']) && !$beUser->check('non_exclude_fields', $table . ':' . $column)) {
            return 'no permission for the column "' . $column . '" of table "' . $table . '" (allowed exclude fields of the user\'s groups)';
        }
        return null;
    }

    private static function isScalarOrNull(mixed $v): bool
    {
        return $v === null || is_scalar($v);
    }

    private static function str(mixed $v): string
    {
        if ($v === null) {
            return '';
        }
        if (is_bool($v)) {
            return $v ? '1' : '0';
        }
        return (string)$v;
    }

    private static function badRequest(string $reason): array
    {
        return [400, ['error' => 'bad_request', 'reason' => $reason]];
    }
}
