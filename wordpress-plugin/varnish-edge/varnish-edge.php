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

/**
 * Where each class lives: includes/<folder>/class-<name>.php, one folder per role of the
 * composition root (includes/class-plugin.php, the one class at the top of includes/).
 */
const CLASS_FOLDERS = array(
	// Shared by every role: settings, the protocol's grammars, what an invalidation is.
	'core'        => array( 'Settings', 'Invalidation', 'Key_Scheme', 'Url_Grammar', 'Rest_Bases', 'Site_Scope' ),
	// What changed: one handler per kind of thing, the post rules, the rate limit, the public API.
	'changes'     => array( 'Change_Handler', 'Post_Changes', 'Post_Snapshot', 'Post_Change_Policy', 'Post_Facts', 'Live_Post_Facts', 'Term_Count_Policy', 'Comment_Changes', 'Term_Changes', 'Site_Changes', 'Option_Changes', 'User_Changes', 'Media_Changes', 'Attachment_Files', 'Rate_Limit', 'Public_Api', 'Refresh_Urls' ),
	// What a response shows: its surrogate keys, and the headers that carry them.
	'keys'        => array( 'Key_Source', 'Surrogate_Keys', 'Query_Keys', 'Render_Keys', 'Media_Keys', 'Rest_Keys', 'Listing_Order', 'Page_Cache_Headers' ),
	// The request's queue, the events it becomes, the outbox table they wait in.
	'outbox'      => array( 'Event_Queue', 'Event_Builder', 'Size_Packer', 'Outbox_Store', 'Outbox_Table' ),
	// Sending the outbox to the purger: retries, the signed webhook.
	'delivery'    => array( 'Outbox_Delivery', 'Webhook_Client', 'Webhook_Signer' ),
	// People's tools: settings page, admin bar, Site Health, WP-CLI, manual purges.
	'admin'       => array( 'Admin_Page', 'Admin_Bar', 'Site_Health', 'CLI_Command', 'Manual_Purge' ),
	// How far each person's change got: recorded, asked of the purger, shown in the block editor.
	'live-status' => array( 'Live_Status', 'Live_Status_Log', 'Live_Status_Route', 'Editor_Live_Notice' ),
);

spl_autoload_register(
	static function ( string $class ): void {
		static $folders = null;
		if ( 0 !== strpos( $class, __NAMESPACE__ . '\\' ) ) {
			return;
		}
		if ( null === $folders ) {
			// Lower-case class name => its folder under includes/ ('' for the composition root).
			$folders = array( 'plugin' => '' );
			foreach ( CLASS_FOLDERS as $folder => $names ) {
				foreach ( $names as $name ) {
					$folders[ strtolower( $name ) ] = $folder . '/';
				}
			}
		}
		$name = strtolower( substr( $class, strlen( __NAMESPACE__ ) + 1 ) );
		if ( ! isset( $folders[ $name ] ) ) {
			return;
		}
		$file = __DIR__ . '/includes/' . $folders[ $name ] . 'class-' . str_replace( '_', '-', $name ) . '.php';
		if ( is_readable( $file ) ) {
			require_once $file;
		}
	}
);

register_activation_hook( __FILE__, array( Outbox_Table::class, 'install' ) );
register_deactivation_hook( __FILE__, array( Outbox_Delivery::class, 'unschedule' ) );

Plugin::instance()->register();
