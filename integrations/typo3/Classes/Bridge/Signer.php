<?php

declare(strict_types=1);

namespace Waymark\Typo3Waymark\Bridge;

/**
 * The cryptography of the contract (docs/typo3-bridge.md): request signatures and sign-in tickets.
 */
final class Signer
{
    /** STRING = METHOD "\n" PATH "\n" TIME "\n" NONCE "\n" lowercase-hex(SHA-256(body)) */
    public static function requestSignature(string $secret, string $method, string $path, string $time, string $nonce, string $body): string
    {
        $string = strtoupper($method) . "\n" . $path . "\n" . $time . "\n" . $nonce . "\n" . hash('sha256', $body);
        return 'v1=' . hash_hmac('sha256', $string, $secret);
    }

    public static function base64url(string $data): string
    {
        return rtrim(strtr(base64_encode($data), '+/', '-_'), '=');
    }

    /** TICKET = base64url(PAYLOAD) "." lowercase-hex(HMAC-SHA256(secret, "waymark-ticket\n" base64url(PAYLOAD))) */
    public static function ticket(string $secret, array $payload): string
    {
        $encoded = self::base64url(json_encode($payload, JSON_THROW_ON_ERROR | JSON_UNESCAPED_SLASHES | JSON_UNESCAPED_UNICODE));
        return $encoded . '.' . hash_hmac('sha256', "waymark-ticket\n" . $encoded, $secret);
    }

    public static function nonce(): string
    {
        return bin2hex(random_bytes(16));
    }
}
