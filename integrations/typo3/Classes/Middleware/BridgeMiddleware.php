<?php

declare(strict_types=1);

namespace Waymark\Typo3Waymark\Middleware;

use Doctrine\DBAL\Exception\UniqueConstraintViolationException;
use Psr\Http\Message\ResponseInterface;
use Psr\Http\Message\ServerRequestInterface;
use Psr\Http\Server\MiddlewareInterface;
use Psr\Http\Server\RequestHandlerInterface;
use Psr\Log\LoggerInterface;
use TYPO3\CMS\Core\Database\Connection;
use TYPO3\CMS\Core\Database\ConnectionPool;
use TYPO3\CMS\Core\Http\JsonResponse;
use TYPO3\CMS\Core\Http\NormalizedParams;
use TYPO3\CMS\Core\Information\Typo3Version;
use TYPO3\CMS\Core\Utility\ExtensionManagementUtility;
use Waymark\Typo3Waymark\Bridge\ApplyService;
use Waymark\Typo3Waymark\Bridge\BackendUserLoader;
use Waymark\Typo3Waymark\Bridge\BridgeConfiguration;
use Waymark\Typo3Waymark\Bridge\SessionChecker;
use Waymark\Typo3Waymark\Bridge\Signer;

/**
 * Answers the signed requests of Waymark below <site path>/waymark-bridge/ (docs/typo3-bridge.md); every other
 * request passes on untouched.
 */
final class BridgeMiddleware implements MiddlewareInterface
{
    public const PREFIX = 'waymark-bridge/';
    public const MAX_SKEW = 60;
    public const NONCE_TTL = 120;
    public const NONCE_TABLE = 'tx_waymark_nonce';
    private const ENDPOINTS = ['ping', 'session', 'apply', 'target'];

    public function __construct(
        private readonly BridgeConfiguration $configuration,
        private readonly ConnectionPool $connectionPool,
        private readonly ApplyService $applyService,
        private readonly SessionChecker $sessionChecker,
        private readonly BackendUserLoader $userLoader,
        private readonly LoggerInterface $logger,
    ) {}

    public function process(ServerRequestInterface $request, RequestHandlerInterface $handler): ResponseInterface
    {
        $path = $request->getUri()->getPath();
        $normalizedParams = $request->getAttribute('normalizedParams');
        if (!$normalizedParams instanceof NormalizedParams) {
            $normalizedParams = NormalizedParams::createFromRequest($request);
        }
        $base = '/' . trim($normalizedParams->getSitePath(), '/');
        $base = $base === '/' ? '/' : $base . '/';
        if (!str_starts_with($path, $base . self::PREFIX)) {
            return $handler->handle($request);
        }
        $rest = substr($path, strlen($base . self::PREFIX));
        $endpoint = str_starts_with($rest, 'v1/') ? substr($rest, 3) : null;
        if ($endpoint === null || !in_array($endpoint, self::ENDPOINTS, true)) {
            return self::json(404, ['error' => 'not_found']);
        }

        $secret = $this->configuration->getSecret();
        if ($secret === null) {
            return self::json(503, ['error' => 'not_configured']);
        }

        $body = (string)$request->getBody();
        $error = $this->verify($request, $secret, $path, $body);
        if ($error !== null) {
            return self::json(401, ['error' => $error]);
        }
        if ($request->getMethod() !== 'POST') {
            return self::json(405, ['error' => 'method_not_allowed'])->withHeader('Allow', 'POST');
        }
        try {
            $data = json_decode($body === '' ? '{}' : $body, true, 64, JSON_THROW_ON_ERROR);
        } catch (\JsonException $e) {
            return self::json(400, ['error' => 'bad_request', 'reason' => 'body is not JSON: ' . $e->getMessage()]);
        }
        if (!is_array($data) || ($data !== [] && array_is_list($data))) {
            return self::json(400, ['error' => 'bad_request', 'reason' => 'body must be a JSON object']);
        }

        try {
            [$status, $answer] = match ($endpoint) {
                'ping' => $this->ping(),
                'session' => $this->session($data),
                'apply' => $this->applyService->apply($data),
                'target' => $this->target($data),
            };
        } catch (\Throwable $e) {
            $this->logger->error('Waymark bridge: {endpoint} failed: {message}', ['endpoint' => $endpoint, 'message' => $e->getMessage(), 'exception' => $e]);
            return self::json(500, ['error' => 'internal_error', 'reason' => get_class($e) . ': ' . $e->getMessage()]);
        }
        return self::json($status, $answer);
    }

    /** @return string|null the error of the contract, or null when the request is signed, fresh and new */
    private function verify(ServerRequestInterface $request, string $secret, string $path, string $body): ?string
    {
        $time = $request->getHeaderLine('X-Waymark-Time');
        $nonce = $request->getHeaderLine('X-Waymark-Nonce');
        $signature = $request->getHeaderLine('X-Waymark-Signature');
        if (!preg_match('/^[0-9]{1,12}$/', $time) || !preg_match('/^[0-9a-f]{32}$/', $nonce) || !str_starts_with($signature, 'v1=')) {
            return 'bad_signature';
        }
        $expected = Signer::requestSignature($secret, $request->getMethod(), $path, $time, $nonce, $body);
        if (!hash_equals($expected, $signature)) {
            return 'bad_signature';
        }
        $now = time();
        if (abs($now - (int)$time) > self::MAX_SKEW) {
            return 'stale_request';
        }
        $connection = $this->connectionPool->getConnectionForTable(self::NONCE_TABLE);
        $connection->executeStatement(
            'DELETE FROM ' . $connection->quoteIdentifier(self::NONCE_TABLE) . ' WHERE ' . $connection->quoteIdentifier('tstamp') . ' < ?',
            [$now - self::NONCE_TTL],
            [Connection::PARAM_INT]
        );
        try {
            $connection->insert(self::NONCE_TABLE, ['nonce' => $nonce, 'tstamp' => $now]);
        } catch (UniqueConstraintViolationException) {
            return 'replayed';
        }
        return null;
    }

    private function ping(): array
    {
        return [200, [
            'ok' => true,
            'typo3' => (new Typo3Version())->getVersion(),
            'extension' => self::extensionVersion(),
            'workspaces' => ExtensionManagementUtility::isLoaded('workspaces'),
        ]];
    }

    private function session(array $data): array
    {
        $user = $data['user'] ?? null;
        $session = $data['session'] ?? null;
        if (!is_int($user) || $user <= 0 || !is_string($session) || $session === '') {
            return [400, ['error' => 'bad_request', 'reason' => 'body must be {"user":<uid>,"session":"<hashed session id>"}']];
        }
        return [200, $this->sessionChecker->check($user, $session)];
    }

    private function target(array $data): array
    {
        $user = $data['user'] ?? null;
        if (!is_int($user) || $user <= 0) {
            return [400, ['error' => 'bad_request', 'reason' => 'body must be {"user":<uid>}']];
        }
        $beUser = $this->userLoader->load($user);
        if ($beUser === null) {
            return [422, ['error' => 'refused', 'reason' => 'backend user ' . $user . ' does not exist, is disabled, deleted, outside its start/end time, or may not log in']];
        }
        $answer = ['workspace' => BackendUserLoader::workspaceOf($beUser)];
        // optionally the record's values as she sees them in that workspace: the card shows them as current
        if (array_key_exists('record', $data)) {
            $record = $data['record'];
            $table = is_array($record) ? ($record['table'] ?? null) : null;
            $uid = is_array($record) ? ($record['uid'] ?? null) : null;
            $columns = is_array($record) ? ($record['columns'] ?? null) : null;
            if (!is_string($table) || !is_array($GLOBALS['TCA'][$table]['columns'] ?? null) || !is_int($uid) || $uid <= 0
                || !is_array($columns) || $columns === [] || !array_is_list($columns)) {
                return [400, ['error' => 'bad_request', 'reason' => 'record must be {"table":<TCA table>,"uid":<uid>,"columns":[<column>,…]}']];
            }
            foreach ($columns as $column) {
                if (!is_string($column) || !is_array($GLOBALS['TCA'][$table]['columns'][$column] ?? null)) {
                    return [400, ['error' => 'bad_request', 'reason' => 'unknown column ' . json_encode($column) . ' of table "' . $table . '"']];
                }
            }
            $answer['current'] = $this->applyService->current($beUser, $table, $uid, $columns);
        }
        return [200, $answer];
    }

    public static function extensionVersion(): string
    {
        try {
            $version = ExtensionManagementUtility::getExtensionVersion('waymark');
        } catch (\Throwable) {
            $version = '';
        }
        // TYPO3 14 reports a package without a version as "1.0.0+no-version-set"; composer.json carries it
        // (extra.typo3/cms.version, which 13.4 does not read), ext_emconf.php stays the fallback
        if ($version === '' || !preg_match('/^\d/', $version) || str_contains($version, 'no-version-set')) {
            $emconf = dirname(__DIR__, 2) . '/ext_emconf.php';
            $EM_CONF = [];
            $_EXTKEY = 'waymark';
            if (is_file($emconf)) {
                include $emconf;
                $version = (string)($EM_CONF[$_EXTKEY]['version'] ?? $version);
            }
        }
        return $version;
    }

    private static function json(int $status, array $data): ResponseInterface
    {
        return (new JsonResponse($data, $status, [], JSON_UNESCAPED_SLASHES | JSON_UNESCAPED_UNICODE))
            ->withHeader('Cache-Control', 'no-store');
    }
}
