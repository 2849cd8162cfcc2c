<?php
// Upgrades the database of an installed site to the version its core expects (wp_upgrade(), what
// wp-admin/upgrade.php runs), after stack/prepare-wordpress.sh refreshed the core from a newer
// package or image. Does nothing on a site not installed yet or already current. Idempotent.
$stack_installing = true;
require __DIR__ . '/bootstrap.php';
require_once ABSPATH . 'wp-admin/includes/upgrade.php';

if (!is_blog_installed()) { exit(0); }
global $wp_db_version, $wp_version;
$had = (int) get_option('db_version');
if ($had === (int) $wp_db_version) { exit(0); }
wp_upgrade();
wp_cache_flush();
$now = (int) get_option('db_version');
if ($now !== (int) $wp_db_version) {
    fwrite(STDERR, "wordpress: database upgrade from $had to $wp_db_version left db_version at $now\n");
    exit(1);
}
echo "wordpress: database upgraded from db_version $had to $now (WordPress $wp_version)\n";
