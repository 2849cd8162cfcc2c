<?php
// Installs WordPress once (admin user from STACK_ADMIN_USER / STACK_ADMIN_PASSWORD) and sets
// the options the stack relies on: pretty permalinks, UTC, open comments held for moderation as
// WordPress's defaults hold them (an anonymous visitor's first comment waits for approval; the
// demo's own comments are approved by demo-content.php). Idempotent.
// The site gets the WordPress version's own default theme (WP_DEFAULT_THEME: twentytwentythree
// on 6.1, twentytwentyfive on 6.7+), even when it is not installed: wp_install() would then fall
// back to whichever older core theme the tree holds, and the stack would test another site than
// the version's; stack/check-site.sh names the missing theme's package instead.
// The password is taken out of the environment before WordPress (and any plugin) loads.
$password = getenv('STACK_ADMIN_PASSWORD');
putenv('STACK_ADMIN_PASSWORD');
unset($_SERVER['STACK_ADMIN_PASSWORD'], $_ENV['STACK_ADMIN_PASSWORD']);
if (!is_string($password) || strlen($password) < 12) { fwrite(STDERR, "install.php: no STACK_ADMIN_PASSWORD\n"); exit(1); }
$stack_installing = true;
require __DIR__ . '/bootstrap.php';
require_once ABSPATH . 'wp-admin/includes/upgrade.php';

$user = getenv('STACK_ADMIN_USER') ?: 'admin';
if (!is_blog_installed()) {
    $result = wp_install('Varnish Edge demo', $user, $user . '@example.com', true, '', $password);
    if (is_wp_error($result)) { fwrite(STDERR, $result->get_error_message() . "\n"); exit(1); }
    if (get_option('stylesheet') !== WP_DEFAULT_THEME) {
        update_option('template', WP_DEFAULT_THEME);
        update_option('stylesheet', WP_DEFAULT_THEME);
    }
    echo "wordpress: installed, theme " . WP_DEFAULT_THEME . "\n";
} else {
    // Keep the admin password in step with secrets.env.
    $u = get_user_by('login', $user);
    if ($u) { wp_set_password($password, $u->ID); }
}
update_option('permalink_structure', '/%postname%/');
update_option('timezone_string', 'UTC');
update_option('gmt_offset', 0);
update_option('default_comment_status', 'open');
update_option('comment_moderation', 0);
update_option('comment_previously_approved', 1);   // WordPress's default: strangers wait for approval
update_option('posts_per_page', 10);
update_option('blog_public', 1);
flush_rewrite_rules(false);
