<?php

use TYPO3\CMS\Core\Imaging\IconProvider\SvgIconProvider;

return [
    'waymark-module' => [
        'provider' => SvgIconProvider::class,
        'source' => 'EXT:waymark/Resources/Public/Icons/Extension.svg',
    ],
];
