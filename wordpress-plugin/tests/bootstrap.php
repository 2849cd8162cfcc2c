<?php
/**
 * PHPUnit bootstrap: starts MariaDB, installs WordPress 6.1 (Debian package) with the plugin into a
 * temporary directory, starts `php -S` for it and a webhook receiver, then loads WordPress here.
 */
require __DIR__ . '/support/Environment.php';
require __DIR__ . '/support/TestCase.php';
require __DIR__ . '/support/FastCgiClient.php';
require __DIR__ . '/support/Fixtures.php';
require __DIR__ . '/support/PurgerStack.php';

error_reporting( E_ALL );
Environment::start();
Fixtures::install( Environment::$wp );

define( 'WP_USE_THEMES', false );
$_SERVER['HTTP_HOST']   = Environment::site();
$_SERVER['SERVER_NAME'] = '127.0.0.1';
$_SERVER['REQUEST_URI'] = '/';
require Environment::$wp . '/wp-load.php';
require_once ABSPATH . 'wp-admin/includes/admin.php';

if ( ! class_exists( '\VarnishEdge\Plugin' ) ) {
	fwrite( STDERR, "Varnish Edge is not active in the test site\n" );
	exit( 1 );
}
