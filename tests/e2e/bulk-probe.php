<?php
// Test-only mu-plugin, copied into its scratch site by tests/e2e/bulk-actions.test.mjs. The
// plugin answers a request first (fastcgi_finish_request) and builds and delivers its events
// after, so the response alone does not say which events the action made, nor when. A request
// carrying X-Bulk-E2E: TOKEN (a CLI run: BULK_E2E_TOKEN in its environment) appends, from the
// last shutdown callback, one JSON line to uploads/bulk-e2e/TOKEN.jsonl: whether it acted (a
// POST, or a GET naming a bulk action: a browser sends the header on the redirect after it too)
// and the ids of the events the plugin committed, whose receipts the test then waits for.
$varnish_edge_bulk_token = preg_replace(
    '/[^a-z0-9-]/',
    '',
    strtolower(PHP_SAPI === 'cli' ? (string) getenv('BULK_E2E_TOKEN') : ($_SERVER['HTTP_X_BULK_E2E'] ?? ''))
);
if ('' !== $varnish_edge_bulk_token) {
    $varnish_edge_bulk_events = array();
    add_action('varnish_edge_events_committed', static function ($events) use (&$varnish_edge_bulk_events) {
        foreach ($events as $event) {
            $varnish_edge_bulk_events[] = $event['id'];
        }
    });
    add_action('shutdown', static function () use ($varnish_edge_bulk_token, &$varnish_edge_bulk_events) {
        // phpcs:ignore WordPress.Security.NonceVerification -- only read, to label the line.
        $action = (string) ($_REQUEST['action'] ?? '-1');
        $dir    = wp_upload_dir(null, false)['basedir'] . '/bulk-e2e';
        wp_mkdir_p($dir);
        $line = array(
            'acted'  => PHP_SAPI === 'cli' || 'GET' !== ($_SERVER['REQUEST_METHOD'] ?? 'GET') || '-1' !== $action || isset($_REQUEST['delete_all']), // phpcs:ignore WordPress.Security.NonceVerification
            'events' => $varnish_edge_bulk_events,
            'uri'    => substr((string) ($_SERVER['REQUEST_URI'] ?? ''), 0, 200),
        );
        file_put_contents("$dir/$varnish_edge_bulk_token.jsonl", wp_json_encode($line) . "\n", FILE_APPEND | LOCK_EX);
    }, PHP_INT_MAX);
}
