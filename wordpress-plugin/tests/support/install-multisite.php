<?php
/**
 * Installs the multisite network of Multisite.php in two phases (two processes, because the
 * multisite constants can only be defined once the network tables exist).
 * Usage: VARNISH_EDGE_TEST_MULTISITE=<phase> php install-multisite.php <install|network> <wp dir> <purger url> <secret>
 */
list( , $phase, $wp_dir, $purger_url, $secret ) = $argv;
$_SERVER['HTTP_HOST']   = 'ms.test';
$_SERVER['SERVER_NAME'] = 'ms.test';
$_SERVER['REQUEST_URI'] = '/';

if ( 'install' === $phase ) {
	// A single site under the prefix ms_, converted into a network as wp core multisite-convert does.
	define( 'WP_INSTALLING', true );
	require $wp_dir . '/wp-load.php';
	require_once ABSPATH . 'wp-admin/includes/upgrade.php';
	$result = wp_install( 'Network Test', 'admin', 'admin@example.com', true, '', 'admin-password' );
	if ( is_wp_error( $result ) ) {
		fwrite( STDERR, $result->get_error_message() );
		exit( 1 );
	}
	update_option( 'siteurl', 'http://ms.test' );
	update_option( 'home', 'http://ms.test' );
	// Not multisite yet: name the network tables on $wpdb (as wp-cli's multisite-convert does).
	foreach ( $wpdb->tables( 'ms_global' ) as $table => $prefixed ) {
		$wpdb->$table = $prefixed;
	}
	install_network();
	$network = populate_network( 1, 'ms.test', 'admin@example.com', 'Network Test', '/', false );
	if ( is_wp_error( $network ) ) {
		fwrite( STDERR, $network->get_error_message() );
		exit( 1 );
	}
	echo "\n@@VE@@" . json_encode( array( 'phase' => 'install' ) );
	exit;
}

require $wp_dir . '/wp-load.php';
require_once ABSPATH . 'wp-admin/includes/admin.php';
if ( ! is_multisite() ) {
	fwrite( STDERR, "the network did not load as multisite\n" );
	exit( 1 );
}
// Network-activated, as a network administrator would.
update_site_option( 'active_sitewide_plugins', array( 'varnish-edge/varnish-edge.php' => time() ) );
$sub = wp_insert_site(
	array(
		'domain'  => 'ms.test',
		'path'    => '/sub/',
		'title'   => 'Sub Site',
		'user_id' => 1,
	)
);
if ( is_wp_error( $sub ) ) {
	fwrite( STDERR, $sub->get_error_message() );
	exit( 1 );
}
$subadmin = wpmu_create_user( 'subadmin', 'subadmin-password', 'subadmin@example.com' );
add_user_to_blog( $sub, $subadmin, 'administrator' );
foreach ( array( 1, $sub ) as $blog ) {
	switch_to_blog( $blog );
	update_option(
		'varnish_edge_settings',
		array(
			'purger_url' => $purger_url,
			'secret'     => $secret,
			'namespace'  => '',
			'ttl'        => 86400,
		)
	);
	restore_current_blog();
}
echo "\n@@VE@@" . json_encode(
	array(
		'sub'      => (int) $sub,
		'subadmin' => (int) $subadmin,
	)
);
