<?php

declare(strict_types=1);

namespace Waymark\Typo3Waymark\Bridge;

use TYPO3\CMS\Core\Authentication\BackendUserAuthentication;
use TYPO3\CMS\Core\Database\ConnectionPool;
use TYPO3\CMS\Core\Session\Backend\DatabaseSessionBackend;
use TYPO3\CMS\Core\Session\Backend\HashableSessionBackendInterface;
use TYPO3\CMS\Core\Session\Backend\SessionBackendInterface;
use TYPO3\CMS\Core\Session\SessionManager;

/**
 * Backend sessions as TYPO3's session backend ('BE') stores them. The session backends that hash (database,
 * redis: HashableSessionBackendInterface) store hash($sessionId) as ses_id; that stored identifier is what the
 * ticket carries and what /session is asked about — never the cookie value.
 */
final class SessionChecker
{
    public function __construct(
        private readonly SessionManager $sessionManager,
        private readonly ConnectionPool $connectionPool,
    ) {}

    /** The identifier the session backend stores for the session of $user (null: no persisted session). */
    public function storedIdentifier(BackendUserAuthentication $user): ?string
    {
        $session = $user->getSession();
        if ($session === null || $session->isAnonymous()) {
            return null;
        }
        $backend = $this->backend();
        $id = $session->getIdentifier();
        return $backend instanceof HashableSessionBackendInterface ? $backend->hash($id) : $id;
    }

    /** @return array{active:bool,reason?:string} */
    public function check(int $userId, string $storedIdentifier): array
    {
        $record = $this->findRecord($storedIdentifier);
        if ($record === null) {
            return ['active' => false, 'reason' => 'unknown_session'];
        }
        if ((int)($record['ses_userid'] ?? 0) !== $userId || $userId <= 0) {
            return ['active' => false, 'reason' => 'other_user'];
        }
        $lifetime = (int)($GLOBALS['TYPO3_CONF_VARS']['BE']['sessionTimeout'] ?? 28800);
        // as UserSessionManager::hasExpired
        if ($lifetime === 0 || time() > (int)($record['ses_tstamp'] ?? 0) + $lifetime) {
            return ['active' => false, 'reason' => 'expired'];
        }
        // enabled, not deleted, within start/end time (TYPO3's default restrictions of be_users)
        $qb = $this->connectionPool->getQueryBuilderForTable('be_users');
        $found = $qb->count('uid')->from('be_users')
            ->where($qb->expr()->eq('uid', $qb->createNamedParameter($userId, \TYPO3\CMS\Core\Database\Connection::PARAM_INT)))
            ->executeQuery()->fetchOne();
        if ((int)$found !== 1) {
            return ['active' => false, 'reason' => 'user_inactive'];
        }
        return ['active' => true];
    }

    private function backend(): SessionBackendInterface
    {
        return $this->sessionManager->getSessionBackend('BE');
    }

    private function findRecord(string $storedIdentifier): ?array
    {
        if ($storedIdentifier === '' || strlen($storedIdentifier) > 255) {
            return null;
        }
        $backend = $this->backend();
        if ($backend instanceof DatabaseSessionBackend) {
            $table = (string)($GLOBALS['TYPO3_CONF_VARS']['SYS']['session']['BE']['options']['table'] ?? 'be_sessions');
            $qb = $this->connectionPool->getQueryBuilderForTable($table);
            $qb->getRestrictions()->removeAll();
            $row = $qb->select('*')->from($table)
                ->where($qb->expr()->eq('ses_id', $qb->createNamedParameter($storedIdentifier)))
                ->executeQuery()->fetchAssociative();
            return is_array($row) && hash_equals((string)$row['ses_id'], $storedIdentifier) ? $row : null;
        }
        // any other backend: its list of sessions carries the stored identifiers
        foreach ($backend->getAll() as $row) {
            if (is_array($row) && hash_equals((string)($row['ses_id'] ?? ''), $storedIdentifier)) {
                return $row;
            }
        }
        return null;
    }
}
