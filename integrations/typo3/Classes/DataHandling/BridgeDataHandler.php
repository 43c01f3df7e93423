<?php

declare(strict_types=1);

namespace Waymark\Typo3Waymark\DataHandling;

use TYPO3\CMS\Core\DataHandling\DataHandler;

/**
 * TYPO3's DataHandler, unchanged, except that its cache clearing (page cache of the record's page by tag,
 * TSconfig TCEMAIN.clearCacheCmd, clearCachePostProc hooks) waits until the bridge has committed its transaction
 * (runDeferredCacheClearing), or is dropped when the bridge rolls back (discardDeferredCacheClearing). Without
 * that, a frontend request between the flush and the commit could cache the old content again.
 */
class BridgeDataHandler extends DataHandler
{
    private bool $deferCacheClearing = true;

    protected function processClearCacheQueue(): void
    {
        if ($this->deferCacheClearing) {
            return;
        }
        parent::processClearCacheQueue();
    }

    public function runDeferredCacheClearing(): void
    {
        $this->deferCacheClearing = false;
        try {
            parent::processClearCacheQueue();
        } finally {
            $this->deferCacheClearing = true;
        }
    }

    public function discardDeferredCacheClearing(): void
    {
        static::$recordsToClearCacheFor = [];
        static::$recordPidsForDeletedRecords = [];
    }
}
