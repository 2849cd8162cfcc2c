<?php
// Runs WordPress's due cron events once and returns when they are done (wp-cron.php over HTTP
// answers before it has finished, and two overlapping runners can lose each other's updates
// of the `cron` option: one synchronous runner avoids both).
if (PHP_SAPI !== 'cli') { exit(1); }
$wp_dir = getenv('STACK_WP_DIR') ?: exit("STACK_WP_DIR not set\n");
$_SERVER['HTTP_HOST'] = getenv('STACK_SITE_HOST') ?: 'localhost:8080';
$_SERVER['SERVER_NAME'] = preg_replace('/:.*/', '', $_SERVER['HTTP_HOST']);
$_SERVER['REQUEST_URI'] = '/wp-cron.php';
$_SERVER['REQUEST_METHOD'] = 'GET';
$_SERVER['SERVER_PROTOCOL'] = 'HTTP/1.1';
chdir($wp_dir);
require $wp_dir . '/wp-cron.php';
