<?php

use Waymark\Typo3Waymark\Controller\WaymarkModuleController;

/**
 * "Waymark" in the Web group, with the page tree: `id` is the page. Editors need the module in their group's
 * module rights (be_groups.groupMods: web_waymark).
 */
return [
    'web_waymark' => [
        'parent' => 'web',
        'position' => ['after' => 'web_layout'],
        'access' => 'user',
        'path' => '/module/web/waymark',
        'iconIdentifier' => 'waymark-module',
        'navigationComponent' => '@typo3/backend/tree/page-tree-element',
        'labels' => 'LLL:EXT:waymark/Resources/Private/Language/locallang_mod.xlf',
        'routes' => [
            '_default' => [
                'target' => WaymarkModuleController::class . '::handleRequest',
            ],
        ],
    ],
];
