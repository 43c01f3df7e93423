<?php

/**
 * The bridge answers in the FRONTEND stack, early: right after the normalized params are known (so a TYPO3 under
 * a sub-path works) and before the site is resolved (the bridge is not part of any site).
 */
return [
    'frontend' => [
        'waymark/bridge' => [
            'target' => \Waymark\Typo3Waymark\Middleware\BridgeMiddleware::class,
            'after' => [
                'typo3/cms-core/normalized-params-attribute',
            ],
            'before' => [
                'typo3/cms-frontend/eid',
                'typo3/cms-frontend/site',
                'typo3/cms-frontend/maintenance-mode',
            ],
        ],
    ],
];
