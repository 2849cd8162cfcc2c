<?php
/**
 * Installs WordPress into the test directory and creates the fixture content.
 * Usage: php install.php <wp dir> <purger url> <secret> <namespace>
 */
list( , $wp_dir, $purger_url, $secret, $ns ) = $argv;
define( 'WP_INSTALLING', true );
$_SERVER['HTTP_HOST']   = parse_url( $purger_url, PHP_URL_HOST );
$_SERVER['REQUEST_URI'] = '/';
require $wp_dir . '/wp-load.php';
require_once ABSPATH . 'wp-admin/includes/upgrade.php';
require_once ABSPATH . 'wp-includes/class-wpdb.php';

$result = wp_install( 'Edge Test', 'admin', 'admin@example.com', true, '', 'admin-password' );
if ( is_wp_error( $result ) ) {
	fwrite( STDERR, $result->get_error_message() );
	exit( 1 );
}
update_option( 'permalink_structure', '/%year%/%monthnum%/%postname%/' );
update_option( 'posts_per_page', 3 );
update_option( 'timezone_string', 'UTC' );
update_option( 'comment_moderation', 0 );
update_option( 'comment_previously_approved', 0 );
update_option( 'template', 'twentytwentythree' );
update_option( 'stylesheet', 'twentytwentythree' );
// Activated by writing the option (as the native stack does): the table must appear on plugins_loaded.
update_option( 'active_plugins', array( 'varnish-edge/varnish-edge.php' ) );
update_option(
	'varnish_edge_settings',
	array(
		'purger_url' => $purger_url,
		'secret'     => $secret,
		'namespace'  => $ns,
		'ttl'        => 86400,
	)
);

$alice = wp_insert_user( array( 'user_login' => 'alice', 'user_pass' => 'alice-password', 'display_name' => 'Alice Author', 'role' => 'author', 'user_email' => 'alice@example.com' ) );
$news   = wp_insert_term( 'News', 'category' )['term_id'];
$sports = wp_insert_term( 'Sports', 'category' )['term_id'];
$featured = wp_insert_term( 'Featured', 'post_tag' )['term_id'];
$ids   = array( 'alice' => $alice, 'admin' => 1, 'news' => $news, 'sports' => $sports, 'featured' => $featured, 'hello' => 1, 'sample_page' => 2 );
$plan  = array(
	'alpha'   => array( '2026-01-05 10:00:00', $news, 1 ),
	'bravo'   => array( '2026-02-10 10:00:00', $news, $alice ),
	'charlie' => array( '2026-03-15 10:00:00', $sports, 1 ),
	'delta'   => array( '2026-04-20 10:00:00', $sports, $alice ),
	'echo'    => array( '2026-05-25 10:00:00', $news, 1 ),
	'foxtrot' => array( '2026-06-30 10:00:00', $news, 1 ),
	'golf'    => array( '2026-07-04 10:00:00', $sports, $alice ),
);
foreach ( $plan as $slug => list( $date, $cat, $author ) ) {
	$ids[ $slug ] = wp_insert_post( array(
		'post_title'    => ucfirst( $slug ),
		'post_name'     => $slug,
		'post_content'  => '<!-- wp:paragraph --><p>The ' . $slug . ' story body.</p><!-- /wp:paragraph -->',
		'post_status'   => 'publish',
		'post_date'     => $date,
		'post_author'   => $author,
		'post_category' => array( $cat ),
	) );
}
wp_set_post_tags( $ids['bravo'], array( 'Featured' ) );
$ids['about'] = wp_insert_post( array( 'post_type' => 'page', 'post_title' => 'About', 'post_name' => 'about', 'post_status' => 'publish', 'post_content' => 'About us.' ) );
$ids['draft'] = wp_insert_post( array( 'post_title' => 'Hotel draft', 'post_name' => 'hotel', 'post_status' => 'draft', 'post_content' => 'Not yet.', 'post_category' => array( $sports ) ) );
wp_insert_comment( array( 'comment_post_ID' => $ids['echo'], 'comment_content' => 'First!', 'comment_author' => 'Reader', 'comment_approved' => 1, 'comment_date' => '2026-05-26 10:00:00', 'comment_date_gmt' => '2026-05-26 10:00:00' ) );
// The default post of wp_install() gets a fixed date so the fixture is deterministic.
wp_update_post( array( 'ID' => 1, 'post_date' => '2026-08-01 10:00:00', 'post_date_gmt' => '2026-08-01 10:00:00' ) );
file_put_contents( dirname( $wp_dir ) . '/fixtures.json', json_encode( $ids ) );
echo "installed\n";
