<?php
// Helpers of the tests: a signed client of the bridge (the Waymark side of docs/typo3-bridge.md) and PASS/FAIL.
declare(strict_types=1);

final class Bridge
{
    public function __construct(public string $base, public string $secret) {}

    /** @return array{0:int,1:mixed,2:string} status, decoded JSON, raw body */
    public function call(string $endpoint, array|string $body = [], array $opt = []): array
    {
        $raw = is_string($body) ? $body : ($body === [] ? '{}' : json_encode($body, JSON_UNESCAPED_SLASHES | JSON_UNESCAPED_UNICODE));
        $url = rtrim($this->base, '/') . '/waymark-bridge/v1/' . $endpoint;
        $path = parse_url($url, PHP_URL_PATH);
        $time = (string)($opt['time'] ?? time());
        $nonce = $opt['nonce'] ?? bin2hex(random_bytes(16));
        $secret = $opt['secret'] ?? $this->secret;
        $sig = 'v1=' . hash_hmac('sha256', "POST\n$path\n$time\n$nonce\n" . hash('sha256', $raw), $secret);
        $headers = ['Content-Type: application/json'];
        if (empty($opt['unsigned'])) {
            $headers[] = "X-Waymark-Time: $time";
            $headers[] = "X-Waymark-Nonce: $nonce";
            $headers[] = 'X-Waymark-Signature: ' . ($opt['signature'] ?? $sig);
        }
        return self::http('POST', $url, $raw, $headers);
    }

    public static function http(string $method, string $url, ?string $body = null, array $headers = [], ?string $cookieJar = null): array
    {
        $ch = curl_init($url);
        curl_setopt_array($ch, [CURLOPT_CUSTOMREQUEST => $method, CURLOPT_RETURNTRANSFER => true, CURLOPT_HTTPHEADER => $headers,
            CURLOPT_TIMEOUT => 60, CURLOPT_HEADER => true]);
        if ($body !== null) {
            curl_setopt($ch, CURLOPT_POSTFIELDS, $body);
        }
        if ($cookieJar !== null) {
            curl_setopt($ch, CURLOPT_COOKIEJAR, $cookieJar);
            curl_setopt($ch, CURLOPT_COOKIEFILE, $cookieJar);
        }
        $resp = curl_exec($ch);
        if ($resp === false) {
            throw new RuntimeException('curl: ' . curl_error($ch));
        }
        $status = curl_getinfo($ch, CURLINFO_RESPONSE_CODE);
        $hsize = curl_getinfo($ch, CURLINFO_HEADER_SIZE);
        curl_close($ch);
        $head = substr($resp, 0, $hsize);
        $raw = substr($resp, $hsize);
        return [$status, json_decode($raw, true), $raw, $head];
    }
}

$GLOBALS['T_FAIL'] = 0;
$GLOBALS['T_PASS'] = 0;
function check(string $name, bool $ok, mixed $detail = ''): bool
{
    if ($ok) {
        $GLOBALS['T_PASS']++;
        echo "PASS $name\n";
    } else {
        $GLOBALS['T_FAIL']++;
        echo "FAIL $name" . ($detail !== '' ? ' — ' . (is_string($detail) ? $detail : json_encode($detail, JSON_UNESCAPED_SLASHES | JSON_UNESCAPED_UNICODE)) : '') . "\n";
    }
    return $ok;
}
function done(): never
{
    echo "---- {$GLOBALS['T_PASS']} passed, {$GLOBALS['T_FAIL']} failed\n";
    exit($GLOBALS['T_FAIL'] > 0 ? 1 : 0);
}
