<?php
/**
 * Uninstall: remove the outbox table, options and scheduled retries.
 *
 * @package VarnishEdge
 */

if ( ! defined( 'WP_UNINSTALL_PLUGIN' ) ) {
	exit;
}

global $wpdb;
$varnish_edge_table = $wpdb->prefix . 'varnish_edge_outbox';
$wpdb->query( "DROP TABLE IF EXISTS {$varnish_edge_table}" ); // phpcs:ignore WordPress.DB.PreparedSQL.InterpolatedNotPrepared,WordPress.DB.DirectDatabaseQuery.SchemaChange
foreach ( array( 'varnish_edge_settings', 'varnish_edge_status', 'varnish_edge_db_version', 'varnish_edge_outbox_next' ) as $varnish_edge_option ) {
	delete_option( $varnish_edge_option );
}
wp_clear_scheduled_hook( 'varnish_edge_process_outbox' );
