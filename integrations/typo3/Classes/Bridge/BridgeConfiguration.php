<?php

declare(strict_types=1);

namespace Waymark\Typo3Waymark\Bridge;

use TYPO3\CMS\Core\Configuration\ExtensionConfiguration;

/**
 * The shared secret and Waymark's URL. The environment variable WAYMARK_BRIDGE_SECRET wins over the extension
 * configuration; a secret shorter than 32 characters counts as not configured.
 */
final class BridgeConfiguration
{
    public const MIN_SECRET_LENGTH = 32;

    public function __construct(private readonly ExtensionConfiguration $extensionConfiguration) {}

    public function getSecret(): ?string
    {
        $secret = getenv('WAYMARK_BRIDGE_SECRET');
        if (!is_string($secret) || $secret === '') {
            $secret = (string)($this->get()['secret'] ?? '');
        }
        $secret = trim($secret);
        return strlen($secret) >= self::MIN_SECRET_LENGTH ? $secret : null;
    }

    public function getWaymarkUrl(): ?string
    {
        $url = trim((string)($this->get()['waymarkUrl'] ?? ''));
        if ($url === '' || !preg_match('#^https?://[^/\s]+#i', $url)) {
            return null;
        }
        return rtrim($url, '/');
    }

    private function get(): array
    {
        try {
            $config = $this->extensionConfiguration->get('waymark');
        } catch (\Throwable) {
            return [];
        }
        return is_array($config) ? $config : [];
    }
}
