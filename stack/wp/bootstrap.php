<?php
// Loads WordPress from the stack's tree for the CLI scripts beside this file (no wp-cli here).
// Usage: php stack/wp/<script>.php with STACK_WP_DIR and STACK_SITE_HOST in the environment.
if (PHP_SAPI !== 'cli') { exit(1); }
$wp_dir = getenv('STACK_WP_DIR') ?: exit("STACK_WP_DIR not set\n");
$_SERVER['HTTP_HOST'] = getenv('STACK_SITE_HOST') ?: 'localhost:8080';
$_SERVER['SERVER_NAME'] = preg_replace('/:.*/', '', $_SERVER['HTTP_HOST']);
$_SERVER['REQUEST_URI'] = '/';
$_SERVER['REQUEST_METHOD'] = 'GET';
$_SERVER['SERVER_PROTOCOL'] = 'HTTP/1.1';
if (!empty($stack_installing)) { define('WP_INSTALLING', true); }
require $wp_dir . '/wp-load.php';
