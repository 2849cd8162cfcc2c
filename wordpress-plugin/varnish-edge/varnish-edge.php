<?php
/**
 * Plugin Name:       Varnish Edge
 * Description:       Exact cache invalidation for WordPress behind Varnish: xkey surrogate keys on every page, change-aware purge events, signed webhook delivery with a durable outbox.
 * Version:           1.0.0
 * Requires at least: 6.1
 * Requires PHP:      8.1
 * Author:            Varnish Edge contributors
 * License:           GPL-2.0-or-later
 * License URI:       https://www.gnu.org/licenses/gpl-2.0.html
 * Text Domain:       varnish-edge
 *
 * @package VarnishEdge
 */

namespace VarnishEdge;

if ( ! defined( 'ABSPATH' ) ) {
	exit;
}

const VERSION     = '1.0.0';
const PLUGIN_FILE = __FILE__;

spl_autoload_register(
	static function ( string $class ): void {
		if ( 0 !== strpos( $class, __NAMESPACE__ . '\\' ) ) {
			return;
		}
		$name = strtolower( str_replace( '_', '-', substr( $class, strlen( __NAMESPACE__ ) + 1 ) ) );
		$file = __DIR__ . '/includes/class-' . $name . '.php';
		if ( is_readable( $file ) ) {
			require_once $file;
		}
	}
);

register_activation_hook( __FILE__, array( Outbox_Table::class, 'install' ) );
register_deactivation_hook( __FILE__, array( Outbox_Delivery::class, 'unschedule' ) );

Plugin::instance()->register();
