<?php

declare(strict_types=1);

namespace Waymark\Typo3Waymark\Bridge;

use TYPO3\CMS\Core\Authentication\BackendUserAuthentication;
use TYPO3\CMS\Core\Localization\LanguageServiceFactory;
use TYPO3\CMS\Core\Utility\ExtensionManagementUtility;
use TYPO3\CMS\Core\Utility\GeneralUtility;

/**
 * Loads a backend user by uid the way TYPO3 initializes one after login: the be_users row (only when enabled,
 * not deleted and within start/end time: setBeUserByUid applies TYPO3's user constraints), her groups and
 * rights (fetchGroupData), and her workspace (fetchGroupData → workspaceInit: be_users.workspace_id when she
 * may use it, else her default workspace: live when allowed, else the first draft workspace she may use, else -99).
 */
final class BackendUserLoader
{
    private mixed $previousUser = null;
    private mixed $previousLang = null;

    public function __construct(private readonly LanguageServiceFactory $languageServiceFactory) {}

    public function load(int $uid): ?BackendUserAuthentication
    {
        if ($uid <= 0) {
            return null;
        }
        $user = GeneralUtility::makeInstance(BackendUserAuthentication::class);
        $user->setBeUserByUid($uid);
        if (!is_array($user->user) || (int)($user->user['uid'] ?? 0) !== $uid) {
            return null;
        }
        // uc (user settings, e.g. the backend language) as TYPO3 unpacks it after login
        $uc = is_string($user->user['uc'] ?? null) ? @unserialize($user->user['uc'], ['allowed_classes' => false]) : null;
        if (is_array($uc)) {
            $user->uc = $uc;
        }
        $user->fetchGroupData();
        if (!$user->isUserAllowedToLogin()) {
            return null;
        }
        return $user;
    }

    /** Makes $user the current backend user ($GLOBALS['BE_USER'], $GLOBALS['LANG'] for DataHandler's messages). */
    public function become(BackendUserAuthentication $user): void
    {
        $this->previousUser = $GLOBALS['BE_USER'] ?? null;
        $this->previousLang = $GLOBALS['LANG'] ?? null;
        $GLOBALS['BE_USER'] = $user;
        $GLOBALS['LANG'] = $this->languageServiceFactory->createFromUserPreferences($user);
    }

    public function restore(): void
    {
        $GLOBALS['BE_USER'] = $this->previousUser;
        $GLOBALS['LANG'] = $this->previousLang;
        if ($GLOBALS['BE_USER'] === null) {
            unset($GLOBALS['BE_USER']);
        }
        if ($GLOBALS['LANG'] === null) {
            unset($GLOBALS['LANG']);
        }
    }

    /** @return array{id:int,title:string} */
    public static function workspaceOf(BackendUserAuthentication $user): array
    {
        $id = (int)$user->workspace;
        if ($id === 0) {
            return ['id' => 0, 'title' => 'Live'];
        }
        if ($id < 0 || !ExtensionManagementUtility::isLoaded('workspaces')) {
            return ['id' => $id, 'title' => 'No workspace access'];
        }
        return ['id' => $id, 'title' => (string)($user->workspaceRec['title'] ?? '')];
    }
}
