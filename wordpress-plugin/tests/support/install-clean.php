<?php
/**
 * Installs the clean site of Environment::clean_site(): WordPress as its installer leaves it (default
 * theme, "Hello world!", the sample page), no plugin active, no fixture content.
 * Usage: php install-clean.php <wp dir> <site url>
 */
list( , $wp_dir, $url ) = $argv;
define( 'WP_INSTALLING', true );
$_SERVER['HTTP_HOST']   = (string) parse_url( $url, PHP_URL_HOST ) . ':' . (string) parse_url( $url, PHP_URL_PORT );
$_SERVER['REQUEST_URI'] = '/wp-admin/install.php';
require $wp_dir . '/wp-load.php';
require_once ABSPATH . 'wp-admin/includes/upgrade.php';

$result = wp_install( 'Clean Site', 'admin', 'admin@example.com', true, '', 'admin-password' );
if ( is_wp_error( $result ) ) {
	fwrite( STDERR, $result->get_error_message() );
	exit( 1 );
}
// What the web installer derives from the request it answers.
update_option( 'siteurl', $url );
update_option( 'home', $url );
update_option( 'timezone_string', 'UTC' );
if ( array() !== get_option( 'active_plugins' ) ) {
	fwrite( STDERR, "plugins are active on the clean site\n" );
	exit( 1 );
}
echo "installed\n";
