<?php

$EM_CONF[$_EXTKEY] = [
    'title' => 'Waymark',
    'description' => 'Waymark bridge: applies approved content changes through DataHandler as the editor, and signs editors in to Waymark from the TYPO3 backend.',
    'category' => 'be',
    'author' => 'Waymark',
    'state' => 'beta',
    'version' => '0.1.0',
    'constraints' => [
        'depends' => [
            'php' => '8.2.0-8.99.99',
            'typo3' => '13.4.0-14.4.99',
            'backend' => '13.4.0-14.4.99',
        ],
        'conflicts' => [],
        'suggests' => [
            'workspaces' => '13.4.0-14.4.99',
        ],
    ],
];
