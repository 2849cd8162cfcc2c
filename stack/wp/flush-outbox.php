<?php
// Delivers every batch in the plugin's outbox now (php stack/wp/flush-outbox.php), as
// `wp varnish-edge outbox flush` does: make up runs it once the purger is up, so the events of
// the install (the plugin's own activation bans the whole site) reach Varnish before the stack
// says it is ready, not seconds later on a cron tick. Exits non-zero if a batch is left.
require __DIR__ . '/bootstrap.php';
$plugin = \VarnishEdge\Plugin::instance();
$report = $plugin->delivery->flush(100);
$stats = $plugin->outbox->stats();
if ($report['failed'] || $stats['rows'] || $stats['dead']) {
    fwrite(STDERR, sprintf("outbox: %d batches left (%s)\n", $stats['rows'], $report['error'] ?: $stats['dead_reason']));
    exit(1);
}
printf("outbox: %d webhooks delivered (%d events), nothing left\n", $report['sent'], $report['events']);
