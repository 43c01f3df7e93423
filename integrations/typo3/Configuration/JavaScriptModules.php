<?php

return [
    'dependencies' => ['backend'],
    'imports' => [
        '@waymark/typo3-waymark/' => 'EXT:waymark/Resources/Public/JavaScript/',
    ],
];
