<?php
// Activates wp-content/plugins/varnish-edge (runs its activation hook). Idempotent.
require __DIR__ . '/bootstrap.php';
require_once ABSPATH . 'wp-admin/includes/plugin.php';
$plugins = get_plugins('/varnish-edge');
if (!$plugins) { fwrite(STDERR, "varnish-edge: no plugin file found in wp-content/plugins/varnish-edge\n"); exit(1); }
$file = 'varnish-edge/' . array_key_first($plugins);
if (is_plugin_active($file)) { exit(0); }
$result = activate_plugin($file);
if (is_wp_error($result)) { fwrite(STDERR, 'varnish-edge: ' . $result->get_error_message() . "\n"); exit(1); }
echo "wordpress: activated $file\n";
