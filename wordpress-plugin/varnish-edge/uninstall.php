<?php
/**
 * Uninstall: remove the outbox table, options and scheduled retries of every site (on multisite,
 * of each site of the network, and the network options).
 *
 * @package VarnishEdge
 */

if ( ! defined( 'WP_UNINSTALL_PLUGIN' ) ) {
	exit;
}

/**
 * Remove the plugin's data from the current site.
 */
function varnish_edge_uninstall_site() {
	global $wpdb;
	$table = $wpdb->prefix . 'varnish_edge_outbox';
	$wpdb->query( "DROP TABLE IF EXISTS {$table}" ); // phpcs:ignore WordPress.DB.PreparedSQL.InterpolatedNotPrepared,WordPress.DB.DirectDatabaseQuery.SchemaChange
	foreach ( array( 'varnish_edge_settings', 'varnish_edge_status', 'varnish_edge_db_version', 'varnish_edge_outbox_next' ) as $option ) {
		delete_option( $option );
	}
	wp_clear_scheduled_hook( 'varnish_edge_process_outbox' );
}

if ( is_multisite() ) {
	foreach ( get_sites(
		array(
			'fields'     => 'ids',
			'number'     => 0,
			'network_id' => null,
		)
	) as $varnish_edge_site ) {
		switch_to_blog( (int) $varnish_edge_site );
		varnish_edge_uninstall_site();
		restore_current_blog();
	}
	foreach ( get_networks( array( 'fields' => 'ids' ) ) as $varnish_edge_network ) {
		foreach ( array( 'varnish_edge_settings', 'varnish_edge_status', 'varnish_edge_db_version', 'varnish_edge_outbox_next' ) as $varnish_edge_option ) {
			delete_network_option( (int) $varnish_edge_network, $varnish_edge_option );
		}
	}
} else {
	varnish_edge_uninstall_site();
}
