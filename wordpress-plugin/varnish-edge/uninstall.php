<?php
/**
 * Uninstall: remove the outbox table, options and scheduled retries of every site (on multisite,
 * of each site of the network, and the network options), and each user's recent actions.
 *
 * @package VarnishEdge
 */

if ( ! defined( 'WP_UNINSTALL_PLUGIN' ) ) {
	exit;
}

/**
 * Remove the plugin's data from the current site: the outbox table, every `varnish_edge_*` option
 * and transient (settings with the secrets, status, schema version, coalescing state, notices) and
 * every scheduled `varnish_edge_*` event.
 */
function varnish_edge_uninstall_site(): void {
	global $wpdb;
	$table = $wpdb->prefix . 'varnish_edge_outbox';
	$wpdb->query( "DROP TABLE IF EXISTS {$table}" );
	$names = $wpdb->get_col(
		$wpdb->prepare(
			"SELECT option_name FROM {$wpdb->options} WHERE option_name LIKE %s OR option_name LIKE %s OR option_name LIKE %s",
			$wpdb->esc_like( 'varnish_edge_' ) . '%',
			$wpdb->esc_like( '_transient_varnish_edge_' ) . '%',
			$wpdb->esc_like( '_transient_timeout_varnish_edge_' ) . '%'
		)
	);
	foreach ( $names as $option ) {
		delete_option( $option );
	}
	$hooks = array( 'varnish_edge_process_outbox' );
	foreach ( (array) _get_cron_array() as $events ) {
		foreach ( array_keys( (array) $events ) as $hook ) {
			if ( 0 === strpos( (string) $hook, 'varnish_edge_' ) ) {
				$hooks[] = $hook;
			}
		}
	}
	foreach ( array_unique( $hooks ) as $hook ) {
		wp_clear_scheduled_hook( $hook );
	}
}

// WordPress includes this file from inside a function: name the globals used here.
global $wpdb;

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
	$varnish_edge_network_options = $wpdb->get_results( $wpdb->prepare( "SELECT site_id, meta_key FROM {$wpdb->sitemeta} WHERE meta_key LIKE %s", $wpdb->esc_like( 'varnish_edge_' ) . '%' ) );
	foreach ( $varnish_edge_network_options as $varnish_edge_option ) {
		delete_network_option( (int) $varnish_edge_option->site_id, $varnish_edge_option->meta_key );
	}
} else {
	varnish_edge_uninstall_site();
}
// Each user's recent actions (`<table prefix>varnish_edge_live`, a user option per site).
$wpdb->query( $wpdb->prepare( "DELETE FROM {$wpdb->usermeta} WHERE meta_key LIKE %s", '%' . $wpdb->esc_like( 'varnish_edge_live' ) ) );
